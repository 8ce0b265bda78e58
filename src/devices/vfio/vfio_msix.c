// SPDX-License-Identifier: Apache-2.0
/* MSI-X for a passthrough function: the guest's table is emulated (the
 * device's real table is programmed by the host kernel with the host's
 * vectors); each vector is an eventfd that VFIO signals and KVM injects
 * through an irqfd on an MSI route built from the guest's entry.
 *
 * VFIO gets all vectors' eventfds at once when the guest enables MSI-X.
 * Masking stays virtual: a vector that is not deliverable (MSI-X off,
 * function mask, or its mask bit) has no irqfd, so its signals wait in the
 * eventfd; KVM injects them when the irqfd is assigned again on unmask. */
#include <errno.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pci/pci_msix.h"
#include "devices/vfio/vfio_priv.h"

static uint32_t cap32(const uint8_t *p)
{
	return (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Eventfds are made up front, before the sandbox: one per vector, up to
 * 2048. Room for them under the open-files limit, raised toward the hard
 * limit when the soft one is short (best effort: eventfd() says the
 * rest). */
static void nofile_room(unsigned int need)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	rlim_t want = rl.rlim_cur + need;
	if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
		want = rl.rlim_max;
	if (want > rl.rlim_cur) {
		rl.rlim_cur = want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int vfio_msix_init(struct vfio_pci *v, const uint8_t *devcap, char *err, size_t errlen)
{
	struct vfio_msix *mx = &v->msix;
	mx->nr = ((devcap[2] | devcap[3] << 8) & PCI_MSIX_FLAGS_QSIZE) + 1u;
	uint32_t t = cap32(devcap + PCI_MSIX_TABLE), p = cap32(devcap + PCI_MSIX_PBA);
	mx->table_bar = t & 7;
	mx->table_off = t & ~7u;
	mx->pba_bar = p & 7;
	mx->pba_off = p & ~7u;
	if (mx->nr > VFIO_MSIX_MAX || v->ops->irq_count(v->h, VFIO_PCI_MSIX_IRQ_INDEX) < mx->nr) {
		snprintf(err, errlen, "%s: MSI-X with %u vectors is not supported", v->name,
			 mx->nr);
		return -1;
	}
	mx->table = calloc(mx->nr, sizeof(*mx->table));
	mx->vec = calloc(mx->nr, sizeof(*mx->vec));
	mx->fds = calloc(mx->nr, sizeof(*mx->fds));
	if (!mx->table || !mx->vec || !mx->fds) {
		snprintf(err, errlen, "%s: out of memory", v->name);
		return -1;
	}
	nofile_room(mx->nr);
	for (unsigned int i = 0; i < mx->nr; i++) {
		mx->table[i][3] = PCI_MSIX_ENTRY_CTRL_MASKBIT;
		mx->vec[i].gsi = -1;
		mx->vec[i].efd = mx->fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (mx->vec[i].efd < 0) {
			snprintf(err, errlen,
				 "%s: cannot make %u MSI-X eventfds: %s (raise the open-files "
				 "limit)",
				 v->name, mx->nr, strerror(errno));
			return -1;
		}
	}
	return 0;
}

void vfio_msix_free(struct vfio_pci *v)
{
	struct vfio_msix *mx = &v->msix;
	for (unsigned int i = 0; mx->vec && i < mx->nr; i++)
		if (mx->vec[i].efd > 0)
			close(mx->vec[i].efd);
	free(mx->table);
	free(mx->vec);
	free(mx->fds);
	mx->table = NULL;
	mx->vec = NULL;
	mx->fds = NULL;
}

/* Brings vector i's route and irqfd in line with the table; irq_lock held. */
static void vector_update(struct vfio_pci *v, unsigned int i)
{
	struct vfio_msix *mx = &v->msix;
	bool deliverable = mx->vfio_on && mx->enabled && !mx->maskall &&
			   !(mx->table[i][3] & PCI_MSIX_ENTRY_CTRL_MASKBIT);
	vfio_vec_sync(v, &mx->vec[i], deliverable,
		      mx->table[i][0] | (uint64_t)mx->table[i][1] << 32, mx->table[i][2]);
}

/* VFIO's side: all vectors on, or all off. irq_lock held. */
static void vfio_set(struct vfio_pci *v, bool on)
{
	struct vfio_msix *mx = &v->msix;
	if (on == mx->vfio_on)
		return;
	int r;
	if (on) {
		vfio_intx_off(v);
		r = v->ops->set_irqs(v->h, VFIO_PCI_MSIX_IRQ_INDEX,
				     VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER, 0,
				     mx->nr, mx->fds);
	} else {
		r = v->ops->set_irqs(v->h, VFIO_PCI_MSIX_IRQ_INDEX,
				     VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0,
				     NULL);
	}
	if (r < 0)
		vfio_log(v, on ? "enabling MSI-X" : "disabling MSI-X", r);
	mx->vfio_on = on && r == 0;
}

void vfio_msix_ctrl_write(struct vfio_pci *v)
{
	struct vfio_msix *mx = &v->msix;
	uint16_t ctrl;
	memcpy(&ctrl, &v->pci.cfg[mx->cap + PCI_MSIX_FLAGS], 2);
	pthread_mutex_lock(&v->irq_lock);
	mx->enabled = ctrl & PCI_MSIX_FLAGS_ENABLE;
	mx->maskall = ctrl & PCI_MSIX_FLAGS_MASKALL;
	if (v->started)
		vfio_set(v, mx->enabled);
	for (unsigned int i = 0; i < mx->nr; i++)
		vector_update(v, i);
	if (!mx->enabled && v->started)
		vfio_intx_on(v);
	pthread_mutex_unlock(&v->irq_lock);
}

void vfio_msix_off(struct vfio_pci *v)
{
	struct vfio_msix *mx = &v->msix;
	if (!mx->cap)
		return;
	mx->enabled = false;
	for (unsigned int i = 0; i < mx->nr; i++)
		vector_update(v, i);
	vfio_set(v, false);
}

bool vfio_msix_access(struct vfio_pci *v, unsigned int bar, uint64_t off, uint8_t *data,
		      uint32_t len, bool is_write)
{
	struct vfio_msix *mx = &v->msix;
	uint64_t size = (uint64_t)mx->nr * PCI_MSIX_ENTRY_SIZE;
	if (!mx->cap || bar != mx->table_bar || off + len <= mx->table_off ||
	    off >= mx->table_off + size)
		return false;
	if (off < mx->table_off || off + len > mx->table_off + size) {
		/* Straddles the table's edge: no driver does that. */
		if (!is_write)
			memset(data, 0xff, len);
		return true;
	}
	uint64_t rel = off - mx->table_off;
	uint8_t *t = (uint8_t *)mx->table;
	pthread_mutex_lock(&v->irq_lock);
	if (!is_write) {
		memcpy(data, t + rel, len);
	} else {
		memcpy(t + rel, data, len);
		unsigned int first = (unsigned int)(rel / PCI_MSIX_ENTRY_SIZE);
		unsigned int last = (unsigned int)((rel + len - 1) / PCI_MSIX_ENTRY_SIZE);
		for (unsigned int i = first; i <= last && i < mx->nr; i++)
			vector_update(v, i);
	}
	pthread_mutex_unlock(&v->irq_lock);
	return true;
}
