// SPDX-License-Identifier: Apache-2.0
/* virtio-pci (src/virtio/virtio_pci*.c) as a guest driver sees it: a
 * sequence of register accesses of every width (1..8) to the common
 * configuration, ISR, device configuration, notify area, MSI-X table and
 * PBA, and PCI config space (capabilities, the PCI-config access window,
 * command, BARs), with the real virtio-net (socketpair tap) and virtio-blk
 * (memfd image) behind the transport and rings in fake guest RAM. Kicks
 * are trapped (no ioeventfd), so they run the devices on this thread;
 * virtio-blk's worker is drained after every step. A few "macro" steps
 * (negotiate, set up a queue, DRIVER_OK, enable MSI-X) help the fuzzer
 * reach the data paths; resets come from status writes. */
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/bus.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "fake_pci_host.h"
#include "fuzz_common.h"
#include "pci/pci_msix.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_impl.h"

#define NDEV 2 /* slot 1: virtio-net, slot 2: virtio-blk */

static struct virtio_net *net;
static struct virtio_dev *blk;
static int wire = -1, image_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x43};
	char err[200], spec[64];
	struct tap tap;
	int sv[2];

	(void)argc, (void)argv;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	tap_from_fd(&tap, sv[0]);
	wire = sv[1];
	net = virtio_net_create("virtio-net0", &tap, 1, mac, err, sizeof(err));
	image_fd = memfd_create("fuzz-disk", 0);
	if (!net || image_fd < 0 || ftruncate(image_fd, 0x10000) < 0)
		abort();
	pthread_mutex_init(&net->vdev.lock, NULL);
	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", image_fd);
	blk = virtio_blk_create(spec, 0, err, sizeof(err));
	if (!blk)
		abort();
	return 0;
}

struct rig {
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct virtio_dev *vdev[NDEV];
	struct fz_q g[NDEV][2];
};

static struct virtio_pci *vp_of(struct rig *r, unsigned int d)
{
	return r->vdev[d]->transport_data;
}

static uint64_t bar_addr(struct rig *r, unsigned int d, unsigned int bar)
{
	return vp_of(r, d)->pci.bars[bar].addr;
}

static void mmio(struct rig *r, uint64_t addr, uint32_t len, bool wr, uint64_t v)
{
	bus_dispatch(&r->trap, BUS_MMIO, addr, &v, len, wr, 0);
}

static void common_wr(struct rig *r, unsigned int d, uint32_t off, uint32_t len, uint64_t v)
{
	mmio(r, bar_addr(r, d, VP_BAR) + VP_COMMON_OFF + off, len, true, v);
}

static uint8_t status_rd(struct rig *r, unsigned int d)
{
	uint64_t v = 0;
	bus_dispatch(&r->trap, BUS_MMIO, bar_addr(r, d, VP_BAR) + VP_STATUS, &v, 1, false, 0);
	return (uint8_t)v;
}

/* ---- macro steps: what a driver does, with fuzzed values ---- */

static void negotiate(struct rig *r, unsigned int d)
{
	uint64_t feat = vp_of(r, d)->offered & ~((uint64_t)fz_u8() << fz_u8() % 40);
	common_wr(r, d, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE);
	common_wr(r, d, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	common_wr(r, d, VP_GFSELECT, 4, 0);
	common_wr(r, d, VP_GF, 4, (uint32_t)feat);
	common_wr(r, d, VP_GFSELECT, 4, 1);
	common_wr(r, d, VP_GF, 4, feat >> 32);
	common_wr(r, d, VP_STATUS, 1, status_rd(r, d) | VIRTIO_STATUS_FEATURES_OK);
}

static void setup_queue(struct rig *r, unsigned int d)
{
	unsigned int q = fz_u8() % 2;
	struct fz_q *g = &r->g[d][q];
	fzq_layout(g, 2 * d + q, (uint16_t)(1u << fz_u8() % 9));
	common_wr(r, d, VP_Q_SELECT, 2, q);
	common_wr(r, d, VP_Q_SIZE, 2, g->size);
	common_wr(r, d, VP_Q_DESC, 8, g->desc);
	common_wr(r, d, VP_Q_DRIVER, 8, g->avail);
	common_wr(r, d, VP_Q_DEVICE, 8, g->used);
	common_wr(r, d, VP_Q_MSIX, 2, fz_u8() % 4);
	common_wr(r, d, VP_Q_ENABLE, 2, 1);
}

static void msix_on(struct rig *r, unsigned int d)
{
	uint32_t cap = cfg_find_cap(&r->trap, 1 + d, PCI_CAP_ID_MSIX, 0);
	uint64_t tab = bar_addr(r, d, VP_MSIX_BAR);
	if (cap)
		cfg_wr(&r->trap, 1 + d, cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	for (unsigned int v = 0; v < 4; v++) {
		mmio(r, tab + 16 * v, 4, true, 0xfee00000);
		mmio(r, tab + 16 * v + 8, 4, true, 0x4020 + v);
		mmio(r, tab + 16 * v + 12, 4, true, fz_u8() & 1);
	}
}

/* ---- raw accesses ---- */

static uint64_t bar0_offset(void)
{
	uint8_t sel = fz_u8();
	switch (sel % 8) {
	case 0:
	case 1:
	case 2:
		return VP_COMMON_OFF + fz_u8() % 0x40;
	case 3:
		return VP_ISR_OFF + fz_u8() % 8;
	case 4:
		return VP_DEVICE_OFF + fz_u8() % 0x48;
	case 5:
		return VP_NOTIFY_OFF + fz_u8() % 0x48;
	default:
		return fz_u16() % (VP_BAR_SIZE + 8);
	}
}

static void raw_access(struct rig *r, uint8_t op)
{
	unsigned int d = (op >> 5) & 1;
	uint32_t len = 1 + fz_u8() % 8;
	uint64_t v = fz_u64(), addr;
	if (op & 0x40)
		addr = bar_addr(r, d, VP_MSIX_BAR) + fz_u16() % (PCI_MSIX_BAR_SIZE + 8);
	else
		addr = bar_addr(r, d, VP_BAR) + bar0_offset();
	mmio(r, addr, len, op & 0x80, v);
}

static void cfg_access(struct rig *r, uint8_t op)
{
	static const uint32_t widths[] = {1, 2, 4};
	unsigned int d = (op >> 5) & 1;
	uint32_t reg = op & 0x40 ? fz_u8() : PCI_CAP_START + fz_u8() % 0xc0;
	uint32_t len = widths[fz_u8() % 3];
	if (op & 0x80)
		cfg_wr(&r->trap, 1 + d, reg, len, fz_u32());
	else
		cfg_rd(&r->trap, 1 + d, reg, len);
}

/* The host side of the tap. */
static void wire_step(struct rig *r, uint8_t op)
{
	static uint8_t frame[2048];
	(void)r;
	if (op & 0x80) {
		while (recv(wire, frame, sizeof(frame), MSG_TRUNC) >= 0) {
		}
		virtio_net_tap_event(&net->pairs[0], EPOLLOUT);
		return;
	}
	size_t len = VIRTIO_NET_HDR_LEN + fz_u8() * 4u;
	memset(frame, 0, VIRTIO_NET_HDR_LEN);
	fz_bytes(frame + VIRTIO_NET_HDR_LEN, 8);
	send(wire, frame, len, 0);
	virtio_net_tap_event(&net->pairs[0], EPOLLIN);
}

static void flush_wire(void)
{
	static uint8_t frame[VIRTIO_NET_HDR_LEN + VIRTIO_NET_MAX_FRAME];
	uint64_t cnt;
	while (recv(wire, frame, sizeof(frame), MSG_TRUNC) >= 0) {
	}
	while (recv(net->pairs[0].tap.fd, frame, sizeof(frame), MSG_TRUNC) >= 0) {
	}
	while (read(net->sched_fd, &cnt, sizeof(cnt)) > 0) {
	}
	atomic_store(&net->sched, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rig rig;
	struct rig *r = &rig;
	char err[200];

	fz_begin(data, size);
	flush_wire();
	memset(r, 0, sizeof(*r));
	bus_init(&r->trap);
	r->pci = pci_bus_create_with(&r->trap, &fake_host_ops, &r->host);
	struct virtio_pci_env env = {.pci = r->pci, .gm = &fz_gm, .use_ioeventfd = false};
	r->vdev[0] = &net->vdev;
	r->vdev[1] = blk;
	for (unsigned int d = 0; d < NDEV; d++) {
		if (!r->pci || virtio_pci_attach(&env, r->vdev[d], err, sizeof(err)) < 0)
			abort();
		fzq_layout(&r->g[d][0], 2 * d, 1);
		fzq_layout(&r->g[d][1], 2 * d + 1, 1);
		if (!(fz_u8() & 0x0f)) /* usually: memory decoding and bus mastering on */
			continue;
		cfg_wr(&r->trap, 1 + d, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	}
	for (unsigned int steps = 0; fz_more() && steps < 1024; steps++) {
		uint8_t op = fz_u8();
		unsigned int d = (op >> 5) & 1;
		switch (op % 16) {
		case 0:
			negotiate(r, d);
			break;
		case 1:
			setup_queue(r, d);
			break;
		case 2:
			common_wr(r, d, VP_STATUS, 1, status_rd(r, d) | VIRTIO_STATUS_DRIVER_OK);
			break;
		case 3:
			msix_on(r, d);
			break;
		case 4:
			common_wr(r, d, VP_STATUS, 1, 0); /* reset */
			break;
		case 5:
		case 6:
		case 7:
		case 8:
			raw_access(r, op);
			break;
		case 9:
		case 10:
			cfg_access(r, op);
			break;
		case 11:
			wire_step(r, op);
			break;
		case 12: /* a kick, as the guest writes it */
			mmio(r, bar_addr(r, d, VP_BAR) + VP_NOTIFY_OFF + VP_NOTIFY_MULT * (op >> 7),
			     2, true, 0);
			break;
		default:
			fzq_driver_op(&r->g[d][(op >> 6) & 1], fz_u8());
		}
		virtio_blk_drain(blk);
	}
	/* Teardown as skiff's: quiesce both devices, then drop the bus. */
	for (unsigned int d = 0; d < NDEV; d++) {
		struct virtio_pci *vp = vp_of(r, d);
		pthread_mutex_lock(&vp->lock);
		vp_reset(vp);
		pthread_mutex_unlock(&vp->lock);
	}
	pci_bus_destroy(r->pci);
	FZ_CHECK(r->trap.space[BUS_MMIO].count == 0);
	bus_destroy(&r->trap);
	return 0;
}
