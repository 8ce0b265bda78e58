// SPDX-License-Identifier: Apache-2.0
/* A fake virtio device on the real virtio-pci transport, for unit tests
 * that play the guest through config space and the BARs: the fixture
 * (1 MiB of fake RAM, the device in slot 1, an I/O thread set up but
 * never started where asked), the driver's steps the tests share, and
 * the two sections virtio_pci_save writes, parsed back. Each includer
 * wraps fx_attach with its own device; it includes cmocka first. */
#ifndef SKIFF_TEST_VP_FX_H
#define SKIFF_TEST_VP_FX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/snap.h"
#include "fake_mem.h"
#include "fake_pci_host.h"
#include "iothread/iothread.h"
#include "pci/pci_msix.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_impl.h"

struct fx {
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct fake_mem mem;
	struct virtio_dev vdev;
	uint64_t bar, tab;
	uint32_t msix_cap;
	bool with_io; /* kicks by ioeventfd, for io */
	struct iothread io;
};

/* DEV attached (a copy: name, kind, queues, ops); with_io: its kicks go
 * to ioeventfds of an I/O thread nobody runs. */
static inline struct fx *fx_attach(const struct virtio_dev *dev, bool with_io)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	assert_int_equal(fake_mem_init(&f->mem, 1 << 20), 0);
	f->with_io = with_io;
	if (with_io)
		assert_int_equal(iothread_init(&f->io, "io0"), 0);
	f->vdev = *dev;
	pthread_mutex_init(&f->vdev.lock, NULL);
	struct virtio_pci_env env = {.pci = f->pci,
				     .io = with_io ? &f->io : NULL,
				     .gm = &f->mem.gm,
				     .use_ioeventfd = with_io};
	char err[128];
	assert_int_equal(virtio_pci_attach(&env, &f->vdev, err, sizeof(err)), 0);
	f->msix_cap = cfg_find_cap(&f->trap, 1, PCI_CAP_ID_MSIX, 0);
	return f;
}

static inline void fx_free(struct fx *f)
{
	pci_bus_destroy(f->pci);
	bus_destroy(&f->trap);
	fake_mem_free(&f->mem);
	if (f->with_io)
		iothread_destroy(&f->io);
	pthread_mutex_destroy(&f->vdev.lock);
	free(f);
}

/* The common config window. */
static inline uint64_t cr(struct fx *f, uint32_t off, uint32_t len)
{
	return mmio_rd(&f->trap, f->bar + VP_COMMON_OFF + off, len);
}

static inline void cw(struct fx *f, uint32_t off, uint32_t len, uint64_t v)
{
	mmio_wr(&f->trap, f->bar + VP_COMMON_OFF + off, len, v);
}

/* The BARs decoded, where the firmware put them. */
static inline void fx_decode(struct fx *f)
{
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->bar = cfg_bar64(&f->trap, 1, VP_BAR);
	f->tab = cfg_bar64(&f->trap, 1, VP_MSIX_BAR);
}

static inline void fx_msix_on(struct fx *f)
{
	cfg_wr(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
}

/* MSI-X table entry VEC: the local APIC's address, DATA, unmasked. */
static inline void fx_msix_entry(struct fx *f, unsigned int vec, uint32_t data)
{
	mmio_wr(&f->trap, f->tab + 16 * vec, 4, 0xfee00000);
	mmio_wr(&f->trap, f->tab + 16 * vec + 4, 4, 0);
	mmio_wr(&f->trap, f->tab + 16 * vec + 8, 4, data);
	mmio_wr(&f->trap, f->tab + 16 * vec + 12, 4, 0);
}

/* ACKNOWLEDGE and DRIVER, FEAT written, FEATURES_OK. */
static inline void fx_features(struct fx *f, uint64_t feat)
{
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	cw(f, VP_GFSELECT, 4, 0);
	cw(f, VP_GF, 4, (uint32_t)feat);
	cw(f, VP_GFSELECT, 4, 1);
	cw(f, VP_GF, 4, feat >> 32);
	cw(f, VP_STATUS, 1, cr(f, VP_STATUS, 1) | VIRTIO_STATUS_FEATURES_OK);
}

/* Queue Q enabled: 16 entries, its rings at 0x10000 + 0x10000 * Q
 * (avail +0x4000, used +0x8000), vector VEC. */
static inline void fx_queue(struct fx *f, unsigned int q, uint16_t vec)
{
	uint64_t base = 0x10000 + 0x10000 * (uint64_t)q;
	cw(f, VP_Q_SELECT, 2, q);
	cw(f, VP_Q_SIZE, 2, 16);
	cw(f, VP_Q_DESC, 8, base);
	cw(f, VP_Q_DRIVER, 8, base + 0x4000);
	cw(f, VP_Q_DEVICE, 8, base + 0x8000);
	cw(f, VP_Q_MSIX, 2, vec);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), vec);
	cw(f, VP_Q_ENABLE, 2, 1);
}

/* The PCI function's and the transport's sections of instance INST. */
struct img {
	struct snap_writer w;
	struct snap_image img;
	const struct snap_section *pci, *vp;
};

static inline void img_save(struct fx *f, unsigned int inst, struct img *m)
{
	char err[200];
	snap_writer_init(&m->w);
	assert_int_equal(virtio_pci_save(&f->vdev, &m->w, inst, err, sizeof(err)), 0);
	size_t len;
	const uint8_t *b = snap_writer_image(&m->w, &len);
	assert_int_equal(snap_parse(&m->img, b, len, err, sizeof(err)), 0);
	m->pci = snap_find(&m->img, SNAP_ID_PCI_FN, inst);
	m->vp = snap_find(&m->img, SNAP_ID_VIRTIO_PCI, inst);
	assert_non_null(m->pci);
	assert_non_null(m->vp);
}

static inline void img_free(struct img *m)
{
	snap_image_free(&m->img);
	snap_writer_free(&m->w);
}

#endif
