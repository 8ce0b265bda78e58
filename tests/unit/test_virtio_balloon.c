// SPDX-License-Identifier: Apache-2.0
/* Unit tests for virtio-balloon (src/devices/virtio-balloon/virtio_balloon*.c): the test
 * plays the guest driver on a fake guest RAM (a real private anonymous
 * mapping, so mincore shows what was given back) and the transport, and
 * records the device's discards where it must see their ranges. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/virtio_balloon.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"
#include "vmm/devmgr.h"

#define RAM_SIZE  (8u << 20)
#define QSZ	  64
#define RING_GPA  0x10000  /* queue q's rings at RING_GPA + q * 0x4000 */
#define DATA_GPA  0x40000  /* PFN arrays and stats buffers */
#define PAGES_GPA 0x200000 /* pages the guest gives: 2 MiB up */
#define PG	  4096u

struct fx {
	struct fake_mem fm;
	struct virtio_dev *vdev;
	uint16_t avail_idx[4], next_desc[4];
	int notified[4], config_irqs;
	/* discards seen, when recording */
	struct {
		uint64_t gpa, len;
	} disc[64];
	int nr_disc;
};

static struct fx *cur;

static int record_discard(void *host, size_t len)
{
	assert_true(cur->nr_disc < 64);
	cur->disc[cur->nr_disc].gpa = (uint64_t)((uint8_t *)host - cur->fm.ram);
	cur->disc[cur->nr_disc].len = len;
	cur->nr_disc++;
	return madvise(host, len, MADV_DONTNEED);
}

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	((struct fx *)vdev->transport_data)->notified[q]++;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	((struct fx *)vdev->transport_data)->config_irqs++;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
};

static void on_broken(struct virtq *vq, void *opaque)
{
	(void)vq, (void)opaque;
	fail_msg("a queue broke");
}

static uint64_t ring(unsigned int q, unsigned int which)
{
	return RING_GPA + q * 0x4000 + which * 0x1000;
}

/* One buffer as a chain on queue q, made available (not kicked). */
static uint16_t guest_add(struct fx *f, unsigned int q, uint64_t gpa, uint32_t len, bool w)
{
	uint16_t d = f->next_desc[q];
	struct virtq_desc desc = {.addr = gpa, .len = len, .flags = w ? VIRTQ_DESC_F_WRITE : 0};
	memcpy(fake_mem_at(&f->fm, ring(q, 0) + 16 * (uint64_t)d), &desc, sizeof(desc));
	f->next_desc[q] = (uint16_t)((d + 1) % QSZ);
	uint16_t *avail = fake_mem_at(&f->fm, ring(q, 1));
	avail[2 + (f->avail_idx[q] % QSZ)] = d;
	__atomic_store_n(&avail[1], ++f->avail_idx[q], __ATOMIC_RELEASE);
	return d;
}

static uint16_t used_idx(struct fx *f, unsigned int q)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(&f->fm, ring(q, 2) + 2), __ATOMIC_ACQUIRE);
}

static void kick(struct fx *f, unsigned int q)
{
	f->vdev->ops->queue_notify(f->vdev, q);
}

/* PFNs on queue q (inflate 0, deflate 1), kicked. */
static void send_pfns(struct fx *f, unsigned int q, const uint32_t *pfn, uint32_t n)
{
	memcpy(fake_mem_at(&f->fm, DATA_GPA), pfn, n * sizeof(uint32_t));
	uint16_t before = used_idx(f, q);
	guest_add(f, q, DATA_GPA, n * (uint32_t)sizeof(uint32_t), false);
	kick(f, q);
	assert_int_equal(used_idx(f, q), (uint16_t)(before + 1));
}

static void dev_open(struct fx *f, const char *spec, uint64_t features)
{
	struct balloon_spec s;
	char err[256] = "";
	balloon_spec_init(&s);
	assert_int_equal(opt_parse_spec(&balloon_spec_table, spec, &s, err, sizeof(err)), 0);
	f->vdev = virtio_balloon_create("virtio-balloon0", &s, &f->fm.gm, err, sizeof(err));
	assert_non_null(f->vdev);
	struct virtio_dev *v = f->vdev;
	assert_int_equal(v->device_id, 5); /* virtio 1.2 §5.5.1 */
	assert_int_equal(v->config_len, 8);
	v->transport = &fake_transport;
	v->transport_data = f;
	v->driver_features = features & v->host_features;
	for (unsigned int q = 0; q < v->num_queues; q++) {
		struct virtq *vq = &v->vqs[q];
		assert_int_equal(virtq_init(vq, "balloon q", v->queue_max_size, on_broken, f), 0);
		assert_int_equal(virtq_set_size(vq, QSZ), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, ring(q, 0)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, ring(q, 1)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, ring(q, 2)), 0);
		assert_int_equal(virtq_activate(vq, &f->fm.gm), 0);
	}
	assert_int_equal(v->ops->activate(v), 0);
	((struct virtio_balloon *)v->priv)->discard = record_discard;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, RAM_SIZE))
		return -1;
	cur = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->vdev)
		virtio_balloon_destroy(f->vdev);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

struct found {
	const char *what;
	uint64_t value;
	int seen;
};

static void find_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct found *c = ctx;
	assert_string_equal(owner, "virtio-balloon0");
	if (!strcmp(what, c->what)) {
		c->value = value;
		c->seen++;
	}
}

static int seen(struct fx *f, const char *what)
{
	struct found c = {.what = what};
	virtio_balloon_counters(f->vdev, find_emit, &c);
	return c.seen;
}

static uint64_t counter(struct fx *f, const char *what)
{
	struct found c = {.what = what};
	virtio_balloon_counters(f->vdev, find_emit, &c);
	assert_int_equal(c.seen, 1);
	return c.value;
}

/* Writes a byte into each page of [gpa, gpa + len): resident. */
static void touch(struct fx *f, uint64_t gpa, uint64_t len)
{
	for (uint64_t o = 0; o < len; o += PG)
		*(volatile uint8_t *)fake_mem_at(&f->fm, gpa + o) = 0x5a;
}

static bool resident(struct fx *f, uint64_t gpa)
{
	unsigned char v = 0;
	assert_int_equal(mincore(fake_mem_at(&f->fm, gpa), PG, &v), 0);
	return v & 1;
}

#define ALL_FEATURES                                                                               \
	((1ull << VIRTIO_BALLOON_F_STATS_VQ) | (1ull << VIRTIO_BALLOON_F_REPORTING) |              \
	 (1ull << VIRTIO_BALLOON_F_DEFLATE_ON_OOM))

/* ---- tests ---- */

/* Inflated pages leave the host's memory; the others stay; contiguous
 * PFNs go in one madvise. */
static void test_inflate_gives_back(void **state)
{
	struct fx *f = *state;
	dev_open(f, "amount=4", ALL_FEATURES);
	touch(f, PAGES_GPA, 16 * PG);
	uint32_t base = PAGES_GPA / PG;
	uint32_t pfn[] = {base + 2, base + 3, base + 4, base + 9, base + 0};
	send_pfns(f, 0, pfn, 5);
	assert_int_equal(f->notified[0], 1);
	for (uint32_t i = 0; i < 16; i++) {
		bool gone = i == 2 || i == 3 || i == 4 || i == 9 || i == 0;
		assert_int_equal(resident(f, PAGES_GPA + i * PG), !gone);
	}
	assert_int_equal(f->nr_disc, 3);
	assert_int_equal(f->disc[0].gpa, PAGES_GPA + 2 * PG);
	assert_int_equal(f->disc[0].len, 3 * PG);
	assert_int_equal(f->disc[1].gpa, PAGES_GPA + 9 * PG);
	assert_int_equal(f->disc[1].len, PG);
	assert_int_equal(f->disc[2].gpa, PAGES_GPA);
	assert_int_equal(counter(f, "inflates"), 1);
	assert_int_equal(counter(f, "inflated pages"), 5);
	assert_int_equal(counter(f, "bad pfns"), 0);
	/* The guest reads zeroes there now. */
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, PAGES_GPA + 3 * PG), 0);
	/* Deflate only counts. */
	send_pfns(f, 1, pfn, 2);
	assert_int_equal(counter(f, "deflates"), 1);
	assert_int_equal(counter(f, "deflated pages"), 2);
	assert_int_equal(f->nr_disc, 3);
}

/* PFNs outside RAM (past its end, in the PCI hole, the largest u32) are
 * counted and skipped; nothing outside the mapping is discarded. */
static void test_inflate_outside_ram(void **state)
{
	struct fx *f = *state;
	dev_open(f, "", 0);
	touch(f, PAGES_GPA, PG);
	uint32_t pfn[] = {RAM_SIZE / PG, 0xC0000000u / PG, 0xFFFFFFFFu, PAGES_GPA / PG,
			  RAM_SIZE / PG - 1 + 2};
	send_pfns(f, 0, pfn, 5);
	assert_int_equal(counter(f, "bad pfns"), 4);
	assert_int_equal(counter(f, "inflated pages"), 1);
	assert_int_equal(f->nr_disc, 1);
	assert_int_equal(f->disc[0].gpa, PAGES_GPA);
	assert_false(resident(f, PAGES_GPA));
}

/* Chains refused whole: too many PFNs, a length not a multiple of 4, a
 * device-writable buffer. Each still goes back to the guest. */
static void test_inflate_bad_chains(void **state)
{
	struct fx *f = *state;
	dev_open(f, "", 0);
	uint32_t *arr = fake_mem_at(&f->fm, DATA_GPA);
	for (unsigned int i = 0; i <= BALLOON_PFNS_MAX; i++)
		arr[i] = PAGES_GPA / PG + i;
	guest_add(f, 0, DATA_GPA, (BALLOON_PFNS_MAX + 1) * 4, false);
	guest_add(f, 0, DATA_GPA, 6, false);
	guest_add(f, 0, DATA_GPA, 8, true);
	kick(f, 0);
	assert_int_equal(used_idx(f, 0), 3);
	assert_int_equal(counter(f, "bad chains"), 3);
	assert_int_equal(f->nr_disc, 0);
	/* The most a chain may have is taken. */
	guest_add(f, 0, DATA_GPA, BALLOON_PFNS_MAX * 4, false);
	kick(f, 0);
	assert_int_equal(counter(f, "inflated pages"), BALLOON_PFNS_MAX);
	assert_int_equal(f->nr_disc, 1);
	assert_int_equal(f->disc[0].len, BALLOON_PFNS_MAX * PG);
}

static void put_stat(uint8_t *p, uint16_t tag, uint64_t val)
{
	struct virtio_balloon_stat s = {.tag = tag, .val = val};
	memcpy(p, &s, sizeof(s));
}

/* The stats buffer: parsed by tag into Firecracker's names, held, and
 * given back by the timer; a second buffer gives the first back. */
static void test_stats(void **state)
{
	struct fx *f = *state;
	dev_open(f, "stats=1", ALL_FEATURES);
	assert_int_equal(f->vdev->num_queues, 3);
	assert_true(f->vdev->kicks_on_vcpu); /* madvise off the vCPU would IPI it */
	uint8_t *p = fake_mem_at(&f->fm, DATA_GPA);
	put_stat(p, VIRTIO_BALLOON_S_MEMFREE, 1234);
	put_stat(p + 10, VIRTIO_BALLOON_S_SWAP_IN, 7);
	put_stat(p + 20, VIRTIO_BALLOON_S_HTLB_PGFAIL, 3);
	assert_int_equal(seen(f, "stat free_memory"), 0);
	guest_add(f, 2, DATA_GPA, 30, false);
	kick(f, 2);
	assert_int_equal(used_idx(f, 2), 0); /* held */
	assert_int_equal(counter(f, "stat free_memory"), 1234);
	assert_int_equal(counter(f, "stat swap_in"), 7);
	assert_int_equal(counter(f, "stat hugetlb_failures"), 3);
	assert_int_equal(seen(f, "stat total_memory"), 0); /* never reported */
	assert_int_equal(counter(f, "stats updates"), 1);
	/* The timer gives it back for fresh numbers. */
	virtio_balloon_stats_tick(f->vdev->priv, 0);
	assert_int_equal(used_idx(f, 2), 1);
	assert_int_equal(f->notified[2], 1);
	/* A guest that does not answer: nothing to give back, counted. */
	virtio_balloon_stats_tick(f->vdev->priv, 0);
	assert_int_equal(used_idx(f, 2), 1);
	assert_int_equal(counter(f, "stats missed"), 1);
	/* A second buffer while one is held gives the first back. */
	guest_add(f, 2, DATA_GPA, 10, false);
	guest_add(f, 2, DATA_GPA, 10, false);
	kick(f, 2);
	assert_int_equal(used_idx(f, 2), 2);
}

/* Odd lengths, unknown tags, writable and oversized buffers are failed
 * updates; the whole entries before them still count; nothing is read
 * past the buffer. */
static void test_stats_bad(void **state)
{
	struct fx *f = *state;
	dev_open(f, "stats=5", ALL_FEATURES);
	uint8_t *p = fake_mem_at(&f->fm, DATA_GPA);
	put_stat(p, VIRTIO_BALLOON_S_MEMTOT, 99);
	put_stat(p + 10, VIRTIO_BALLOON_S_MEMFREE, 55);
	guest_add(f, 2, DATA_GPA, 15, false); /* one and a half */
	kick(f, 2);
	assert_int_equal(counter(f, "stat total_memory"), 99);
	assert_int_equal(seen(f, "stat free_memory"), 0);
	assert_int_equal(counter(f, "stats update fails"), 1);
	put_stat(p, 200, 1);
	guest_add(f, 2, DATA_GPA, 10, false);
	guest_add(f, 2, DATA_GPA, 10, true);
	guest_add(f, 2, DATA_GPA, (BALLOON_STATS_MAX + 1) * 10, false);
	kick(f, 2);
	assert_int_equal(counter(f, "stats update fails"), 4);
	assert_int_equal(counter(f, "stats updates"), 0);
}

/* Free page reporting: the reported ranges' whole pages go back, without
 * a target; the queue follows the present ones (no stats queue: 2). */
static void test_reporting(void **state)
{
	struct fx *f = *state;
	dev_open(f, "reporting=on", ALL_FEATURES);
	assert_int_equal(f->vdev->num_queues, 3);
	touch(f, PAGES_GPA, 8 * PG);
	guest_add(f, 2, PAGES_GPA, 4 * PG, true);
	guest_add(f, 2, PAGES_GPA + 5 * PG + 100, 2 * PG, true); /* one whole page */
	kick(f, 2);
	assert_int_equal(used_idx(f, 2), 2);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(resident(f, PAGES_GPA + i * PG), !(i < 4 || i == 6));
	assert_int_equal(counter(f, "reports"), 2);
	assert_int_equal(counter(f, "reported bytes"), 5 * PG);
	assert_int_equal(f->nr_disc, 2);
}

/* A driver that takes reporting but not stats numbers reporting 2, as
 * Linux does (only present queues count); the fourth queue is nothing. */
static void test_features_not_taken(void **state)
{
	struct fx *f = *state;
	dev_open(f, "stats=1,reporting=on", 1ull << VIRTIO_BALLOON_F_REPORTING);
	assert_int_equal(f->vdev->num_queues, 4);
	touch(f, PAGES_GPA, 2 * PG);
	guest_add(f, 3, PAGES_GPA + PG, PG, true);
	kick(f, 3); /* no such queue for this driver */
	assert_int_equal(used_idx(f, 3), 0);
	assert_true(resident(f, PAGES_GPA + PG));
	guest_add(f, 2, PAGES_GPA, PG, true);
	kick(f, 2);
	assert_int_equal(used_idx(f, 2), 1);
	assert_false(resident(f, PAGES_GPA));
}

static uint32_t config32(struct fx *f, uint32_t off)
{
	uint32_t v = 0;
	f->vdev->ops->config_read(f->vdev, off, &v, 4);
	return v;
}

/* The target in the config space, a new one by update with a config
 * interrupt; the driver's actual; Firecracker's refusals. */
static void test_config_update(void **state)
{
	struct fx *f = *state;
	char err[256];
	dev_open(f, "amount=2,stats=1", ALL_FEATURES);
	assert_int_equal(config32(f, 0), 2 * 256);
	assert_int_equal(virtio_balloon_update(f->vdev, "amount=6", err, sizeof(err)), 0);
	assert_int_equal(config32(f, 0), 6 * 256);
	assert_int_equal(f->config_irqs, 1);
	assert_int_equal(counter(f, "target pages"), 6 * 256);
	uint32_t actual = 300;
	f->vdev->ops->config_write(f->vdev, 4, &actual, 4);
	assert_int_equal(config32(f, 4), 300);
	assert_int_equal(counter(f, "actual pages"), 300);
	f->vdev->ops->config_write(f->vdev, 0, &actual, 4); /* num_pages is the host's */
	assert_int_equal(config32(f, 0), 6 * 256);
	/* More than guest RAM (8 MiB). */
	assert_int_equal(virtio_balloon_update(f->vdev, "amount=9", err, sizeof(err)), -1);
	assert_string_equal(err, "Amount of pages requested is too large.");
	assert_int_equal(config32(f, 0), 6 * 256);
	assert_int_equal(virtio_balloon_update(f->vdev, "amount=8", err, sizeof(err)), 0);
	assert_int_equal(virtio_balloon_update(f->vdev, "stats=0", err, sizeof(err)), -1);
	assert_string_equal(err, "Cannot enable/disable the statistics after boot.");
	assert_int_equal(virtio_balloon_update(f->vdev, "stats=3", err, sizeof(err)), 0);
	assert_int_equal(virtio_balloon_update(f->vdev, "size=3", err, sizeof(err)), -1);
	/* After a reset, the driver is gone. */
	f->vdev->ops->reset(f->vdev);
	assert_int_equal(config32(f, 4), 0);
	assert_int_equal(virtio_balloon_update(f->vdev, "amount=1", err, sizeof(err)), -1);
	assert_string_equal(
	    err, "Device is inactive, check if balloon driver is enabled in guest kernel.");
}

/* The option table, the kind row and a target over guest RAM at create. */
static void test_spec_and_kind(void **state)
{
	struct fx *f = *state;
	char err[256] = "";
	struct balloon_spec s;
	balloon_spec_init(&s);
	assert_int_equal(opt_parse_spec(&balloon_spec_table,
					"amount=64,deflate-on-oom=on,stats=2,reporting=on", &s, err,
					sizeof(err)),
			 0);
	assert_int_equal(s.amount_mib, 64);
	assert_true(s.deflate_on_oom && s.reporting);
	assert_int_equal(s.stats_s, 2);
	assert_null(virtio_balloon_create("virtio-balloon0", &s, &f->fm.gm, err, sizeof(err)));
	assert_string_equal(err, "Amount of pages requested is too large.");
	assert_int_equal(devmgr_check("balloon", "amount=x", true, err, sizeof(err)), -1);
	assert_int_equal(devmgr_check("balloon", "stats=70000", true, err, sizeof(err)), -1);
	assert_int_equal(devmgr_check("balloon", "amount=1,stats=1", true, err, sizeof(err)), 0);
	const struct dm_kind *k = devmgr_kind("balloon", "", err, sizeof(err));
	assert_non_null(k);
	assert_string_equal(k->prefix, "virtio-balloon");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_inflate_gives_back), T(test_inflate_outside_ram),
	    T(test_inflate_bad_chains), T(test_stats),
	    T(test_stats_bad),		T(test_reporting),
	    T(test_features_not_taken), T(test_config_update),
	    T(test_spec_and_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
