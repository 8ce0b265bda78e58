// SPDX-License-Identifier: Apache-2.0
/* MSI-X: capability, table and PBA, delivery through irqfds. See
 * pci_msix.h. One lock per function orders table writes, mask changes and
 * deliveries, so a pending bit is never lost between "masked, set pending"
 * on one thread and "unmask, fire pending" on another.
 *
 * A masked vector's irqfd is unbound from its GSI, so a backend that writes
 * the eventfd itself (vhost) cannot inject through a mask: its writes stay
 * in the eventfd's counter, show as pending in the PBA, and KVM injects
 * them when the vector is unmasked and the irqfd bound again (binding an
 * irqfd whose counter is non-zero injects at once). */
#include "pci/pci_msix.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

enum { ENTRY_ADDR_LO, ENTRY_ADDR_HI, ENTRY_DATA, ENTRY_CTRL, ENTRY_WORDS };

struct msix_vector {
	uint32_t entry[ENTRY_WORDS]; /* the guest-visible table entry */
	int efd;		     /* irqfd: a write injects the GSI's MSI */
	int gsi;		     /* -1 until the vector is first deliverable */
	bool bound;		     /* efd is assigned to gsi (only while deliverable) */
	bool use_irqfd;		     /* bound, and the GSI carries the current message */
	uint32_t sent;		     /* notifies sent or left pending (pci_msix_vector_seq) */
	uint64_t routed_addr;
	uint32_t routed_data;
};

struct pci_msix {
	struct pci_device *dev;
	pthread_mutex_t lock;
	unsigned int nr;
	unsigned int cap; /* config offset of the capability */
	bool enabled, fmask;
	struct log_rl log_rl; /* routing failures: the guest programs vectors */
	uint64_t pba[PCI_MSIX_MAX_VECTORS / 64];
	struct msix_vector vec[PCI_MSIX_MAX_VECTORS];
};

static const struct pci_host_ops *msix_host(struct pci_msix *mx, void **host)
{
	return pci_bus_host(mx->dev->bus, host);
}

static uint64_t vec_addr(const struct msix_vector *v)
{
	return ((uint64_t)v->entry[ENTRY_ADDR_HI] << 32) | v->entry[ENTRY_ADDR_LO];
}

static bool vec_deliverable(const struct pci_msix *mx, const struct msix_vector *v)
{
	return mx->enabled && !mx->fmask && !(v->entry[ENTRY_CTRL] & PCI_MSIX_ENTRY_CTRL_MASKBIT);
}

static void msix_log(struct pci_msix *mx, const char *what, int err)
{
	log_rl_at(&mx->log_rl, LOG_WARN, "%s: MSI-X %s failed (%s); injecting directly",
		  mx->dev->name, what, strerror(-err));
}

/* Binds (on) or unbinds the vector's irqfd from its GSI. */
static void vec_bind(struct pci_msix *mx, struct msix_vector *v, bool on)
{
	if (v->gsi < 0 || v->bound == on)
		return;
	void *host;
	int r = msix_host(mx, &host)->irqfd(host, v->efd, (uint32_t)v->gsi, on);
	if (r < 0) {
		msix_log(mx, on ? "irqfd" : "irqfd unbind", r);
		return;
	}
	v->bound = on;
}

/* Points the vector's GSI at its current message (the first time, creates
 * the route) and binds the irqfd, in that order: a count already in the
 * eventfd is injected with the current message. On failure fire() injects
 * directly. */
static void vec_route_sync(struct pci_msix *mx, struct msix_vector *v)
{
	void *host;
	const struct pci_host_ops *ops = msix_host(mx, &host);
	uint64_t addr = vec_addr(v);
	uint32_t data = v->entry[ENTRY_DATA];
	v->use_irqfd = false;
	if (v->gsi < 0) {
		int gsi = ops->msi_route_add(host, addr, data);
		if (gsi < 0) {
			msix_log(mx, "route", gsi);
			return;
		}
		v->gsi = gsi;
	} else if (addr != v->routed_addr || data != v->routed_data) {
		int r = ops->msi_route_update(host, (uint32_t)v->gsi, addr, data);
		if (r < 0) {
			msix_log(mx, "route update", r);
			return;
		}
	}
	v->routed_addr = addr;
	v->routed_data = data;
	vec_bind(mx, v, true);
	v->use_irqfd = v->bound;
}

static void vec_fire(struct pci_msix *mx, struct msix_vector *v)
{
	if (v->use_irqfd) {
		uint64_t one = 1;
		if (write(v->efd, &one, sizeof(one)) == sizeof(one))
			return;
	}
	void *host;
	const struct pci_host_ops *ops = msix_host(mx, &host);
	ops->signal_msi(host, vec_addr(v), v->entry[ENTRY_DATA]);
}

static bool pba_test_clear(struct pci_msix *mx, unsigned int i)
{
	uint64_t bit = 1ULL << (i % 64);
	bool was = mx->pba[i / 64] & bit;
	mx->pba[i / 64] &= ~bit;
	return was;
}

/* Caller holds the lock. A masked vector whose eventfd a backend wrote is
 * pending: move that into the PBA, so the guest sees it. */
static void pba_collect(struct pci_msix *mx)
{
	for (unsigned int i = 0; i < mx->nr; i++) {
		struct msix_vector *v = &mx->vec[i];
		struct pollfd p = {.fd = v->efd, .events = POLLIN};
		if (v->bound || poll(&p, 1, 0) != 1)
			continue;
		uint64_t n;
		if (read(v->efd, &n, sizeof(n)) == sizeof(n))
			mx->pba[i / 64] |= 1ULL << (i % 64);
	}
}

/* After any change to vector i or to the function's mask state. */
static void vec_update(struct pci_msix *mx, unsigned int i)
{
	struct msix_vector *v = &mx->vec[i];
	if (!vec_deliverable(mx, v)) {
		vec_bind(mx, v, false);
		v->use_irqfd = false;
		return;
	}
	vec_route_sync(mx, v);
	if (pba_test_clear(mx, i))
		vec_fire(mx, v);
}

enum pci_msix_result pci_msix_notify(struct pci_device *dev, unsigned int vector)
{
	struct pci_msix *mx = dev->msix;
	enum pci_msix_result res = PCI_MSIX_OFF;
	if (!mx)
		return res;
	pthread_mutex_lock(&mx->lock);
	if (!mx->enabled) {
		res = PCI_MSIX_OFF;
	} else if (vector >= mx->nr) {
		res = PCI_MSIX_DROPPED;
	} else if (!vec_deliverable(mx, &mx->vec[vector])) {
		mx->vec[vector].sent++; /* delivered at the unmask, after this */
		mx->pba[vector / 64] |= 1ULL << (vector % 64);
		res = PCI_MSIX_PENDING;
	} else {
		mx->vec[vector].sent++; /* before the write: see pci_msix_vector_seq */
		vec_fire(mx, &mx->vec[vector]);
		res = PCI_MSIX_SENT;
	}
	pthread_mutex_unlock(&mx->lock);
	return res;
}

int pci_msix_vector_seq(struct pci_device *dev, unsigned int vector, uint64_t *seq)
{
	struct pci_msix *mx = dev->msix;
	int r = -1;
	if (!mx)
		return -1;
	pthread_mutex_lock(&mx->lock);
	if (mx->enabled && vector < mx->nr) {
		*seq = (uint64_t)vector << 32 | mx->vec[vector].sent;
		r = 0;
	}
	pthread_mutex_unlock(&mx->lock);
	return r;
}

int pci_msix_vector_fd(struct pci_device *dev, unsigned int vector)
{
	struct pci_msix *mx = dev->msix;
	int fd = -1;
	if (!mx)
		return -1;
	pthread_mutex_lock(&mx->lock);
	if (mx->enabled && vector < mx->nr)
		fd = mx->vec[vector].efd;
	pthread_mutex_unlock(&mx->lock);
	return fd;
}

bool pci_msix_enabled(struct pci_device *dev)
{
	struct pci_msix *mx = dev->msix;
	if (!mx)
		return false;
	pthread_mutex_lock(&mx->lock);
	bool on = mx->enabled;
	pthread_mutex_unlock(&mx->lock);
	return on;
}

void pci_msix_cfg_write(struct pci_device *dev, uint32_t off, uint32_t len)
{
	struct pci_msix *mx = dev->msix;
	uint32_t ctl_off = mx->cap + PCI_MSIX_FLAGS;
	if (off >= ctl_off + 2 || ctl_off >= off + len)
		return;
	uint16_t ctl;
	memcpy(&ctl, &dev->cfg[ctl_off], 2);
	pthread_mutex_lock(&mx->lock);
	mx->enabled = ctl & PCI_MSIX_FLAGS_ENABLE;
	mx->fmask = ctl & PCI_MSIX_FLAGS_MASKALL;
	for (unsigned int i = 0; i < mx->nr; i++)
		vec_update(mx, i);
	pthread_mutex_unlock(&mx->lock);
}

/* Table entry words [w, w + n) of vector i. */
static void table_access(struct pci_msix *mx, unsigned int i, unsigned int w, unsigned int n,
			 uint8_t *data, bool is_write)
{
	struct msix_vector *v = &mx->vec[i];
	if (!is_write) {
		memcpy(data, &v->entry[w], 4 * n);
		return;
	}
	for (unsigned int k = 0; k < n; k++) {
		uint32_t val;
		memcpy(&val, data + 4 * k, 4);
		/* Only the mask bit of vector control is writable. */
		v->entry[w + k] = w + k == ENTRY_CTRL ? val & PCI_MSIX_ENTRY_CTRL_MASKBIT : val;
	}
	vec_update(mx, i);
}

static void msix_bar_handler(void *opaque, struct bus_access *acc)
{
	struct pci_msix *mx = opaque;
	uint64_t off = acc->offset;
	uint32_t len = acc->len;
	uint64_t table_end = PCI_MSIX_TABLE_OFFSET + (uint64_t)mx->nr * PCI_MSIX_ENTRY_SIZE;
	uint64_t pba_end = PCI_MSIX_PBA_OFFSET + 8 * (((uint64_t)mx->nr + 63) / 64);

	if (!acc->is_write)
		memset(acc->data, 0, len);
	/* The spec allows aligned dword and qword accesses only. */
	if ((len != 4 && len != 8) || off % len)
		return;
	pthread_mutex_lock(&mx->lock);
	/* The table starts at offset 0 of the BAR (PCI_MSIX_TABLE_OFFSET). */
	_Static_assert(PCI_MSIX_TABLE_OFFSET == 0, "table at the BAR's start");
	if (off + len <= table_end) {
		uint64_t rel = off;
		table_access(mx, (unsigned int)(rel / PCI_MSIX_ENTRY_SIZE),
			     (unsigned int)(rel % PCI_MSIX_ENTRY_SIZE) / 4, len / 4, acc->data,
			     acc->is_write);
	} else if (off >= PCI_MSIX_PBA_OFFSET && off + len <= pba_end && !acc->is_write) {
		pba_collect(mx);
		memcpy(acc->data, (uint8_t *)mx->pba + (off - PCI_MSIX_PBA_OFFSET), len);
	}
	pthread_mutex_unlock(&mx->lock);
}

static const char *msix_reg_name(void *opaque, uint64_t offset, bool is_write)
{
	(void)opaque;
	(void)is_write;
	return offset < PCI_MSIX_PBA_OFFSET ? "msix table" : "msix pba";
}

static void msix_free(struct pci_msix *mx)
{
	for (unsigned int i = 0; i < mx->nr; i++)
		if (mx->vec[i].efd >= 0)
			close(mx->vec[i].efd);
	pthread_mutex_destroy(&mx->lock);
	free(mx);
}

int pci_msix_init(struct pci_device *dev, unsigned int nr, unsigned int bar, char *err,
		  size_t errlen)
{
	if (nr < 1 || nr > PCI_MSIX_MAX_VECTORS || dev->msix) {
		snprintf(err, errlen, "%s: bad MSI-X vector count %u", dev->name, nr);
		return -1;
	}
	struct pci_msix *mx = calloc(1, sizeof(*mx));
	if (!mx) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&mx->lock, NULL);
	mx->dev = dev;
	mx->nr = nr;
	for (unsigned int i = 0; i < nr; i++) {
		mx->vec[i].entry[ENTRY_CTRL] = PCI_MSIX_ENTRY_CTRL_MASKBIT; /* reset state */
		mx->vec[i].gsi = -1;
		mx->vec[i].efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (mx->vec[i].efd < 0) {
			snprintf(err, errlen, "%s: eventfd: %s", dev->name, strerror(errno));
			mx->nr = i;
			msix_free(mx);
			return -1;
		}
	}
	uint8_t cap[PCI_MSIX_CAP_LEN] = {PCI_CAP_ID_MSIX};
	uint16_t ctl = (uint16_t)(nr - 1);
	uint32_t table = PCI_MSIX_TABLE_OFFSET | bar, pba = PCI_MSIX_PBA_OFFSET | bar;
	memcpy(cap + PCI_MSIX_FLAGS, &ctl, 2);
	memcpy(cap + PCI_MSIX_TABLE, &table, 4);
	memcpy(cap + PCI_MSIX_PBA, &pba, 4);
	struct bus_region r = {.handler = msix_bar_handler,
			       .reg_name = msix_reg_name,
			       .opaque = mx,
			       .name = dev->name};
	int off = pci_device_add_cap(dev, cap, sizeof(cap));
	if (off < 0 || pci_device_add_bar(dev, bar, PCI_MSIX_BAR_SIZE, &r) < 0) {
		snprintf(err, errlen, "%s: no room for MSI-X", dev->name);
		msix_free(mx);
		return -1;
	}
	static const uint8_t ctl_wmask[2] = {0x00, 0xc0}; /* enable, function mask */
	pci_device_set_wmask(dev, (uint32_t)off + PCI_MSIX_FLAGS, ctl_wmask, 2);
	mx->cap = (unsigned int)off;
	dev->msix = mx;
	return 0;
}

void pci_msix_destroy(struct pci_device *dev)
{
	struct pci_msix *mx = dev->msix;
	if (!mx)
		return;
	void *host;
	for (unsigned int i = 0; i < mx->nr; i++)
		if (mx->vec[i].bound && dev->bus)
			msix_host(mx, &host)->irqfd(host, mx->vec[i].efd, (uint32_t)mx->vec[i].gsi,
						    false);
	dev->msix = NULL;
	msix_free(mx);
}

void pci_msix_state_save(struct pci_device *dev, struct pci_msix_state *s)
{
	struct pci_msix *mx = dev->msix;
	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&mx->lock);
	pba_collect(mx);
	s->nr = mx->nr;
	memcpy(s->pba, mx->pba, sizeof(s->pba));
	for (unsigned int i = 0; i < mx->nr; i++)
		memcpy(s->entry[i], mx->vec[i].entry, sizeof(s->entry[i]));
	pthread_mutex_unlock(&mx->lock);
}

const char *pci_msix_state_check(const struct pci_device *dev, const struct pci_msix_state *s)
{
	const struct pci_msix *mx = dev->msix;
	if (s->nr != mx->nr || s->zero)
		return "its MSI-X vector count differs";
	for (unsigned int i = 0; i < PCI_MSIX_MAX_VECTORS; i++) {
		bool pending = s->pba[i / 64] >> (i % 64) & 1;
		if (i >= mx->nr &&
		    (pending || s->entry[i][0] | s->entry[i][1] | s->entry[i][2] | s->entry[i][3]))
			return "an MSI-X vector beyond its table is set";
		if (s->entry[i][ENTRY_CTRL] & ~(uint32_t)PCI_MSIX_ENTRY_CTRL_MASKBIT)
			return "an MSI-X vector control has read-only bits set";
	}
	return NULL;
}

void pci_msix_state_apply(struct pci_device *dev, const struct pci_msix_state *s)
{
	struct pci_msix *mx = dev->msix;
	pthread_mutex_lock(&mx->lock);
	memcpy(mx->pba, s->pba, sizeof(mx->pba));
	for (unsigned int i = 0; i < mx->nr; i++)
		memcpy(mx->vec[i].entry, s->entry[i], sizeof(s->entry[i]));
	pthread_mutex_unlock(&mx->lock);
	pci_msix_cfg_write(dev, mx->cap + PCI_MSIX_FLAGS, 2);
}
