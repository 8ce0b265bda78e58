// SPDX-License-Identifier: Apache-2.0
/* Unit tests for virtio-blk (src/devices/virtio-blk/virtio_blk.c, blk_req.c,
 * blk_backend.c): the test plays the guest driver on a fake guest RAM and
 * the transport (a notify_queue that counts), and drives requests through a
 * real virtqueue against a temporary image file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "devices/block/blk_req.h"
#include "devices/block/blk_uring.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_priv.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "fake_mem.h"
#include "loop_dev.h"
#include "page_cache.h"
#include "virtio/virtio_dev.h"

#define RAM_SIZE     (1u << 20)
#define QSZ	     64
#define DESC_GPA     0x1000 /* queue 0's rings; queue q > 0 at QRING_GPA(q) */
#define AVAIL_GPA    0x2000
#define USED_GPA     0x3000
#define TQ	     4					   /* queues the fixture sets up at most */
#define QRING_GPA(q) (0x4000 + 0x1000 * (uint64_t)((q)-1)) /* desc, +0x400 avail, +0x800 used */
#define IND_GPA	     0x8000
#define HDR_GPA	     0x10000
#define DATA_GPA     0x20000
#define DATA2_GPA    0x60000
#define STATUS_GPA   0xF0000
#define SECTORS	     64 /* default image: 32 KiB */

#define F_INDIRECT (1ULL << VIRTQ_F_INDIRECT_DESC)
#define F_RO	   (1ULL << 5)

struct fx {
	struct fake_mem fm;
	char dir[64], path[128];
	struct virtio_dev *vdev;
	uint16_t avail_idx[TQ]; /* the guest driver's */
	_Atomic int notified;	/* interrupts, all queues */
	_Atomic int notified_q[TQ];
	int broken;
	int refill_left; /* completed chains the guest re-posts at once */
	bool stop_io;
	int rescheds;	 /* queue_resched calls */
	int config_irqs; /* notify_config calls */
	int resched_ret; /* what queue_resched answers */
};

static uint16_t guest_used_idx(struct fx *f);
static struct virtq_used_elem guest_used(struct fx *f, uint16_t i);
static void guest_publish(struct fx *f, uint16_t head);

static uint64_t ring_gpa(unsigned int q, enum virtq_ring which)
{
	uint64_t base[] = {DESC_GPA, AVAIL_GPA, USED_GPA};
	uint64_t off[] = {0, 0x400, 0x800};
	return q ? QRING_GPA(q) + off[which] : base[which];
}

/* ---- the transport ---- */

/* The guest's interrupt handler: with refill, the chain just completed is
 * made available again before the device pops the next one. */
static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	struct fx *f = vdev->transport_data;
	assert_true(q < vdev->num_queues);
	f->notified++;
	f->notified_q[q]++;
	if (q == 0 && f->refill_left > 0 && f->refill_left--)
		guest_publish(f, (uint16_t)guest_used(f, (uint16_t)(guest_used_idx(f) - 1)).id);
}

static int fake_queue_resched(struct virtio_dev *vdev, unsigned int q)
{
	struct fx *f = vdev->transport_data;
	assert_true(q < vdev->num_queues);
	f->rescheds++;
	return f->resched_ret;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	((struct fx *)vdev->transport_data)->config_irqs++;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_resched = fake_queue_resched,
};

static void on_broken(struct virtq *vq, void *opaque)
{
	(void)vq;
	((struct fx *)opaque)->broken++;
}

/* ---- the guest side ---- */

struct seg {
	uint64_t gpa;
	uint32_t len;
	bool w; /* device-writable */
};

static void desc_set(struct fx *f, uint64_t table, uint16_t i, const struct seg *s, bool next)
{
	struct virtq_desc d = {
	    .addr = s->gpa,
	    .len = s->len,
	    .flags = (uint16_t)((s->w ? VIRTQ_DESC_F_WRITE : 0) | (next ? VIRTQ_DESC_F_NEXT : 0)),
	    .next = (uint16_t)(i + 1)};
	memcpy(fake_mem_at(&f->fm, table + 16 * (uint64_t)i), &d, sizeof(d));
}

static void guest_publish_q(struct fx *f, unsigned int q, uint16_t head)
{
	uint16_t *ring = fake_mem_at(&f->fm, ring_gpa(q, VIRTQ_RING_AVAIL));
	ring[2 + (f->avail_idx[q] & (QSZ - 1))] = head;
	__atomic_store_n(&ring[1], ++f->avail_idx[q], __ATOMIC_RELEASE);
}

static void guest_publish(struct fx *f, uint16_t head)
{
	guest_publish_q(f, 0, head);
}

static uint16_t guest_used_idx_q(struct fx *f, unsigned int q)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(&f->fm, ring_gpa(q, VIRTQ_RING_USED) + 2),
			       __ATOMIC_ACQUIRE);
}

static uint16_t guest_used_idx(struct fx *f)
{
	return guest_used_idx_q(f, 0);
}

static struct virtq_used_elem guest_used_q(struct fx *f, unsigned int q, uint16_t i)
{
	struct virtq_used_elem e;
	uint64_t gpa = ring_gpa(q, VIRTQ_RING_USED) + 4 + 8 * (uint64_t)(i & (QSZ - 1));
	memcpy(&e, fake_mem_at(&f->fm, gpa), sizeof(e));
	return e;
}

static struct virtq_used_elem guest_used(struct fx *f, uint16_t i)
{
	return guest_used_q(f, 0, i);
}

/* Writes chain segs at descriptor first.. of queue q and makes it
 * available. */
static void guest_add_q(struct fx *f, unsigned int q, uint16_t first, const struct seg *segs,
			unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		desc_set(f, ring_gpa(q, VIRTQ_RING_DESC), (uint16_t)(first + i), &segs[i],
			 i + 1 < n);
	guest_publish_q(f, q, first);
}

static void guest_add(struct fx *f, uint16_t first, const struct seg *segs, unsigned int n)
{
	guest_add_q(f, 0, first, segs, n);
}

static void kick_and_wait(struct fx *f)
{
	f->vdev->ops->queue_notify(f->vdev, 0);
	virtio_blk_drain(f->vdev);
}

/* Runs one chain to completion; returns its used element. */
static struct virtq_used_elem run(struct fx *f, const struct seg *segs, unsigned int n)
{
	uint16_t before = guest_used_idx(f);
	guest_add(f, 0, segs, n);
	kick_and_wait(f);
	assert_int_equal(guest_used_idx(f), (uint16_t)(before + 1));
	struct virtq_used_elem e = guest_used(f, before);
	assert_int_equal(e.id, 0);
	return e;
}

static void set_hdr(struct fx *f, uint64_t gpa, uint32_t type, uint64_t sector)
{
	uint32_t t[2] = {type, 0};
	memcpy(fake_mem_at(&f->fm, gpa), t, 8);
	memcpy(fake_mem_at(&f->fm, gpa + 8), &sector, 8);
}

static uint8_t status(struct fx *f)
{
	return *(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA);
}

/* A 3-part request: header, data (len bytes at DATA_GPA, writable if w),
 * status. Returns the status byte; *used gets the used length. */
static uint8_t request(struct fx *f, uint32_t type, uint64_t sector, uint32_t len, bool w,
		       uint32_t *used)
{
	set_hdr(f, HDR_GPA, type, sector);
	*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA) = 0xEE;
	struct seg s[3] = {{HDR_GPA, 16, false}, {DATA_GPA, len, w}, {STATUS_GPA, 1, true}};
	struct virtq_used_elem e = len ? run(f, s, 3) : run(f, (struct seg[]){s[0], s[2]}, 2);
	if (used)
		*used = e.len;
	return status(f);
}

static uint8_t blk_read(struct fx *f, uint64_t sector, uint32_t len, uint32_t *used)
{
	return request(f, VIRTIO_BLK_T_IN, sector, len, true, used);
}

static uint8_t blk_write(struct fx *f, uint64_t sector, uint32_t len, uint32_t *used)
{
	return request(f, VIRTIO_BLK_T_OUT, sector, len, false, used);
}

static void fill(struct fx *f, uint64_t gpa, uint32_t len, uint8_t seed)
{
	uint8_t *p = fake_mem_at(&f->fm, gpa);
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + i / 512);
}

/* ---- the image ---- */

static void image_create(struct fx *f, const char *name, uint64_t size)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	int fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static void image_read(struct fx *f, uint64_t off, void *buf, size_t len)
{
	int fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void image_write(struct fx *f, uint64_t off, const void *buf, size_t len)
{
	int fd = open(f->path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* Creates the device on f->path with opts (",ro", ",queues=N" or ""), and
 * plays the transport: every queue configured and activated (rings at
 * ring_gpa), then DRIVER_OK. */
static const char *aio_opt = ",aio=threads"; /* the group being run */

static void disk_open(struct fx *f, const char *opts)
{
	char spec[200], err[256] = "";
	snprintf(spec, sizeof(spec), "%s%s%s", f->path, opts, aio_opt);
	f->vdev = virtio_blk_create(spec, 0, err, sizeof(err));
	assert_non_null(f->vdev);
	struct virtio_dev *v = f->vdev;
	assert_string_equal(v->name, "virtio-blk0");
	assert_int_equal(v->device_id, VIRTIO_ID_BLOCK);
	v->gm = &f->fm.gm;
	v->transport = &fake_transport;
	v->transport_data = f;
	v->driver_features = v->host_features;
	memset(f->fm.ram, 0, 0x8000);
	assert_true(v->num_queues >= 1 && v->num_queues <= TQ);
	for (unsigned int q = 0; q < v->num_queues; q++) {
		struct virtq *vq = &v->vqs[q];
		char name[32];
		snprintf(name, sizeof(name), "virtio-blk0 q%u", q);
		assert_int_equal(virtq_init(vq, name, v->queue_max_size, on_broken, f), 0);
		f->avail_idx[q] = 0;
		f->notified_q[q] = 0;
		assert_int_equal(virtq_set_size(vq, QSZ), 0);
		for (enum virtq_ring r = VIRTQ_RING_DESC; r <= VIRTQ_RING_USED; r++)
			assert_int_equal(virtq_set_addr(vq, r, ring_gpa(q, r)), 0);
		assert_int_equal(virtq_set_features(vq, F_INDIRECT), 0);
		assert_int_equal(virtq_activate(vq, &f->fm.gm), 0);
	}
	assert_int_equal(v->ops->activate(v), 0);
}

static void disk_close(struct fx *f)
{
	if (f->vdev)
		virtio_blk_destroy(f->vdev);
	f->vdev = NULL;
}

static uint64_t config_u64(struct fx *f, uint32_t off)
{
	uint64_t v = 0;
	f->vdev->ops->config_read(f->vdev, off, &v, 8);
	return v;
}

static uint32_t config_u32(struct fx *f, uint32_t off)
{
	uint32_t v = 0;
	f->vdev->ops->config_read(f->vdev, off, &v, 4);
	return v;
}

/* ---- fixture ---- */

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, RAM_SIZE))
		return -1;
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/skiff-blk-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int setup_disk(void **state)
{
	if (setup(state))
		return -1;
	struct fx *f = *state;
	image_create(f, "disk.img", SECTORS * 512);
	disk_open(f, "");
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	disk_close(f);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

/* ---- tests ---- */

static void test_config(void **state)
{
	struct fx *f = *state;
	uint64_t feat = f->vdev->host_features;
	assert_true(feat >> 2 & 1); /* SEG_MAX */
	assert_false(feat & F_RO);
	assert_true(feat >> 9 & 1);  /* FLUSH */
	assert_true(feat >> 13 & 1); /* DISCARD */
	assert_true(feat >> 14 & 1); /* WRITE_ZEROES */
	assert_int_equal(config_u64(f, 0), SECTORS);
	assert_int_equal(config_u32(f, 12), BLK_SEG_MAX);
	assert_int_equal(config_u32(f, 20), 512);
	assert_int_equal(config_u32(f, 40), BLK_DISCARD_SEG_MAX);
	assert_int_equal(f->vdev->config_len, 60);
	/* Out of range: zeroes, not whatever follows the config in memory. */
	uint32_t v = 0xFFFFFFFF;
	f->vdev->ops->config_read(f->vdev, 58, &v, 4);
	assert_int_equal(v, 0);
}

static void test_write_read_roundtrip(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	uint8_t file[1024], back[1024];
	fill(f, DATA_GPA, 1024, 3);
	assert_int_equal(blk_write(f, 5, 1024, &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 1);
	image_read(f, 5 * 512, file, sizeof(file));
	assert_memory_equal(file, fake_mem_at(&f->fm, DATA_GPA), 1024);

	memset(fake_mem_at(&f->fm, DATA_GPA), 0, 1024);
	assert_int_equal(blk_read(f, 5, 1024, &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 1025);
	memcpy(back, fake_mem_at(&f->fm, DATA_GPA), 1024);
	assert_memory_equal(back, file, 1024);
	assert_true(f->notified >= 2);
	assert_int_equal(f->broken, 0);
}

/* Data in many buffers, status sharing the last one, header spanning two. */
static void test_scattered_buffers(void **state)
{
	struct fx *f = *state;
	uint8_t file[1536];
	fill(f, DATA_GPA, 4096, 9);
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_OUT, 10);
	struct seg w[] = {{HDR_GPA, 5, false},		 {HDR_GPA + 5, 11, false},
			  {DATA_GPA, 100, false},	 {DATA_GPA + 100, 924, false},
			  {DATA_GPA + 1024, 512, false}, {STATUS_GPA, 1, true}};
	run(f, w, 6);
	assert_int_equal(status(f), VIRTIO_BLK_S_OK);
	image_read(f, 10 * 512, file, sizeof(file));
	assert_memory_equal(file, fake_mem_at(&f->fm, DATA_GPA), sizeof(file));

	/* Read it back: 1536 data bytes in two writable buffers, the second
	 * ending with the status byte. */
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_IN, 10);
	memset(fake_mem_at(&f->fm, DATA2_GPA), 0xAA, 2048);
	struct seg r[] = {
	    {HDR_GPA, 16, false}, {DATA2_GPA, 1000, true}, {DATA2_GPA + 1000, 537, true}};
	struct virtq_used_elem e = run(f, r, 3);
	assert_int_equal(e.len, 1537);
	assert_memory_equal(fake_mem_at(&f->fm, DATA2_GPA), file, sizeof(file));
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, DATA2_GPA + 1536), VIRTIO_BLK_S_OK);

	/* Header and data in one readable buffer (any layout). */
	set_hdr(f, DATA_GPA, VIRTIO_BLK_T_OUT, 20);
	struct seg one[] = {{DATA_GPA, 16 + 512, false}, {STATUS_GPA, 1, true}};
	run(f, one, 2);
	assert_int_equal(status(f), VIRTIO_BLK_S_OK);
	image_read(f, 20 * 512, file, 512);
	assert_memory_equal(file, fake_mem_at(&f->fm, DATA_GPA + 16), 512);
}

static unsigned int image_cached_pages(struct fx *f, size_t off, size_t len)
{
	return page_cache_count(f->path, SECTORS * 512, off, len);
}

/* Page-aligned buffers at a page-aligned offset, as Linux's direct I/O
 * sends them: the data round-trips, and with direct (the group run with
 * it) neither transfer leaves the image in the host page cache. */
static void test_aligned_roundtrip(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	uint8_t file[8192];
	fill(f, DATA_GPA, 8192, 5);
	assert_int_equal(blk_write(f, 16, 8192, &used), VIRTIO_BLK_S_OK);
	image_read(f, 16 * 512, file, sizeof(file));
	assert_memory_equal(file, fake_mem_at(&f->fm, DATA_GPA), 8192);
	int fd = open(f->path, O_RDONLY); /* image_read cached it */
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
	memset(fake_mem_at(&f->fm, DATA_GPA), 0, 8192);
	assert_int_equal(blk_read(f, 16, 8192, &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 8193);
	assert_memory_equal(fake_mem_at(&f->fm, DATA_GPA), file, 8192);
	if (strstr(aio_opt, "direct"))
		assert_int_equal(image_cached_pages(f, 16 * 512, 8192), 0);
	else
		assert_int_equal(image_cached_pages(f, 16 * 512, 8192), 2);
}

/* A host device of 16 KiB logical blocks: the direct file refuses a
 * 4 KiB-aligned transfer (EINVAL), which is then served buffered, not
 * answered IOERR; with direct the disk is left buffered from then on. */
static void test_large_host_blocks(void **state)
{
	struct fx *f = *state;
	char img[sizeof(f->path)], dev[64] = "";
	uint32_t used;
	if (!loop_dev_possible())
		skip(); /* not root, or no loop driver: said on stderr */
	disk_close(f);
	snprintf(img, sizeof(img), "%s", f->path);
	if (loop_dev_attach(img, dev, sizeof(dev)) < 0)
		fail_msg("losetup -b %d failed", LOOP_DEV_LBS);
	snprintf(f->path, sizeof(f->path), "%s", dev);
	disk_open(f, "");
	fill(f, DATA_GPA, 4096, 11);
	uint8_t w = blk_write(f, 8, 4096, &used);
	uint8_t want[4096];
	memcpy(want, fake_mem_at(&f->fm, DATA_GPA), sizeof(want));
	memset(fake_mem_at(&f->fm, DATA_GPA), 0, 4096);
	uint8_t r = blk_read(f, 8, 4096, &used);
	bool same = !memcmp(want, fake_mem_at(&f->fm, DATA_GPA), sizeof(want));
	bool refused = atomic_load(&((struct blk_dev *)f->vdev->priv)->backend.direct_refused);
	disk_close(f);
	loop_dev_detach(dev);
	snprintf(f->path, sizeof(f->path), "%s", img); /* teardown's */
	assert_int_equal(w, VIRTIO_BLK_S_OK);
	assert_int_equal(r, VIRTIO_BLK_S_OK);
	assert_true(same);
	assert_int_equal(refused, strstr(aio_opt, "direct") != NULL);
}

static void test_read_only(void **state)
{
	struct fx *f = *state;
	uint8_t pattern[512], file[512];
	memset(pattern, 0x5A, sizeof(pattern));
	image_write(f, 0, pattern, sizeof(pattern));
	disk_close(f);
	disk_open(f, ",ro");
	assert_true(f->vdev->host_features & F_RO);
	assert_false(f->vdev->host_features >> 13 & 1); /* no DISCARD offered */

	fill(f, DATA_GPA, 512, 1);
	assert_int_equal(blk_write(f, 0, 512, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(request(f, VIRTIO_BLK_T_DISCARD, 0, 16, false, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(request(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, false, NULL),
			 VIRTIO_BLK_S_IOERR);
	image_read(f, 0, file, sizeof(file));
	assert_memory_equal(file, pattern, sizeof(file));
	/* Reads and flushes still work. */
	assert_int_equal(blk_read(f, 0, 512, NULL), VIRTIO_BLK_S_OK);
	assert_memory_equal(fake_mem_at(&f->fm, DATA_GPA), pattern, 512);
	assert_int_equal(request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false, NULL), VIRTIO_BLK_S_OK);
}

static void test_flush(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	fill(f, DATA_GPA, 512, 4);
	assert_int_equal(blk_write(f, 1, 512, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false, &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 1);
}

static void test_get_id(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	uint8_t want[20] = "disk.img";
	memset(fake_mem_at(&f->fm, DATA_GPA), 0xAA, 32);
	assert_int_equal(request(f, VIRTIO_BLK_T_GET_ID, 0, 20, true, &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 21);
	assert_memory_equal(fake_mem_at(&f->fm, DATA_GPA), want, 20); /* NUL-padded */

	/* A name of 20 bytes or more: the first 20, no terminator. */
	disk_close(f);
	image_create(f, "a-rather-long-image-name.raw", 4096);
	disk_open(f, "");
	memset(fake_mem_at(&f->fm, DATA_GPA), 0xAA, 32);
	assert_int_equal(request(f, VIRTIO_BLK_T_GET_ID, 0, 20, true, &used), VIRTIO_BLK_S_OK);
	assert_memory_equal(fake_mem_at(&f->fm, DATA_GPA), "a-rather-long-image-", 20);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, DATA_GPA + 20), 0xAA);

	/* A buffer shorter than 20 bytes gets what fits. */
	memset(fake_mem_at(&f->fm, DATA_GPA), 0xAA, 32);
	assert_int_equal(request(f, VIRTIO_BLK_T_GET_ID, 0, 8, true, &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 9);
	assert_memory_equal(fake_mem_at(&f->fm, DATA_GPA), "a-rather", 8);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, DATA_GPA + 8), 0xAA);
}

static void test_out_of_range(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	assert_int_equal(blk_read(f, SECTORS - 1, 512, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(blk_read(f, SECTORS - 1, 1024, &used), VIRTIO_BLK_S_IOERR);
	assert_int_equal(used, 1);
	assert_int_equal(blk_read(f, SECTORS, 512, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(blk_write(f, SECTORS, 512, NULL), VIRTIO_BLK_S_IOERR);
	/* sector + length wraps around: must not pass as "in range". */
	assert_int_equal(blk_read(f, UINT64_MAX, 512, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(blk_write(f, UINT64_MAX / 512 + 1, 512, NULL), VIRTIO_BLK_S_IOERR);
	struct stat st;
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, SECTORS * 512); /* nothing written past the end */
}

static void test_odd_image_size(void **state)
{
	struct fx *f = *state;
	disk_close(f);
	image_create(f, "odd.img", 10 * 512 + 100);
	disk_open(f, "");
	assert_int_equal(config_u64(f, 0), 10);
	assert_int_equal(blk_read(f, 9, 512, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(blk_read(f, 9, 1024, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(blk_read(f, 10, 512, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(blk_write(f, 10, 512, NULL), VIRTIO_BLK_S_IOERR);
	struct stat st;
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, 10 * 512 + 100);
}

static void test_bad_data_length(void **state)
{
	struct fx *f = *state;
	assert_int_equal(blk_read(f, 0, 100, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(blk_write(f, 0, 513, NULL), VIRTIO_BLK_S_IOERR);
	/* Zero-length reads and writes inside the disk are harmless no-ops. */
	assert_int_equal(blk_read(f, 0, 0, NULL), VIRTIO_BLK_S_OK);
}

static void test_unknown_type(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	assert_int_equal(request(f, 99, 0, 0, false, &used), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(used, 1);
	assert_int_equal(request(f, 10 /* GET_LIFETIME */, 0, 64, true, NULL), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(request(f, 0x80000000u | VIRTIO_BLK_T_IN, 0, 512, true, NULL),
			 VIRTIO_BLK_S_UNSUPP);
}

static void test_missing_status(void **state)
{
	struct fx *f = *state;
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_OUT, 0);
	struct seg only_hdr[] = {{HDR_GPA, 16, false}};
	assert_int_equal(run(f, only_hdr, 1).len, 0);
	struct seg no_status[] = {{HDR_GPA, 16, false}, {DATA_GPA, 512, false}};
	assert_int_equal(run(f, no_status, 2).len, 0);
	/* A zero-length writable buffer is not a status byte either. */
	struct seg empty[] = {{HDR_GPA, 16, false}, {STATUS_GPA, 0, true}};
	assert_int_equal(run(f, empty, 2).len, 0);
	/* ...but one after the status byte is allowed. */
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_FLUSH, 0);
	*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA) = 0xEE;
	struct seg trailing[] = {{HDR_GPA, 16, false}, {STATUS_GPA, 1, true}, {DATA_GPA, 0, true}};
	assert_int_equal(run(f, trailing, 3).len, 1);
	assert_int_equal(status(f), VIRTIO_BLK_S_OK);
	/* The device carries on. */
	assert_int_equal(blk_read(f, 0, 512, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(f->broken, 0);
}

static void test_short_header(void **state)
{
	struct fx *f = *state;
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_IN, 0);
	*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA) = 0xEE;
	struct seg s[] = {{HDR_GPA, 15, false}, {STATUS_GPA, 1, true}};
	assert_int_equal(run(f, s, 2).len, 1);
	assert_int_equal(status(f), VIRTIO_BLK_S_IOERR);
	/* No readable part at all. */
	*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA) = 0xEE;
	struct seg w[] = {{DATA_GPA, 512, true}, {STATUS_GPA, 1, true}};
	run(f, w, 2);
	assert_int_equal(status(f), VIRTIO_BLK_S_IOERR);
}

/* More data buffers than seg_max (through an indirect table): IOERR. */
static void test_too_many_segments(void **state)
{
	struct fx *f = *state;
	unsigned int n = BLK_SEG_MAX + 3; /* header + 127 data + status */
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_IN, 0);
	*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA) = 0xEE;
	desc_set(f, IND_GPA, 0, &(struct seg){HDR_GPA, 16, false}, true);
	for (unsigned int i = 1; i < n - 1; i++)
		desc_set(f, IND_GPA, (uint16_t)i, &(struct seg){DATA_GPA + 512 * i, 512, true},
			 true);
	desc_set(f, IND_GPA, (uint16_t)(n - 1), &(struct seg){STATUS_GPA, 1, true}, false);
	struct virtq_desc d = {.addr = IND_GPA, .len = 16 * n, .flags = VIRTQ_DESC_F_INDIRECT};
	memcpy(fake_mem_at(&f->fm, DESC_GPA), &d, sizeof(d));
	guest_publish(f, 0);
	kick_and_wait(f);
	assert_int_equal(guest_used_idx(f), 1);
	assert_int_equal(status(f), VIRTIO_BLK_S_IOERR);
}

static void put_range(struct fx *f, uint64_t gpa, uint64_t sector, uint32_t num, uint32_t flags)
{
	memcpy(fake_mem_at(&f->fm, gpa), &sector, 8);
	memcpy(fake_mem_at(&f->fm, gpa + 8), &num, 4);
	memcpy(fake_mem_at(&f->fm, gpa + 12), &flags, 4);
}

static void test_write_zeroes_and_discard(void **state)
{
	struct fx *f = *state;
	uint8_t ones[4096], file[4096], zero[4096] = {0};
	memset(ones, 0xFF, sizeof(ones));
	image_write(f, 0, ones, sizeof(ones));
	/* Sectors 1-2 without unmap, 5 with: both must read back as zeroes. */
	put_range(f, DATA_GPA, 1, 2, 0);
	put_range(f, DATA_GPA + 16, 5, 1, BLK_WRITE_ZEROES_FLAG_UNMAP);
	assert_int_equal(request(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 32, false, NULL),
			 VIRTIO_BLK_S_OK);
	image_read(f, 0, file, sizeof(file));
	assert_memory_equal(file, ones, 512);
	assert_memory_equal(file + 512, zero, 1024);
	assert_memory_equal(file + 1536, ones, 1024);
	assert_memory_equal(file + 2560, zero, 512);
	assert_memory_equal(file + 3072, ones, 1024);

	put_range(f, DATA_GPA, 0, 8, 0);
	assert_int_equal(request(f, VIRTIO_BLK_T_DISCARD, 0, 16, false, NULL), VIRTIO_BLK_S_OK);
	/* Spec: unmap on a discard, or an unknown flag, is unsupported. */
	put_range(f, DATA_GPA, 0, 8, BLK_WRITE_ZEROES_FLAG_UNMAP);
	assert_int_equal(request(f, VIRTIO_BLK_T_DISCARD, 0, 16, false, NULL), VIRTIO_BLK_S_UNSUPP);
	put_range(f, DATA_GPA, 0, 8, 2);
	assert_int_equal(request(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, false, NULL),
			 VIRTIO_BLK_S_UNSUPP);
	/* Out of range, overflowing, malformed, too many ranges. */
	put_range(f, DATA_GPA, SECTORS - 1, 2, 0);
	assert_int_equal(request(f, VIRTIO_BLK_T_DISCARD, 0, 16, false, NULL), VIRTIO_BLK_S_IOERR);
	put_range(f, DATA_GPA, UINT64_MAX, 1, 0);
	assert_int_equal(request(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, false, NULL),
			 VIRTIO_BLK_S_IOERR);
	/* (Too long but in range: test_write_zeroes_too_long.) */
	assert_int_equal(request(f, VIRTIO_BLK_T_DISCARD, 0, 20, false, NULL), VIRTIO_BLK_S_IOERR);
	memset(fake_mem_at(&f->fm, DATA_GPA), 0, 16 * (BLK_DISCARD_SEG_MAX + 1));
	assert_int_equal(
	    request(f, VIRTIO_BLK_T_DISCARD, 0, 16 * (BLK_DISCARD_SEG_MAX + 1), false, NULL),
	    VIRTIO_BLK_S_UNSUPP);
	struct stat st;
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, SECTORS * 512);
}

/* Many requests in flight at once complete, each once, in any order. */
static void test_many_in_flight(void **state)
{
	struct fx *f = *state;
	enum { N = 20 };
	for (unsigned int i = 0; i < N; i++) {
		uint64_t hdr = HDR_GPA + 16 * i, st = STATUS_GPA + i, data = DATA_GPA + 1024 * i;
		set_hdr(f, hdr, VIRTIO_BLK_T_OUT, 2 * i);
		fill(f, data, 1024, (uint8_t)i);
		struct seg s[] = {{hdr, 16, false}, {data, 1024, false}, {st, 1, true}};
		guest_add(f, (uint16_t)(3 * i), s, 3);
	}
	kick_and_wait(f);
	assert_int_equal(guest_used_idx(f), N);
	unsigned int seen = 0;
	for (unsigned int i = 0; i < N; i++) {
		struct virtq_used_elem e = guest_used(f, (uint16_t)i);
		assert_int_equal(e.id % 3, 0);
		seen |= 1u << (e.id / 3);
		assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA + e.id / 3), 0);
	}
	assert_int_equal(seen, (1u << N) - 1);
	uint8_t file[N * 1024];
	image_read(f, 0, file, sizeof(file));
	assert_memory_equal(file, fake_mem_at(&f->fm, DATA_GPA), sizeof(file));
}

/* ---- a disk whose flush the test holds (fdatasync, interposed) ---- */

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_on, gate_open;
static int gate_entered; /* threads inside the gate */

int fdatasync(int fd)
{
	pthread_mutex_lock(&gate_mu);
	if (gate_on) {
		gate_entered++;
		pthread_cond_broadcast(&gate_cv);
		while (!gate_open)
			pthread_cond_wait(&gate_cv, &gate_mu);
	}
	pthread_mutex_unlock(&gate_mu);
	return (int)syscall(SYS_fdatasync, fd);
}

struct resetter {
	struct fx *f;
	_Atomic pid_t tid;
	atomic_bool done;
};

static void *reset_thread(void *arg)
{
	struct resetter *r = arg;
	atomic_store(&r->tid, gettid());
	r->f->vdev->ops->reset(r->f->vdev);
	atomic_store(&r->done, true);
	return NULL;
}

/* 'S' while the thread sleeps (a reset waiting for the disk does). */
static char thread_state(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return '?';
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

/* Reset returns only when no request can touch guest RAM any more: a flush
 * the disk is still doing holds it (the reset thread goes to sleep, it does
 * not return), and once the flush ends the request is not completed. */
static void test_reset_quiesces(void **state)
{
	struct fx *f = *state;
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_FLUSH, 0);
	*(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA) = 0xEE;
	struct seg s[] = {{HDR_GPA, 16, false}, {STATUS_GPA, 1, true}};
	pthread_mutex_lock(&gate_mu);
	gate_on = true;
	gate_entered = 0;
	gate_open = false;
	pthread_mutex_unlock(&gate_mu);
	guest_add(f, 0, s, 2);
	f->vdev->ops->queue_notify(f->vdev, 0);
	pthread_mutex_lock(&gate_mu);
	while (!gate_entered) /* the worker is inside fdatasync */
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);

	struct resetter r = {.f = f};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, reset_thread, &r), 0);
	while (!atomic_load(&r.tid))
		sched_yield();
	while (!atomic_load(&r.done) && thread_state(atomic_load(&r.tid)) != 'S')
		sched_yield();
	bool returned_early = atomic_load(&r.done);

	pthread_mutex_lock(&gate_mu);
	gate_open = true;
	gate_on = false;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
	pthread_join(t, NULL);
	assert_false(returned_early);
	/* Nothing answered after the reset, nothing touches RAM. */
	fake_mem_protect(&f->fm, false);
	virtio_blk_drain(f->vdev);
	f->vdev->ops->queue_notify(f->vdev, 0); /* kicks before DRIVER_OK: nothing */
	virtio_blk_drain(f->vdev);
	fake_mem_protect(&f->fm, true);
	assert_int_equal(guest_used_idx(f), 0);
	assert_int_equal(status(f), 0xEE);
}

/* A write-zeroes range inside the disk but longer than the advertised
 * maximum is refused; the maximum itself is done. */
static void test_write_zeroes_too_long(void **state)
{
	struct fx *f = *state;
	disk_close(f);
	image_create(f, "big.img", (uint64_t)(BLK_WRITE_ZEROES_SECTORS_MAX + 2) * 512);
	disk_open(f, "");
	uint8_t ones[512], file[512];
	memset(ones, 0xFF, sizeof(ones));
	image_write(f, 0, ones, sizeof(ones));
	put_range(f, DATA_GPA, 0, BLK_WRITE_ZEROES_SECTORS_MAX + 1, 0);
	assert_int_equal(request(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, false, NULL),
			 VIRTIO_BLK_S_IOERR);
	image_read(f, 0, file, sizeof(file));
	assert_memory_equal(file, ones, sizeof(ones));
	put_range(f, DATA_GPA, 1, BLK_WRITE_ZEROES_SECTORS_MAX, 0);
	assert_int_equal(request(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 16, false, NULL),
			 VIRTIO_BLK_S_OK);
}

/* Four chains the device answers at once (unknown type), at heads 0..6. */
static void post_instant(struct fx *f, unsigned int n)
{
	set_hdr(f, HDR_GPA, 99, 0);
	for (unsigned int i = 0; i < n; i++) {
		struct seg s[] = {{HDR_GPA, 16, false}, {STATUS_GPA, 1, true}};
		guest_add(f, (uint16_t)(2 * i), s, 2);
	}
}

/* A guest that re-posts every request as soon as it completes: one run
 * pops BLK_POP_BUDGET chains, asks the transport to call again, and the
 * next call carries on. Without the budget the first call never returns
 * (the alarm turns that into a failure). */
static void test_pop_budget(void **state)
{
	struct fx *f = *state;
	post_instant(f, 4);
	f->refill_left = INT_MAX;
	alarm(20);
	f->vdev->ops->queue_notify(f->vdev, 0);
	alarm(0);
	assert_int_equal(guest_used_idx(f), BLK_POP_BUDGET);
	assert_int_equal(f->rescheds, 1);
	assert_int_equal(f->avail_idx[0], 4 + BLK_POP_BUDGET);
	/* The transport calls back (the I/O thread's next round). */
	f->refill_left = 0;
	f->vdev->ops->queue_notify(f->vdev, 0);
	assert_int_equal(guest_used_idx(f), 4 + BLK_POP_BUDGET);
	assert_int_equal(f->rescheds, 1);
	assert_int_equal(status(f), VIRTIO_BLK_S_UNSUPP);
	/* A transport that cannot call back (trapped kicks): the run goes on
	 * to the empty ring. */
	f->resched_ret = -1;
	post_instant(f, 4);
	f->refill_left = 3 * BLK_POP_BUDGET;
	uint16_t before = guest_used_idx(f);
	f->vdev->ops->queue_notify(f->vdev, 0);
	assert_int_equal(guest_used_idx(f), (uint16_t)(before + 4 + 3 * BLK_POP_BUDGET));
	assert_int_equal(f->rescheds, 4);
}

static void *io_loop(void *arg)
{
	struct fx *f = arg;
	while (!__atomic_load_n(&f->stop_io, __ATOMIC_ACQUIRE))
		f->vdev->ops->queue_notify(f->vdev, 0);
	return NULL;
}

/* A reset from a vCPU completes while the guest keeps refilling and the
 * I/O thread keeps answering: each pop run ends at the budget and lets
 * the reset have the disk's mutex. The alarm turns a hang into a failure. */
static void test_reset_while_refilling(void **state)
{
	struct fx *f = *state;
	post_instant(f, 4);
	f->refill_left = INT_MAX;
	pthread_t io;
	assert_int_equal(pthread_create(&io, NULL, io_loop, f), 0);
	while (guest_used_idx(f) < 4 * BLK_POP_BUDGET)
		sched_yield();
	alarm(20);
	f->vdev->ops->reset(f->vdev);
	alarm(0);
	__atomic_store_n(&f->stop_io, true, __ATOMIC_RELEASE);
	pthread_join(io, NULL);
	uint16_t used = guest_used_idx(f);
	f->vdev->ops->queue_notify(f->vdev, 0);
	assert_int_equal(guest_used_idx(f), used); /* nothing after the reset */
}

/* --disk specs that must be refused with a reason. */
static void test_bad_specs(void **state)
{
	struct fx *f = *state;
	char err[256], spec[200];
	struct {
		const char *spec, *why;
	} bad[] = {
	    {"", "empty"},
	    {",ro", "empty"},
	    {"/nonexistent/skiff.img", "No such file"},
	    {f->dir, "directory"},
	    {"%s,foo", "unknown disk option 'foo'"},
	    {"%s,ro,", "unknown disk option ''"},
	    {"/dev/null", "not a regular file"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(spec, sizeof(spec), bad[i].spec, f->path);
		err[0] = '\0';
		assert_null(virtio_blk_create(spec, 0, err, sizeof(err)));
		if (!strstr(err, bad[i].why))
			fail_msg("spec '%s': got '%s', want '%s'", spec, err, bad[i].why);
		assert_null(strchr(err, '\n'));
	}
	snprintf(spec, sizeof(spec), "%s,ro", f->dir);
	assert_null(virtio_blk_create(spec, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "directory"));
	/* The image is locked while a device (f->vdev) has it open. */
	assert_null(virtio_blk_create(f->path, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "in use"));
}

/* The image shrank under the guest (another program truncated it): a read
 * past the new end gets IOERR, not a hang or stale bytes; the disk goes on
 * working below. */
static void test_image_shrank(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	fill(f, DATA_GPA, 1024, 9);
	assert_int_equal(blk_write(f, 0, 1024, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(truncate(f->path, 512), 0);
	assert_int_equal(blk_read(f, 0, 1024, &used), VIRTIO_BLK_S_IOERR);
	assert_int_equal(used, 1);
	assert_int_equal(blk_read(f, 0, 512, &used), VIRTIO_BLK_S_OK);
	assert_int_equal(used, 513);
}

/* A new medium (PATCH /drives path_on_host): a path that cannot be opened
 * changes nothing; a good one brings its size, its data and one
 * configuration interrupt, and lets go of the old image's lock. */
static void test_replace_medium(void **state)
{
	struct fx *f = *state;
	char err[256] = "", old[128], missing[160];
	uint32_t used;
	snprintf(old, sizeof(old), "%s", f->path);
	snprintf(missing, sizeof(missing), "%s/none.img", f->dir);
	atomic_store(&f->vdev->status, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
					   VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
	uint32_t gen = atomic_load(&f->vdev->config_generation);
	assert_int_equal(virtio_blk_replace(f->vdev, missing, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "none.img"));
	assert_int_equal(config_u64(f, 0), SECTORS);
	assert_int_equal(f->config_irqs, 0);
	assert_int_equal(blk_read(f, 0, 512, &used), VIRTIO_BLK_S_OK);

	image_create(f, "new.img", 2 * SECTORS * 512);
	uint8_t mark[512];
	memset(mark, 0xAB, sizeof(mark));
	image_write(f, (2 * SECTORS - 1) * 512, mark, sizeof(mark));
	assert_int_equal(virtio_blk_replace(f->vdev, f->path, err, sizeof(err)), 0);
	assert_int_equal(config_u64(f, 0), 2 * SECTORS);
	assert_int_not_equal(atomic_load(&f->vdev->config_generation), gen);
	assert_int_equal(f->config_irqs, 1);
	assert_int_equal(blk_read(f, 2 * SECTORS - 1, 512, &used), VIRTIO_BLK_S_OK);
	assert_memory_equal(fake_mem_at(&f->fm, DATA_GPA), mark, sizeof(mark));
	int fd = open(old, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	/* And the new one is held: a second disk on it is refused. */
	fd = open(f->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	close(fd);
}

struct fifo_replacer {
	struct virtio_dev *vdev;
	char path[160], err[256];
	int ret;
	atomic_bool done;
};

static void *fifo_replace_thread(void *arg)
{
	struct fifo_replacer *r = arg;
	r->ret = virtio_blk_replace(r->vdev, r->path, r->err, sizeof(r->err));
	atomic_store(&r->done, true);
	return NULL;
}

/* A FIFO as the new medium of a read-only disk (an API client's PATCH):
 * refused at once. A blocking open would wait for a writer that never
 * comes, and the main thread with it (no API answer, no shutdown). If it
 * hangs, the test opens the other end to get its thread back. The new
 * image's fd must not stay non-blocking: io_uring would answer EAGAIN. */
static void test_replace_fifo(void **state)
{
	struct fx *f = *state;
	uint32_t used;
	disk_close(f);
	disk_open(f, ",ro");
	struct fifo_replacer r = {.vdev = f->vdev};
	snprintf(r.path, sizeof(r.path), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(r.path, 0600), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, fifo_replace_thread, &r), 0);
	for (int i = 0; i < 500 && !atomic_load(&r.done); i++)
		usleep(10000);
	bool hung = !atomic_load(&r.done);
	if (hung)
		close(open(r.path, O_WRONLY | O_NONBLOCK));
	pthread_join(t, NULL);
	assert_false(hung);
	assert_int_equal(r.ret, -1);
	assert_non_null(strstr(r.err, "not a regular file"));
	assert_int_equal(blk_read(f, 0, 512, &used), VIRTIO_BLK_S_OK);

	image_create(f, "new.img", SECTORS * 512);
	char err[256];
	assert_int_equal(virtio_blk_replace(f->vdev, f->path, err, sizeof(err)), 0);
	assert_int_equal(blk_read(f, 0, 512, &used), VIRTIO_BLK_S_OK);
	struct blk_backend b;
	assert_int_equal(blk_backend_open(&b, f->path, true, false, err, sizeof(err)), 0);
	assert_int_equal(fcntl(b.fd, F_GETFL) & O_NONBLOCK, 0);
	blk_backend_close(&b);
}

/* PATCH with the drive's own path after the image grew (Firecracker's
 * documented way to show the guest a new size, and its test_rescan_file):
 * the new size, one configuration interrupt, and the image still locked
 * and in use. A second open file of the image conflicted with the disk's
 * own lock: "in use", and the guest never saw the size. */
static void test_replace_same_path(void **state)
{
	struct fx *f = *state;
	char err[256] = "";
	uint32_t used;
	atomic_store(&f->vdev->status, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER |
					   VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK);
	assert_int_equal(truncate(f->path, 2 * SECTORS * 512), 0);
	if (virtio_blk_replace(f->vdev, f->path, err, sizeof(err)) < 0)
		fail_msg("same path refused: %s", err);
	assert_int_equal(config_u64(f, 0), 2 * SECTORS);
	assert_int_equal(f->config_irqs, 1);
	assert_int_equal(blk_read(f, 2 * SECTORS - 1, 512, &used), VIRTIO_BLK_S_OK);
	fill(f, DATA_GPA, 512, 3);
	assert_int_equal(blk_write(f, 0, 512, NULL), VIRTIO_BLK_S_OK);
	int fd = open(f->path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
	close(fd);
}

/* ---- counters ---- */

struct counted {
	const char *want;
	uint64_t value;
	int seen;
};

static void counted_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct counted *c = ctx;
	assert_string_equal(owner, "virtio-blk0");
	if (!strcmp(what, c->want)) {
		c->value = value;
		c->seen++;
	}
}

/* The device's counter named what (exactly one such). */
static uint64_t counter(struct fx *f, const char *what)
{
	struct counted c = {.want = what};
	virtio_blk_counters(f->vdev, counted_emit, &c);
	assert_int_equal(c.seen, 1);
	return c.value;
}

/* Each answered request counts once, by its type, size and status: reads,
 * writes and flushes when they succeed; a request refused as parsed is
 * invalid, one the image failed an I/O error. Kicks, medium changes and
 * config reads out of range have their own. */
static void test_counters(void **state)
{
	struct fx *f = *state;
	char err[256], missing[160];
	uint64_t v = 0;
	fill(f, DATA_GPA, 2048, 3);
	assert_int_equal(blk_write(f, 0, 1024, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(blk_write(f, 4, 2048, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(blk_read(f, 0, 512, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(request(f, VIRTIO_BLK_T_FLUSH, 0, 0, false, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(request(f, VIRTIO_BLK_T_GET_ID, 0, 20, true, NULL), VIRTIO_BLK_S_OK);
	assert_int_equal(counter(f, "writes"), 2);
	assert_int_equal(counter(f, "write bytes"), 3072);
	assert_int_equal(counter(f, "reads"), 1);
	assert_int_equal(counter(f, "read bytes"), 512);
	assert_int_equal(counter(f, "flushes"), 1);
	assert_int_equal(counter(f, "invalid requests"), 0);
	assert_int_equal(counter(f, "io errors"), 0);

	/* Refused as parsed: an unknown type, a read past the end. */
	assert_int_equal(request(f, 99, 0, 0, false, NULL), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(blk_read(f, SECTORS, 512, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(counter(f, "invalid requests"), 2);
	assert_int_equal(counter(f, "io errors"), 0);
	/* Valid, but the image is shorter now: the read itself fails. */
	assert_int_equal(truncate(f->path, 512), 0);
	assert_int_equal(blk_read(f, 0, 1024, NULL), VIRTIO_BLK_S_IOERR);
	assert_int_equal(counter(f, "io errors"), 1);
	assert_int_equal(counter(f, "invalid requests"), 2);
	assert_int_equal(counter(f, "reads"), 1);
	assert_int_equal(counter(f, "read bytes"), 512);
	assert_int_equal(counter(f, "queue events"), 8); /* one kick per request */

	f->vdev->ops->config_read(f->vdev, 4096, &v, sizeof(v));
	assert_int_equal(counter(f, "config fails"), 1);
	snprintf(missing, sizeof(missing), "%s/none.img", f->dir);
	assert_int_equal(virtio_blk_replace(f->vdev, missing, err, sizeof(err)), -1);
	assert_int_equal(counter(f, "update fails"), 1);
	assert_int_equal(counter(f, "updates"), 0);
	image_create(f, "new.img", SECTORS * 512);
	assert_int_equal(virtio_blk_replace(f->vdev, f->path, err, sizeof(err)), 0);
	assert_int_equal(counter(f, "updates"), 1);
	assert_int_equal(counter(f, "update fails"), 1);
}

/* ---- multiqueue ---- */

#define F_MQ (1ULL << 12)

/* Request k of a test (k < 32): its header at HDR_GPA + 16 k, its status
 * byte at STATUS_GPA + k (0xEE until answered), data at data. Posted on
 * queue q at descriptor 3 (k % 16); kicked by the caller. */
static void post_q(struct fx *f, unsigned int q, unsigned int k, uint32_t type, uint64_t sector,
		   uint64_t data, uint32_t len, bool w)
{
	uint64_t hdr = HDR_GPA + 16 * k, st = STATUS_GPA + k;
	set_hdr(f, hdr, type, sector);
	*(uint8_t *)fake_mem_at(&f->fm, st) = 0xEE;
	struct seg s[] = {{hdr, 16, false}, {data, len, w}, {st, 1, true}};
	if (len)
		guest_add_q(f, q, (uint16_t)(3 * (k % 16)), s, 3);
	else
		guest_add_q(f, q, (uint16_t)(3 * (k % 16)), (struct seg[]){s[0], s[2]}, 2);
}

static uint8_t status_k(struct fx *f, unsigned int k)
{
	return *(uint8_t *)fake_mem_at(&f->fm, STATUS_GPA + k);
}

static void kick(struct fx *f, unsigned int q)
{
	f->vdev->ops->queue_notify(f->vdev, q);
}

static void reopen(struct fx *f, const char *opts)
{
	disk_close(f);
	disk_open(f, opts);
}

/* One queue (the default, or queues=1) is the device as before: no MQ
 * feature, num_queues 1. More: MQ offered, num_queues in the config, a
 * lock per queue for the poller, every queue polled. */
static void test_mq_config(void **state)
{
	struct fx *f = *state;
	uint16_t nq = 0;
	for (int one = 0; one < 2; one++) {
		if (one)
			reopen(f, ",queues=1");
		assert_false(f->vdev->host_features & F_MQ);
		assert_int_equal(f->vdev->num_queues, 1);
		f->vdev->ops->config_read(f->vdev, 34, &nq, 2);
		assert_int_equal(nq, 1);
		assert_int_equal(f->vdev->poll_queues, 1);
		assert_non_null(f->vdev->queue_lock[0]);
		assert_null(f->vdev->queue_lock[1]);
	}
	reopen(f, ",queues=4");
	assert_true(f->vdev->host_features & F_MQ);
	assert_int_equal(f->vdev->num_queues, 4);
	f->vdev->ops->config_read(f->vdev, 34, &nq, 2);
	assert_int_equal(nq, 4);
	assert_int_equal(f->vdev->poll_queues, 0xF);
	for (unsigned int i = 0; i < 4; i++) {
		assert_non_null(f->vdev->queue_lock[i]);
		for (unsigned int j = 0; j < i; j++)
			assert_ptr_not_equal(f->vdev->queue_lock[i], f->vdev->queue_lock[j]);
	}
	assert_null(f->vdev->queue_lock[4]);
}

/* A request on queue 1 is answered on queue 1's used ring, with queue 1's
 * interrupt; queue 0 sees nothing, then reads the data back itself. */
static void test_mq_completes_on_its_queue(void **state)
{
	struct fx *f = *state;
	reopen(f, ",queues=2");
	fill(f, DATA_GPA, 1024, 5);
	post_q(f, 1, 0, VIRTIO_BLK_T_OUT, 3, DATA_GPA, 1024, false);
	kick(f, 1);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx_q(f, 1), 1);
	assert_int_equal(guest_used_q(f, 1, 0).id, 0);
	assert_int_equal(guest_used_q(f, 1, 0).len, 1);
	assert_int_equal(status_k(f, 0), VIRTIO_BLK_S_OK);
	assert_int_equal(f->notified_q[1], 1);
	assert_int_equal(f->notified_q[0], 0);
	assert_int_equal(guest_used_idx_q(f, 0), 0);

	post_q(f, 0, 1, VIRTIO_BLK_T_IN, 3, DATA2_GPA, 1024, true);
	kick(f, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx_q(f, 0), 1);
	assert_int_equal(guest_used_idx_q(f, 1), 1);
	assert_int_equal(status_k(f, 1), VIRTIO_BLK_S_OK);
	assert_memory_equal(fake_mem_at(&f->fm, DATA2_GPA), fake_mem_at(&f->fm, DATA_GPA), 1024);
	assert_int_equal(f->broken, 0);
}

/* Writes on two queues, interleaved with a flush on each: everything is
 * answered OK on its own queue, a flush after the writes before it on
 * that queue (the order within a queue is kept), and each write is in
 * the image. */
static void test_mq_flush_interleaved(void **state)
{
	struct fx *f = *state;
	reopen(f, ",queues=2");
	/* k: 0, 1 writes on q0; 2 flush on q0; 3, 4 writes on q1; 5 flush
	 * on q1; 6 a write on q0 after its flush. */
	for (unsigned int k = 0; k < 7; k++)
		fill(f, DATA_GPA + 1024 * k, 1024, (uint8_t)(k + 1));
	post_q(f, 0, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 1024, false);
	post_q(f, 1, 3, VIRTIO_BLK_T_OUT, 6, DATA_GPA + 3 * 1024, 1024, false);
	kick(f, 1);
	post_q(f, 0, 1, VIRTIO_BLK_T_OUT, 2, DATA_GPA + 1024, 1024, false);
	post_q(f, 1, 4, VIRTIO_BLK_T_OUT, 8, DATA_GPA + 4 * 1024, 1024, false);
	post_q(f, 0, 2, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false);
	kick(f, 0);
	post_q(f, 1, 5, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false);
	post_q(f, 0, 6, VIRTIO_BLK_T_OUT, 4, DATA_GPA + 6 * 1024, 1024, false);
	kick(f, 1);
	kick(f, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx_q(f, 0), 4);
	assert_int_equal(guest_used_idx_q(f, 1), 3);
	for (unsigned int k = 0; k < 7; k++)
		assert_int_equal(status_k(f, k), VIRTIO_BLK_S_OK);
	/* Used order per queue: the flush (head 3 * (k % 16)) after its
	 * queue's earlier writes. */
	unsigned int pos[7] = {0};
	for (uint16_t i = 0; i < 4; i++)
		pos[guest_used_q(f, 0, i).id / 3] = i;
	for (uint16_t i = 0; i < 3; i++)
		pos[guest_used_q(f, 1, i).id / 3] = i;
	assert_true(pos[2] > pos[0] && pos[2] > pos[1]);
	assert_true(pos[5] > pos[3] && pos[5] > pos[4]);
	uint8_t file[10 * 512];
	image_read(f, 0, file, sizeof(file));
	struct {
		unsigned int k, sector;
	} w[] = {{0, 0}, {1, 2}, {3, 6}, {4, 8}, {6, 4}};
	for (unsigned int i = 0; i < 5; i++)
		assert_memory_equal(file + 512 * w[i].sector,
				    fake_mem_at(&f->fm, DATA_GPA + 1024 * w[i].k), 1024);
	assert_int_equal(counter(f, "flushes"), 2);
	assert_int_equal(counter(f, "writes"), 5);
}

/* A reset with requests posted and kicked on three queues: once it
 * returns nothing touches guest memory, on any queue, and later kicks do
 * nothing (the disk is inactive until the next DRIVER_OK). */
static void test_mq_reset(void **state)
{
	struct fx *f = *state;
	reopen(f, ",queues=3");
	for (unsigned int k = 0; k < 24; k++) {
		fill(f, DATA_GPA + 1024 * k, 1024, (uint8_t)k);
		post_q(f, k % 3, k, VIRTIO_BLK_T_OUT, 2 * k, DATA_GPA + 1024 * k, 1024, false);
	}
	for (unsigned int q = 0; q < 3; q++)
		kick(f, q);
	alarm(20); /* a hang is a failure */
	f->vdev->ops->reset(f->vdev);
	uint16_t used[3];
	for (unsigned int q = 0; q < 3; q++)
		used[q] = guest_used_idx_q(f, q);
	fake_mem_protect(&f->fm, false);
	for (unsigned int q = 0; q < 3; q++)
		kick(f, q);
	virtio_blk_drain(f->vdev);
	usleep(20000);
	alarm(0);
	fake_mem_protect(&f->fm, true);
	for (unsigned int q = 0; q < 3; q++)
		assert_int_equal(guest_used_idx_q(f, q), used[q]);
}

/* A new medium with two queues: every queue reads the new image. */
static void test_mq_replace(void **state)
{
	struct fx *f = *state;
	char err[256] = "";
	reopen(f, ",queues=2");
	image_create(f, "new.img", 2 * SECTORS * 512);
	uint8_t mark[512];
	memset(mark, 0xCD, sizeof(mark));
	image_write(f, 512, mark, sizeof(mark));
	assert_int_equal(virtio_blk_replace(f->vdev, f->path, err, sizeof(err)), 0);
	assert_int_equal(config_u64(f, 0), 2 * SECTORS);
	for (unsigned int q = 0; q < 2; q++) {
		memset(fake_mem_at(&f->fm, DATA2_GPA), 0, 512);
		post_q(f, q, q, VIRTIO_BLK_T_IN, 1, DATA2_GPA, 512, true);
		kick(f, q);
		virtio_blk_drain(f->vdev);
		assert_int_equal(guest_used_idx_q(f, q), 1);
		assert_int_equal(status_k(f, q), VIRTIO_BLK_S_OK);
		assert_memory_equal(fake_mem_at(&f->fm, DATA2_GPA), mark, sizeof(mark));
	}
}

/* Waits until n disk threads are inside the gate. */
static void gate_wait_entered(int n)
{
	pthread_mutex_lock(&gate_mu);
	while (gate_entered < n)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
}

static void gate_arm(void)
{
	pthread_mutex_lock(&gate_mu);
	gate_on = true;
	gate_entered = 0;
	gate_open = false;
	pthread_mutex_unlock(&gate_mu);
}

static void gate_release(void)
{
	pthread_mutex_lock(&gate_mu);
	gate_open = true;
	gate_on = false;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

/* Waits until the thread tid sleeps or done is set; true if it slept. */
static bool sleeps(_Atomic pid_t *tid, atomic_bool *done)
{
	while (!atomic_load(tid))
		sched_yield();
	while (!atomic_load(done) && thread_state(atomic_load(tid)) != 'S')
		sched_yield();
	return !atomic_load(done);
}

/* Threads path. Three queues each with a flush inside fdatasync at the
 * same time (no lock spans the queues: they run side by side), plus a
 * write queued behind each: a reset waits for all three, and answers
 * nothing afterwards on any queue. */
static void test_mq_reset_in_flight(void **state)
{
	struct fx *f = *state;
	reopen(f, ",queues=3");
	gate_arm();
	for (unsigned int q = 0; q < 3; q++) {
		post_q(f, q, q, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false);
		post_q(f, q, 3 + q, VIRTIO_BLK_T_OUT, q, DATA_GPA, 512, false);
		kick(f, q);
	}
	gate_wait_entered(3);
	struct resetter r = {.f = f};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, reset_thread, &r), 0);
	bool slept = sleeps(&r.tid, &r.done);
	gate_release();
	pthread_join(t, NULL);
	assert_true(slept);
	fake_mem_protect(&f->fm, false);
	virtio_blk_drain(f->vdev);
	fake_mem_protect(&f->fm, true);
	for (unsigned int q = 0; q < 3; q++) {
		assert_int_equal(guest_used_idx_q(f, q), 0);
		assert_int_equal(status_k(f, q), 0xEE);
		assert_int_equal(status_k(f, 3 + q), 0xEE);
	}
}

struct replacer {
	struct fx *f;
	_Atomic pid_t tid;
	atomic_bool done;
	int ret;
};

static void *replace_thread(void *arg)
{
	struct replacer *r = arg;
	char err[256];
	atomic_store(&r->tid, gettid());
	r->ret = virtio_blk_replace(r->f->vdev, r->f->path, err, sizeof(err));
	atomic_store(&r->done, true);
	return NULL;
}

/* Threads path. A medium change waits for every queue: with a flush held
 * on queue 1 it does not return, a read kicked on queue 2 meanwhile is
 * not answered, and once the flush ends the read gets the new image. */
static void test_mq_replace_waits(void **state)
{
	struct fx *f = *state;
	reopen(f, ",queues=3");
	gate_arm();
	post_q(f, 1, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false);
	kick(f, 1);
	gate_wait_entered(1);
	image_create(f, "new.img", SECTORS * 512);
	uint8_t mark[512];
	memset(mark, 0x77, sizeof(mark));
	image_write(f, 0, mark, sizeof(mark));
	struct replacer r = {.f = f};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, replace_thread, &r), 0);
	bool slept = sleeps(&r.tid, &r.done);
	memset(fake_mem_at(&f->fm, DATA2_GPA), 0, 512);
	post_q(f, 2, 1, VIRTIO_BLK_T_IN, 0, DATA2_GPA, 512, true);
	kick(f, 2);
	uint16_t early = guest_used_idx_q(f, 2);
	gate_release();
	pthread_join(t, NULL);
	assert_true(slept);
	assert_int_equal(early, 0);
	assert_int_equal(r.ret, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx_q(f, 1), 1);
	assert_int_equal(guest_used_idx_q(f, 2), 1);
	assert_int_equal(status_k(f, 1), VIRTIO_BLK_S_OK);
	assert_memory_equal(fake_mem_at(&f->fm, DATA2_GPA), mark, sizeof(mark));
}

/* queues= out of 1..16 is refused with one line; without it, a queue per
 * vCPU up to 16 (at least one). */
static void test_mq_queues_option(void **state)
{
	struct fx *f = *state;
	char err[256], spec[200];
	const char *bad[] = {"0", "17", "x", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(spec, sizeof(spec), "%s,queues=%s%s", f->path, bad[i], aio_opt);
		err[0] = '\0';
		assert_null(virtio_blk_create(spec, 1, err, sizeof(err)));
		if (!strstr(err, "queues=") || !strstr(err, "1 to 16"))
			fail_msg("spec '%s': got '%s'", spec, err);
		assert_null(strchr(err, '\n'));
	}
	disk_close(f);
	struct {
		unsigned int vcpus;
		const char *opts;
		unsigned int want;
	} c[] = {{0, "", 1}, {1, "", 1}, {3, "", 3}, {64, "", 16}, {8, ",queues=2", 2}};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct blk_spec *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		snprintf(spec, sizeof(spec), "%s%s%s", f->path, c[i].opts, aio_opt);
		assert_int_equal(blk_spec_parse(spec, s, err, sizeof(err)), 0);
		struct dev_ctx ctx = {
		    .name = "virtio-blk0", .gm = &f->fm.gm, .nr_vcpus = c[i].vcpus};
		struct device d;
		assert_int_equal(virtio_blk_new_device(&ctx, s, &d, err, sizeof(err)), 0);
		free(s);
		assert_int_equal(d.vdev->num_queues, c[i].want);
		uint16_t nq = 0;
		d.vdev->ops->config_read(d.vdev, 34, &nq, 2);
		assert_int_equal(nq, c[i].want);
		assert_int_equal(!!(d.vdev->host_features & F_MQ), c[i].want > 1);
		d.ops->destroy(d.dev);
	}
}

/* Short transfers: what is left of the request after n bytes. */
static void test_req_advance(void **state)
{
	(void)state;
	static uint8_t a[100], b[50], c[10];
	struct blk_req req = {.niov = 3, .off = 1000};
	req.iov[0] = (struct iovec){a, sizeof(a)};
	req.iov[1] = (struct iovec){b, sizeof(b)};
	req.iov[2] = (struct iovec){c, sizeof(c)};
	assert_int_equal(blk_req_left(&req), 160);
	assert_int_equal(blk_req_advance(&req, 30), 130);
	assert_int_equal(req.off, 1030);
	assert_int_equal(req.niov, 3);
	assert_ptr_equal(req.iov[0].iov_base, a + 30);
	assert_int_equal(blk_req_advance(&req, 70), 60); /* a exactly used up */
	assert_int_equal(req.niov, 2);
	assert_ptr_equal(req.iov[0].iov_base, b);
	assert_int_equal(blk_req_advance(&req, 55), 5);
	assert_int_equal(req.niov, 1);
	assert_ptr_equal(req.iov[0].iov_base, c + 5);
	assert_int_equal(blk_req_advance(&req, 5), 0);
	assert_int_equal(req.niov, 0);
	assert_int_equal(req.off, 1160);
}

/* The ring can do only what a disk needs: an open through it is refused
 * by the kernel, whatever a guest request could smuggle in. */
static void test_uring_restricted(void **state)
{
	(void)state;
	struct blk_uring u;
	int r = blk_uring_init(&u, 8);
	if (r < 0) {
		print_message("no io_uring here (%d): restriction not checked\n", r);
		return;
	}
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u.ring);
	io_uring_prep_openat(sqe, AT_FDCWD, "/etc/hostname", O_RDONLY, 0);
	io_uring_sqe_set_data64(sqe, 7);
	assert_int_equal(blk_uring_submit(&u) < 0 || 1, 1);
	struct blk_uring_done d[2];
	int n = blk_uring_reap(&u, d, 2);
	if (n == 1) {
		assert_int_equal(d[0].tag, 7);
		assert_int_equal(d[0].res, -EACCES);
	} else {
		assert_int_equal(n, -EACCES); /* refused at submission */
	}
	blk_uring_exit(&u);
}

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

/* Queues a write of len bytes (descriptor 0) and kicks; true if it was
 * answered. */
static bool write_kicked(struct fx *f, uint32_t len)
{
	uint16_t before = guest_used_idx(f);
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_OUT, 0);
	struct seg s[3] = {{HDR_GPA, 16, false}, {DATA_GPA, len, false}, {STATUS_GPA, 1, true}};
	guest_add(f, 0, s, 3);
	kick_and_wait(f);
	return guest_used_idx(f) != before;
}

/* Over the limit a request stays in the ring (not answered, not
 * consumed); kicks meanwhile pop nothing and a poller sees no work; the
 * timer resumes it once time refilled the bucket. A PATCH that lifts the
 * limit ends the wait at once. */
static void test_rate_limited(void **state)
{
	struct fx *f = *state;
	disk_close(f);
	disk_open(f, ",bw=1024:100");
	struct blk_dev *blk = f->vdev->priv;
	struct virtq *vq = &f->vdev->vqs[0];
	blk->throttle.clock_ns = fake_clock;
	fake_now = 5000000000ull;
	struct ratelimit_cfg c = {.b[RL_BYTES] = {1024, 0, 100}};
	virtio_blk_limit(f->vdev, &c, 1u << RL_BYTES); /* afresh on the test's clock */
	assert_true(write_kicked(f, 1024));
	assert_false(write_kicked(f, 512));
	uint16_t taken = vq->last_avail_idx;
	assert_int_equal(taken, 1);
	assert_int_equal(counter_get(&blk->stats.throttled), 1);
	assert_true(f->vdev->ops->queue_throttled(f->vdev, 0));
	f->vdev->ops->queue_notify(f->vdev, 0); /* a kick while waiting */
	virtio_blk_drain(f->vdev);
	assert_int_equal(vq->last_avail_idx, taken);
	assert_int_equal(counter_get(&blk->stats.throttled), 1);
	/* The timer early (no time passed): it waits again. */
	throttle_event(&blk->throttle, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx(f), 1);
	assert_int_equal(counter_get(&blk->stats.throttled), 2);
	fake_now += 50000000; /* 512 bytes refilled */
	throttle_event(&blk->throttle, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx(f), 2);
	assert_int_equal(status(f), VIRTIO_BLK_S_OK);
	assert_false(f->vdev->ops->queue_throttled(f->vdev, 0));
	/* Waiting again; the limit lifted: the wait ends with no time. */
	assert_false(write_kicked(f, 1024));
	struct ratelimit_cfg off = {0};
	virtio_blk_limit(f->vdev, &off, 1u << RL_BYTES);
	throttle_event(&blk->throttle, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx(f), 3);
	assert_int_equal(counter_get(&blk->stats.throttled), 3);
	assert_int_equal(f->broken, 0);
}

/* ops=: one token per request, flushes included; oversize in bytes
 * passes and blocks the next until repaid. */
static void test_rate_limited_ops_oversize(void **state)
{
	struct fx *f = *state;
	disk_close(f);
	disk_open(f, ",ops=1:1000,bw=512:1000");
	struct blk_dev *blk = f->vdev->priv;
	blk->throttle.clock_ns = fake_clock;
	fake_now = 1000000000ull;
	struct ratelimit_cfg c = {.b = {[RL_BYTES] = {512, 0, 1000}, [RL_OPS] = {1, 0, 1000}}};
	virtio_blk_limit(f->vdev, &c, 3);
	assert_true(write_kicked(f, 2048)); /* 4x the bucket: passes */
	assert_false(write_kicked(f, 512));
	fake_now += 1000000000ull; /* an op back; 1536 bytes of debt left */
	throttle_event(&blk->throttle, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx(f), 1);
	fake_now += 3000000000ull; /* debt repaid, and 512 more */
	throttle_event(&blk->throttle, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx(f), 2);
}

/* WRITE_ZEROES writes (with the fallback, zero bytes for real): its
 * ranges are bytes to the limiter, as a write's data is (QEMU counts them
 * so too). 16 ranges of 32 MiB would otherwise pass a byte limit of any
 * rate at one token each. */
static void test_rate_limited_write_zeroes(void **state)
{
	struct fx *f = *state;
	disk_close(f);
	disk_open(f, ",bw=1024:100");
	struct blk_dev *blk = f->vdev->priv;
	blk->throttle.clock_ns = fake_clock;
	fake_now = 5000000000ull;
	struct ratelimit_cfg c = {.b[RL_BYTES] = {1024, 0, 100}};
	virtio_blk_limit(f->vdev, &c, 1u << RL_BYTES);
	uint16_t before = guest_used_idx(f);
	set_hdr(f, HDR_GPA, VIRTIO_BLK_T_WRITE_ZEROES, 0);
	put_range(f, DATA_GPA, 0, SECTORS, 0); /* 32 KiB: oversize, passes */
	struct seg s[3] = {{HDR_GPA, 16, false}, {DATA_GPA, 16, false}, {STATUS_GPA, 1, true}};
	guest_add(f, 0, s, 3);
	kick_and_wait(f);
	assert_int_equal(guest_used_idx(f), (uint16_t)(before + 1));
	assert_int_equal(status(f), VIRTIO_BLK_S_OK);
	assert_false(write_kicked(f, 512)); /* 31 KiB of debt first */
	fake_now += 3200000000ull;
	throttle_event(&blk->throttle, 0);
	virtio_blk_drain(f->vdev);
	assert_int_equal(guest_used_idx(f), (uint16_t)(before + 2));
}

static int run_group(const char *name, const char *aio, const struct CMUnitTest *t, size_t n)
{
	aio_opt = aio;
	return _cmocka_run_group_tests(name, t, n, NULL, NULL);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_disk, teardown)
	/* Every test on both paths, but the last three: they hold flushes in
	 * an interposed fdatasync, which the ring does not call. */
	const struct CMUnitTest tests[] = {
	    T(test_config),
	    T(test_write_read_roundtrip),
	    T(test_scattered_buffers),
	    T(test_aligned_roundtrip),
	    T(test_read_only),
	    T(test_flush),
	    T(test_get_id),
	    T(test_out_of_range),
	    T(test_odd_image_size),
	    T(test_bad_data_length),
	    T(test_unknown_type),
	    T(test_missing_status),
	    T(test_short_header),
	    T(test_too_many_segments),
	    T(test_write_zeroes_and_discard),
	    T(test_many_in_flight),
	    T(test_write_zeroes_too_long),
	    T(test_pop_budget),
	    T(test_reset_while_refilling),
	    T(test_bad_specs),
	    T(test_image_shrank),
	    T(test_replace_medium),
	    T(test_replace_fifo),
	    T(test_replace_same_path),
	    T(test_counters),
	    T(test_mq_config),
	    T(test_mq_completes_on_its_queue),
	    T(test_mq_flush_interleaved),
	    T(test_mq_reset),
	    T(test_mq_replace),
	    T(test_mq_queues_option),
	    T(test_rate_limited),
	    T(test_rate_limited_ops_oversize),
	    T(test_rate_limited_write_zeroes),
	    T(test_large_host_blocks),
	    cmocka_unit_test(test_req_advance),
	    cmocka_unit_test(test_uring_restricted),
	    /* Threads only: they hold flushes in fdatasync. */
	    T(test_reset_quiesces),
	    T(test_mq_reset_in_flight),
	    T(test_mq_replace_waits),
	};
	const size_t n = sizeof(tests) / sizeof(tests[0]);
	int fails = run_group("virtio_blk threads", ",aio=threads", tests, n);
	fails += run_group("virtio_blk io_uring", ",aio=io_uring", tests, n - 3);
	/* With direct, every test once more on each path. */
	fails += run_group("virtio_blk threads direct", ",aio=threads,direct", tests, n);
	return fails +
	       run_group("virtio_blk io_uring direct", ",aio=io_uring,direct", tests, n - 3);
}
