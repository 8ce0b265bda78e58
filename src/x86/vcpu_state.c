// SPDX-License-Identifier: Apache-2.0
/* A vCPU's state to and from a snapshot (core/arch.h): one table, in the
 * order Firecracker's restore_state uses, which is also a safe order to
 * save in. Why this order:
 *   - MP_STATE first: getting it lets KVM accept pending APIC events,
 *     which changes what the rest reads;
 *   - REGS before EVENTS: KVM_SET_REGS drops a pending exception that
 *     KVM_SET_VCPU_EVENTS puts back;
 *   - SREGS before LAPIC: SREGS carries the APIC base;
 *   - LAPIC before MSRS: IA32_TSC_DEADLINE only takes with the LAPIC set;
 *   - EVENTS last.
 * The TSC frequency goes first: the MSRs' TSC values are in its ticks. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/arch.h"
#include "core/snap.h"

#define XSAVE_MIN    sizeof(struct kvm_xsave) /* 4096: the legacy area and header */
#define XSAVE_MAX    (64u << 10)
#define MSRS_MAX     1024u
#define MSR_LIST_MAX 1024u

struct vctx {
	int kvm_fd, vm_fd, fd;
	uint32_t index;
	char *err;
	size_t errlen;
};

struct vitem {
	uint32_t id;
	const char *name;
	unsigned long get, set; /* fixed size: one ioctl each way */
	size_t size;
	bool optional; /* absent where the host lacks it */
	int (*save)(struct vctx *c, struct snap_writer *w);
	int (*restore)(struct vctx *c, const struct snap_section *s);
	/* Structure of a variable-size section, before anything is applied. */
	int (*check)(struct vctx *c, const struct snap_section *s);
};

static int vfail(struct vctx *c, const char *what)
{
	snprintf(c->err, c->errlen, "vCPU %u: %s: %s", c->index, what, strerror(errno));
	return -1;
}

static int xsave_size(struct vctx *c)
{
	int n = ioctl(c->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);
	if (n > 0)
		return n;
	return ioctl(c->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0 ? (int)XSAVE_MIN : 0;
}

static int xsave_save(struct vctx *c, struct snap_writer *w)
{
	int n = xsave_size(c);
	if (!n)
		return 0; /* the FPU section stands in */
	void *buf = calloc(1, (size_t)n);
	if (!buf)
		return vfail(c, "XSAVE buffer");
	unsigned long req = n > (int)XSAVE_MIN ? KVM_GET_XSAVE2 : KVM_GET_XSAVE;
	int r = ioctl(c->fd, req, buf) < 0
		    ? vfail(c, "KVM_GET_XSAVE")
		    : snap_put(w, SNAP_ID_VCPU_XSAVE, c->index, buf, (size_t)n);
	free(buf);
	return r;
}

static int xsave_check(struct vctx *c, const struct snap_section *s)
{
	if (s->len >= XSAVE_MIN && s->len <= XSAVE_MAX && s->len % 64 == 0)
		return 0;
	snprintf(c->err, c->errlen, "vCPU %u: XSAVE area of %u bytes is not valid", c->index,
		 s->len);
	return -1;
}

static int xsave_restore(struct vctx *c, const struct snap_section *s)
{
	int n = xsave_size(c);
	if (!n || s->len > (unsigned int)n) {
		snprintf(c->err, c->errlen,
			 "vCPU %u: the snapshot's XSAVE area (%u bytes) does not fit this host's "
			 "(%d bytes)",
			 c->index, s->len, n);
		return -1;
	}
	void *buf = calloc(1, (size_t)n);
	if (!buf)
		return vfail(c, "XSAVE buffer");
	memcpy(buf, s->data, s->len);
	int r = ioctl(c->fd, KVM_SET_XSAVE, buf) < 0 ? vfail(c, "KVM_SET_XSAVE") : 0;
	free(buf);
	return r;
}

static int fpu_save(struct vctx *c, struct snap_writer *w)
{
	struct kvm_fpu f;
	if (xsave_size(c))
		return 0; /* XSAVE holds it, and more */
	if (ioctl(c->fd, KVM_GET_FPU, &f) < 0)
		return vfail(c, "KVM_GET_FPU");
	return snap_put(w, SNAP_ID_VCPU_FPU, c->index, &f, sizeof(f));
}

static int xcrs_save(struct vctx *c, struct snap_writer *w)
{
	struct kvm_xcrs x;
	if (ioctl(c->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) <= 0)
		return 0;
	if (ioctl(c->fd, KVM_GET_XCRS, &x) < 0)
		return vfail(c, "KVM_GET_XCRS");
	return snap_put(w, SNAP_ID_VCPU_XCRS, c->index, &x, sizeof(x));
}

static int tsc_save(struct vctx *c, struct snap_writer *w)
{
	int khz = ioctl(c->fd, KVM_GET_TSC_KHZ, 0);
	if (khz <= 0)
		return vfail(c, "KVM_GET_TSC_KHZ");
	uint32_t v = (uint32_t)khz;
	return snap_put(w, SNAP_ID_VCPU_TSC_KHZ, c->index, &v, sizeof(v));
}

/* A guest on a host whose TSC runs at another rate: KVM scales it, where
 * the host can (KVM_CAP_TSC_CONTROL); else one line. */
static int tsc_restore(struct vctx *c, const struct snap_section *s)
{
	uint32_t khz;
	memcpy(&khz, s->data, sizeof(khz));
	int now = ioctl(c->fd, KVM_GET_TSC_KHZ, 0);
	if (now > 0 && (uint32_t)now == khz)
		return 0;
	if (ioctl(c->fd, KVM_SET_TSC_KHZ, (unsigned long)khz) < 0)
		return vfail(c, "KVM_SET_TSC_KHZ (the snapshot's TSC runs at another rate)");
	return 0;
}

/* The MSRs KVM says it saves and emulates (KVM_GET_MSR_INDEX_LIST: the
 * kvmclock MSRs and IA32_TSC_DEADLINE among them). */
static struct kvm_msr_list *msr_list(struct vctx *c)
{
	struct kvm_msr_list *l = calloc(1, sizeof(*l) + MSR_LIST_MAX * sizeof(uint32_t));
	if (!l)
		return NULL;
	l->nmsrs = MSR_LIST_MAX;
	if (ioctl(c->kvm_fd, KVM_GET_MSR_INDEX_LIST, l) < 0) {
		free(l);
		return NULL;
	}
	return l;
}

/* KVM_GET_MSRS stops at the first MSR it cannot read: skip it, go on. */
static int msrs_save(struct vctx *c, struct snap_writer *w)
{
	struct kvm_msr_list *l = msr_list(c);
	struct kvm_msrs *m = calloc(1, sizeof(*m) + MSRS_MAX * sizeof(struct kvm_msr_entry));
	if (!l || !m) {
		free(l);
		free(m);
		return vfail(c, "KVM_GET_MSR_INDEX_LIST");
	}
	uint32_t kept = 0;
	for (uint32_t i = 0; i < l->nmsrs && kept < MSRS_MAX; i++) {
		m->nmsrs = 1;
		m->entries[0] = (struct kvm_msr_entry){.index = l->indices[i]};
		if (ioctl(c->fd, KVM_GET_MSRS, m) == 1)
			m->entries[++kept] = m->entries[0];
	}
	int r = snap_put(w, SNAP_ID_VCPU_MSRS, c->index, &m->entries[1],
			 kept * sizeof(struct kvm_msr_entry));
	free(l);
	free(m);
	return r;
}

static int msrs_check(struct vctx *c, const struct snap_section *s)
{
	if (s->len % sizeof(struct kvm_msr_entry) == 0 &&
	    s->len / sizeof(struct kvm_msr_entry) <= MSRS_MAX)
		return 0;
	snprintf(c->err, c->errlen, "vCPU %u: MSR list of %u bytes is not valid", c->index, s->len);
	return -1;
}

/* KVM takes fewer than MAX_IO_MSRS (256) entries per KVM_SET_MSRS and
 * refuses more with E2BIG, while a save may keep up to MSRS_MAX: set them
 * in chunks, as Firecracker does. */
#define MSRS_PER_SET 255u

static int msrs_restore(struct vctx *c, const struct snap_section *s)
{
	uint32_t n = s->len / sizeof(struct kvm_msr_entry);
	struct kvm_msrs *m = calloc(1, sizeof(*m) + MSRS_PER_SET * sizeof(struct kvm_msr_entry));
	if (!m)
		return vfail(c, "MSR buffer");
	int r = 0;
	for (uint32_t done = 0; done < n && r == 0;) {
		uint32_t k = n - done < MSRS_PER_SET ? n - done : MSRS_PER_SET;
		m->nmsrs = k;
		memcpy(m->entries, s->data + done * sizeof(struct kvm_msr_entry),
		       k * sizeof(struct kvm_msr_entry));
		int set = ioctl(c->fd, KVM_SET_MSRS, m);
		if (set < 0)
			r = vfail(c, "KVM_SET_MSRS");
		else if ((uint32_t)set != k) {
			snprintf(c->err, c->errlen, "vCPU %u: KVM refused MSR %#x (%u of %u set)",
				 c->index, m->entries[set].index, done + (uint32_t)set, n);
			r = -1;
		}
		done += k;
	}
	free(m);
	return r;
}

/* Room for any fixed-size item, aligned as the ioctls want it. */
union vbuf {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_fpu fpu;
	struct kvm_xcrs xcrs;
	struct kvm_debugregs dregs;
	struct kvm_lapic_state lapic;
	struct kvm_vcpu_events events;
	struct kvm_mp_state mp;
};

static const struct vitem vitems[] = {
    {SNAP_ID_VCPU_TSC_KHZ, "TSC kHz", 0, 0, sizeof(uint32_t), false, tsc_save, tsc_restore, NULL},
    {SNAP_ID_VCPU_MP_STATE, "MP_STATE", KVM_GET_MP_STATE, KVM_SET_MP_STATE,
     sizeof(struct kvm_mp_state), false, NULL, NULL, NULL},
    {SNAP_ID_VCPU_REGS, "REGS", KVM_GET_REGS, KVM_SET_REGS, sizeof(struct kvm_regs), false, NULL,
     NULL, NULL},
    {SNAP_ID_VCPU_SREGS, "SREGS", KVM_GET_SREGS, KVM_SET_SREGS, sizeof(struct kvm_sregs), false,
     NULL, NULL, NULL},
    {SNAP_ID_VCPU_XSAVE, "XSAVE", 0, 0, 0, true, xsave_save, xsave_restore, xsave_check},
    {SNAP_ID_VCPU_FPU, "FPU", 0, KVM_SET_FPU, sizeof(struct kvm_fpu), true, fpu_save, NULL, NULL},
    {SNAP_ID_VCPU_XCRS, "XCRS", 0, KVM_SET_XCRS, sizeof(struct kvm_xcrs), true, xcrs_save, NULL,
     NULL},
    {SNAP_ID_VCPU_DEBUGREGS, "DEBUGREGS", KVM_GET_DEBUGREGS, KVM_SET_DEBUGREGS,
     sizeof(struct kvm_debugregs), false, NULL, NULL, NULL},
    {SNAP_ID_VCPU_LAPIC, "LAPIC", KVM_GET_LAPIC, KVM_SET_LAPIC, sizeof(struct kvm_lapic_state),
     false, NULL, NULL, NULL},
    {SNAP_ID_VCPU_MSRS, "MSRS", 0, 0, 0, false, msrs_save, msrs_restore, msrs_check},
    {SNAP_ID_VCPU_EVENTS, "VCPU_EVENTS", KVM_GET_VCPU_EVENTS, KVM_SET_VCPU_EVENTS,
     sizeof(struct kvm_vcpu_events), false, NULL, NULL, NULL},
};
#define NR_VITEMS (sizeof(vitems) / sizeof(vitems[0]))

int arch_vcpu_save(int kvm_fd, int vm_fd, int vcpu_fd, uint32_t index, struct snap_writer *w,
		   char *err, size_t errlen)
{
	struct vctx c = {kvm_fd, vm_fd, vcpu_fd, index, err, errlen};
	union vbuf buf;
	for (size_t i = 0; i < NR_VITEMS; i++) {
		const struct vitem *it = &vitems[i];
		int r;
		if (it->save)
			r = it->save(&c, w);
		else if (ioctl(vcpu_fd, it->get, &buf) < 0)
			r = vfail(&c, it->name);
		else
			r = snap_put(w, it->id, index, &buf, it->size);
		if (r < 0) {
			if (!err[0])
				snprintf(err, errlen, "vCPU %u: %s: out of memory", index,
					 it->name);
			return -1;
		}
	}
	return 0;
}

int arch_vcpu_check(const struct snap_image *img, uint32_t index, char *err, size_t errlen)
{
	struct vctx c = {-1, -1, -1, index, err, errlen};
	for (size_t i = 0; i < NR_VITEMS; i++) {
		const struct vitem *it = &vitems[i];
		const struct snap_section *s = snap_find(img, it->id, index);
		if (!s && it->optional)
			continue;
		if (!s) {
			snprintf(err, errlen, "snapshot has no %s for vCPU %u", it->name, index);
			return -1;
		}
		if (it->check ? it->check(&c, s) < 0 : s->len != it->size) {
			if (!it->check)
				snprintf(err, errlen, "vCPU %u: %s is %u bytes, expected %zu",
					 index, it->name, s->len, it->size);
			return -1;
		}
	}
	/* One of the two FPU forms, never neither (a guest without its FPU
	 * state would run on zeros). */
	if (!snap_find(img, SNAP_ID_VCPU_XSAVE, index) ==
	    !snap_find(img, SNAP_ID_VCPU_FPU, index)) {
		snprintf(err, errlen, "vCPU %u: snapshot needs exactly one of XSAVE and FPU",
			 index);
		return -1;
	}
	return 0;
}

int arch_vcpu_restore(int kvm_fd, int vm_fd, int vcpu_fd, uint32_t index,
		      const struct snap_image *img, char *err, size_t errlen)
{
	if (arch_vcpu_check(img, index, err, errlen) < 0)
		return -1;
	struct vctx c = {kvm_fd, vm_fd, vcpu_fd, index, err, errlen};
	union vbuf buf;
	for (size_t i = 0; i < NR_VITEMS; i++) {
		const struct vitem *it = &vitems[i];
		const struct snap_section *s = snap_find(img, it->id, index);
		if (!s)
			continue; /* optional and absent: arch_vcpu_check said so */
		if (it->restore) {
			if (it->restore(&c, s) < 0)
				return -1;
			continue;
		}
		memcpy(&buf, s->data, it->size); /* aligned for the ioctl */
		if (ioctl(vcpu_fd, it->set, &buf) < 0)
			return vfail(&c, it->name);
	}
	return 0;
}
