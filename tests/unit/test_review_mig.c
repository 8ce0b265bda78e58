// SPDX-License-Identifier: Apache-2.0
/* Review of live migration (vmm/mig_proto.c, mig_recv.c, vmm_mig_send.c)
 * as a hostile peer on either end of the stream would attack it. Each
 * test is a finding's proof: it failed before the fix named in its
 * comment. No KVM: the stream over a socketpair, and the source's send
 * on a VM that has RAM and dirty logs but no KVM file (its collect fails
 * as a target's refusal would end it). run-unit.sh bounds each binary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/dirty.h"
#include "core/sandbox.h"
#include "core/snap.h"
#include "core/vm_dirty.h"
#include "vmm/mig_proto.h"
#include "vmm/mig_recv.h"
#include "vmm/vmm.h"
#include "sandbox_child.h"

#define RAM_PAGES 4u
#define RAM	  (RAM_PAGES * MIG_PAGE)

/* A peer writing buf to fd: at once, or a byte per gap_ms (a trickle). */
struct peer {
	int fd;
	const uint8_t *buf;
	size_t len;
	int gap_ms;
	pthread_t t;
};

static void *peer_run(void *arg)
{
	struct peer *p = arg;
	struct timespec gap = {0, (long)p->gap_ms * 1000000L};
	for (size_t off = 0; off < p->len;) {
		size_t n = p->gap_ms ? 1 : p->len - off;
		ssize_t w = send(p->fd, p->buf + off, n, MSG_NOSIGNAL);
		if (w <= 0)
			break; /* the reader gave up: done */
		off += (size_t)w;
		if (p->gap_ms)
			nanosleep(&gap, NULL);
	}
	return NULL;
}

/* fds[1] for the reader; the peer writes into fds[0]. */
static void peer_start(struct peer *p, int fds[2], const void *buf, size_t len, int gap_ms)
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	*p = (struct peer){fds[0], buf, len, gap_ms, 0};
	assert_int_equal(pthread_create(&p->t, NULL, peer_run, p), 0);
}

static void peer_end(struct peer *p, int fds[2])
{
	shutdown(fds[1], SHUT_RDWR); /* a peer still writing stops */
	pthread_join(p->t, NULL);
	close(fds[0]);
	close(fds[1]);
}

struct stream {
	uint8_t *b;
	size_t len, cap;
};

static void put(struct stream *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->b = realloc(s->b, s->cap);
		assert_non_null(s->b);
	}
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

static void frame(struct stream *s, uint32_t type, const void *p, uint32_t n)
{
	uint32_t h[2] = {type, n};
	put(s, h, sizeof(h));
	put(s, p, n);
}

static void hello(struct stream *s)
{
	struct mig_hello h = {.version = MIG_VERSION, .ram = RAM};
	memcpy(h.magic, MIG_MAGIC, 8);
	frame(s, MIG_HELLO, &h, sizeof(h));
	/* and the CONFIG a source sends right after it (any image) */
	struct snap_writer w;
	size_t len;
	uint32_t tag = 1;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CLOCK, 0, &tag, sizeof(tag)), 0);
	const uint8_t *img = snap_writer_image(&w, &len);
	assert_non_null(img);
	frame(s, MIG_CONFIG, img, (uint32_t)len);
	snap_writer_free(&w);
}

static void one_page(struct stream *s, uint64_t first)
{
	uint8_t buf[sizeof(struct mig_pages) + 8 + MIG_PAGE] = {0};
	struct mig_pages p = {.count = 1};
	memcpy(buf, &p, sizeof(p));
	memcpy(buf + sizeof(p), &first, sizeof(first));
	frame(s, MIG_PAGES, buf, sizeof(buf));
}

/* A state; its VM's RAM in the VM_CONFIG section if vm_ram (vmm_snap.c's
 * layout: RAM bytes, vCPUs, devices). */
static void state_of(struct stream *s, uint64_t vm_ram)
{
	struct snap_writer w;
	size_t len;
	uint32_t v = 7;
	uint64_t sc[2] = {vm_ram, 1};
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CLOCK, 0, &v, sizeof(v)), 0);
	if (vm_ram)
		assert_int_equal(snap_put(&w, SNAP_ID_VM_CONFIG, 0, sc, sizeof(sc)), 0);
	const void *img = snap_writer_image(&w, &len);
	assert_non_null(img);
	frame(s, MIG_STATE, img, (uint32_t)len);
	snap_writer_free(&w);
}

static void state(struct stream *s)
{
	state_of(s, RAM);
}

/* The target's reading of s: 0 or -1, its line in err. */
static int receive(struct stream *s, char *err, size_t errlen)
{
	struct peer p;
	struct mig_rx rx;
	int fds[2];
	peer_start(&p, fds, s->b, s->len, 0);
	int r = mig_rx_run(&rx, fds[1], RAM, NULL, err, errlen);
	mig_rx_free(&rx);
	peer_end(&p, fds);
	free(s->b);
	return r;
}

/* Finding 1 (high): every wait was bounded, not the read: a peer that
 * sends a byte just inside each 30 s wait held the other side for as long
 * as it liked: a hostile target kept the source's guest paused for hours
 * (its READY or ERROR a byte at a time) and its API controller busy. Fixed
 * in mig_proto.c: the bound is the whole read's (and write's). Here a
 * byte per 20 ms against a 150 ms bound; 40 bytes take 800 ms at least. */
static void test_trickle_is_bounded(void **state_)
{
	(void)state_;
	static uint8_t src[40];
	uint8_t dst[40];
	struct peer p;
	int fds[2];
	peer_start(&p, fds, src, sizeof(src), 20);
	errno = 0;
	int r = mig_read_all(fds[1], dst, sizeof(dst), 150);
	int e = errno;
	peer_end(&p, fds);
	assert_int_equal(r, -1);
	assert_int_equal(e, ETIMEDOUT);
}

/* Finding 2 (medium): a source may send PAGES and ROUND frames for ever;
 * the target read them all, its controller held with no bound (the
 * accept's 10 minutes bound only the wait for a source). A real source
 * sends at most MIG_ROUNDS_MAX + 1 rounds of at most all of RAM. Fixed in
 * mig_recv.c: more than that is refused, in one line. */
static void test_endless_pages_refused(void **state_)
{
	(void)state_;
	struct stream s = {0};
	char err[300];
	hello(&s);
	for (uint32_t i = 0; i < (MIG_ROUNDS_MAX + 1) * RAM_PAGES + 1; i++)
		one_page(&s, i % RAM_PAGES);
	state(&s);
	assert_int_equal(receive(&s, err, sizeof(err)), -1);
	if (!strstr(err, "more pages than") || strchr(err, '\n'))
		fail_msg("got '%s'", err);
}

static void test_endless_rounds_refused(void **state_)
{
	(void)state_;
	struct stream s = {0};
	char err[300];
	hello(&s);
	for (uint64_t i = 0; i < MIG_ROUNDS_MAX + 2; i++) {
		uint64_t r[2] = {i, 0};
		frame(&s, MIG_ROUND, r, sizeof(r));
	}
	state(&s);
	assert_int_equal(receive(&s, err, sizeof(err)), -1);
	if (!strstr(err, "more rounds than") || strchr(err, '\n'))
		fail_msg("got '%s'", err);
}

/* What a real source sends at most still goes through. */
static void test_most_a_source_sends(void **state_)
{
	(void)state_;
	struct stream s = {0};
	char err[300];
	hello(&s);
	for (uint64_t i = 0; i < MIG_ROUNDS_MAX + 1; i++) {
		uint64_t r[2] = {i, RAM_PAGES};
		for (uint32_t pg = 0; pg < RAM_PAGES; pg++)
			one_page(&s, pg);
		frame(&s, MIG_ROUND, r, sizeof(r));
	}
	state(&s);
	if (receive(&s, err, sizeof(err)) < 0)
		fail_msg("refused: %s", err);
}

/* Finding 5 (low): a state whose VM has other RAM than HELLO's was
 * answered READY: the source let go of its disks' locks, and only the
 * target's build found the mismatch (the memory file's size), so the
 * source had to take them back. Fixed in mig_recv.c: refused with the
 * state, before READY. */
static void test_state_ram_differs_from_hello(void **state_)
{
	(void)state_;
	struct stream s = {0};
	char err[300];
	hello(&s);
	state_of(&s, 2 * RAM);
	assert_int_equal(receive(&s, err, sizeof(err)), -1);
	if (!strstr(err, "HELLO") || strchr(err, '\n'))
		fail_msg("got '%s'", err);
}

/* Finding 3 (high): the source's pre-copy reads and clears the dirty
 * logs; when the migration then failed (a target refusing, a collect
 * failing), the pages it had taken were nowhere: with track_dirty_pages
 * on, the next Diff snapshot left them out, and a Diff merged on its
 * base restored stale memory. Fixed in vmm_mig_send.c: a failed send
 * puts every page back as dirty. */
static void test_failed_send_keeps_dirty_pages(void **state_)
{
	(void)state_;
	char dir[] = "/tmp/skiff-review-mig-XXXXXX", url[128], err[600];
	assert_non_null(mkdtemp(dir));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/mig.sock", dir);
	snprintf(url, sizeof(url), "unix:%s", a.sun_path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);

	struct vmm *v = calloc(1, sizeof(*v));
	assert_non_null(v);
	uint8_t *ram = calloc(1, RAM);
	assert_non_null(ram);
	v->vm.vm_fd = -1; /* no KVM: the first collect fails */
	v->vm.mem = (struct guest_mem){ram, RAM, RAM};
	assert_int_equal(dirty_log_init(&v->vm.dirty, ram, RAM, false), 0);
	dirty_log_mark(&v->vm.dirty, ram + 2 * MIG_PAGE + 10, 1); /* a device wrote page 2 */

	struct vmm_mig_stats st;
	assert_int_equal(vmm_migrate_send(v, url, &st, err, sizeof(err)), -1);
	uint64_t bits[1] = {0};
	dirty_log_take(&v->vm.dirty, bits);
	assert_true(bits[0] >> 2 & 1); /* still dirty for the next Diff */

	dirty_log_free(&v->vm.dirty);
	free(ram);
	free(v);
	close(l);
	unlink(a.sun_path);
	rmdir(dir);
}

/* Finding 5 (high): after RELEASED the target builds the VM, resumes
 * it and then says RUNNING. When that RUNNING never came (the target's
 * process or the connection died after its resume), the source took its
 * disk locks back and resumed: a guest with no disk and no single-queue
 * tap then ran in both processes (docs/MIGRATION.md said so). Fixed in
 * vmm_mig_send.c: after RELEASED only the target's ERROR (it did not
 * resume) lets the source resume; a stream that ends or goes silent
 * leaves it paused. The rule, and mig_expect telling the two apart. */
static void test_lost_running_stays_paused(void **state_)
{
	(void)state_;
	/* before RELEASED: the target built nothing, resume */
	assert_true(mig_src_resumes(false, false, false));
	/* after it, the target's ERROR and the locks back: resume */
	assert_true(mig_src_resumes(true, false, true));
	/* no answer: paused, whatever the locks say */
	assert_false(mig_src_resumes(true, true, true));
	assert_false(mig_src_resumes(true, true, false));
	/* the locks held elsewhere: paused */
	assert_false(mig_src_resumes(true, false, false));

	char err[300];
	uint64_t ns;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(mig_send(sv[1], MIG_ERROR, "target: no", 10), 0);
	assert_int_equal(mig_expect(sv[0], MIG_RUNNING, &ns, sizeof(ns), NULL, err, sizeof(err)),
			 MIG_PEER_GAVE_UP);
	assert_non_null(strstr(err, "target: no"));
	close(sv[1]); /* the target gone without a word */
	assert_int_equal(mig_expect(sv[0], MIG_RUNNING, &ns, sizeof(ns), NULL, err, sizeof(err)),
			 -1);
	close(sv[0]);
}

/* Finding 4 (low, hardening): the controller's filter, opened for
 * /migration/send, let socket take any type and protocol of the three
 * families: a datagram or raw socket (with CAP_NET_RAW outside the jail)
 * from a compromised controller, which the migration never makes. Fixed
 * in sandbox_rules.c: the stream mig_connect makes, SOCK_CLOEXEC, only. */
static int controller_datagram(void *arg)
{
	(void)arg;
	sandbox_enable(true);
	if (sandbox_enter(SANDBOX_CONTROLLER) != 0)
		return 101;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return s >= 0 ? 0 : 102;
}

static int controller_stream(void *arg)
{
	(void)arg;
	sandbox_enable(true);
	if (sandbox_enter(SANDBOX_CONTROLLER) != 0)
		return 101;
	int s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	return s >= 0 || errno == EAFNOSUPPORT ? 0 : 102;
}

static void test_controller_makes_streams_only(void **state_)
{
	(void)state_;
	struct child_result res;
	child_run(controller_stream, NULL, &res);
	if (!child_exited_ok(&res))
		fail_msg("the migration's stream refused: status %d, %s", res.status, res.err);
	child_run(controller_datagram, NULL, &res);
	if (!child_died_by_sigsys(&res))
		fail_msg("a datagram socket allowed: status %d, %s", res.status, res.err);
}

/* Finding 6 (review4, low): the rule above takes the target's ERROR to
 * mean it did not resume, and the target says ERROR whenever vmm_restore
 * returns -1. vmm_resume returned -1 when the guest's clock could not be
 * set, yet had opened the vCPUs' gate: the guest ran (its I/O reaching
 * the disks) until the target tore it down, and then ran again on the
 * source. Fixed in vmm.c: a clock that cannot be set is said in the log
 * and the guest resumes (jumped, not stuck, as before), so -1 means the
 * vCPUs stay parked and 0 that they run. A VM with no KVM file: its
 * KVM_SET_CLOCK fails (EBADF). */
static void test_resume_says_what_it_did(void **state_)
{
	(void)state_;
	static struct vmm v;
	memset(&v, 0, sizeof(v));
	pthread_mutex_init(&v.ctl_lock, NULL);
	vcpu_gate_init(&v.vm.gate);
	v.vm_created = true;
	v.vm.vm_fd = v.vm.kvm_fd = -1;
	v.vm.exit_pipe[0] = v.vm.exit_pipe[1] = -1;
	assert_int_equal(vmm_pause(&v), -1); /* its clock cannot be read either */
	assert_int_equal(vcpu_gate_close(&v.vm.gate, NULL, NULL), 0); /* paused, as a restore */
	v.paused = true;
	int r = vmm_resume(&v);
	bool runs = !vcpu_gate_closed(&v.vm.gate);
	if ((r == 0) != runs || runs == v.paused)
		fail_msg("vmm_resume returned %d with the vCPUs %s (paused %d)", r,
			 runs ? "running" : "parked", v.paused);
	vcpu_gate_destroy(&v.vm.gate);
	pthread_mutex_destroy(&v.ctl_lock);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trickle_is_bounded),
	    cmocka_unit_test(test_endless_pages_refused),
	    cmocka_unit_test(test_endless_rounds_refused),
	    cmocka_unit_test(test_most_a_source_sends),
	    cmocka_unit_test(test_state_ram_differs_from_hello),
	    cmocka_unit_test(test_failed_send_keeps_dirty_pages),
	    cmocka_unit_test(test_lost_running_stays_paused),
	    cmocka_unit_test(test_controller_makes_streams_only),
	    cmocka_unit_test(test_resume_says_what_it_did),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
