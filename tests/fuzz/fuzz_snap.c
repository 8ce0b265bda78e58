// SPDX-License-Identifier: Apache-2.0
/* The snapshot state file (src/core/snap.c) and what a restore checks
 * before it applies anything: the x86 machine state's sections
 * (arch_vcpu_check, arch_vm_check) and the UART's and i8042's payloads
 * (uart_restore, i8042_restore), which then run on the restored devices.
 *
 * The first byte picks the form: odd, the rest is a state file as it is
 * (the checksums make almost all of it refused: what is checked is that
 * nothing is read before it is checked); even, the rest is a list of
 * sections (id, instance, length, payload) wrapped into a valid file, so
 * the payloads' own checks are reached.
 *
 * Also the device list (devmgr_snap_list), a virtio-pci function's
 * sections (virtio_pci_restore) onto a fresh device on a fake PCI bus,
 * a balloon's own section (virtio_balloon_restore) and a two-pair
 * virtio-net card's (virtio_net_restore).
 *
 * Checked beyond ASan/UBSan: a parsed image's sections lie inside the
 * input, end to end; a refused payload leaves its device as it was (a
 * refused transport: reset, no queue active); a restored device's queue
 * and FIFO stay within their bounds; a restored transport's vectors lie
 * in its MSI-X table and its queues' ring features are the driver's (seeds
 * virtio-pci-indirect, virtio-pci-idle-event-idx: review10); a parsed
 * device list has an option
 * for every device; a restored card's enabled pairs and coalescing are
 * ones its control queue would have taken. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/snap.h"
#include "devices/legacy/i8042.h"
#include "devices/legacy/uart8250.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "fake_pci_host.h"
#include "fuzz_common.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_impl.h"
#include "vmm/devmgr.h"

static void nop_irq(void *opaque, int level)
{
	(void)opaque, (void)level;
}

static void sections_inside(const struct snap_image *img, const uint8_t *b, size_t len)
{
	size_t total = SNAP_HDR_SIZE;
	for (uint32_t i = 0; i < img->nr; i++) {
		const struct snap_section *s = &img->sec[i];
		FZ_CHECK(s->data >= b + SNAP_HDR_SIZE && s->data + s->len <= b + len);
		total += SNAP_SEC_HDR_SIZE + s->len;
	}
	FZ_CHECK(total == len);
}

static void legacy(const struct snap_image *img)
{
	char err[256];
	const struct snap_section *s = snap_find(img, SNAP_ID_UART, 0);
	if (s) {
		struct uart8250 u, before;
		uart_init(&u, nop_irq, NULL, NULL);
		before = u;
		if (uart_restore(&u, s->data, s->len, err, sizeof(err)) < 0) {
			FZ_CHECK(u.rx_count == before.rx_count && u.ier == before.ier);
		} else {
			FZ_CHECK(u.rx_count <= UART_RX_FIFO && u.rx_head < UART_RX_FIFO);
			uint8_t lcr = 0, v;
			uart_access(&u, UART_LCR, &lcr, true);
			for (unsigned int i = 0; i < UART_RX_FIFO + 2; i++)
				uart_access(&u, UART_RBR_THR, &v, false);
			FZ_CHECK(u.rx_count == 0);
		}
		pthread_mutex_destroy(&u.lock);
	}
	s = snap_find(img, SNAP_ID_I8042, 0);
	if (s) {
		struct i8042 k;
		i8042_init(&k, nop_irq, NULL, NULL);
		uint8_t ctr = k.ctr;
		if (i8042_restore(&k, s->data, s->len, err, sizeof(err)) < 0) {
			FZ_CHECK(k.q_count == 0 && k.ctr == ctr);
		} else {
			FZ_CHECK(k.q_count <= I8042_QUEUE);
			uint8_t v;
			for (unsigned int i = 0; i < I8042_QUEUE + 1; i++)
				i8042_access(&k, I8042_DATA_PORT, &v, 1, false);
			FZ_CHECK(k.q_count == 0);
		}
		i8042_destroy(&k);
	}
}

static void fz_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static const struct virtio_dev_ops fz_vops = {.queue_notify = fz_notify};

/* Instance 0's PCI function and transport onto a fresh two-queue device. */
static void transport(const struct snap_image *img)
{
	const struct snap_section *p = snap_find(img, SNAP_ID_PCI_FN, 0);
	const struct snap_section *t = snap_find(img, SNAP_ID_VIRTIO_PCI, 0);
	if (!p || !t)
		return;
	struct bus trap;
	static struct fake_host host;
	memset(&host, 0, sizeof(host));
	bus_init(&trap);
	struct pci_bus *pci = pci_bus_create_with(&trap, &fake_host_ops, &host);
	struct virtio_dev vdev = {.name = "virtio-fuzz0",
				  .device_id = 2,
				  .host_features = 1ULL << 6,
				  .num_queues = 2,
				  .queue_max_size = 256,
				  .ops = &fz_vops};
	struct virtio_pci_env env = {.pci = pci, .gm = &fz_gm};
	char err[256];
	FZ_CHECK(pci && virtio_pci_attach(&env, &vdev, err, sizeof(err)) == 0);
	if (virtio_pci_restore(&vdev, p->data, p->len, t->data, t->len, err, sizeof(err)) < 0) {
		FZ_CHECK(err[0] && !strchr(err, '\n'));
		FZ_CHECK(atomic_load(&vdev.status) == 0);
		for (unsigned int q = 0; q < vdev.num_queues; q++)
			FZ_CHECK(!vdev.vqs[q].enabled);
	} else {
		/* Taken: a queue within its size, on a vector of the MSI-X
		 * table (or none), with ring features only if the driver
		 * took them and the queue went live at DRIVER_OK. */
		struct virtio_pci *vp = vdev.transport_data;
		bool ok = atomic_load(&vdev.status) & VIRTIO_STATUS_DRIVER_OK;
		for (unsigned int q = 0; q < vdev.num_queues; q++) {
			const struct virtq *vq = &vdev.vqs[q];
			uint16_t v = atomic_load(&vp->q[q].vector);
			uint64_t f = ok && vp->q[q].enable ? vdev.driver_features : 0;
			FZ_CHECK(!vq->enabled || vq->size <= 256);
			FZ_CHECK(v == VIRTIO_MSI_NO_VECTOR || v < vp_msix_vectors(&vdev));
			FZ_CHECK(!vq->event_idx || f >> VIRTQ_F_EVENT_IDX & 1);
			FZ_CHECK(!vq->indirect || f >> VIRTQ_F_INDIRECT_DESC & 1);
		}
	}
	pci_bus_destroy(pci);
	bus_destroy(&trap);
}

/* Instance 1's device section as a balloon's (stats=1, deflate-on-oom;
 * the fuzzer's RAM holds no MiB target) onto a fresh one: refused, the balloon as it was;
 * taken, a target within RAM and a held head within the queue. */
static void balloon(const struct snap_image *img)
{
	const struct snap_section *s = snap_find(img, SNAP_ID_DEVICE, 1);
	if (!s)
		return;
	struct balloon_spec spec = {.deflate_on_oom = true, .stats_s = 1};
	char err[256];
	struct virtio_dev *v =
	    virtio_balloon_create("virtio-balloon0", &spec, &fz_gm, err, sizeof(err));
	FZ_CHECK(v != NULL);
	struct virtio_balloon *b = v->priv;
	if (virtio_balloon_restore(v, s->data, s->len, err, sizeof(err)) < 0) {
		FZ_CHECK(err[0] && !strchr(err, '\n'));
		FZ_CHECK(atomic_load(&b->num_pages) == 0 && b->restored_head == -1 &&
			 b->spec.stats_s == 1 && !b->gstats.have);
	} else {
		FZ_CHECK(atomic_load(&b->num_pages) <= b->ram_pages && b->spec.stats_s &&
			 b->restored_head >= -1 && b->restored_head < (int)v->queue_max_size);
	}
	virtio_balloon_destroy(v);
}

/* Instance 2's device section as a two-pair virtio-net card's (MAC
 * 02:00:00:00:00:42, tap queues over socketpairs) onto a fresh one:
 * refused, the card as built (one pair, no coalescing, nothing held);
 * taken, what VQ_PAIRS_SET and NOTF_COAL would have taken. */
static void net(const struct snap_image *img)
{
	const struct snap_section *s = snap_find(img, SNAP_ID_DEVICE, 2);
	if (!s)
		return;
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	struct tap taps[2];
	int wires[2];
	char err[256];
	for (unsigned int i = 0; i < 2; i++) {
		int sv[2];
		FZ_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
		tap_from_fd(&taps[i], sv[0]);
		wires[i] = sv[1];
	}
	struct virtio_net *n = virtio_net_create("virtio-net0", taps, 2, mac, err, sizeof(err));
	FZ_CHECK(n != NULL);
	bool ok = virtio_net_restore(n, s->data, s->len, err, sizeof(err)) == 0;
	unsigned int curr = atomic_load(&n->curr_pairs);
	FZ_CHECK(ok || (err[0] && !strchr(err, '\n')));
	FZ_CHECK(ok ? curr >= 1 && curr <= 2 : curr == 1);
	FZ_CHECK(n->pairs[1].tap_attached == (curr == 2));
	for (unsigned int d = 0; d < 2; d++) {
		uint32_t us = atomic_load(&n->coal_usecs[d]), max = atomic_load(&n->coal_max[d]);
		FZ_CHECK(ok ? us <= VIRTIO_NET_COAL_USECS_MAX : us == 0 && max == 0);
	}
	for (unsigned int i = 0; !ok && i < 2; i++)
		FZ_CHECK(!n->pairs[i].rx_coal.armed && !n->pairs[i].tx_coal.armed);
	virtio_net_destroy(n);
	close(wires[0]);
	close(wires[1]);
}

static void device_list(const struct snap_image *img)
{
	struct devmgr_snap_list l;
	char err[256];
	if (devmgr_snap_list(img, &l, err, sizeof(err)) < 0) {
		FZ_CHECK(err[0] && !strchr(err, '\n'));
		return;
	}
	FZ_CHECK(l.nr <= DEVMGR_MAX);
	for (unsigned int i = 0; i < l.nr; i++)
		FZ_CHECK(l.name[i][0] && l.arg[i].option[0] && l.arg[i].spec &&
			 !l.arg[i].key == !l.arg[i].value);
	free(l.buf);
}

static void checks(const uint8_t *b, size_t len, bool with_ram)
{
	struct snap_image img;
	char err[256];
	if (snap_parse(&img, b, len, err, sizeof(err)) < 0) {
		FZ_CHECK(err[0] && !strchr(err, '\n'));
		return;
	}
	sections_inside(&img, b, len);
	for (uint32_t cpu = 0; cpu < 4; cpu++)
		(void)arch_vcpu_check(&img, cpu, err, sizeof(err));
	(void)arch_vm_check(&img, err, sizeof(err));
	legacy(&img);
	device_list(&img);
	if (with_ram) { /* fz_gm is set up */
		transport(&img);
		balloon(&img);
		net(&img);
	}
	snap_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1) {
		checks(data + 1, size - 1, false);
		return 0;
	}
	fz_begin(data + 1, size - 1); /* zeroed RAM: restored rings are found */
	struct snap_writer w;
	snap_writer_init(&w);
	static uint8_t payload[8192];
	while (fz_more()) {
		uint32_t id = fz_u8(), inst = fz_u8() & 7;
		size_t n = fz_bytes(payload, fz_u16() % sizeof(payload));
		(void)snap_put(&w, id, inst, payload, n);
	}
	size_t len;
	const uint8_t *b = snap_writer_image(&w, &len);
	if (b)
		checks(b, len, true);
	snap_writer_free(&w);
	return 0;
}
