// SPDX-License-Identifier: Apache-2.0
/* virtio-blk polling: the --disk poll options, and a polled request queue
 * on the real virtio-pci transport. The test plays the guest driver (fake
 * RAM, kicks only when EVENT_IDX says so) and the I/O thread (it calls the
 * kick handler and iothread_poll_once itself, with made-up times), while
 * the disk's real worker thread completes requests concurrently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "devices/block/blk_req.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "fake_mem.h"
#include "fake_pci_host.h"
#include "iothread/iothread.h"
#include "vp_driver.h"

/* ---- option parsing ---- */

static void test_spec_options(void **state)
{
	(void)state;
	struct blk_spec s;
	char err[256];
	assert_int_equal(blk_spec_parse("/tmp/d.img", &s, err, sizeof(err)), 0);
	assert_string_equal(s.path, "/tmp/d.img");
	assert_false(s.ro);
	assert_int_equal(s.poll.mode, POLL_OFF); /* disks do not poll by default */
	assert_int_equal(s.poll.start_kicks, POLL_DEFAULT_START_KICKS);

	assert_int_equal(blk_spec_parse("d.img,ro,poll=adaptive,poll-start=2,poll-window=300,"
					"poll-idle=75,poll-max=1000",
					&s, err, sizeof(err)),
			 0);
	assert_string_equal(s.path, "d.img");
	assert_true(s.ro);
	assert_int_equal(s.poll.mode, POLL_ADAPTIVE);
	assert_int_equal(s.poll.start_kicks, 2);
	assert_int_equal(s.poll.window_ns, 300000);
	assert_int_equal(s.poll.idle_ns, 75000);
	assert_int_equal(s.poll.max_ns, 1000000);
	assert_int_equal(blk_spec_parse("d.img,poll=always", &s, err, sizeof(err)), 0);
	assert_int_equal(s.poll.mode, POLL_ALWAYS);
	assert_false(s.ro);
	assert_int_equal(blk_spec_parse("d.img,poll=adaptive,poll=off", &s, err, sizeof(err)), 0);
	assert_int_equal(s.poll.mode, POLL_OFF); /* the last one wins, as for --net */

	static const struct {
		const char *spec, *why;
	} bad[] = {
	    {"", "empty image path"},
	    {",poll=always", "empty image path"},
	    {"d.img,poll=sometimes", "invalid poll=sometimes"},
	    {"d.img,poll", "invalid poll="},
	    {"d.img,poll=", "invalid poll="},
	    {"d.img,poll-start=0", "invalid poll-start=0"},
	    {"d.img,poll-start=1001", "invalid poll-start=1001"},
	    {"d.img,poll-idle=", "invalid poll-idle="},
	    {"d.img,poll-idle=-5", "invalid poll-idle=-5"},
	    {"d.img,poll-window=abc", "invalid poll-window=abc"},
	    {"d.img,poll-max=99999999999", "invalid poll-max=99999999999"},
	    {"d.img,polling=always", "unknown disk option 'polling'"},
	    {"d.img,ro=1", "invalid ro=1 (ro takes no value)"},
	    {"d.img,", "unknown disk option ''"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(blk_spec_parse(bad[i].spec, &s, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].why))
			fail_msg("spec '%s': got '%s', want '%s'", bad[i].spec, err, bad[i].why);
		assert_null(strchr(err, '\n'));
	}
	char longpath[PATH_MAX + 8];
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(blk_spec_parse(longpath, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too long"));
}

/* ---- a disk on the transport, polled by an I/O thread ---- */

#define QSZ	   16
#define RING_GPA   0x10000
#define DESC_GPA   RING_GPA
#define AVAIL_GPA  (RING_GPA + 0x400) /* vp_driver.h's layout for queue 0 */
#define USED_GPA   (RING_GPA + 0x800)
#define HDR_GPA	   0x20000
#define DATA_GPA   0x30000
#define STATUS_GPA 0x40000
#define SLOTS	   5 /* chains of 3 descriptors in a 16-entry table */
#define SECTORS	   64

struct fx {
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct fake_mem fm;
	struct iothread io;
	struct virtio_dev *vdev;
	struct virtio_pci *vp;
	struct vp_driver d;
	char dir[64], path[128];
	uint16_t avail_idx; /* the driver's */
	int kicks;	    /* kicks the driver sent */
};

/* The driver's side of bringing the device up: EVENT_IDX, one queue. */
static void driver_bring_up(struct fx *f)
{
	vpd_negotiate(&f->d, (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTQ_F_EVENT_IDX));
	vpd_queue(&f->d, 0, VIRTIO_MSI_NO_VECTOR);
	vpd_driver_ok(&f->d);
}

static uint16_t *ring16(struct fx *f, uint64_t gpa)
{
	return fake_mem_at(&f->fm, gpa);
}

static uint16_t used_idx(struct fx *f)
{
	return __atomic_load_n(ring16(f, USED_GPA + 2), __ATOMIC_ACQUIRE);
}

static uint16_t avail_event(struct fx *f)
{
	return __atomic_load_n(ring16(f, USED_GPA + 4 + 8 * QSZ), __ATOMIC_ACQUIRE);
}

static void desc_set(struct fx *f, uint16_t i, uint64_t gpa, uint32_t len, uint16_t flags)
{
	struct virtq_desc d = {.addr = gpa, .len = len, .flags = flags, .next = (uint16_t)(i + 1)};
	memcpy(fake_mem_at(&f->fm, DESC_GPA + 16 * (uint64_t)i), &d, sizeof(d));
}

/* I/O thread: the queue's ioeventfd fired (the epoll loop's call). */
static void io_kick(struct fx *f)
{
	vp_kick_ready(&f->vp->q[0], EPOLLIN);
}

/* The driver queues request n (a 512-byte write of pattern n to sector
 * n % SECTORS, in chain slot n % SLOTS) and kicks if EVENT_IDX asks it
 * to, as Linux does: the device's avail_event was crossed. */
static void driver_write(struct fx *f, unsigned int n)
{
	unsigned int slot = n % SLOTS;
	uint16_t head = (uint16_t)(3 * slot);
	uint64_t hdr = HDR_GPA + 16 * slot, data = DATA_GPA + 512 * slot, st = STATUS_GPA + slot;
	uint32_t h[4] = {VIRTIO_BLK_T_OUT, 0, n % SECTORS, 0};
	memcpy(fake_mem_at(&f->fm, hdr), h, sizeof(h));
	memset(fake_mem_at(&f->fm, data), (int)(n & 0xff), 512);
	*(uint8_t *)fake_mem_at(&f->fm, st) = 0xee;
	desc_set(f, head, hdr, 16, VIRTQ_DESC_F_NEXT);
	desc_set(f, (uint16_t)(head + 1), data, 512, VIRTQ_DESC_F_NEXT);
	desc_set(f, (uint16_t)(head + 2), st, 1, VIRTQ_DESC_F_WRITE);
	uint16_t old = f->avail_idx, new = (uint16_t)(old + 1);
	*ring16(f, AVAIL_GPA + 4 + 2 * (old % QSZ)) = head;
	__atomic_store_n(ring16(f, AVAIL_GPA + 2), new, __ATOMIC_RELEASE);
	f->avail_idx = new;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the driver's mb() before reading the event */
	uint16_t event = avail_event(f);
	if ((uint16_t)(new - event - 1) < (uint16_t)(new - old)) {
		uint64_t one = 1;
		assert_int_equal(write(f->vp->q[0].kick_fd, &one, sizeof(one)), sizeof(one));
		f->kicks++;
		io_kick(f);
	}
}

static uint8_t status_of(struct fx *f, unsigned int n)
{
	return *(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA + n % SLOTS);
}

static int fx_setup(void **state, const char *opts)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	assert_int_equal(fake_mem_init(&f->fm, 1 << 20), 0);
	assert_int_equal(iothread_init(&f->io, "io0"), 0);
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/skiff-blkpoll-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/disk.img", f->dir);
	int fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SECTORS * 512), 0);
	close(fd);

	char spec[256], err[256];
	snprintf(spec, sizeof(spec), "%s%s", f->path, opts);
	f->vdev = virtio_blk_create(spec, 0, err, sizeof(err));
	assert_non_null(f->vdev);
	struct virtio_pci_env env = {
	    .pci = f->pci, .io = &f->io, .gm = &f->fm.gm, .use_ioeventfd = true};
	assert_int_equal(virtio_pci_attach(&env, f->vdev, err, sizeof(err)), 0);
	f->vp = f->vdev->transport_data;
	f->d = (struct vp_driver){
	    .trap = &f->trap, .fm = &f->fm, .vp = f->vp, .ring_gpa = RING_GPA, .qsz = QSZ};
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->d.bar = cfg_bar64(&f->trap, 1, VP_BAR);
	driver_bring_up(f);
	*state = f;
	return 0;
}

/* Adaptive, starting at the first kick and stopping after 1 us idle: the
 * times the test passes decide. */
static int setup_adaptive(void **state)
{
	return fx_setup(state, ",poll=adaptive,poll-start=1,poll-idle=1,poll-max=10000000");
}

static int setup_off(void **state)
{
	return fx_setup(state, "");
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	virtio_blk_drain(f->vdev); /* no completion may reach the freed transport */
	pci_bus_destroy(f->pci);
	virtio_blk_destroy(f->vdev);
	iothread_destroy(&f->io);
	bus_destroy(&f->trap);
	fake_mem_free(&f->fm);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void test_poll_off_registers_nothing(void **state)
{
	struct fx *f = *state;
	assert_int_equal(f->vdev->poll.mode, POLL_OFF);
	assert_int_equal(f->io.nr_pollers, 0);
	assert_false(f->vp->q[0].polled);
	driver_write(f, 0);
	driver_write(f, 1);
	virtio_blk_drain(f->vdev);
	assert_int_equal(used_idx(f), 2);
	assert_int_equal(f->kicks, 2); /* each found the ring empty before */
}

/* Polling turns kicks off; requests are found by polling and completed by
 * the worker; when polling stops kicks come back, and the next request
 * kicks again. */
static void test_poll_suppresses_then_rearms_kicks(void **state)
{
	struct fx *f = *state;
	struct iothread_poller *p = &f->vp->q[0].poller;
	assert_true(f->vp->q[0].polled);
	assert_int_equal(f->io.nr_pollers, 1);
	assert_ptr_equal(f->io.pollers[0], p);
	assert_non_null(f->vdev->queue_lock[0]);

	driver_write(f, 0); /* kicks: polling starts, kicks go off */
	assert_int_equal(f->kicks, 1);
	assert_true(p->st.polling);
	assert_int_equal(f->io.nr_polling, 1);
	assert_true(f->vdev->vqs[0].poll_held);
	virtio_blk_drain(f->vdev);
	assert_int_equal(used_idx(f), 1);
	assert_int_equal(status_of(f, 0), VIRTIO_BLK_S_OK);

	driver_write(f, 1); /* avail_event was not moved: no kick */
	assert_int_equal(f->kicks, 1);
	uint64_t t = p->st.started_ns;
	iothread_poll_once(&f->io, t + 100); /* found by polling */
	virtio_blk_drain(f->vdev);
	assert_int_equal(used_idx(f), 2);
	assert_int_equal(status_of(f, 1), VIRTIO_BLK_S_OK);
	assert_int_equal(p->st.iters_work, 1);

	iothread_poll_once(&f->io, t + 1000000); /* idle: stop */
	assert_false(p->st.polling);
	assert_int_equal(f->io.nr_polling, 0);
	assert_false(f->vdev->vqs[0].poll_held);
	assert_int_equal(avail_event(f), 2); /* re-armed at what was consumed */
	driver_write(f, 2);
	assert_int_equal(f->kicks, 2);
	virtio_blk_drain(f->vdev);
	assert_int_equal(used_idx(f), 3);
	assert_true(__atomic_load_n(&f->vp->q[0].irqs, __ATOMIC_RELAXED) >= 1);
}

/* Many requests while the I/O thread starts and stops polling and the
 * worker completes concurrently (changing notification state under the
 * disk's lock): every request completes exactly once, none waits for a
 * kick that never comes. */
/* The poller's CPU clock in step with the test's wall clock: it always
 * gets its CPU here (contention is test_poll.c's). */
static uint64_t fake_now;
static uint64_t fake_cpu(void)
{
	return fake_now;
}

static void test_poll_with_concurrent_completions(void **state)
{
	struct fx *f = *state;
	f->io.cpu_clock = fake_cpu;
	struct iothread_poller *p = &f->vp->q[0].poller;
	enum { N = 400 };
	uint64_t t = 0, starts = 0;
	for (unsigned int n = 0; n < N; n++) {
		/* A chain slot is reused only once its request completed. */
		if (n >= SLOTS && (uint16_t)(used_idx(f) + SLOTS) <= n)
			virtio_blk_drain(f->vdev);
		driver_write(f, n);
		if (!p->st.polling)
			continue; /* it kicked: popped already */
		/* The poller's clock: a kick starts a period at the real
		 * time; from there the test moves it on. */
		if (p->st.starts != starts) {
			starts = p->st.starts;
			t = p->st.started_ns;
		}
		t += 100;
		fake_now = t;
		iothread_poll_once(&f->io, t); /* finds request n, or nothing after a kick */
		if (n % 7 == 0) {
			/* Now and then idle long enough to stop: kicks come
			 * back and the next request kicks (and restarts). */
			t += 1000000;
			fake_now = t;
			iothread_poll_once(&f->io, t);
		}
	}
	/* The guest is done: the I/O thread polls until idle, then stops
	 * (re-checking the ring once kicks are back on). */
	while (p->st.polling) {
		t += 1000000;
		fake_now = t;
		iothread_poll_once(&f->io, t);
	}
	virtio_blk_drain(f->vdev);
	assert_int_equal(used_idx(f), N);
	assert_int_equal(f->vdev->vqs[0].stats.pushed, N);
	for (unsigned int s = 0; s < SLOTS; s++)
		assert_int_equal(status_of(f, s), VIRTIO_BLK_S_OK);
	assert_true(f->kicks < N); /* polling saved kicks */
	assert_true(p->st.starts >= 2);
	/* The last N % SECTORS.. writes left their pattern in the image. */
	int fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	for (unsigned int n = N - SECTORS; n < N; n++) {
		uint8_t b[512], want[512];
		assert_int_equal(pread(fd, b, sizeof(b), (off_t)(n % SECTORS) * 512), 512);
		memset(want, (int)(n & 0xff), sizeof(want));
		assert_memory_equal(b, want, sizeof(b));
	}
	close(fd);
}

/* A reset while the queue is polled: the poller touches neither the rings
 * nor guest RAM afterwards (it would fault here), and stops cleanly. */
static void test_reset_while_polling(void **state)
{
	struct fx *f = *state;
	struct iothread_poller *p = &f->vp->q[0].poller;
	driver_write(f, 0);
	assert_true(p->st.polling);
	virtio_blk_drain(f->vdev);
	vpd_cw(&f->d, VP_STATUS, 1, 0);
	assert_int_equal(vpd_status(&f->d), 0);
	fake_mem_protect(&f->fm, false);
	uint64_t t = p->st.started_ns;
	iothread_poll_once(&f->io, t + 100);
	iothread_poll_once(&f->io, t + 1000000);
	fake_mem_protect(&f->fm, true);
	assert_false(p->st.polling);
	assert_int_equal(f->io.nr_polling, 0);
	/* The driver comes back: kicks work again. */
	memset(f->fm.ram + RING_GPA, 0, 0x9000);
	f->avail_idx = 0;
	int kicks = f->kicks;
	driver_bring_up(f);
	driver_write(f, 1);
	assert_int_equal(f->kicks, kicks + 1);
	virtio_blk_drain(f->vdev);
	assert_int_equal(used_idx(f), 1);
	assert_int_equal(status_of(f, 1), VIRTIO_BLK_S_OK);
}

/* Power-off with requests in flight (the VM's stop order): the kicks are
 * handled, the I/O thread has stopped, the guest is gone; virtio_blk_stop
 * must let every queued request finish into guest memory, which is still
 * mapped, and only then end the worker. Before the orderly stop, guest
 * RAM was unmapped under a running worker (SIGSEGV in blk_req_finish);
 * here the teardown frees the memory right after the stop, so a worker
 * still writing shows under ASan, and a stop that drops queued requests
 * leaves them without a status. */
static void test_stop_finishes_inflight(void **state)
{
	struct fx *f = *state;
	for (unsigned int n = 0; n < SLOTS; n++)
		driver_write(f, n);
	virtio_blk_stop(f->vdev);
	assert_int_equal(used_idx(f), SLOTS);
	for (unsigned int n = 0; n < SLOTS; n++)
		assert_int_equal(status_of(f, n), VIRTIO_BLK_S_OK);
	virtio_blk_stop(f->vdev); /* idempotent */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec_options),
	    cmocka_unit_test_setup_teardown(test_poll_off_registers_nothing, setup_off,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_poll_suppresses_then_rearms_kicks, setup_adaptive,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_poll_with_concurrent_completions, setup_adaptive,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_reset_while_polling, setup_adaptive, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_stop_finishes_inflight, setup_off, fx_teardown),
	};
	return cmocka_run_group_tests_name("blk_poll", tests, NULL, NULL);
}
