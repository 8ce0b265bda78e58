// SPDX-License-Identifier: Apache-2.0
/* PCI: bus 0 with a host bridge at 00:00.0, type-1 configuration access
 * through ports 0xcf8/0xcfc, 64-bit memory BARs placed in the 32-bit MMIO
 * window and I/O BARs in the I/O window, capability lists, INTx through
 * the IOAPIC (MSI-X: pci_msix.h).
 *
 * A device embeds a struct pci_device, fills its header, BARs and
 * capabilities with the pci_device_* calls, then pci_bus_add_device() gives
 * it a slot, an INTx line and BAR addresses. Its BARs appear in the trap
 * table only while the guest has their decoding on (COMMAND bit 1; bit 0
 * for I/O BARs) and move when the guest reprograms them.
 *
 * Threads: configuration space is serialized by one lock per bus (vCPU
 * threads). BAR handlers run concurrently on any vCPU. pci_intx_set() may be
 * called from any thread.
 *
 * The host side (interrupt lines, MSI routes, irqfds, ioeventfds, reset)
 * goes through struct pci_host_ops, so tests can run without KVM. */
#ifndef SKIFF_PCI_H
#define SKIFF_PCI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/log.h"
#include "x86/layout.h"
#include "core/must_check.h"

struct vm;
struct pci_bus;
struct pci_device;
struct pci_msix;

#define PCI_MAX_DEVICES LAYOUT_PCI_SLOTS /* slots on bus 0; slot 0 is the host bridge */
#define PCI_NUM_BARS	6
/* The expansion ROM is resource 6 (bars[PCI_ROM_SLOT]): its register is
 * PCI_ROM_ADDRESS, decoded with COMMAND.MEMORY and its own enable bit. */
#define PCI_ROM_SLOT	 6
#define PCI_NUM_RES	 7
#define PCI_ROM_MIN_SIZE 0x800
#define PCI_ROM_ENABLE	 0x1

/* "BAR0".."BAR5", "ROM": a resource's name in messages. */
static inline const char *pci_res_name(unsigned int i)
{
	static const char *const names[PCI_NUM_RES] = {"BAR0", "BAR1", "BAR2", "BAR3",
						       "BAR4", "BAR5", "ROM"};
	return i < PCI_NUM_RES ? names[i] : "BAR?";
}
#define PCI_CFG_SIZE	 256
#define PCI_BAR_MIN_SIZE 0x1000 /* a page: no two memory BARs share one */
#define PCI_IO_BAR_MIN	 4
/* I/O BARs go here: inside the DSDT's I/O window (0xd00-0xffff), above
 * the legacy ports. */
#define PCI_PIO_START 0xc000
#define PCI_PIO_END   0x10000

/* Configuration header (type 0) offsets and bits */
#define PCI_VENDOR_ID		0x00
#define PCI_DEVICE_ID		0x02
#define PCI_COMMAND		0x04
#define PCI_STATUS		0x06
#define PCI_REVISION_ID		0x08
#define PCI_CLASS_PROG		0x09
#define PCI_HEADER_TYPE		0x0e
#define PCI_BAR0		0x10
#define PCI_SUBSYSTEM_VENDOR_ID 0x2c
#define PCI_SUBSYSTEM_ID	0x2e
#define PCI_CAPABILITY_LIST	0x34
#define PCI_INTERRUPT_LINE	0x3c
#define PCI_INTERRUPT_PIN	0x3d
#define PCI_CAP_START		0x40

#define PCI_COMMAND_IO		 0x1
#define PCI_COMMAND_MEMORY	 0x2
#define PCI_COMMAND_MASTER	 0x4
#define PCI_COMMAND_INTX_DISABLE 0x400
#define PCI_STATUS_INTERRUPT	 0x8
#define PCI_STATUS_CAP_LIST	 0x10

#define PCI_ROM_ADDRESS 0x30

#define PCI_BAR_IO	     0x1
#define PCI_BAR_MEM_TYPE_64  0x4
#define PCI_BAR_MEM_PREFETCH 0x8

#define PCI_CAP_ID_PM	0x01
#define PCI_CAP_ID_MSI	0x05
#define PCI_CAP_ID_VNDR 0x09
#define PCI_CAP_ID_EXP	0x10
#define PCI_CAP_ID_MSIX 0x11

#define PCI_CLASS_BRIDGE_HOST 0x060000

/* INTA..INTD (pin 0..3) of `slot` go to this GSI (the platform's map). */
static inline uint32_t pci_intx_gsi(unsigned int slot, unsigned int pin)
{
	return layout_pci_intx_gsi(slot, pin);
}

/* What the bus needs from the hypervisor. Return values are 0 / -errno,
 * msi_route_add returns the GSI. */
struct pci_host_ops {
	int (*irq_line)(void *host, uint32_t gsi, int level);
	int (*msi_route_add)(void *host, uint64_t addr, uint32_t data);
	int (*msi_route_update)(void *host, uint32_t gsi, uint64_t addr, uint32_t data);
	int (*signal_msi)(void *host, uint64_t addr, uint32_t data);
	int (*irqfd)(void *host, int efd, uint32_t gsi, bool assign);
	/* A level-triggered irqfd (KVM_IRQFD_FLAG_RESAMPLE): efd raises the
	 * line, the guest's EOI lowers it and signals resample_efd. */
	int (*irqfd_resample)(void *host, int efd, int resample_efd, uint32_t gsi, bool assign);
	/* A write at addr signals efd: BUS_MMIO with len 0 (any length),
	 * BUS_PIO with len 1, 2 or 4 (that length only). */
	int (*ioeventfd)(void *host, int efd, enum bus_space sp, uint64_t addr, uint32_t len,
			 bool assign);
	/* The guest asked for a reset through port 0xcf9. */
	void (*reset_request)(void *host);
};

/* Device hooks; all optional. Called with the bus's config lock held. */
struct pci_device_ops {
	/* After the generic code read config bytes [off, off + len) into
	 * data: may replace them (e.g. a window into a BAR). */
	void (*cfg_read)(struct pci_device *dev, uint32_t off, uint8_t *data, uint32_t len);
	/* After the generic code stored a config write (writable bits only). */
	void (*cfg_write)(struct pci_device *dev, uint32_t off, uint32_t len);
	/* A BAR appeared at addr (mapped) or disappeared from addr. */
	void (*bar_map)(struct pci_device *dev, unsigned int bar, uint64_t addr, bool mapped);
	/* pci_bus_destroy: free the device (the bus is done with it). */
	void (*release)(struct pci_device *dev);
};

struct pci_bar {
	uint64_t size;		  /* power of 2; 0: not implemented */
	uint32_t flags;		  /* PCI_BAR_IO, or memory type bits (64-bit, prefetch) */
	uint64_t addr;		  /* current guest address, from config space */
	bool mapped;		  /* registered in the trap table at addr */
	bool failed;		  /* last map attempt overlapped something: logged once */
	struct bus_region region; /* handler, reg_name, opaque, name */
};

struct pci_device {
	uint8_t cfg[PCI_CFG_SIZE];	  /* configuration space image */
	uint8_t wmask[PCI_CFG_SIZE];	  /* bits the guest may change */
	struct pci_bar bars[PCI_NUM_RES]; /* six BARs, then the ROM */
	const struct pci_device_ops *ops;
	const char *name;
	struct pci_bus *bus; /* set by pci_bus_add_device */
	unsigned int slot;
	uint8_t cap_last;	  /* offset of the last capability, 0 if none */
	uint8_t cap_end;	  /* first free byte for the next capability */
	struct log_rl bar_log_rl; /* BAR map failures, rate-limited */
	struct pci_msix *msix;	  /* set by pci_msix_init */

	/* INTx, under the bus's intx lock (status bit read lock-free) */
	uint32_t intx_gsi;
	bool intx_level;	  /* what the device asks for */
	bool intx_out;		  /* what it contributes to the line now */
	bool intx_disabled;	  /* COMMAND.INTX_DISABLE mirror */
	_Atomic bool intx_status; /* STATUS.INTERRUPT */
};

/* Creates bus 0 with the host bridge on vm's trap table and registers the
 * configuration ports; NULL (with a message on stderr) on failure. */
struct pci_bus *pci_bus_create(struct vm *vm);
/* The same over any trap table and host (tests). */
struct pci_bus *pci_bus_create_with(struct bus *trap, const struct pci_host_ops *ops, void *host);
/* The windows BARs are placed in (pci_bus_add_device). */
enum pci_window { PCI_WIN_MMIO, PCI_WIN_IO, PCI_WIN_MMIO64 };
/* Sets the 64-bit MMIO window [start, end) (pci_bus_create sets it from
 * guest RAM and the CPU's address bits, x86/layout.h; a bus made with
 * pci_bus_create_with has none until this is called). */
void pci_bus_set_mmio64(struct pci_bus *b, uint64_t start, uint64_t end);

/* Unmaps every BAR, releases every device, frees the bus. */
void pci_bus_destroy(struct pci_bus *bus);

const struct pci_host_ops *pci_bus_host(struct pci_bus *bus, void **host);
struct bus *pci_bus_trap(struct pci_bus *bus);

/* Header fields; the rest of the header is zero and read-only except the
 * command register, cache line size, interrupt line and BARs. */
void pci_device_init(struct pci_device *dev, const char *name, uint16_t vendor, uint16_t device,
		     uint32_t class_code, uint8_t revision);
void pci_device_set_subsystem(struct pci_device *dev, uint16_t vendor, uint16_t id);
/* Declares a 64-bit non-prefetchable memory BAR in slots bar and bar + 1
 * (bar even, size a power of 2 >= PCI_BAR_MIN_SIZE). r gives the trap
 * handler, reg_name, opaque and name; base and len are filled in on map.
 * Returns 0 or -1. */
MUST_CHECK int pci_device_add_bar(struct pci_device *dev, unsigned int bar, uint64_t size,
				  const struct bus_region *r);
/* Any BAR kind: flags PCI_BAR_IO (an I/O BAR, size >= PCI_IO_BAR_MIN,
 * placed in the I/O window, decoded with COMMAND.IO), or memory with
 * PCI_BAR_MEM_TYPE_64 (uses slot bar + 1 too) and PCI_BAR_MEM_PREFETCH.
 * A memory BAR may be backed by KVM memory slots rather than the trap:
 * the device adds them in its bar_map hook; the trap region still takes
 * whatever the slots leave uncovered. Returns 0 or -1. */
MUST_CHECK int pci_device_add_bar_flags(struct pci_device *dev, unsigned int bar, uint64_t size,
					uint32_t flags, const struct bus_region *r);
/* Declares an expansion ROM of size bytes (a power of 2, 2 KiB to
 * 16 MiB), read through r, placed in the 32-bit window; the guest maps it
 * by setting the enable bit of PCI_ROM_ADDRESS. Returns 0 or -1. */
MUST_CHECK int pci_device_add_rom(struct pci_device *dev, uint64_t size,
				  const struct bus_region *r);
/* Appends a capability (cap[0] = ID; cap[1], the next pointer, is filled
 * in) and returns its config offset, or -1 if config space is full. All
 * bytes start read-only; see pci_device_set_wmask. */
MUST_CHECK int pci_device_add_cap(struct pci_device *dev, const void *cap, uint8_t len);
/* Makes the bits in `mask` of config bytes [off, off + len) writable. */
void pci_device_set_wmask(struct pci_device *dev, uint32_t off, const void *mask, uint32_t len);

/* Puts dev in the first free slot: INTA wired (pin 1, line = GSI), BARs
 * placed in the MMIO window. Returns 0, or -1 with a one-line reason
 * ("no free PCI slot (max 31 devices)"). */
MUST_CHECK int pci_bus_add_device(struct pci_bus *bus, struct pci_device *dev, char *err,
				  size_t errlen);

/* Raises or lowers the device's INTA. Shared lines are counted: a line
 * stays up while any device on it asserts. INTX_DISABLE masks it. */
void pci_intx_set(struct pci_device *dev, bool level);

/* Config space accesses as the CF8/CFC handlers do them (for the pci code
 * and tests). Reads of unimplemented bytes give 0. */
void pci_cfg_read(struct pci_device *dev, uint32_t off, uint8_t *data, uint32_t len);
void pci_cfg_write(struct pci_device *dev, uint32_t off, const uint8_t *data, uint32_t len);

/* Snapshots (core/snap.h, pci_state.c): the function's config space
 * image (BAR placement with it) and MSI-X table and PBA, as section
 * (SNAP_ID_PCI_FN, instance) in w, on a paused VM. 0, or -1 with a reason. */
struct snap_writer;
int pci_device_save(struct pci_device *dev, struct snap_writer *w, uint32_t instance, char *err,
		    size_t errlen);
/* That payload back onto the same function, built afresh on the same slot:
 * every byte the guest cannot write must be what this function has, and
 * the MSI-X state must fit it, before anything changes. Then the BARs map
 * where the guest left them (the device's bar_map hooks: ioeventfds), the
 * INTx mask, MSI-X routes and irqfds follow. 0, or -1 with a reason. */
MUST_CHECK int pci_device_restore(struct pci_device *dev, const void *data, size_t len, char *err,
				  size_t errlen);

/* Internal to src/pci: (un)maps BARs after a command or BAR write. */
void pci_bars_update(struct pci_device *dev);
void pci_bars_unmap(struct pci_device *dev);
void pci_intx_update(struct pci_device *dev);

#endif
