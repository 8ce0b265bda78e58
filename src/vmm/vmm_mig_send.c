// SPDX-License-Identifier: Apache-2.0
/* Live migration, the source's side (docs/MIGRATION.md): guest RAM in
 * pre-copy rounds from the dirty logs while the guest runs, then the
 * pause, the last dirty pages and the state file's image; the disks'
 * locks handed over once the target has checked the state; the target's
 * RUNNING ends it. A failure before the hand-over, or the target's ERROR
 * after it, leaves the guest here, running as before (resumed if the
 * migration paused it); no answer after it leaves it paused here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/snap.h"
#include "core/vm_dirty.h"
#include "vmm/mig_proto.h"
#include "vmm/vmm.h"
#include "vmm/vmm_dirty.h"

/* Pre-copy ends when a round leaves this few pages dirty (4 MiB: well
 * under the downtime a round's copy costs), when a round no longer
 * shrinks the dirty set, or after MIG_ROUNDS_MAX rounds (mig_proto.h). */
#define MIG_DIRTY_DONE 1024u

struct mig_src {
	struct vmm *v;
	int fd;
	uint64_t *bits; /* dirty_words(pages) */
	uint64_t pages, sent;
	uint64_t state_sent_ns; /* when the switch's last byte went */
	bool unanswered;	/* RELEASED went and no RUNNING or ERROR came */
	bool logging;		/* it turned the devices' dirty logs on (vhost's) */
	bool stopped;		/* it stopped the devices that cannot log (dirty_stop) */
};

/* One PAGES frame being filled: its header, its list, and the iovec
 * that sends them and the pages (a run of neighbours one entry) in one
 * writev: a sparse bitmap (zero pages left out) is many short runs, and
 * a frame per run was a few system calls per run on each side. */
struct pg_batch {
	struct {
		uint32_t type, len;
		struct mig_pages p;
	} hdr;
	uint64_t page[MIG_PAGES_MAX];
	struct iovec iov[MIG_PAGES_MAX + 2];
	int niov;
};

static int batch_flush(struct mig_src *m, struct pg_batch *b)
{
	uint32_t n = b->hdr.p.count;
	if (!n)
		return 0;
	b->hdr.type = MIG_PAGES;
	b->hdr.len = (uint32_t)mig_pages_len(n);
	b->iov[0] = (struct iovec){&b->hdr, sizeof(b->hdr)};
	b->iov[1] = (struct iovec){b->page, n * sizeof(b->page[0])};
	int r = mig_writev_all(m->fd, b->iov, b->niov, MIG_IO_MS);
	m->sent += n;
	b->hdr.p.count = 0;
	b->niov = 2;
	return r;
}

/* The pages bits names, in frames of at most MIG_PAGES_MAX. */
static int send_dirty(struct mig_src *m, char *err, size_t errlen)
{
	struct pg_batch b; /* (6 KiB of the controller's stack) */
	uint64_t pos = 0, run;
	uint8_t *ram = m->v->vm.mem.host;
	b.hdr.p = (struct mig_pages){0};
	b.niov = 2;
	while ((run = dirty_bits_next_run(m->bits, m->pages, &pos))) {
		for (uint64_t done = 0; done < run;) {
			uint32_t room = MIG_PAGES_MAX - b.hdr.p.count;
			uint32_t n = run - done > room ? room : (uint32_t)(run - done);
			for (uint32_t i = 0; i < n; i++)
				b.page[b.hdr.p.count + i] = pos + done + i;
			b.hdr.p.count += n;
			b.iov[b.niov++] =
			    (struct iovec){ram + (pos + done) * MIG_PAGE, (size_t)n * MIG_PAGE};
			done += n;
			if (b.hdr.p.count == MIG_PAGES_MAX && batch_flush(m, &b) < 0)
				goto fail;
		}
		pos += run;
	}
	if (batch_flush(m, &b) == 0)
		return 0;
fail:
	snprintf(err, errlen, "cannot send guest memory: %s", strerror(errno));
	return -1;
}

/* Every page of RAM in m->bits. */
static void bits_all(struct mig_src *m)
{
	for (uint64_t w = 0; w < dirty_words(m->pages); w++)
		m->bits[w] = m->pages - w * 64 >= 64 ? ~0ull : (1ull << (m->pages % 64)) - 1;
}

/* One round: the logs read (and cleared), what they name sent; all:
 * every page that is not zero, whatever the logs say (round 0: the
 * target's RAM starts zero, and a page written after this scan is in the
 * next round's log). Its page count in *n. */
static int send_round(struct mig_src *m, uint32_t round, bool all, uint64_t *n, char *err,
		      size_t errlen)
{
	memset(m->bits, 0, dirty_words(m->pages) * sizeof(uint64_t));
	if (vm_dirty_collect(&m->v->vm, m->bits) < 0) {
		snprintf(err, errlen, "cannot read the dirty page log");
		return -1;
	}
	const struct vmm_mem_file *mf = &m->v->mem_file; /* a restored VM's */
	if (all)
		dirty_bits_nonzero_file(m->v->vm.mem.host, m->v->vm.mem.size,
					mf->held ? mf->fd : -1, mf->held ? mf->pagemap : -1,
					m->bits);
	*n = dirty_bits_count(m->bits, m->pages);
	uint64_t r[2] = {round, *n};
	if (send_dirty(m, err, errlen) < 0 || mig_send(m->fd, MIG_ROUND, r, sizeof(r)) < 0) {
		if (!err[0])
			snprintf(err, errlen, "cannot send guest memory: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int precopy(struct mig_src *m, char *err, size_t errlen)
{
	uint64_t n, prev = UINT64_MAX;
	for (uint32_t round = 0; round < MIG_ROUNDS_MAX; round++) {
		uint64_t t = monotonic_ns();
		if (send_round(m, round, round == 0, &n, err, errlen) < 0)
			return -1;
		log_info("migration: round %u sent %llu pages in %llu ms", round,
			 (unsigned long long)n,
			 (unsigned long long)((monotonic_ns() - t) / 1000000));
		if (round > 0 && (n <= MIG_DIRTY_DONE || n >= prev))
			break;
		prev = n;
	}
	return 0;
}

/* Paused, I/O threads held: the rest of RAM and the state, then the
 * locks handed over. *released says whether they were. */
static int switch_over(struct mig_src *m, bool *released, char *err, size_t errlen)
{
	struct snap_writer w;
	size_t len;
	const uint8_t *img;
	uint64_t n;
	snap_writer_init(&w);
	int r = -1;
	uint64_t t[4] = {monotonic_ns()};
	/* The state first: building it stops vhost's kernel worker
	 * (virtio_net_vhost_park), whose last writes are then in the log the
	 * last round reads; the pages still go before the state. */
	if (vmm_state_image(m->v, &w, err, errlen) < 0 || !(img = snap_writer_image(&w, &len))) {
		if (!err[0])
			snprintf(err, errlen, "out of memory building the state");
		goto out;
	}
	if (send_round(m, MIG_ROUNDS_MAX, false, &n, err, errlen) < 0)
		goto out;
	t[1] = monotonic_ns();
	if (mig_send(m->fd, MIG_STATE, img, (uint32_t)len) < 0) {
		snprintf(err, errlen, "cannot send the state: %s", strerror(errno));
		goto out;
	}
	m->state_sent_ns = monotonic_ns();
	if (mig_expect(m->fd, MIG_READY, NULL, 0, NULL, err, errlen) < 0)
		goto out;
	t[2] = monotonic_ns();
	/* The target checked the state and opened nothing yet: the images
	 * are free for it from here (it takes them after RELEASED). */
	*released = true;
	if (devmgr_handover(&m->v->dm, true, err, errlen) < 0 ||
	    mig_send(m->fd, MIG_RELEASED, NULL, 0) < 0) {
		if (!err[0])
			snprintf(err, errlen, "the target is gone: %s", strerror(errno));
		goto out;
	}
	uint64_t restore_ns;
	r = mig_expect(m->fd, MIG_RUNNING, &restore_ns, sizeof(restore_ns), NULL, err, errlen);
	/* The target builds and resumes after RELEASED, and says ERROR only
	 * if it did not resume: any other end may be a RUNNING lost. */
	m->unanswered = r < 0 && r != MIG_PEER_GAVE_UP;
	t[3] = monotonic_ns();
	/* Where the downtime went: the last pages, the state to READY (the
	 * target parsed and checked it), the hand-over to RUNNING (the target
	 * built and resumed the VM). The first includes the state's build. */
	if (r == 0)
		log_info("migration: switch: last %llu pages %llu ms, state %zu bytes to READY "
			 "%llu ms, to RUNNING %llu ms",
			 (unsigned long long)n, (unsigned long long)((t[1] - t[0]) / 1000000), len,
			 (unsigned long long)((t[2] - t[1]) / 1000000),
			 (unsigned long long)((t[3] - t[2]) / 1000000));
out:
	snap_writer_free(&w);
	return r;
}

/* Whether the source runs the guest again after a failed switch: only
 * if the target cannot be running it. Before RELEASED it built nothing;
 * after it, only its ERROR says it did not resume (a closed or silent
 * stream may be its RUNNING lost), and the locks must come back. */
bool mig_src_resumes(bool released, bool unanswered, bool locked)
{
	return !released || (!unanswered && locked);
}

/* The target failed: the locks back (its VM is gone, so they are free
 * again; a few tries while its process lets go), the guest running. If
 * the target never answered after RELEASED, or the locks cannot be had,
 * the target may be running the guest: this one stays paused, never two
 * at once. */
static void take_back(struct mig_src *m, bool released, bool was_paused, char *err, size_t errlen)
{
	char why[200];
	bool locked = !released;
	for (int i = 0; !locked && i < 50; i++) {
		locked = devmgr_handover(&m->v->dm, false, why, sizeof(why)) == 0;
		if (!locked)
			usleep(100 * 1000);
	}
	vmm_devices_hold(m->v, false);
	if (!mig_src_resumes(released, m->unanswered, locked)) {
		size_t n = strlen(err);
		snprintf(err + n, errlen - n,
			 "; %s, so the target may run the guest: this microVM stays paused",
			 m->unanswered ? "the target did not answer after the hand-over" : why);
		return;
	}
	if (!was_paused)
		vmm_resume(m->v);
}

/* CONFIG, right after HELLO: the device list, for the target to prepare
 * its threads' filters while the pages stream (mig_proto.h). */
static int send_config(struct mig_src *m, char *err, size_t errlen)
{
	struct snap_writer w;
	size_t len = 0;
	const uint8_t *img = NULL;
	int r = -1;
	snap_writer_init(&w);
	if (devmgr_save_list_only(&m->v->dm, &w) < 0 || !(img = snap_writer_image(&w, &len)))
		snprintf(err, errlen, "out of memory building the device list");
	else if (len > MIG_CONFIG_MAX)
		snprintf(err, errlen, "the device list is over %u bytes", MIG_CONFIG_MAX);
	else if (mig_send(m->fd, MIG_CONFIG, img, (uint32_t)len) < 0)
		snprintf(err, errlen, "cannot send the device list: %s", strerror(errno));
	else
		r = 0;
	snap_writer_free(&w);
	return r;
}

/* The writes no log of the VM's sees (vhost's kernel worker), if a
 * device makes any, logged by that device from here on, in the VM's log
 * by guest-physical page, which each round's collect reads with the
 * others (vm_dirty_collect): before round 0 reads RAM, so a write after
 * it is in a later round. A VM tracking dirty pages has them on already
 * (vmm_build), and keeps them on whatever the migration does. A device
 * whose writer cannot log (vhost-vsock) stops writing instead, until the
 * switch or a failure. */
static int start_logs(struct mig_src *m, char *err, size_t errlen)
{
	int r = vmm_dev_logs_start(m->v, "migrate", err, errlen);
	m->logging = r > 0;
	if (r < 0)
		return -1;
	if (devmgr_dirty_stop(&m->v->dm, true, err, errlen) < 0)
		return -1;
	m->stopped = true;
	return 0;
}

int vmm_migrate_send(struct vmm *v, const char *url, struct vmm_mig_stats *st, char *err,
		     size_t errlen)
{
	err[0] = '\0';
	memset(st, 0, sizeof(*st));
	uint64_t t0 = monotonic_ns();
	if (devmgr_can_save(&v->dm, "migrate", err, errlen) < 0 ||
	    devmgr_can_track(&v->dm, "migrate", true, true, err, errlen) < 0)
		return -1;
	struct mig_src m = {.v = v, .fd = -1};
	int r = -1;
	char why[200];
	if ((m.fd = mig_connect(url, err, errlen)) < 0)
		return -1;
	if (!vm_dirty_on(&v->vm) && vm_dirty_enable_late(&v->vm, err, errlen) < 0)
		goto out;
	if (start_logs(&m, err, errlen) < 0)
		goto out;
	m.pages = v->vm.dirty.pages;
	struct mig_hello h = {.version = MIG_VERSION, .ram = v->vm.mem.size};
	memcpy(h.magic, MIG_MAGIC, 8);
	if (!(m.bits = calloc(dirty_words(m.pages), sizeof(uint64_t)))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (mig_send(m.fd, MIG_HELLO, &h, sizeof(h)) < 0) {
		snprintf(err, errlen, "cannot send to %s: %s", url, strerror(errno));
		goto out;
	}
	if (send_config(&m, err, errlen) < 0)
		goto out;
	if (precopy(&m, err, errlen) < 0)
		goto out;
	bool was_paused = v->paused, released = false;
	uint64_t tp = monotonic_ns();
	if (vmm_pause(v) < 0) {
		snprintf(err, errlen, "cannot pause the microVM");
		goto out;
	}
	/* As a snapshot: batched MMIO applied, devices' threads still. */
	vmm_devices_hold(v, true);
	if (switch_over(&m, &released, err, errlen) < 0) {
		take_back(&m, released, was_paused, err, errlen);
		goto out;
	}
	/* The guest is the target's now; this VM only ends (its disks
	 * drained, its vCPUs parked: nothing more reaches the images). */
	vmm_devices_hold(v, false);
	uint64_t now = monotonic_ns();
	st->downtime_ms = (now - tp) / 1000000;
	st->downtime_sent_ms = (m.state_sent_ns - tp) / 1000000;
	st->total_ms = (now - t0) / 1000000;
	st->pages = m.sent;
	log_info("migration: done to %s: downtime %llu ms (%llu ms to the last byte sent), total "
		 "%llu ms, %llu pages sent",
		 url, (unsigned long long)st->downtime_ms, (unsigned long long)st->downtime_sent_ms,
		 (unsigned long long)st->total_ms, (unsigned long long)st->pages);
	r = 0;
out:
	/* The rounds read and cleared the logs: the guest stays here, so a
	 * later Diff snapshot must still see those pages. Which ones the
	 * rounds took is not kept: all of RAM, a larger Diff, never a stale
	 * page. */
	if (r < 0 && m.bits && vm_dirty_on(&v->vm)) {
		bits_all(&m);
		dirty_log_put(&v->vm.dirty, m.bits);
	}
	/* The guest stays here: its vhost goes on without a log. */
	if (r < 0 && m.logging && vmm_dev_logs_stop(v, why, sizeof(why)) < 0)
		log_warn("migration: %s", why);
	if (r < 0 && m.stopped && devmgr_dirty_stop(&v->dm, false, why, sizeof(why)) < 0)
		log_warn("migration: %s", why);
	if (r < 0 && m.fd >= 0) {
		char line[MIG_ERR_MAX];
		snprintf(line, sizeof(line), "source: %s", err);
		mig_send(m.fd, MIG_ERROR, line, (uint32_t)strlen(line));
	}
	if (m.fd >= 0)
		close(m.fd);
	free(m.bits);
	return r;
}
