// SPDX-License-Identifier: Apache-2.0
/* virtio-pci: IDs and capabilities, feature negotiation (VERSION_1
 * required), the status state machine, queue configuration frozen at
 * DRIVER_OK, kicks (trapped and ioeventfd), MSI-X and INTx interrupts,
 * broken queues, reset, device config, the PCI-config window. A fake
 * device on the real transport, driven through the trap table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_mem.h"
#include "iothread/iothread.h"
#include "fake_pci_host.h"
#include "pci/pci_msix.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_impl.h"

#define NQ	2
#define QMAX	256
#define CFG_LEN 12

struct tvdev {
	struct virtio_dev vdev;
	int activates, resets, activate_ret;
	bool handoff; /* activate hands the queues off, as vhost=on does */
	int handed;   /* queues handed off by the last activate */
	int notifies[VIRTIO_MAX_QUEUES];
	int cfg_reads, cfg_writes;
	uint8_t config[CFG_LEN];
};

static void t_config_read(struct virtio_dev *vdev, uint32_t off, void *buf, uint32_t len)
{
	struct tvdev *t = vdev->priv;
	assert_true(off + len <= CFG_LEN); /* the transport checks bounds */
	t->cfg_reads++;
	memcpy(buf, t->config + off, len);
}

static void t_config_write(struct virtio_dev *vdev, uint32_t off, const void *buf, uint32_t len)
{
	struct tvdev *t = vdev->priv;
	assert_true(off + len <= CFG_LEN);
	t->cfg_writes++;
	memcpy(t->config + off, buf, len);
}

/* What virtio_net_vhost_start does with the transport: hand every queue
 * off, or on the first refusal take back those handed so far. */
static void t_handoff(struct tvdev *t)
{
	const struct virtio_transport_ops *ops = t->vdev.transport;
	int kick, call;
	for (unsigned int q = 0; q < NQ; q++) {
		if (ops->queue_handoff(&t->vdev, q, &kick, &call) < 0) {
			for (unsigned int i = 0; i <= q; i++)
				ops->queue_takeback(&t->vdev, i);
			return;
		}
	}
	t->handed = NQ;
}

static int t_activate(struct virtio_dev *vdev)
{
	struct tvdev *t = vdev->priv;
	t->activates++;
	if (t->handoff)
		t_handoff(t);
	return t->activate_ret;
}

static void t_reset(struct virtio_dev *vdev)
{
	struct tvdev *t = vdev->priv;
	t->resets++;
	for (unsigned int q = 0; q < (unsigned int)t->handed; q++)
		vdev->transport->queue_takeback(vdev, q);
	t->handed = 0;
}

static void t_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	assert_true(q < vdev->num_queues);
	((struct tvdev *)vdev->priv)->notifies[q]++;
}

static const struct virtio_dev_ops t_ops = {
    .config_read = t_config_read,
    .config_write = t_config_write,
    .activate = t_activate,
    .reset = t_reset,
    .queue_notify = t_queue_notify,
};

static void tvdev_fill(struct tvdev *t, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->vdev.name = name;
	t->vdev.device_id = VIRTIO_ID_BLOCK;
	t->vdev.host_features = (1ULL << 6) | (1ULL << VIRTIO_F_RING_PACKED);
	t->vdev.config_len = CFG_LEN;
	t->vdev.num_queues = NQ;
	t->vdev.queue_max_size = QMAX;
	t->vdev.ops = &t_ops;
	t->vdev.priv = t;
	for (int i = 0; i < CFG_LEN; i++)
		t->config[i] = (uint8_t)(0x10 + i);
}

struct vfx {
	struct iothread io; /* set up, never started */
	bool with_io;
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct fake_mem mem;
	struct tvdev t;
	struct virtio_pci *vp;
	uint64_t bar, tab;
	uint32_t msix_cap;
};

static int vfx_setup_mode(void **state, bool ioeventfd, bool with_io, bool poll)
{
	struct vfx *f = calloc(1, sizeof(*f));
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	assert_int_equal(fake_mem_init(&f->mem, 1 << 20), 0);
	tvdev_fill(&f->t, "virtio-test0");
	if (poll) { /* queue 1 polled from the first kick on */
		poll_policy_default(&f->t.vdev.poll);
		f->t.vdev.poll.mode = POLL_ALWAYS;
		f->t.vdev.poll_queues = 1u << 1;
	}
	f->with_io = with_io;
	if (with_io)
		assert_int_equal(iothread_init(&f->io, "io0"), 0);
	struct virtio_pci_env env = {.pci = f->pci,
				     .io = with_io ? &f->io : NULL,
				     .gm = &f->mem.gm,
				     .use_ioeventfd = ioeventfd};
	char err[128];
	assert_int_equal(virtio_pci_attach(&env, &f->t.vdev, err, sizeof(err)), 0);
	f->vp = f->t.vdev.transport_data;
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->bar = cfg_bar64(&f->trap, 1, VP_BAR);
	f->tab = cfg_bar64(&f->trap, 1, VP_MSIX_BAR);
	f->msix_cap = cfg_find_cap(&f->trap, 1, PCI_CAP_ID_MSIX, 0);
	*state = f;
	return 0;
}

static int vfx_setup(void **state)
{
	return vfx_setup_mode(state, false, false, false);
}

static int vfx_setup_ioeventfd(void **state)
{
	return vfx_setup_mode(state, true, false, false);
}

static int vfx_setup_iothread(void **state)
{
	return vfx_setup_mode(state, true, true, false);
}

static int vfx_setup_polled(void **state)
{
	return vfx_setup_mode(state, true, true, true);
}

static int vfx_teardown(void **state)
{
	struct vfx *f = *state;
	pci_bus_destroy(f->pci);
	assert_int_equal(f->trap.space[BUS_MMIO].count, 0);
	for (int i = 0; i < f->host.nr_io; i++)
		assert_false(f->host.io[i].assigned);
	bus_destroy(&f->trap);
	fake_mem_free(&f->mem);
	if (f->with_io)
		iothread_destroy(&f->io);
	free(f);
	return 0;
}

static uint64_t cr(struct vfx *f, uint32_t off, uint32_t len)
{
	return mmio_rd(&f->trap, f->bar + VP_COMMON_OFF + off, len);
}

static void cw(struct vfx *f, uint32_t off, uint32_t len, uint64_t v)
{
	mmio_wr(&f->trap, f->bar + VP_COMMON_OFF + off, len, v);
}

static uint8_t status(struct vfx *f)
{
	return (uint8_t)cr(f, VP_STATUS, 1);
}

static void write_features(struct vfx *f, uint64_t feat)
{
	cw(f, VP_GFSELECT, 4, 0);
	cw(f, VP_GF, 4, (uint32_t)feat);
	cw(f, VP_GFSELECT, 4, 1);
	cw(f, VP_GF, 4, feat >> 32);
}

#define FEAT_OK ((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTQ_F_EVENT_IDX) | (1ULL << 6))

static void negotiate(struct vfx *f, uint64_t feat)
{
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE);
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	write_features(f, feat);
	cw(f, VP_STATUS, 1, status(f) | VIRTIO_STATUS_FEATURES_OK);
	assert_true(status(f) & VIRTIO_STATUS_FEATURES_OK);
}

/* Rings for queue q in fake RAM: 64 KiB apart. */
static void setup_queue(struct vfx *f, unsigned int q, uint16_t size)
{
	uint64_t base = 0x10000 + 0x10000 * (uint64_t)q;
	cw(f, VP_Q_SELECT, 2, q);
	cw(f, VP_Q_SIZE, 2, size);
	cw(f, VP_Q_DESC, 4, base); /* 64-bit fields as two halves */
	cw(f, VP_Q_DESC + 4, 4, 0);
	cw(f, VP_Q_DRIVER, 8, base + 0x4000); /* or one qword */
	cw(f, VP_Q_DEVICE, 4, base + 0x8000);
	cw(f, VP_Q_DEVICE + 4, 4, 0);
	cw(f, VP_Q_ENABLE, 2, 1);
}

static void driver_ok(struct vfx *f)
{
	cw(f, VP_STATUS, 1, status(f) | VIRTIO_STATUS_DRIVER_OK);
}

static void bring_up(struct vfx *f, uint64_t feat)
{
	negotiate(f, feat);
	setup_queue(f, 0, 16);
	driver_ok(f);
	assert_int_equal(status(f), 0x0f);
}

static void kick(struct vfx *f, unsigned int q)
{
	mmio_wr(&f->trap, f->bar + VP_NOTIFY_OFF + VP_NOTIFY_MULT * q, 2, q);
}

/* The port notify BAR's base, with I/O decoding on. */
static uint16_t pio_base(struct vfx *f)
{
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2,
	       PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	return (uint16_t)(cfg_rd(&f->trap, 1, PCI_BAR0 + 4 * VP_PIO_BAR, 4) & ~3u);
}

static void pio_kick(struct vfx *f, uint16_t port, uint32_t len, uint32_t v)
{
	bus_dispatch(&f->trap, BUS_PIO, port, &v, len, true, 0);
}

static void test_ids_and_caps(void **state)
{
	struct vfx *f = *state;
	struct bus *b = &f->trap;
	assert_int_equal(cfg_rd(b, 1, PCI_VENDOR_ID, 2), VIRTIO_PCI_VENDOR);
	assert_int_equal(cfg_rd(b, 1, PCI_DEVICE_ID, 2), 0x1040 + VIRTIO_ID_BLOCK);
	assert_int_equal(cfg_rd(b, 1, PCI_REVISION_ID, 1), 1);
	assert_int_equal(cfg_rd(b, 1, PCI_SUBSYSTEM_VENDOR_ID, 2), VIRTIO_PCI_VENDOR);
	assert_true(cfg_rd(b, 1, PCI_SUBSYSTEM_ID, 2) >= 0x40);
	assert_int_equal(cfg_rd(b, 1, 0x08, 4) >> 8, 0x010000);
	assert_true(f->bar >= LAYOUT_PCI_MMIO_START && f->bar < LAYOUT_PCI_MMIO_END);
	assert_int_equal(f->bar % VP_BAR_SIZE, 0);

	static const struct {
		uint8_t type, len;
		uint32_t off, length;
	} want[] = {
	    {VIRTIO_PCI_CAP_COMMON_CFG, 16, VP_COMMON_OFF, VP_COMMON_LEN},
	    {VIRTIO_PCI_CAP_ISR_CFG, 16, VP_ISR_OFF, 1},
	    {VIRTIO_PCI_CAP_DEVICE_CFG, 16, VP_DEVICE_OFF, CFG_LEN},
	    {VIRTIO_PCI_CAP_PCI_CFG, 20, 0, 0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint32_t c = cfg_find_cap(b, 1, PCI_CAP_ID_VNDR, want[i].type);
		assert_int_not_equal(c, 0);
		assert_int_equal(cfg_rd(b, 1, c + 2, 1), want[i].len);
		assert_int_equal(cfg_rd(b, 1, c + VP_CAP_BAR, 1), VP_BAR);
		assert_int_equal(cfg_rd(b, 1, c + VP_CAP_OFFSET, 4), want[i].off);
		assert_int_equal(cfg_rd(b, 1, c + VP_CAP_LENGTH, 4), want[i].length);
	}
	/* Two notify capabilities, the port one first (the driver takes the
	 * first it supports), then the MMIO one. */
	uint32_t p = cfg_find_cap(b, 1, PCI_CAP_ID_VNDR, VIRTIO_PCI_CAP_NOTIFY_CFG);
	assert_int_equal(cfg_rd(b, 1, p + VP_CAP_BAR, 1), VP_PIO_BAR);
	assert_int_equal(cfg_rd(b, 1, p + VP_CAP_OFFSET, 4), 0);
	assert_int_equal(cfg_rd(b, 1, p + VP_CAP_LENGTH, 4), NQ * VP_PIO_MULT);
	assert_int_equal(cfg_rd(b, 1, p + VP_CAP_NOTIFY_MULT, 4), VP_PIO_MULT);
	uint32_t n = cfg_rd(b, 1, p + 1, 1);
	while (n && (cfg_rd(b, 1, n, 1) != PCI_CAP_ID_VNDR ||
		     cfg_rd(b, 1, n + VP_CAP_CFG_TYPE, 1) != VIRTIO_PCI_CAP_NOTIFY_CFG))
		n = cfg_rd(b, 1, n + 1, 1);
	assert_int_not_equal(n, 0);
	assert_int_equal(cfg_rd(b, 1, n + VP_CAP_BAR, 1), VP_BAR);
	assert_int_equal(cfg_rd(b, 1, n + VP_CAP_OFFSET, 4), VP_NOTIFY_OFF);
	assert_int_equal(cfg_rd(b, 1, n + VP_CAP_LENGTH, 4), NQ * VP_NOTIFY_MULT);
	assert_int_equal(cfg_rd(b, 1, n + VP_CAP_NOTIFY_MULT, 4), VP_NOTIFY_MULT);
	/* The port BAR: an I/O BAR in the I/O window. */
	uint32_t io = cfg_rd(b, 1, PCI_BAR0 + 4 * VP_PIO_BAR, 4);
	assert_int_equal(io & PCI_BAR_IO, PCI_BAR_IO);
	assert_true((io & ~3u) >= PCI_PIO_START && (io & ~3u) < PCI_PIO_END);
	assert_int_equal(cfg_rd(b, 1, f->msix_cap + PCI_MSIX_FLAGS, 2), NQ); /* NQ + 1 vectors */
	assert_int_equal(cr(f, VP_NUM_QUEUES, 2), NQ);

	struct bus_region r;
	assert_true(bus_find(b, BUS_MMIO, f->bar, &r));
	assert_string_equal(r.name, "virtio-test0");
	assert_string_equal(r.reg_name(r.opaque, VP_STATUS, true), "common device_status");
	assert_string_equal(r.reg_name(r.opaque, VP_Q_DESC + 4, true), "common queue_desc");
	assert_string_equal(r.reg_name(r.opaque, VP_NOTIFY_OFF + 4, true), "notify q1");
	assert_string_equal(r.reg_name(r.opaque, VP_ISR_OFF, false), "isr");
	assert_string_equal(r.reg_name(r.opaque, VP_DEVICE_OFF + 2, false), "cfg");
	assert_true(bus_find(b, BUS_MMIO, f->tab, &r));
	assert_string_equal(r.name, "virtio-test0");
}

static void test_features(void **state)
{
	struct vfx *f = *state;
	cw(f, VP_DFSELECT, 4, 0);
	uint64_t lo = cr(f, VP_DF, 4);
	cw(f, VP_DFSELECT, 4, 1);
	uint64_t feat = lo | cr(f, VP_DF, 4) << 32;
	assert_true(feat & (1ULL << VIRTIO_F_VERSION_1));
	assert_true(feat & (1ULL << VIRTQ_F_EVENT_IDX));
	assert_true(feat & (1ULL << VIRTQ_F_INDIRECT_DESC));
	assert_true(feat & (1ULL << 6));		     /* the device's own */
	assert_false(feat & (1ULL << VIRTIO_F_RING_PACKED)); /* not implemented */
	cw(f, VP_DFSELECT, 4, 2);
	assert_int_equal(cr(f, VP_DF, 4), 0);
	assert_int_equal(cr(f, VP_DF, 2), 0); /* wrong width: reads 0 */
}

static void test_status_machine(void **state)
{
	struct vfx *f = *state;
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_DRIVER); /* without ACKNOWLEDGE */
	assert_int_equal(status(f), 0);
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE);
	assert_int_equal(status(f), 1);
	cw(f, VP_STATUS, 1, 3);
	assert_int_equal(status(f), 3);
	cw(f, VP_STATUS, 1, 3 | VIRTIO_STATUS_DRIVER_OK); /* without FEATURES_OK */
	assert_int_equal(status(f), 3);
	assert_int_equal(f->t.activates, 0);

	write_features(f, FEAT_OK & ~(1ULL << VIRTIO_F_VERSION_1)); /* a legacy driver */
	cw(f, VP_STATUS, 1, 3 | VIRTIO_STATUS_FEATURES_OK);
	assert_int_equal(status(f), 3);
	write_features(f, FEAT_OK | (1ULL << 50)); /* not offered */
	cw(f, VP_STATUS, 1, 3 | VIRTIO_STATUS_FEATURES_OK);
	assert_int_equal(status(f), 3);
	write_features(f, FEAT_OK);
	cw(f, VP_GFSELECT, 4, 1);
	assert_int_equal(cr(f, VP_GF, 4), FEAT_OK >> 32);
	cw(f, VP_STATUS, 1, 3 | VIRTIO_STATUS_FEATURES_OK);
	assert_int_equal(status(f), 0x0b);
	assert_int_equal(f->t.vdev.driver_features, FEAT_OK);
	assert_true(virtio_has_feature(&f->t.vdev, VIRTIO_F_VERSION_1));
	write_features(f, 0); /* after FEATURES_OK: ignored */
	assert_int_equal(f->t.vdev.driver_features, FEAT_OK);
	cw(f, VP_GFSELECT, 4, 0);
	assert_int_equal(cr(f, VP_GF, 4), (uint32_t)FEAT_OK);

	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE); /* clearing bits: ignored */
	assert_int_equal(status(f), 0x0b);
	cw(f, VP_STATUS, 1, 0x0b | VIRTIO_STATUS_NEEDS_RESET); /* device-owned bit */
	assert_int_equal(status(f), 0x0b);
	driver_ok(f);
	assert_int_equal(status(f), 0x0f);
	assert_int_equal(f->t.activates, 1);
	driver_ok(f); /* again: no second activation */
	assert_int_equal(f->t.activates, 1);
	cw(f, VP_STATUS, 1, 0x0f | VIRTIO_STATUS_FAILED);
	assert_int_equal(status(f), 0x8f);
}

static void test_queue_config_frozen(void **state)
{
	struct vfx *f = *state;
	struct virtq *vq = &f->t.vdev.vqs[0];
	negotiate(f, FEAT_OK);
	cw(f, VP_Q_SELECT, 2, 0);
	assert_int_equal(cr(f, VP_Q_SIZE, 2), QMAX);
	cw(f, VP_Q_SIZE, 2, 100); /* not a power of 2 */
	assert_int_equal(cr(f, VP_Q_SIZE, 2), QMAX);
	cw(f, VP_Q_SIZE, 2, 512); /* above the maximum */
	assert_int_equal(cr(f, VP_Q_SIZE, 2), QMAX);
	setup_queue(f, 0, 64);
	assert_int_equal(cr(f, VP_Q_SIZE, 2), 64);
	assert_int_equal(cr(f, VP_Q_DESC, 8), 0x10000);
	assert_int_equal(cr(f, VP_Q_DRIVER, 4), 0x14000);
	assert_int_equal(cr(f, VP_Q_DRIVER + 4, 4), 0);
	assert_int_equal(cr(f, VP_Q_DEVICE, 8), 0x18000);
	assert_int_equal(cr(f, VP_Q_ENABLE, 2), 1);
	assert_int_equal(cr(f, VP_Q_NOFF, 2), 0);
	cw(f, VP_Q_MSIX, 2, NQ); /* the last valid vector */
	assert_int_equal(cr(f, VP_Q_MSIX, 2), NQ);
	cw(f, VP_Q_MSIX, 2, NQ + 1);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	cw(f, VP_MSIX_CONFIG, 2, 0);
	assert_int_equal(cr(f, VP_MSIX_CONFIG, 2), 0);
	cw(f, VP_Q_SELECT, 2, 1);
	assert_int_equal(cr(f, VP_Q_NOFF, 2), 1);
	cw(f, VP_Q_SELECT, 2, NQ); /* no such queue */
	assert_int_equal(cr(f, VP_Q_SIZE, 2), 0);
	cw(f, VP_Q_SIZE, 2, 16);
	cw(f, VP_Q_ENABLE, 2, 1);
	assert_int_equal(cr(f, VP_Q_ENABLE, 2), 0);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), VIRTIO_MSI_NO_VECTOR);

	driver_ok(f);
	assert_int_equal(status(f), 0x0f);
	assert_true(vq->enabled);
	assert_true(vq->event_idx);
	assert_false(vq->indirect); /* offered, not accepted */
	assert_false(f->t.vdev.vqs[1].enabled);
	/* Frozen: nothing changes the live queue (or enables another). */
	cw(f, VP_Q_SELECT, 2, 0);
	cw(f, VP_Q_SIZE, 2, 32);
	cw(f, VP_Q_DESC, 8, 0x20000);
	cw(f, VP_Q_DEVICE + 4, 4, 1);
	assert_int_equal(vq->size, 64);
	assert_int_equal(vq->desc_gpa, 0x10000);
	assert_int_equal(vq->used_gpa, 0x18000);
	cw(f, VP_Q_SELECT, 2, 1);
	cw(f, VP_Q_ENABLE, 2, 1);
	assert_int_equal(cr(f, VP_Q_ENABLE, 2), 0);
	/* Odd accesses: wrong widths and offsets read 0 and change nothing. */
	assert_int_equal(cr(f, VP_Q_SIZE + 1, 1), 0);
	assert_int_equal(cr(f, VP_Q_DESC + 2, 4), 0);
	assert_int_equal(cr(f, VP_COMMON_LEN, 4), 0);
	cw(f, VP_STATUS, 2, 0); /* status is one byte wide */
	assert_int_equal(status(f), 0x0f);
}

static void test_kicks_trapped(void **state)
{
	struct vfx *f = *state;
	negotiate(f, FEAT_OK);
	setup_queue(f, 0, 16);
	kick(f, 0); /* before DRIVER_OK: dropped */
	assert_int_equal(f->t.notifies[0], 0);
	driver_ok(f);
	kick(f, 0);
	assert_int_equal(f->t.notifies[0], 1);
	kick(f, 1); /* never enabled */
	assert_int_equal(f->t.notifies[1], 0);
	mmio_wr(&f->trap, f->bar + VP_NOTIFY_OFF + 2, 2, 0);	 /* not a queue's address */
	mmio_wr(&f->trap, f->bar + VP_NOTIFY_OFF + 4 * 9, 2, 9); /* past the queues */
	mmio_wr(&f->trap, f->bar + VP_BAR_SIZE - 4, 4, 0);
	assert_int_equal(f->t.notifies[0], 1);
	cw(f, VP_STATUS, 1, 0);
	kick(f, 0);
	assert_int_equal(f->t.notifies[0], 1);
}

static void msix_program(struct vfx *f, unsigned int vec, uint32_t data)
{
	mmio_wr(&f->trap, f->tab + 16 * vec, 4, 0xfee00000);
	mmio_wr(&f->trap, f->tab + 16 * vec + 4, 4, 0);
	mmio_wr(&f->trap, f->tab + 16 * vec + 8, 4, data);
	mmio_wr(&f->trap, f->tab + 16 * vec + 12, 4, 0);
}

static int vector_efd(struct vfx *f, uint32_t data)
{
	for (int i = 0; i < f->host.nr_routes; i++)
		if (f->host.routes[i].data == data)
			return f->host.irqfd_efd[i];
	fail();
	return -1;
}

static void test_interrupts_msix(void **state)
{
	struct vfx *f = *state;
	struct virtio_dev *vdev = &f->t.vdev;
	cfg_wr(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	msix_program(f, 0, 0x40);
	msix_program(f, 1, 0x41);
	negotiate(f, FEAT_OK);
	cw(f, VP_MSIX_CONFIG, 2, 0);
	setup_queue(f, 0, 16);
	cw(f, VP_Q_MSIX, 2, 1);
	driver_ok(f);
	int cfg_efd = vector_efd(f, 0x40), q_efd = vector_efd(f, 0x41);
	vdev->transport->notify_queue(vdev, 0);
	assert_int_equal(efd_take(q_efd), 1);
	assert_int_equal(efd_take(cfg_efd), 0);
	vdev->transport->notify_config(vdev);
	assert_int_equal(efd_take(cfg_efd), 1);
	assert_int_equal(f->host.line_changes, 0); /* no INTx with MSI-X */
	/* ISR: the config bit is set for every config interrupt, the queue
	 * bit only without MSI-X. */
	assert_int_equal(mmio_rd(&f->trap, f->bar + VP_ISR_OFF, 1), VIRTIO_ISR_CONFIG);
	/* A masked vector pends; unmasking delivers. */
	mmio_wr(&f->trap, f->tab + 16 + 12, 4, 1);
	vdev->transport->notify_queue(vdev, 0);
	assert_int_equal(efd_take(q_efd), 0);
	mmio_wr(&f->trap, f->tab + 16 + 12, 4, 0);
	assert_int_equal(efd_take(q_efd), 1);
	/* NO_VECTOR: no interrupt at all; bad queue index: ignored. */
	cw(f, VP_STATUS, 1, 0);
	vdev->transport->notify_queue(vdev, 0);
	vdev->transport->notify_queue(vdev, 7);
	assert_int_equal(efd_take(q_efd), 0);
	assert_int_equal(f->host.line_changes, 0);
}

static void test_interrupts_intx(void **state)
{
	struct vfx *f = *state;
	struct virtio_dev *vdev = &f->t.vdev;
	uint32_t gsi = cfg_rd(&f->trap, 1, PCI_INTERRUPT_LINE, 1);
	assert_int_equal(gsi, pci_intx_gsi(1, 0));
	bring_up(f, FEAT_OK);
	vdev->transport->notify_queue(vdev, 0);
	assert_int_equal(f->host.line[gsi], 1);
	vdev->transport->notify_config(vdev);
	assert_int_equal(mmio_rd(&f->trap, f->bar + VP_ISR_OFF, 1),
			 VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG);
	assert_int_equal(f->host.line[gsi], 0); /* the read acknowledged it */
	assert_int_equal(mmio_rd(&f->trap, f->bar + VP_ISR_OFF, 1), 0);
	mmio_wr(&f->trap, f->bar + VP_ISR_OFF, 1, 0xff); /* read-only */
	assert_int_equal(mmio_rd(&f->trap, f->bar + VP_ISR_OFF, 1), 0);
}

/* virtio_complete pushes and interrupts unless the driver suppressed it. */
static void test_complete(void **state)
{
	struct vfx *f = *state;
	struct virtio_dev *vdev = &f->t.vdev;
	bring_up(f, FEAT_OK & ~(1ULL << VIRTQ_F_EVENT_IDX));
	uint32_t gsi = cfg_rd(&f->trap, 1, PCI_INTERRUPT_LINE, 1);
	struct virtq_desc d = {.addr = 0x80000, .len = 64, .flags = VIRTQ_DESC_F_WRITE};
	memcpy(fake_mem_at(&f->mem, 0x10000), &d, sizeof(d));
	uint16_t avail[3] = {0, 1, 0}; /* flags, idx, ring[0] */
	memcpy(fake_mem_at(&f->mem, 0x14000), avail, sizeof(avail));
	static struct virtq_elem elem;
	assert_int_equal(virtq_pop(&vdev->vqs[0], vdev->gm, &elem), 1);
	virtio_complete(vdev, 0, elem.head, 64);
	uint16_t used_idx;
	memcpy(&used_idx, fake_mem_at(&f->mem, 0x18002), 2);
	assert_int_equal(used_idx, 1);
	assert_int_equal(f->host.line[gsi], 1);
	assert_int_equal(mmio_rd(&f->trap, f->bar + VP_ISR_OFF, 1), VIRTIO_ISR_QUEUE);
	virtio_complete(vdev, 5, 0, 0); /* no such queue: ignored */
}

static void test_broken_queue(void **state)
{
	struct vfx *f = *state;
	struct virtio_dev *vdev = &f->t.vdev;
	uint32_t gsi = cfg_rd(&f->trap, 1, PCI_INTERRUPT_LINE, 1);
	bring_up(f, FEAT_OK);
	virtq_mark_broken(&vdev->vqs[0], VIRTQ_ERR_DEVICE);
	assert_int_equal(status(f), 0x0f | VIRTIO_STATUS_NEEDS_RESET);
	assert_int_equal(f->host.line[gsi], 1);
	assert_int_equal(mmio_rd(&f->trap, f->bar + VP_ISR_OFF, 1), VIRTIO_ISR_CONFIG);
	virtio_dev_needs_reset(vdev); /* once per reset cycle */
	assert_int_equal(f->host.line[gsi], 0);
	/* Reset recovers. */
	cw(f, VP_STATUS, 1, 0);
	assert_int_equal(status(f), 0);
	assert_false(vdev->vqs[0].broken);
	bring_up(f, FEAT_OK);

	/* Rings outside RAM: the queue breaks at DRIVER_OK, the device is not
	 * activated and gets no kicks. */
	cw(f, VP_STATUS, 1, 0);
	negotiate(f, FEAT_OK);
	setup_queue(f, 0, 16);
	cw(f, VP_Q_DEVICE, 8, 0xfff00000ULL);
	int activates = f->t.activates;
	driver_ok(f);
	assert_int_equal(f->t.activates, activates);
	assert_true(status(f) & VIRTIO_STATUS_NEEDS_RESET);
	kick(f, 0);
	assert_int_equal(f->t.notifies[0], 0);

	/* The device refusing activation: NEEDS_RESET as well. */
	cw(f, VP_STATUS, 1, 0);
	f->t.activate_ret = -1;
	negotiate(f, FEAT_OK);
	setup_queue(f, 0, 16);
	driver_ok(f);
	assert_true(status(f) & VIRTIO_STATUS_NEEDS_RESET);
	kick(f, 0);
	assert_int_equal(f->t.notifies[0], 0);
}

static void test_reset(void **state)
{
	struct vfx *f = *state;
	struct virtio_dev *vdev = &f->t.vdev;
	bring_up(f, FEAT_OK);
	cw(f, VP_MSIX_CONFIG, 2, 0);
	cw(f, VP_Q_SELECT, 2, 0);
	cw(f, VP_Q_MSIX, 2, 1);
	vdev->transport->notify_queue(vdev, 0); /* INTx up */
	cw(f, VP_STATUS, 1, 0);
	assert_int_equal(f->t.resets, 1);
	assert_int_equal(status(f), 0);
	assert_int_equal(vdev->driver_features, 0);
	assert_false(vdev->vqs[0].enabled);
	assert_int_equal(vdev->vqs[0].size, QMAX);
	assert_int_equal(vdev->vqs[0].desc_gpa, 0);
	assert_int_equal(cr(f, VP_Q_SELECT, 2), 0);
	assert_int_equal(cr(f, VP_Q_ENABLE, 2), 0);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	assert_int_equal(cr(f, VP_MSIX_CONFIG, 2), VIRTIO_MSI_NO_VECTOR);
	cw(f, VP_GFSELECT, 4, 0);
	assert_int_equal(cr(f, VP_GF, 4), 0);
	assert_int_equal(f->host.line[cfg_rd(&f->trap, 1, PCI_INTERRUPT_LINE, 1)], 0);
	bring_up(f, FEAT_OK); /* and again */
	assert_int_equal(f->t.activates, 2);
	kick(f, 0);
	assert_int_equal(f->t.notifies[0], 1);
}

static void test_device_config(void **state)
{
	struct vfx *f = *state;
	uint64_t dev = f->bar + VP_DEVICE_OFF;
	assert_int_equal(mmio_rd(&f->trap, dev, 4), 0x13121110);
	assert_int_equal(mmio_rd(&f->trap, dev + 11, 1), 0x1b);
	assert_int_equal(mmio_rd(&f->trap, dev + 8, 8), 0); /* crosses the end */
	assert_int_equal(mmio_rd(&f->trap, dev + 12, 4), 0);
	assert_int_equal(mmio_rd(&f->trap, dev + 1, 3), 0); /* odd length */
	assert_int_equal(f->t.cfg_reads, 2);
	mmio_wr(&f->trap, dev + 4, 2, 0xbeef);
	assert_int_equal(f->t.config[4], 0xef);
	mmio_wr(&f->trap, dev + 10, 4, 0xffffffff);
	assert_int_equal(f->t.cfg_writes, 1);
	atomic_store(&f->t.vdev.config_generation, 0x105);
	assert_int_equal(cr(f, VP_CFG_GENERATION, 1), 5);
}

static void test_pci_cfg_window(void **state)
{
	struct vfx *f = *state;
	struct bus *b = &f->trap;
	uint32_t c = cfg_find_cap(b, 1, PCI_CAP_ID_VNDR, VIRTIO_PCI_CAP_PCI_CFG);
	cfg_wr(b, 1, c + VP_CAP_BAR, 1, VP_BAR);
	cfg_wr(b, 1, c + VP_CAP_OFFSET, 4, VP_STATUS);
	cfg_wr(b, 1, c + VP_CAP_LENGTH, 4, 1);
	cfg_wr(b, 1, c + VP_CAP_PCI_CFG_DATA, 4, VIRTIO_STATUS_ACKNOWLEDGE);
	assert_int_equal(status(f), VIRTIO_STATUS_ACKNOWLEDGE);
	cw(f, VP_STATUS, 1, 3);
	assert_int_equal(cfg_rd(b, 1, c + VP_CAP_PCI_CFG_DATA, 1), 3);
	cfg_wr(b, 1, c + VP_CAP_OFFSET, 4, VP_DEVICE_OFF);
	cfg_wr(b, 1, c + VP_CAP_LENGTH, 4, 4);
	assert_int_equal(cfg_rd(b, 1, c + VP_CAP_PCI_CFG_DATA, 4), 0x13121110);
	/* Invalid windows do nothing. */
	cfg_wr(b, 1, c + VP_CAP_LENGTH, 4, 3);
	cfg_wr(b, 1, c + VP_CAP_PCI_CFG_DATA, 4, 0);
	cfg_wr(b, 1, c + VP_CAP_OFFSET, 4, 0xfffffffc);
	cfg_wr(b, 1, c + VP_CAP_LENGTH, 4, 4);
	cfg_wr(b, 1, c + VP_CAP_PCI_CFG_DATA, 4, 0);
	cfg_wr(b, 1, c + VP_CAP_BAR, 1, 5);
	cfg_wr(b, 1, c + VP_CAP_OFFSET, 4, VP_STATUS);
	cfg_wr(b, 1, c + VP_CAP_PCI_CFG_DATA, 4, 0);
	assert_int_equal(status(f), 3);
	assert_int_equal(f->t.config[0], 0x10);
}

static int kick_fd(struct vfx *f, unsigned int q)
{
	return f->vp->q[q].kick_fd;
}

static void test_ioeventfd_follows_bar(void **state)
{
	struct vfx *f = *state;
	struct bus *b = &f->trap;
	for (unsigned int q = 0; q < NQ; q++)
		assert_true(fake_ioeventfd_at(&f->host, kick_fd(f, q),
					      f->bar + VP_NOTIFY_OFF + VP_NOTIFY_MULT * q));
	cfg_wr(b, 1, PCI_BAR0, 4, 0xd0000000);
	for (unsigned int q = 0; q < NQ; q++) {
		assert_false(fake_ioeventfd_at(&f->host, kick_fd(f, q),
					       f->bar + VP_NOTIFY_OFF + VP_NOTIFY_MULT * q));
		assert_true(fake_ioeventfd_at(&f->host, kick_fd(f, q),
					      0xd0000000 + VP_NOTIFY_OFF + VP_NOTIFY_MULT * q));
	}
	f->bar = 0xd0000000;
	/* A kick that traps anyway goes to the I/O thread's eventfd. */
	bring_up(f, FEAT_OK);
	kick(f, 1);
	assert_int_equal(efd_take(kick_fd(f, 1)), 1);
	assert_int_equal(f->t.notifies[1], 0);
	cfg_wr(b, 1, PCI_COMMAND, 2, 0);
	for (int i = 0; i < f->host.nr_io; i++)
		assert_false(f->host.io[i].assigned);
}

/* A trapped write to queue q's port kicks q (the 16-bit write Linux makes,
 * and any other length at that port); a port between queues', past the
 * last queue or a read does nothing. */
static void test_pio_notify_traps(void **state)
{
	struct vfx *f = *state;
	uint16_t port = pio_base(f);
	bring_up(f, FEAT_OK); /* queue 0 only */
	pio_kick(f, port, 2, 0);
	assert_int_equal(f->t.notifies[0], 1);
	pio_kick(f, port, 4, 0);
	assert_int_equal(f->t.notifies[0], 2);
	pio_kick(f, port + 1, 1, 0);
	pio_kick(f, port + VP_PIO_MULT * NQ, 2, NQ);
	pio_kick(f, port + VP_PIO_BAR_SIZE - 2, 2, 0);
	uint32_t v = 0xffffffff;
	bus_dispatch(&f->trap, BUS_PIO, port, &v, 2, false, 0);
	assert_int_equal(v & 0xffff, 0);
	assert_int_equal(f->t.notifies[0], 2);
	pio_kick(f, port + VP_PIO_MULT, 2, 1); /* never enabled */
	assert_int_equal(f->t.notifies[1], 0);
}

/* Each queue's ioeventfd sits at its port too (16-bit writes), follows the
 * BAR when the guest moves it and goes when I/O decoding is turned off. */
static void test_pio_ioeventfd_follows_bar(void **state)
{
	struct vfx *f = *state;
	struct bus *b = &f->trap;
	uint16_t port = pio_base(f);
	for (unsigned int q = 0; q < NQ; q++)
		assert_true(fake_ioeventfd_pio(&f->host, kick_fd(f, q), port + VP_PIO_MULT * q, 2));
	uint16_t to = 0xe000;
	cfg_wr(b, 1, PCI_BAR0 + 4 * VP_PIO_BAR, 4, to);
	for (unsigned int q = 0; q < NQ; q++) {
		assert_false(
		    fake_ioeventfd_pio(&f->host, kick_fd(f, q), port + VP_PIO_MULT * q, 2));
		assert_true(fake_ioeventfd_pio(&f->host, kick_fd(f, q), to + VP_PIO_MULT * q, 2));
	}
	/* A kick that traps anyway goes to the I/O thread's eventfd. */
	bring_up(f, FEAT_OK);
	pio_kick(f, to + VP_PIO_MULT, 2, 1);
	assert_int_equal(efd_take(kick_fd(f, 1)), 1);
	assert_int_equal(f->t.notifies[1], 0);
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	for (unsigned int q = 0; q < NQ; q++) {
		assert_false(fake_ioeventfd_pio(&f->host, kick_fd(f, q), to + VP_PIO_MULT * q, 2));
		/* I/O decoding off leaves the MMIO notify as it was */
		assert_true(fake_ioeventfd_at(&f->host, kick_fd(f, q),
					      f->bar + VP_NOTIFY_OFF + VP_NOTIFY_MULT * q));
	}
	/* back on: the teardown must take them away again */
	pio_base(f);
	assert_true(fake_ioeventfd_pio(&f->host, kick_fd(f, 1), to + VP_PIO_MULT, 2));
}

/* The PCI-config window reaches the port BAR too (virtio 1.2 §4.1.4.9):
 * a 16-bit write of the queue's offset kicks it. */
static void test_pio_notify_by_cfg_window(void **state)
{
	struct vfx *f = *state;
	struct bus *b = &f->trap;
	bring_up(f, FEAT_OK);
	uint32_t c = cfg_find_cap(b, 1, PCI_CAP_ID_VNDR, VIRTIO_PCI_CAP_PCI_CFG);
	cfg_wr(b, 1, c + VP_CAP_BAR, 1, VP_PIO_BAR);
	cfg_wr(b, 1, c + VP_CAP_OFFSET, 4, 0);
	cfg_wr(b, 1, c + VP_CAP_LENGTH, 4, 2);
	cfg_wr(b, 1, c + VP_CAP_PCI_CFG_DATA, 2, 0);
	assert_int_equal(f->t.notifies[0], 1);
	cfg_wr(b, 1, c + VP_CAP_OFFSET, 4, VP_PIO_BAR_SIZE); /* past the BAR */
	cfg_wr(b, 1, c + VP_CAP_PCI_CFG_DATA, 2, 0);
	assert_int_equal(f->t.notifies[0], 1);
}

/* A guest cycling DRIVER_OK and reset on a device that hands its queues
 * off (vhost=on) and takes them back: 10,000 cycles, with the handoff
 * succeeding and with it failing half-way (no vector for queue 1), add no
 * I/O-thread handlers beyond the one per queue from attach. */
static void test_handoff_cycles_bounded(void **state)
{
	struct vfx *f = *state;
	f->t.handoff = true;
	assert_int_equal(f->io.nr_handlers, NQ);
	cfg_wr(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	msix_program(f, 0, 0x40);
	msix_program(f, 1, 0x41);
	for (int i = 0; i < 10000; i++) {
		negotiate(f, FEAT_OK);
		setup_queue(f, 0, 16);
		cw(f, VP_Q_MSIX, 2, 0);
		setup_queue(f, 1, 16);
		cw(f, VP_Q_MSIX, 2, i % 2 ? 1 : VIRTIO_MSI_NO_VECTOR);
		driver_ok(f);
		assert_int_equal(f->t.handed, i % 2 ? NQ : 0);
		cw(f, VP_STATUS, 1, 0);
	}
	assert_int_equal(f->t.activates, 10000);
	assert_int_equal(f->io.nr_handlers, NQ);
	/* Taken back: a kick reaches the I/O thread's epoll set again. */
	for (unsigned int q = 0; q < NQ; q++)
		assert_false(f->vp->q[q].handed_off);
}

/* vhost=on with poll=: a queue polled before a reset, handed to vhost at
 * the next DRIVER_OK, is left alone: the poller reads none of its ring
 * (guest RAM is inaccessible here: a read would fault), calls the device
 * for none of its work, and stops instead of spinning on it. */
static void test_poller_skips_handed_off_queue(void **state)
{
	struct vfx *f = *state;
	struct iothread_poller *p = &f->vp->q[1].poller;
	assert_true(f->vp->q[1].polled);
	cfg_wr(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	msix_program(f, 0, 0x40);
	msix_program(f, 1, 0x41);
	f->t.handoff = true;
	negotiate(f, FEAT_OK);
	setup_queue(f, 0, 16);
	cw(f, VP_Q_MSIX, 2, 0);
	setup_queue(f, 1, 16);
	cw(f, VP_Q_MSIX, 2, 1);
	driver_ok(f);
	assert_int_equal(f->t.handed, NQ);
	/* The poller was polling (started by a kick before the handoff), and
	 * the guest has made a chain available on the ring vhost now owns. */
	iothread_poller_kick(&f->io, p);
	assert_true(p->st.polling);
	*(uint16_t *)fake_mem_at(&f->mem, 0x20000 + 0x4000 + 2) = 1;
	fake_mem_protect(&f->mem, false);
	uint64_t t = p->st.started_ns;
	for (int i = 0; i < 1000 && f->io.nr_polling; i++)
		iothread_poll_once(&f->io, t + (uint64_t)i * 1000000);
	fake_mem_protect(&f->mem, true);
	assert_int_equal(f->io.nr_polling, 0);
	assert_false(p->st.polling);
	assert_int_equal(f->t.notifies[1], 0);
}

/* A device that stopped at its budget asks to be called again: the kick
 * eventfd fires as if the guest had kicked, unless vhost owns it. */
static void test_queue_resched(void **state)
{
	struct vfx *f = *state;
	struct virtio_dev *vdev = &f->t.vdev;
	assert_int_equal(vdev->transport->queue_resched(vdev, 1), 0);
	assert_int_equal(efd_take(kick_fd(f, 1)), 1);
	assert_int_equal(efd_take(kick_fd(f, 0)), 0);
	assert_int_equal(vdev->transport->queue_resched(vdev, NQ), -1);
	f->vp->q[1].handed_off = true;
	assert_int_equal(vdev->transport->queue_resched(vdev, 1), -1);
	assert_int_equal(efd_take(kick_fd(f, 1)), 0);
	f->vp->q[1].handed_off = false;
}

/* Without an I/O thread reading the kicks, nothing would call back. */
static void test_queue_resched_trapped(void **state)
{
	struct vfx *f = *state;
	struct virtio_dev *vdev = &f->t.vdev;
	assert_int_equal(vdev->transport->queue_resched(vdev, 0), -1);
}

static void test_attach_errors(void **state)
{
	struct vfx *f = *state;
	struct virtio_pci_env env = {.pci = f->pci, .gm = &f->mem.gm};
	char err[128];
	static struct tvdev t;
	tvdev_fill(&t, "bad0");
	t.vdev.num_queues = 0;
	assert_int_equal(virtio_pci_attach(&env, &t.vdev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "queues"));
	t.vdev.num_queues = VIRTIO_MAX_QUEUES + 1;
	assert_int_equal(virtio_pci_attach(&env, &t.vdev, err, sizeof(err)), -1);
	tvdev_fill(&t, "bad0");
	t.vdev.queue_max_size = 100;
	assert_int_equal(virtio_pci_attach(&env, &t.vdev, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "power of 2"));
	tvdev_fill(&t, "bad0");
	t.vdev.config_len = VIRTIO_PCI_CONFIG_MAX + 1;
	assert_int_equal(virtio_pci_attach(&env, &t.vdev, err, sizeof(err)), -1);
	tvdev_fill(&t, "bad0");
	t.vdev.ops = NULL;
	assert_int_equal(virtio_pci_attach(&env, &t.vdev, err, sizeof(err)), -1);
	assert_null(t.vdev.transport);

	/* 30 more devices fill the bus; the 32nd gets the slot error. */
	static struct tvdev more[PCI_MAX_DEVICES];
	for (int i = 0; i < PCI_MAX_DEVICES - 2; i++) {
		tvdev_fill(&more[i], "more");
		assert_int_equal(virtio_pci_attach(&env, &more[i].vdev, err, sizeof(err)), 0);
	}
	tvdev_fill(&more[PCI_MAX_DEVICES - 1], "last");
	assert_int_equal(virtio_pci_attach(&env, &more[PCI_MAX_DEVICES - 1].vdev, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "no free PCI slot (max 31 devices)");
	assert_null(more[PCI_MAX_DEVICES - 1].vdev.transport);
}

/* Random accesses of every width (1..8) to the register BAR, the MSI-X
 * BAR and config space, with resets: after each step the read-only
 * registers read back and the device is never given more queues than it
 * has; after the loop a reset and a normal bring-up work and a kick
 * reaches the device. Memory errors: ASan in make unit-asan.
 * tests/fuzz/fuzz_virtio_pci.c does this with coverage feedback. */
static void test_fuzz(void **state)
{
	struct vfx *f = *state;
	srand(42);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 7) ^ (uint64_t)rand();
		uint32_t len = 1 + (uint32_t)rand() % 8;
		int pick = rand() % 8;
		uint64_t off;
		if (pick < 4) /* mostly the common configuration */
			off = (uint64_t)rand() % 0x40;
		else if (pick < 6)
			off = (uint64_t)rand() % VP_BAR_SIZE;
		else if (pick == 6)
			off = VP_NOTIFY_OFF + (uint64_t)rand() % 16;
		else
			off = VP_DEVICE_OFF + (uint64_t)rand() % 16;
		if (rand() % 64 == 0) /* sometimes walk through a reset */
			cw(f, VP_STATUS, 1, rand() % 2 ? 0 : 0x0f);
		bus_dispatch(&f->trap, BUS_MMIO, f->bar + off, &v, len, rand() % 2, 0);
		if (rand() % 16 == 0)
			bus_dispatch(&f->trap, BUS_MMIO, f->tab + (uint64_t)rand() % 0x1000, &v,
				     len, rand() % 2, 0);
		if (rand() % 32 == 0)
			cfg_wr(&f->trap, 1, PCI_CAP_START + (uint32_t)rand() % 0xc0,
			       1 << (rand() % 3), (uint32_t)v);
		if (rand() % 64 == 0)
			f->t.vdev.transport->notify_queue(&f->t.vdev, (unsigned int)rand() % 3);
		/* The loop may turn memory decoding off: read through config
		 * space, which it cannot make writable. */
		assert_int_equal(cfg_rd(&f->trap, 1, PCI_VENDOR_ID, 2), VIRTIO_PCI_VENDOR);
		assert_int_equal(cfg_rd(&f->trap, 1, PCI_DEVICE_ID, 2), 0x1040 + VIRTIO_ID_BLOCK);
		assert_int_equal(f->t.notifies[2], 0); /* no queue 2 */
	}
	/* Back to a known state: decoding on at the original BARs, reset,
	 * then the usual bring-up must work and a kick reach queue 0. */
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, 0);
	cfg_wr(&f->trap, 1, PCI_BAR0, 4, (uint32_t)f->bar);
	cfg_wr(&f->trap, 1, PCI_BAR0 + 4, 4, f->bar >> 32);
	cfg_wr(&f->trap, 1, PCI_BAR0 + 4 * VP_MSIX_BAR, 4, (uint32_t)f->tab);
	cfg_wr(&f->trap, 1, PCI_BAR0 + 4 * VP_MSIX_BAR + 4, 4, f->tab >> 32);
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	cw(f, VP_STATUS, 1, 0);
	assert_int_equal(status(f), 0);
	int kicks = f->t.notifies[0];
	bring_up(f, FEAT_OK);
	kick(f, 0);
	assert_int_equal(f->t.notifies[0], kicks + 1);
	assert_int_equal(cr(f, VP_NUM_QUEUES, 2), NQ);
	/* And a reset still undoes all of it. */
	cw(f, VP_STATUS, 1, 0);
	cw(f, VP_Q_SELECT, 2, 0);
	assert_int_equal(cr(f, VP_Q_ENABLE, 2), 0);
	assert_int_equal(cr(f, VP_Q_SIZE, 2), QMAX);
	kick(f, 0);
	assert_int_equal(f->t.notifies[0], kicks + 1);
}

#define VT(fn) cmocka_unit_test_setup_teardown(fn, vfx_setup, vfx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    VT(test_ids_and_caps),
	    VT(test_features),
	    VT(test_status_machine),
	    VT(test_queue_config_frozen),
	    VT(test_kicks_trapped),
	    VT(test_interrupts_msix),
	    VT(test_interrupts_intx),
	    VT(test_complete),
	    VT(test_broken_queue),
	    VT(test_reset),
	    VT(test_device_config),
	    VT(test_pci_cfg_window),
	    cmocka_unit_test_setup_teardown(test_pio_notify_traps, vfx_setup, vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_pio_notify_by_cfg_window, vfx_setup, vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_pio_ioeventfd_follows_bar, vfx_setup_ioeventfd,
					    vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_ioeventfd_follows_bar, vfx_setup_ioeventfd,
					    vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_handoff_cycles_bounded, vfx_setup_iothread,
					    vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_resched, vfx_setup_iothread, vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_poller_skips_handed_off_queue, vfx_setup_polled,
					    vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_resched_trapped, vfx_setup_ioeventfd,
					    vfx_teardown),
	    VT(test_attach_errors),
	    VT(test_fuzz),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
