// SPDX-License-Identifier: Apache-2.0
/* Internal to src/devices/vfio: one passthrough function's state. */
#ifndef SKIFF_VFIO_PRIV_H
#define SKIFF_VFIO_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "pci/pci.h"
#include "devices/vfio/vfio.h"
#include "devices/vfio/vfio_dev.h"

#define VFIO_MSIX_MAX	  2048 /* the capability's table size field */
#define VFIO_MSI_LOG_MAX  5    /* MSI: at most 2^5 = 32 vectors */
#define VFIO_MSI_MAX	  (1u << VFIO_MSI_LOG_MAX)
#define VFIO_BAR_MAX_SLOT 8 /* memory slots per BAR */
#define VFIO_PAGE	  0x1000ull

struct vfio_pci;

/* One mapped piece of a BAR: [off, off + len) of the BAR, at host. */
struct vfio_slot {
	uint64_t off, len;
	void *host;
	int slot; /* KVM memory slot while the BAR is mapped, else -1 */
};

struct vfio_bar {
	struct vfio_pci *v;
	unsigned int index;
	uint64_t size;	 /* the region's, <= the BAR's size */
	uint64_t offset; /* region offset in the device fd */
	struct vfio_slot slots[VFIO_BAR_MAX_SLOT];
	unsigned int nr_slots;
	struct {
		void *p;
		uint64_t off, len; /* of the BAR */
	} maps[VFIO_MAX_AREAS];	   /* the mmaps to undo */
	unsigned int nr_maps;
};

/* One MSI or MSI-X vector: the eventfd VFIO signals, bound by an irqfd
 * to a route while the guest lets it deliver. */
struct vfio_vec {
	int efd;
	int gsi; /* -1 until the vector first becomes deliverable */
	bool bound;
	uint64_t addr; /* what the route says */
	uint32_t data;
};

struct vfio_msix {
	unsigned int cap; /* offset in our config space, 0 if none */
	unsigned int nr;
	unsigned int table_bar, pba_bar;
	uint64_t table_off, pba_off;
	uint32_t (*table)[4]; /* nr entries: addr lo, addr hi, data, control */
	struct vfio_vec *vec;
	int32_t *fds; /* the nr eventfds, for VFIO_DEVICE_SET_IRQS */
	bool enabled, maskall, vfio_on;
};

/* MSI with up to 32 vectors: vector i's message is the guest's address
 * and its data with the low MME bits replaced by i. Per-vector masking is
 * virtual, as MSI-X's: a masked vector has no irqfd, its signals wait in
 * its eventfd, and become its pending bit when looked at. */
struct vfio_msi {
	unsigned int cap; /* offset in our config space, 0 if none */
	bool is64, maskable;
	unsigned int len;      /* of the capability: 10, 14, 20 or 24 */
	unsigned int data_off; /* from cap: the data, mask, pending registers */
	unsigned int mask_off, pend_off;
	unsigned int log_max; /* Multiple Message Capable offered */
	unsigned int nr;      /* vectors VFIO has: 0 when off */
	unsigned int asked;   /* vectors the guest enabled (2^MME) when VFIO said yes */
	uint32_t pending;     /* masked vectors that fired */
	struct vfio_vec vec[VFIO_MSI_MAX];
	int32_t fds[VFIO_MSI_MAX]; /* their eventfds, for VFIO_DEVICE_SET_IRQS */
	bool vfio_on;
};

struct vfio_intx {
	bool present;
	int trigger, unmask; /* eventfds */
	bool on;
};

struct vfio_pci {
	struct pci_device pci; /* first: the pci hooks cast back */
	const struct vfio_dev_ops *ops;
	void *h;
	struct vfio_ctx ctx;
	bool mmap, rom, started;
	uint64_t cfg_offset; /* config region in the device fd */
	/* Config bytes that are the device's own registers (past the header,
	 * in no capability): reads and writes pass through. */
	bool pass[PCI_CFG_SIZE];
	unsigned int exp_cap;		   /* the PCIe capability's offset, 0 if none */
	struct vfio_bar bars[PCI_NUM_RES]; /* the ROM last, with rom=on */
	/* MSI, MSI-X and INTx state: config writes (bus lock) and MSI-X
	 * table writes (any vCPU) both change it. */
	pthread_mutex_t irq_lock;
	struct vfio_msix msix;
	struct vfio_msi msi;
	struct vfio_intx intx;
	char name[40];
	struct log_rl log_rl; /* failures, rate-limited (the guest drives most) */
};

/* vfio_cfg.c: the virtual config space from the device's. */
int vfio_cfg_build(struct vfio_pci *v, char *err, size_t errlen);
void vfio_cfg_write(struct pci_device *dev, uint32_t off, uint32_t len);
void vfio_cfg_read(struct pci_device *dev, uint32_t off, uint8_t *data, uint32_t len);
/* The guest's command bits onto the device's own register (if changed). */
void vfio_cmd_forward(struct vfio_pci *v);

/* vfio_pci.c: the guest's function level reset, as a VFIO reset. */
void vfio_flr(struct vfio_pci *v);

/* vfio_bar.c: BAR regions, their traps and memory slots. */
int vfio_bars_init(struct vfio_pci *v, const uint8_t *devcfg, char *err, size_t errlen);
void vfio_bars_free(struct vfio_pci *v);
void vfio_bar_map(struct pci_device *dev, unsigned int bar, uint64_t addr, bool mapped);

/* vfio_msix.c: the MSI-X table, emulated. */
int vfio_msix_init(struct vfio_pci *v, const uint8_t *devcap, char *err, size_t errlen);
void vfio_msix_free(struct vfio_pci *v);
/* Whether [off, off + len) of BAR bar is in the table; if so, does it. */
bool vfio_msix_access(struct vfio_pci *v, unsigned int bar, uint64_t off, uint8_t *data,
		      uint32_t len, bool is_write);
void vfio_msix_ctrl_write(struct vfio_pci *v);
void vfio_msix_off(struct vfio_pci *v);

/* vfio_msi.c: MSI. */
/* The capability's registers from its control word (the device's, with
 * what skiff offers); the eventfds of 2^log_max vectors. 0 or -1. */
int vfio_msi_init(struct vfio_pci *v, uint16_t ctrl, unsigned int log_max);
void vfio_msi_free(struct vfio_pci *v);
void vfio_msi_ctrl_write(struct vfio_pci *v);
/* The pending register's bytes of a config read at off. */
void vfio_msi_cfg_read(struct vfio_pci *v, uint32_t off, uint8_t *data, uint32_t len);
void vfio_msi_off(struct vfio_pci *v);

/* vfio_irq.c: INTx. */
/* The INTx eventfds. */
int vfio_irq_init(struct vfio_pci *v, char *err, size_t errlen);
int vfio_intx_on(struct vfio_pci *v);
void vfio_intx_off(struct vfio_pci *v);
/* Brings a vector's route and irqfd in line with the guest's message and
 * whether it may deliver; irq_lock held. */
void vfio_vec_sync(struct vfio_pci *v, struct vfio_vec *vec, bool deliverable, uint64_t addr,
		   uint32_t data);
/* Logs a failure (capped per device). */
void vfio_log(struct vfio_pci *v, const char *what, int err);

#endif
