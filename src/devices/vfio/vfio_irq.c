// SPDX-License-Identifier: Apache-2.0
/* INTx for a passthrough function, and what MSI and MSI-X vectors share
 * (vfio_msi.c, vfio_msix.c): a vector's route and irqfd.
 *
 * INTx: VFIO signals `trigger` and masks the host line; KVM raises the
 * guest's line from it as a level irqfd, and when the guest EOIs, lowers it
 * and signals `unmask`, which VFIO takes as its unmask. So a level
 * interrupt completes without a trip through skiff. INTx is on whenever
 * neither MSI nor MSI-X is. */
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>

#include "devices/vfio/vfio_priv.h"

void vfio_log(struct vfio_pci *v, const char *what, int err)
{
	if (err < -1)
		log_rl_at(&v->log_rl, LOG_WARN, "%s: %s failed: %s", v->name, what, strerror(-err));
	else
		log_rl_at(&v->log_rl, LOG_WARN, "%s: %s failed", v->name, what);
}

int vfio_irq_init(struct vfio_pci *v, char *err, size_t errlen)
{
	v->intx.trigger = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	v->intx.unmask = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->intx.trigger < 0 || v->intx.unmask < 0) {
		snprintf(err, errlen, "%s: cannot make eventfds", v->name);
		return -1;
	}
	return 0;
}

void vfio_vec_sync(struct vfio_pci *v, struct vfio_vec *vec, bool deliverable, uint64_t addr,
		   uint32_t data)
{
	void *host;
	const struct pci_host_ops *h = pci_bus_host(v->pci.bus, &host);
	if (deliverable && vec->gsi < 0) {
		int gsi = h->msi_route_add(host, addr, data);
		if (gsi < 0) {
			vfio_log(v, "adding an MSI route", gsi);
			return;
		}
		vec->gsi = gsi;
		vec->addr = addr;
		vec->data = data;
	} else if (deliverable && (vec->addr != addr || vec->data != data)) {
		int r = h->msi_route_update(host, (uint32_t)vec->gsi, addr, data);
		if (r < 0) {
			vfio_log(v, "updating an MSI route", r);
			return;
		}
		vec->addr = addr;
		vec->data = data;
	}
	if (deliverable != vec->bound) {
		int r = h->irqfd(host, vec->efd, (uint32_t)vec->gsi, deliverable);
		if (r < 0)
			vfio_log(v, "MSI irqfd", r);
		else
			vec->bound = deliverable;
	}
}

int vfio_intx_on(struct vfio_pci *v)
{
	struct vfio_intx *x = &v->intx;
	if (!x->present || x->on || v->msi.vfio_on || v->msix.vfio_on)
		return 0;
	void *host;
	const struct pci_host_ops *h = pci_bus_host(v->pci.bus, &host);
	int r = v->ops->set_irqs(v->h, VFIO_PCI_INTX_IRQ_INDEX,
				 VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1,
				 &x->trigger);
	if (r == 0)
		r = v->ops->set_irqs(v->h, VFIO_PCI_INTX_IRQ_INDEX,
				     VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_UNMASK, 0, 1,
				     &x->unmask);
	if (r == 0)
		r = h->irqfd_resample(host, x->trigger, x->unmask, v->pci.intx_gsi, true);
	if (r < 0) {
		vfio_log(v, "connecting INTx", r);
		v->ops->set_irqs(v->h, VFIO_PCI_INTX_IRQ_INDEX,
				 VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
		return r;
	}
	x->on = true;
	return 0;
}

void vfio_intx_off(struct vfio_pci *v)
{
	struct vfio_intx *x = &v->intx;
	if (!x->on)
		return;
	void *host;
	const struct pci_host_ops *h = pci_bus_host(v->pci.bus, &host);
	h->irqfd_resample(host, x->trigger, x->unmask, v->pci.intx_gsi, false);
	v->ops->set_irqs(v->h, VFIO_PCI_INTX_IRQ_INDEX,
			 VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL);
	x->on = false;
}
