// SPDX-License-Identifier: Apache-2.0
/* PCI bus 0: slots, the host bridge, the type-1 configuration ports
 * (0xcf8 address latch, 0xcf9 reset control, 0xcfc-0xcff data), BAR
 * placement in the MMIO window and shared INTx lines. */
#include "pci/pci.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arch.h"
#include "core/vm.h"
#include "pci/pci_msix.h"

/* A plain host bridge: Red Hat's generic "QEMU PCIe host bridge" ID, which
 * no Linux quirk matches. */
#define HOST_BRIDGE_VENDOR 0x1b36
#define HOST_BRIDGE_DEVICE 0x0008

/* CONFIG_ADDRESS: enable, extended register (AMD), bus, device, function,
 * register. Bits 30:28 and 1:0 are reserved and read as 0. */
#define CF8_ENABLE     0x80000000u
#define CF8_MASK       0x8ffffffcu
#define CF8_EXT_REG(a) (((a) >> 24) & 0xf)
#define CF8_BUS(a)     (((a) >> 16) & 0xff)
#define CF8_SLOT(a)    (((a) >> 11) & 0x1f)
#define CF8_FUNC(a)    (((a) >> 8) & 0x7)
#define CF8_REG(a)     ((a)&0xfc)

/* Port 0xcf9 (reset control): RST_CPU starts the reset SYS_RST selects. */
#define CF9_OFFSET  1
#define CF9_RST_CPU 0x04
#define CF9_MASK    0x0e
#define CFC_OFFSET  4

struct pci_bus {
	struct bus *trap;
	const struct pci_host_ops *ops;
	void *host;
	/* Serializes config space, the address latch and BAR moves: config
	 * cycles are rare, so one lock for the bus is enough. */
	pthread_mutex_t cfg_lock;
	pthread_mutex_t intx_lock;
	uint32_t cf8;
	uint8_t cf9;
	struct pci_device *devs[PCI_MAX_DEVICES];
	struct pci_device host_bridge;
	/* BAR allocator: a bump pointer and an end per window, indexed by
	 * enum pci_window. The 64-bit window is empty (0, 0) unless set. */
	uint64_t next[3], end[3];
	unsigned int intx_count[LAYOUT_PCI_INTX_GSI_COUNT]; /* asserting devices per line */
};

/* The host ops on a KVM VM. */
static int vm_host_irq_line(void *host, uint32_t gsi, int level)
{
	return vm_irq_line(host, gsi, level);
}

static int vm_host_msi_route_add(void *host, uint64_t addr, uint32_t data)
{
	return vm_msi_route_add(host, addr, data);
}

static int vm_host_msi_route_update(void *host, uint32_t gsi, uint64_t addr, uint32_t data)
{
	return vm_msi_route_update(host, gsi, addr, data);
}

static int vm_host_signal_msi(void *host, uint64_t addr, uint32_t data)
{
	return vm_signal_msi(host, addr, data);
}

static int vm_host_irqfd(void *host, int efd, uint32_t gsi, bool assign)
{
	return vm_irqfd(host, efd, gsi, assign);
}

static int vm_host_irqfd_resample(void *host, int efd, int resample_efd, uint32_t gsi, bool assign)
{
	return vm_irqfd_resample(host, efd, resample_efd, gsi, assign);
}

/* MMIO with length 0: any write length matches, and KVM may take a faster
 * exit path (KVM_CAP_IOEVENTFD_ANY_LENGTH). */
static int vm_host_ioeventfd(void *host, int efd, enum bus_space sp, uint64_t addr, uint32_t len,
			     bool assign)
{
	return vm_ioeventfd(host, efd, sp, addr, len, assign);
}

static void vm_host_reset_request(void *host)
{
	vm_request_exit(host, VM_EXIT_REBOOT, "guest requested a reboot (port 0xcf9)");
}

static const struct pci_host_ops vm_host_ops = {
    .irq_line = vm_host_irq_line,
    .msi_route_add = vm_host_msi_route_add,
    .msi_route_update = vm_host_msi_route_update,
    .signal_msi = vm_host_signal_msi,
    .irqfd = vm_host_irqfd,
    .irqfd_resample = vm_host_irqfd_resample,
    .ioeventfd = vm_host_ioeventfd,
    .reset_request = vm_host_reset_request,
};

/* The device a config cycle addresses, or NULL (reads then give all ones,
 * which tells the guest "nothing here"). */
static struct pci_device *cfg_target(struct pci_bus *b)
{
	uint32_t a = b->cf8;
	if (!(a & CF8_ENABLE) || CF8_EXT_REG(a) || CF8_BUS(a) != 0 || CF8_FUNC(a) != 0)
		return NULL;
	return b->devs[CF8_SLOT(a)];
}

static void cfg_port_handler(void *opaque, struct bus_access *acc)
{
	struct pci_bus *b = opaque;
	uint64_t off = acc->offset;
	uint32_t v = 0;

	pthread_mutex_lock(&b->cfg_lock);
	if (off == 0 && acc->len == 4) {
		if (acc->is_write) {
			memcpy(&v, acc->data, 4);
			b->cf8 = v & CF8_MASK;
		} else {
			memcpy(acc->data, &b->cf8, 4);
		}
	} else if (off == CF9_OFFSET && acc->len == 1) {
		if (acc->is_write) {
			b->cf9 = acc->data[0] & CF9_MASK;
			if (acc->data[0] & CF9_RST_CPU)
				b->ops->reset_request(b->host);
		} else {
			acc->data[0] = b->cf9;
		}
	} else if (off >= CFC_OFFSET && off - CFC_OFFSET + acc->len <= 4) {
		/* Data port: 1, 2 or 4 bytes that stay inside the dword. */
		struct pci_device *dev = cfg_target(b);
		uint32_t reg = CF8_REG(b->cf8) + (uint32_t)(off - CFC_OFFSET);
		if (dev && acc->is_write)
			pci_cfg_write(dev, reg, acc->data, acc->len);
		else if (dev)
			pci_cfg_read(dev, reg, acc->data, acc->len);
	}
	/* Anything else (a byte poke at 0xcfb, an access crossing the
	 * dword) is ignored; reads keep the bus's all-ones. */
	pthread_mutex_unlock(&b->cfg_lock);
}

static const char *cfg_port_reg_name(void *opaque, uint64_t offset, bool is_write)
{
	(void)opaque;
	(void)is_write;
	if (offset == CF9_OFFSET)
		return "reset control";
	return offset >= CFC_OFFSET ? "config data" : "config address";
}

struct pci_bus *pci_bus_create_with(struct bus *trap, const struct pci_host_ops *ops, void *host)
{
	struct pci_bus *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->trap = trap;
	b->ops = ops;
	b->host = host;
	b->next[PCI_WIN_MMIO] = LAYOUT_PCI_MMIO_START;
	b->end[PCI_WIN_MMIO] = LAYOUT_PCI_MMIO_END;
	b->next[PCI_WIN_IO] = PCI_PIO_START;
	b->end[PCI_WIN_IO] = PCI_PIO_END;
	pthread_mutex_init(&b->cfg_lock, NULL);
	pthread_mutex_init(&b->intx_lock, NULL);
	pci_device_init(&b->host_bridge, "host-bridge", HOST_BRIDGE_VENDOR, HOST_BRIDGE_DEVICE,
			PCI_CLASS_BRIDGE_HOST, 0);
	b->host_bridge.bus = b;
	b->devs[0] = &b->host_bridge;
	struct bus_region r = {.base = LAYOUT_PCI_CONFIG,
			       .len = LAYOUT_PCI_CONFIG_LEN,
			       .handler = cfg_port_handler,
			       .reg_name = cfg_port_reg_name,
			       .opaque = b,
			       .name = "pci-cfg"};
	int ret = bus_register(trap, BUS_PIO, &r);
	if (ret < 0) {
		log_err("pci: cannot claim the PCI configuration ports: %s", strerror(-ret));
		pthread_mutex_destroy(&b->cfg_lock);
		pthread_mutex_destroy(&b->intx_lock);
		free(b);
		return NULL;
	}
	return b;
}

struct pci_bus *pci_bus_create(struct vm *vm)
{
	struct pci_bus *b = pci_bus_create_with(&vm->bus, &vm_host_ops, vm);
	if (b)
		pci_bus_set_mmio64(b, layout_pci_mmio64_start(guest_mem_end(&vm->mem)),
				   layout_pci_mmio64_end(arch_phys_bits()));
	return b;
}

void pci_bus_set_mmio64(struct pci_bus *b, uint64_t start, uint64_t end)
{
	b->next[PCI_WIN_MMIO64] = start;
	b->end[PCI_WIN_MMIO64] = end > start ? end : start;
}

void pci_bus_destroy(struct pci_bus *b)
{
	if (!b)
		return;
	bus_unregister(b->trap, BUS_PIO, LAYOUT_PCI_CONFIG, b);
	for (unsigned int s = 1; s < PCI_MAX_DEVICES; s++) {
		struct pci_device *dev = b->devs[s];
		if (!dev)
			continue;
		pthread_mutex_lock(&b->cfg_lock);
		pci_bars_unmap(dev);
		pthread_mutex_unlock(&b->cfg_lock);
		pci_intx_set(dev, false);
		pci_msix_destroy(dev);
		b->devs[s] = NULL;
		if (dev->ops && dev->ops->release)
			dev->ops->release(dev);
	}
	pthread_mutex_destroy(&b->cfg_lock);
	pthread_mutex_destroy(&b->intx_lock);
	free(b);
}

const struct pci_host_ops *pci_bus_host(struct pci_bus *b, void **host)
{
	*host = b->host;
	return b->ops;
}

struct bus *pci_bus_trap(struct pci_bus *b)
{
	return b->trap;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static void bar_set_addr(struct pci_device *dev, unsigned int i, uint64_t addr)
{
	if (i == PCI_ROM_SLOT) { /* placed, not enabled: the guest enables it */
		uint32_t rom = (uint32_t)addr;
		memcpy(&dev->cfg[PCI_ROM_ADDRESS], &rom, 4);
		return;
	}
	uint32_t lo = (uint32_t)addr | dev->bars[i].flags, hi = (uint32_t)(addr >> 32);
	memcpy(&dev->cfg[PCI_BAR0 + 4 * i], &lo, 4);
	if (dev->bars[i].flags & PCI_BAR_MEM_TYPE_64)
		memcpy(&dev->cfg[PCI_BAR0 + 4 * (i + 1)], &hi, 4);
}

/* The window a BAR goes in first: I/O BARs the I/O window, 64-bit
 * prefetchable memory BARs the 64-bit window (as OVMF places them; the
 * guest's drivers map them write-combined), the rest below 4 GiB. */
static enum pci_window bar_window(const struct pci_bar *bar, const struct pci_bus *b)
{
	if (bar->flags & PCI_BAR_IO)
		return PCI_WIN_IO;
	bool high = (bar->flags & PCI_BAR_MEM_TYPE_64) && (bar->flags & PCI_BAR_MEM_PREFETCH);
	return high && b->end[PCI_WIN_MMIO64] ? PCI_WIN_MMIO64 : PCI_WIN_MMIO;
}

/* addr for size in window w after next[w] (naturally aligned, as the BAR
 * sizing protocol requires), or 0 if it does not fit. */
static uint64_t window_fit(const struct pci_bus *b, const uint64_t *next, enum pci_window w,
			   uint64_t size)
{
	uint64_t addr = align_up(next[w], size);
	if (addr < next[w] || addr + size < addr || addr + size > b->end[w])
		return 0;
	return addr;
}

/* Places dev's BARs after the ones already placed; a 64-bit BAR the window
 * below 4 GiB cannot hold goes to the 64-bit window. Commits only if all
 * fit; otherwise names the BAR that did not in err. */
static int bars_place(struct pci_bus *b, struct pci_device *dev, char *err, size_t errlen)
{
	uint64_t next[3], addr[PCI_NUM_RES] = {0};
	memcpy(next, b->next, sizeof(next));
	for (unsigned int i = 0; i < PCI_NUM_RES; i++) {
		const struct pci_bar *bar = &dev->bars[i];
		if (!bar->size)
			continue;
		enum pci_window w = bar_window(bar, b);
		addr[i] = window_fit(b, next, w, bar->size);
		if (!addr[i] && w == PCI_WIN_MMIO && (bar->flags & PCI_BAR_MEM_TYPE_64) &&
		    b->end[PCI_WIN_MMIO64]) {
			w = PCI_WIN_MMIO64;
			addr[i] = window_fit(b, next, w, bar->size);
		}
		if (!addr[i]) {
			snprintf(err, errlen,
				 "%s: %s (%llu MiB) does not fit what is left of the PCI %s "
				 "window",
				 dev->name, pci_res_name(i), (unsigned long long)(bar->size >> 20),
				 w == PCI_WIN_IO       ? "I/O"
				 : w == PCI_WIN_MMIO64 ? "64-bit MMIO"
						       : "32-bit MMIO");
			return -1;
		}
		next[w] = addr[i] + bar->size;
	}
	for (unsigned int i = 0; i < PCI_NUM_RES; i++)
		if (dev->bars[i].size)
			bar_set_addr(dev, i, addr[i]);
	memcpy(b->next, next, sizeof(next));
	return 0;
}

int pci_bus_add_device(struct pci_bus *b, struct pci_device *dev, char *err, size_t errlen)
{
	int ret = -1;
	pthread_mutex_lock(&b->cfg_lock);
	unsigned int slot = 1;
	while (slot < PCI_MAX_DEVICES && b->devs[slot])
		slot++;
	if (slot == PCI_MAX_DEVICES) {
		snprintf(err, errlen, "no free PCI slot (max %d devices)", PCI_MAX_DEVICES - 1);
		goto out;
	}
	if (bars_place(b, dev, err, errlen) < 0)
		goto out;
	dev->bus = b;
	dev->slot = slot;
	dev->intx_gsi = pci_intx_gsi(slot, 0);
	dev->cfg[PCI_INTERRUPT_LINE] = (uint8_t)dev->intx_gsi;
	dev->cfg[PCI_INTERRUPT_PIN] = 1; /* INTA */
	b->devs[slot] = dev;
	ret = 0;
out:
	pthread_mutex_unlock(&b->cfg_lock);
	return ret;
}

/* Recomputes what dev contributes to its line; intx_lock held. */
static void intx_update_locked(struct pci_device *dev)
{
	struct pci_bus *b = dev->bus;
	bool out = dev->intx_level && !dev->intx_disabled;
	if (out == dev->intx_out)
		return;
	dev->intx_out = out;
	unsigned int *count =
	    &b->intx_count[(dev->intx_gsi - LAYOUT_PCI_INTX_GSI) % LAYOUT_PCI_INTX_GSI_COUNT];
	/* The line is the OR of its devices: only the first assert and the
	 * last deassert reach the IOAPIC. */
	if (out && (*count)++ == 0)
		b->ops->irq_line(b->host, dev->intx_gsi, 1);
	else if (!out && --(*count) == 0)
		b->ops->irq_line(b->host, dev->intx_gsi, 0);
}

void pci_intx_set(struct pci_device *dev, bool level)
{
	struct pci_bus *b = dev->bus;
	if (!b || !dev->cfg[PCI_INTERRUPT_PIN])
		return;
	pthread_mutex_lock(&b->intx_lock);
	dev->intx_level = level;
	atomic_store(&dev->intx_status, level);
	intx_update_locked(dev);
	pthread_mutex_unlock(&b->intx_lock);
}

void pci_intx_update(struct pci_device *dev)
{
	struct pci_bus *b = dev->bus;
	if (!b || !dev->cfg[PCI_INTERRUPT_PIN])
		return;
	uint16_t cmd;
	memcpy(&cmd, &dev->cfg[PCI_COMMAND], 2);
	pthread_mutex_lock(&b->intx_lock);
	dev->intx_disabled = cmd & PCI_COMMAND_INTX_DISABLE;
	intx_update_locked(dev);
	pthread_mutex_unlock(&b->intx_lock);
}
