// SPDX-License-Identifier: Apache-2.0
/* MSI for a passthrough function: up to 32 vectors, each an eventfd that
 * VFIO signals and KVM injects through an irqfd on a route built from the
 * guest's address and data (vector i: the data with its low MME bits
 * replaced by i, as the PCI spec has the function do).
 *
 * VFIO gets 2^MME eventfds (VFIO_DEVICE_SET_IRQS, count 2^MME) when the
 * guest enables MSI; it cannot change the count while on, so a new MME
 * turns it off and on again. Per-vector masking stays virtual, as with
 * MSI-X (and as QEMU's vfio does): a masked vector has no irqfd, so its
 * signals wait in its eventfd; looking at the pending register moves them
 * into the vector's pending bit, and an unmask delivers a pending one
 * before the irqfd takes the eventfd again. */
#include <linux/vfio.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devices/vfio/vfio_priv.h"

#define MSI_CTRL_ENABLE 0x01
#define MSI_CTRL_MME	0x70 /* Multiple Message Enable, log2 */
#define MSI_CTRL_64	0x0080
#define MSI_CTRL_PVM	0x0100 /* per-vector masking */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
}

int vfio_msi_init(struct vfio_pci *v, uint16_t ctrl, unsigned int log_max)
{
	struct vfio_msi *m = &v->msi;
	m->is64 = ctrl & MSI_CTRL_64;
	m->maskable = ctrl & MSI_CTRL_PVM;
	m->log_max = log_max;
	m->data_off = m->is64 ? 12 : 8;
	m->mask_off = m->data_off + 4;
	m->pend_off = m->mask_off + 4;
	m->len = m->data_off + 2 + (m->maskable ? 10 : 0);
	for (unsigned int i = 0; i < 1u << log_max; i++) {
		m->vec[i].efd = m->fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (m->vec[i].efd < 0)
			return -1;
	}
	return 0;
}

void vfio_msi_free(struct vfio_pci *v)
{
	for (unsigned int i = 0; i < VFIO_MSI_MAX; i++)
		if (v->msi.vec[i].efd >= 0)
			close(v->msi.vec[i].efd);
}

/* A vector without its irqfd that fired: its pending bit takes the
 * signals out of the eventfd (so the irqfd never delivers them twice). */
static void msi_collect(struct vfio_msi *m, unsigned int i)
{
	struct pollfd p = {.fd = m->vec[i].efd, .events = POLLIN};
	uint64_t n;
	if (m->vec[i].bound || poll(&p, 1, 0) != 1)
		return;
	if (read(p.fd, &n, sizeof(n)) == sizeof(n))
		m->pending |= 1u << i;
}

/* VFIO's side: n vectors, 0 for off. A host that can give fewer says how
 * many; as QEMU, skiff asks again for that many (the guest's other
 * vectors never fire). Compared with what the guest asked for, not with
 * what VFIO gave: else every later write to the capability (a mask bit)
 * set MSI up again, and the teardown dropped what masked vectors had
 * pending. irq_lock held. */
static void msi_vfio(struct vfio_pci *v, unsigned int n)
{
	struct vfio_msi *m = &v->msi;
	unsigned int asked = n;
	if (n == m->asked)
		return;
	if (m->nr) {
		int r = v->ops->set_irqs(v->h, VFIO_PCI_MSI_IRQ_INDEX,
					 VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0,
					 NULL);
		if (r < 0)
			vfio_log(v, "disabling MSI", r);
		/* What fired before is no vector's any more. */
		for (unsigned int i = 0; i < m->nr; i++)
			msi_collect(m, i);
		m->pending = 0;
		m->nr = m->asked = 0;
		m->vfio_on = false;
	}
	if (!n)
		return;
	vfio_intx_off(v);
	int r =
	    v->ops->set_irqs(v->h, VFIO_PCI_MSI_IRQ_INDEX,
			     VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER, 0, n, m->fds);
	if (r > 0 && (unsigned int)r < n) {
		vfio_log(v, "enabling every MSI vector", -1);
		while (n > (unsigned int)r)
			n >>= 1;
		r = v->ops->set_irqs(v->h, VFIO_PCI_MSI_IRQ_INDEX,
				     VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER, 0, n,
				     m->fds);
	}
	if (r != 0) {
		vfio_log(v, "enabling MSI", r);
		return;
	}
	m->nr = n;
	m->asked = asked;
	m->vfio_on = true;
}

/* Vector i in line with the guest's registers; irq_lock held. */
static void msi_vec_update(struct vfio_pci *v, unsigned int i, uint64_t addr, uint16_t data,
			   unsigned int mme, uint32_t mask)
{
	struct vfio_msi *m = &v->msi;
	struct vfio_vec *vec = &m->vec[i];
	bool deliverable = i < m->nr && !(mask >> i & 1);
	uint32_t d = (data & ~((1u << mme) - 1)) | i;
	if (deliverable && !vec->bound)
		msi_collect(m, i); /* before the irqfd takes the eventfd */
	vfio_vec_sync(v, vec, deliverable, addr, d);
	if (vec->bound && (m->pending >> i & 1)) {
		void *host;
		const struct pci_host_ops *h = pci_bus_host(v->pci.bus, &host);
		int r = h->signal_msi(host, addr, d);
		if (r < 0)
			vfio_log(v, "delivering a pending MSI", r);
		m->pending &= ~(1u << i);
	}
}

void vfio_msi_ctrl_write(struct vfio_pci *v)
{
	struct vfio_msi *m = &v->msi;
	uint8_t *c = &v->pci.cfg[m->cap];
	unsigned int mme = (c[2] & MSI_CTRL_MME) >> 4;
	if (mme > m->log_max) {
		/* More than the function is capable of: the spec forbids it;
		 * the register says what it gets, as QEMU's does. */
		mme = m->log_max;
		c[2] = (uint8_t)((c[2] & ~MSI_CTRL_MME) | mme << 4);
	}
	bool on = c[2] & MSI_CTRL_ENABLE;
	uint64_t addr = get32(c + 4) | (m->is64 ? (uint64_t)get32(c + 8) << 32 : 0);
	uint16_t data = (uint16_t)(c[m->data_off] | c[m->data_off + 1] << 8);
	uint32_t mask = m->maskable ? get32(c + m->mask_off) : 0;
	pthread_mutex_lock(&v->irq_lock);
	if (v->started) {
		msi_vfio(v, on ? 1u << mme : 0);
		for (unsigned int i = 0; i < 1u << m->log_max; i++)
			msi_vec_update(v, i, addr, data, mme, mask);
		if (!on)
			vfio_intx_on(v);
	}
	pthread_mutex_unlock(&v->irq_lock);
}

void vfio_msi_cfg_read(struct vfio_pci *v, uint32_t off, uint8_t *data, uint32_t len)
{
	struct vfio_msi *m = &v->msi;
	uint32_t at = m->cap + m->pend_off;
	pthread_mutex_lock(&v->irq_lock);
	for (unsigned int i = 0; i < m->nr; i++)
		msi_collect(m, i);
	uint32_t pending = m->pending;
	pthread_mutex_unlock(&v->irq_lock);
	for (uint32_t k = 0; k < 4; k++)
		if (at + k >= off && at + k < off + len)
			data[at + k - off] = (uint8_t)(pending >> 8 * k);
}

void vfio_msi_off(struct vfio_pci *v)
{
	struct vfio_msi *m = &v->msi;
	if (!m->cap)
		return;
	for (unsigned int i = 0; i < 1u << m->log_max; i++)
		vfio_vec_sync(v, &m->vec[i], false, 0, 0);
	msi_vfio(v, 0);
}
