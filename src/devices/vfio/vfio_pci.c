// SPDX-License-Identifier: Apache-2.0
/* A passthrough function's life: create, start, stop, release. */
#include <errno.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pci/pci_msix.h"
#include "devices/vfio/vfio_priv.h"
#include "devices/vfio/vfio_sys.h"

static const struct pci_device_ops vfio_pci_ops = {
    .cfg_read = vfio_cfg_read, .cfg_write = vfio_cfg_write, .bar_map = vfio_bar_map,
    /* No release: the device manager destroys the device after the bus. */
};

int vfio_pci_create_with(const struct vfio_dev_ops *ops, void *h, const char *name,
			 unsigned int flags, const struct vfio_ctx *ctx, struct vfio_pci **out,
			 char *err, size_t errlen)
{
	struct vfio_pci *v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		ops->close(h);
		return -1;
	}
	v->ops = ops;
	v->h = h;
	v->ctx = *ctx;
	v->mmap = flags & VFIO_F_MMAP;
	v->rom = flags & VFIO_F_ROM;
	v->intx.trigger = v->intx.unmask = -1;
	for (unsigned int i = 0; i < VFIO_MSI_MAX; i++)
		v->msi.vec[i].efd = v->msi.vec[i].gsi = -1;
	snprintf(v->name, sizeof(v->name), "vfio %s", name);
	pthread_mutex_init(&v->irq_lock, NULL);
	if (vfio_irq_init(v, err, errlen) < 0 || vfio_cfg_build(v, err, errlen) < 0) {
		vfio_pci_destroy(v);
		return -1;
	}
	int r = ctx->kvm_vfio_add ? ctx->kvm_vfio_add(ctx->host, ops->group_fd(h)) : 0;
	/* A group's second device: KVM has its group already. */
	if (r < 0 && r != -EEXIST) {
		snprintf(err, errlen, "%s: KVM's VFIO device refused its group: %s", v->name,
			 strerror(-r));
		vfio_pci_destroy(v);
		return -1;
	}
	v->pci.ops = &vfio_pci_ops;
	*out = v;
	return 0;
}

int vfio_pci_create(const char *addr, unsigned int flags, const struct vfio_ctx *ctx,
		    struct vfio_pci **out, char *err, size_t errlen)
{
	const struct vfio_dev_ops *ops;
	void *h;
	char canon[16];
	if (vfio_sys_open(addr, ctx->container, ctx->mem, &ops, &h, canon, err, errlen) < 0)
		return -1;
	return vfio_pci_create_with(ops, h, canon, flags, ctx, out, err, errlen);
}

struct pci_device *vfio_pci_dev(struct vfio_pci *v)
{
	return &v->pci;
}

int vfio_pci_start(struct vfio_pci *v, char *err, size_t errlen)
{
	/* VFIO offers no reset when none worked as the device was opened
	 * (no FLR, a PM reset that failed, a bus reset not possible or not
	 * confirmed). The device may then keep what its last user left
	 * running: a NIC's receive DMA into the old ring's addresses, now
	 * this guest's memory, from the moment its driver turns bus
	 * mastering on until it resets the chip. Used anyway, as QEMU
	 * does, but said. */
	int r = v->ops->reset(v->h);
	if (r == -ENOTTY)
		log_warn("%s: VFIO offers no reset: it may still hold its last user's state",
			 v->name);
	else if (r < 0) /* the same risk; QEMU warns too */
		log_warn("%s: reset failed (%s): it may still hold its last user's state", v->name,
			 strerror(-r));
	if (!v->intx.present)
		v->pci.cfg[PCI_INTERRUPT_PIN] = 0;
	pthread_mutex_lock(&v->irq_lock);
	v->started = true;
	r = vfio_intx_on(v);
	pthread_mutex_unlock(&v->irq_lock);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot connect INTx: %s", v->name, strerror(-r));
		return -1;
	}
	return 0;
}

/* What a function level reset does to the function, as the guest sees
 * it: decoding and interrupts off, MSI-X vectors masked; then the device's
 * own reset through VFIO, and INTx connected again (the guest's driver
 * restores the rest, as Linux's pcie_flr callers do). Bus lock held. */
void vfio_flr(struct vfio_pci *v)
{
	static const uint8_t zero[4];
	pci_cfg_write(&v->pci, PCI_COMMAND, zero, 2);
	if (v->msi.cap)
		pci_cfg_write(&v->pci, v->msi.cap + 2, zero, 2);
	if (v->msi.maskable) /* after MSI is off: nothing pending to deliver */
		pci_cfg_write(&v->pci, v->msi.cap + v->msi.mask_off, zero, 4);
	if (v->msix.cap)
		pci_cfg_write(&v->pci, v->msix.cap + 2, zero, 2);
	pthread_mutex_lock(&v->irq_lock);
	for (unsigned int i = 0; i < v->msix.nr; i++)
		v->msix.table[i][3] = PCI_MSIX_ENTRY_CTRL_MASKBIT;
	vfio_intx_off(v);
	int r = v->ops->reset(v->h);
	if (r < 0)
		vfio_log(v, "the guest's function reset", r);
	if (v->started)
		vfio_intx_on(v);
	pthread_mutex_unlock(&v->irq_lock);
}

void vfio_pci_stop(struct vfio_pci *v)
{
	pthread_mutex_lock(&v->irq_lock);
	if (!v->started) {
		pthread_mutex_unlock(&v->irq_lock);
		return;
	}
	vfio_msix_off(v);
	vfio_msi_off(v);
	vfio_intx_off(v);
	v->started = false;
	pthread_mutex_unlock(&v->irq_lock);
	/* Leaves the device quiet (no DMA into freed memory) for the host. */
	v->ops->reset(v->h);
}

void vfio_pci_destroy(struct vfio_pci *v)
{
	if (!v)
		return;
	vfio_pci_stop(v);
	vfio_bars_free(v);
	vfio_msix_free(v);
	vfio_msi_free(v);
	int fds[] = {v->intx.trigger, v->intx.unmask};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	v->ops->close(v->h);
	pthread_mutex_destroy(&v->irq_lock);
	free(v);
}
