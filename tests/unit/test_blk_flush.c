// SPDX-License-Identifier: Apache-2.0
/* A FLUSH must make every write the guest saw completed durable before it
 * is answered (issue 32.4), on both block paths. The powercut scenario
 * cannot see a flush answered just before its fdatasync (README of the
 * testbed, "Power cuts"): these tests can.
 *
 * threads: fdatasync and pwritev are interposed (defined here, so the
 * library's calls land here): they log what reaches the image, and
 * fdatasync looks at the used ring when it starts, where the flush must
 * not be yet.
 * io_uring: the kernel does the I/O, so the test looks at what skiff
 * submits (io_uring_submit wrapped with -Wl,--wrap, see the Makefile): the
 * flush must be an IORING_OP_FSYNC with IORING_FSYNC_DATASYNC on the
 * image, after the writes, with IOSQE_IO_DRAIN so that it starts only once
 * they have completed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_priv.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"

#define RAM_SIZE   (1u << 20)
#define QSZ	   16
#define DESC_GPA   0x1000
#define AVAIL_GPA  0x2000
#define USED_GPA   0x3000
#define HDR_GPA	   0x10000 /* request k's header at + 16 k */
#define DATA_GPA   0x20000 /* request k's data at + 4096 k */
#define STATUS_GPA 0xF0000 /* request k's status at + k */
#define NWRITES	   3

/* ---- what reached the image, in order ---- */

enum ev_kind { EV_WRITE, EV_SYNC };

struct ev {
	enum ev_kind kind;
	int fd;
	uint8_t op, flags; /* io_uring: the SQE's opcode and flags */
	uint32_t fsync_flags;
	uint16_t used_at_sync; /* threads: answered requests when fdatasync began */
};

static struct ev evs[64];
static _Atomic int nevs;
static struct fake_mem *cur_fm; /* for fdatasync's look at the used ring */

static void ev_add(struct ev e)
{
	int i = nevs++;
	assert_true(i < (int)(sizeof(evs) / sizeof(evs[0])));
	evs[i] = e;
}

static uint16_t used_idx(struct fake_mem *fm)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(fm, USED_GPA + 2), __ATOMIC_ACQUIRE);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	if (cur_fm)
		ev_add((struct ev){.kind = EV_WRITE, .fd = fd});
	return syscall(SYS_pwritev, fd, iov, n, (long)off, 0L);
}

int fdatasync(int fd)
{
	if (cur_fm)
		ev_add((struct ev){.kind = EV_SYNC, .fd = fd, .used_at_sync = used_idx(cur_fm)});
	return (int)syscall(SYS_fdatasync, fd);
}

/* Each SQE about to be submitted, in ring order (liburing 2.3 keeps the
 * ones not yet handed to the kernel between sqe_head and sqe_tail). */
int __real_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	for (unsigned int i = sq->sqe_head; i != sq->sqe_tail; i++) {
		const struct io_uring_sqe *s = &sq->sqes[i & *sq->kring_mask];
		if (!cur_fm || s->user_data >= BLK_QUEUE_SIZE)
			continue; /* the wake-up nop */
		bool sync = s->opcode == IORING_OP_FSYNC;
		ev_add((struct ev){.kind = sync ? EV_SYNC : EV_WRITE,
				   .fd = s->fd,
				   .op = s->opcode,
				   .flags = s->flags,
				   .fsync_flags = s->fsync_flags});
	}
	return __real_io_uring_submit(ring);
}

/* ---- the guest ---- */

struct fx {
	struct fake_mem fm;
	char dir[64], path[128];
	struct virtio_dev *vdev;
	uint16_t avail_idx;
};

static void on_broken(struct virtq *vq, void *opaque)
{
	(void)vq;
	(void)opaque;
	fail_msg("the queue broke");
}

static void fake_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	(void)q;
}

static const struct virtio_transport_ops fake_transport = {.notify_queue = fake_notify};

/* Request k: header, data (4 KiB, writes only), status; descriptors 3k... */
static void post(struct fx *f, uint16_t k, uint32_t type)
{
	uint64_t hdr = HDR_GPA + 16 * (uint64_t)k, data = DATA_GPA + 4096 * (uint64_t)k;
	uint32_t t[2] = {type, 0};
	uint64_t sector = 8 * (uint64_t)k;
	memcpy(fake_mem_at(&f->fm, hdr), t, 8);
	memcpy(fake_mem_at(&f->fm, hdr + 8), &sector, 8);
	memset(fake_mem_at(&f->fm, data), 'a' + k, 4096);
	uint16_t first = (uint16_t)(3 * k), n = 0;
	struct virtq_desc d[3];
	d[n++] = (struct virtq_desc){hdr, 16, VIRTQ_DESC_F_NEXT, 0};
	if (type == VIRTIO_BLK_T_OUT)
		d[n++] = (struct virtq_desc){data, 4096, VIRTQ_DESC_F_NEXT, 0};
	d[n++] = (struct virtq_desc){STATUS_GPA + k, 1, VIRTQ_DESC_F_WRITE, 0};
	for (uint16_t i = 0; i < n; i++) {
		if (d[i].flags & VIRTQ_DESC_F_NEXT)
			d[i].next = (uint16_t)(first + i + 1);
		memcpy(fake_mem_at(&f->fm, DESC_GPA + 16 * (uint64_t)(first + i)), &d[i], 16);
	}
	uint16_t *ring = fake_mem_at(&f->fm, AVAIL_GPA);
	ring[2 + (f->avail_idx & (QSZ - 1))] = first;
	__atomic_store_n(&ring[1], ++f->avail_idx, __ATOMIC_RELEASE);
}

static void disk_open(struct fx *f, const char *aio)
{
	char spec[200], err[256] = "";
	snprintf(spec, sizeof(spec), "%s,aio=%s", f->path, aio);
	f->vdev = virtio_blk_create(spec, 0, err, sizeof(err));
	assert_non_null(f->vdev);
	struct virtio_dev *v = f->vdev;
	v->gm = &f->fm.gm;
	v->transport = &fake_transport;
	v->transport_data = f;
	v->driver_features = v->host_features;
	struct virtq *vq = &v->vqs[0];
	assert_int_equal(virtq_init(vq, "virtio-blk0 q0", v->queue_max_size, on_broken, f), 0);
	assert_int_equal(virtq_set_size(vq, QSZ), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, DESC_GPA), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, AVAIL_GPA), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, USED_GPA), 0);
	assert_int_equal(virtq_activate(vq, &f->fm.gm), 0);
	assert_int_equal(v->ops->activate(v), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, RAM_SIZE))
		return -1;
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/skiff-flush-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/disk.img", f->dir);
	int fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 1 << 20) < 0)
		return -1;
	close(fd);
	nevs = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	cur_fm = NULL;
	if (f->vdev)
		virtio_blk_destroy(f->vdev);
	unlink(f->path);
	rmdir(f->dir);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

/* NWRITES writes, then a flush, all made available before one kick (so
 * they are in flight together); every one answered OK. Returns the fd the
 * image's writes went to (all on one). */
static int writes_then_flush(struct fx *f)
{
	cur_fm = &f->fm;
	for (uint16_t k = 0; k < NWRITES; k++)
		post(f, k, VIRTIO_BLK_T_OUT);
	post(f, NWRITES, VIRTIO_BLK_T_FLUSH);
	f->vdev->ops->queue_notify(f->vdev, 0);
	virtio_blk_drain(f->vdev);
	cur_fm = NULL;
	assert_int_equal(used_idx(&f->fm), NWRITES + 1);
	for (uint16_t k = 0; k <= NWRITES; k++)
		assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA + k), VIRTIO_BLK_S_OK);
	/* The writes first, then exactly one sync, of the same file. */
	assert_int_equal(nevs, NWRITES + 1);
	for (int i = 0; i < NWRITES; i++) {
		assert_int_equal(evs[i].kind, EV_WRITE);
		assert_int_equal(evs[i].fd, evs[0].fd);
	}
	assert_int_equal(evs[NWRITES].kind, EV_SYNC);
	assert_int_equal(evs[NWRITES].fd, evs[0].fd);
	return evs[0].fd;
}

static void test_threads_flush_syncs_after_writes(void **state)
{
	struct fx *f = *state;
	disk_open(f, "threads");
	writes_then_flush(f);
	/* fdatasync began with the writes answered and the flush not: a
	 * flush answered first would let the guest believe a power cut in
	 * between spares its data. */
	assert_int_equal(evs[NWRITES].used_at_sync, NWRITES);
}

static void test_uring_flush_drains_and_syncs(void **state)
{
	struct fx *f = *state;
	struct io_uring probe;
	if (io_uring_queue_init(2, &probe, 0) < 0) {
		print_message("no io_uring here: the ring's flush not checked\n");
		return;
	}
	io_uring_queue_exit(&probe);
	disk_open(f, "io_uring");
	writes_then_flush(f);
	for (int i = 0; i < NWRITES; i++)
		assert_int_equal(evs[i].op, IORING_OP_WRITEV);
	const struct ev *s = &evs[NWRITES];
	assert_int_equal(s->op, IORING_OP_FSYNC);
	assert_int_equal(s->fsync_flags, IORING_FSYNC_DATASYNC);
	/* Without the drain the kernel may start the fsync beside the
	 * writes, and answer it before they reached the file. */
	assert_true(s->flags & IOSQE_IO_DRAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_threads_flush_syncs_after_writes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_uring_flush_drains_and_syncs, setup, teardown),
	};
	return cmocka_run_group_tests_name("blk flush", tests, NULL, NULL);
}
