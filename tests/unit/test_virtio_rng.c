// SPDX-License-Identifier: Apache-2.0
/* Unit tests for virtio-rng (src/devices/virtio-rng/virtio_rng.c): the test plays the
 * guest driver on a fake guest RAM and the transport (a notify_queue and a
 * queue_resched that count), drives chains through a real virtqueue, and
 * stands in for getrandom where it must fail, stop short or be seen. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cli/opts.h"
#include "devices/virtio-rng/virtio_rng.h"
#include "devices/virtio-rng/virtio_rng_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"
#include "vmm/devmgr.h"

#define RAM_SIZE  (4u << 20)
#define QSZ	  256
#define DESC_GPA  0x1000
#define AVAIL_GPA 0x2000
#define USED_GPA  0x3000
#define DATA_GPA  0x10000 /* buffers from here; 3 MiB of room */
#define BIG_LEN	  (1u << 20)

struct fx {
	struct fake_mem fm;
	struct virtio_dev *vdev;
	uint16_t avail_idx, next_desc;
	int notified, rescheds, resched_ret, broken;
};

/* ---- the host source the tests control ---- */

static struct {
	int calls;
	int eintr;	 /* fail this many calls with EINTR first */
	size_t short_to; /* give at most this much per call (0: all) */
	int fail_after;	 /* from this call on, EAGAIN (0: never) */
	unsigned int flags;
} src;

static ssize_t fake_source(void *buf, size_t len, unsigned int flags)
{
	src.calls++;
	src.flags = flags;
	if (src.fail_after && src.calls >= src.fail_after) {
		errno = EAGAIN;
		return -1;
	}
	if (src.eintr > 0) {
		src.eintr--;
		errno = EINTR;
		return -1;
	}
	size_t n = src.short_to && len > src.short_to ? src.short_to : len;
	memset(buf, 0xA5, n);
	return (ssize_t)n;
}

/* ---- the transport ---- */

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	assert_int_equal(q, 0);
	((struct fx *)vdev->transport_data)->notified++;
}

static int fake_queue_resched(struct virtio_dev *vdev, unsigned int q)
{
	struct fx *f = vdev->transport_data;
	assert_int_equal(q, 0);
	f->rescheds++;
	return f->resched_ret;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
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
	bool w;
};

/* Writes a chain at the next free descriptors and makes it available. */
static uint16_t guest_add(struct fx *f, const struct seg *s, unsigned int n)
{
	uint16_t first = f->next_desc;
	for (unsigned int i = 0; i < n; i++) {
		uint16_t d = (uint16_t)((first + i) % QSZ);
		struct virtq_desc desc = {.addr = s[i].gpa,
					  .len = s[i].len,
					  .flags = (uint16_t)((s[i].w ? VIRTQ_DESC_F_WRITE : 0) |
							      (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0)),
					  .next = (uint16_t)((d + 1) % QSZ)};
		memcpy(fake_mem_at(&f->fm, DESC_GPA + 16 * (uint64_t)d), &desc, sizeof(desc));
	}
	f->next_desc = (uint16_t)((first + n) % QSZ);
	uint16_t *ring = fake_mem_at(&f->fm, AVAIL_GPA);
	ring[2 + (f->avail_idx % QSZ)] = first;
	__atomic_store_n(&ring[1], ++f->avail_idx, __ATOMIC_RELEASE);
	return first;
}

static uint16_t used_idx(struct fx *f)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(&f->fm, USED_GPA + 2), __ATOMIC_ACQUIRE);
}

static struct virtq_used_elem used(struct fx *f, uint16_t i)
{
	struct virtq_used_elem e;
	memcpy(&e, fake_mem_at(&f->fm, USED_GPA + 4 + 8 * (uint64_t)(i % QSZ)), sizeof(e));
	return e;
}

static void kick(struct fx *f)
{
	f->vdev->ops->queue_notify(f->vdev, 0);
}

/* Posts one chain, kicks, and returns its used length. */
static uint32_t request(struct fx *f, const struct seg *s, unsigned int n)
{
	uint16_t before = used_idx(f);
	uint16_t head = guest_add(f, s, n);
	kick(f);
	assert_int_equal(used_idx(f), (uint16_t)(before + 1));
	struct virtq_used_elem e = used(f, before);
	assert_int_equal(e.id, head);
	return e.len;
}

static uint64_t counter(struct fx *f, const char *what);

static void dev_open(struct fx *f, const char *spec)
{
	struct rng_spec s;
	char err[256] = "";
	rng_spec_init(&s);
	assert_int_equal(opt_parse_spec(&rng_spec_table, spec, &s, err, sizeof(err)), 0);
	f->vdev = virtio_rng_create("virtio-rng0", &s, err, sizeof(err));
	assert_non_null(f->vdev);
	struct virtio_dev *v = f->vdev;
	assert_int_equal(v->device_id, 4); /* virtio 1.2 §5.4.1 */
	assert_int_equal(v->num_queues, 1);
	assert_int_equal(v->config_len, 0);
	v->gm = &f->fm.gm;
	v->transport = &fake_transport;
	v->transport_data = f;
	struct virtq *vq = &v->vqs[0];
	assert_int_equal(virtq_init(vq, "virtio-rng0 q0", v->queue_max_size, on_broken, f), 0);
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
	memset(&src, 0, sizeof(src));
	f->resched_ret = -1; /* a trapped kick unless a test says otherwise */
	*state = f;
	return 0;
}

static int setup_dev(void **state)
{
	if (setup(state))
		return -1;
	dev_open(*state, "");
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->vdev)
		virtio_rng_destroy(f->vdev);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

static void fake_src(struct fx *f)
{
	((struct virtio_rng *)f->vdev->priv)->source = fake_source;
}

struct found {
	const char *what;
	uint64_t value;
	int seen;
};

static void find_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct found *c = ctx;
	assert_string_equal(owner, "virtio-rng0");
	if (!strcmp(what, c->what)) {
		c->value = value;
		c->seen++;
	}
}

static uint64_t counter(struct fx *f, const char *what)
{
	struct found c = {.what = what};
	virtio_rng_counters(f->vdev, find_emit, &c);
	assert_int_equal(c.seen, 1);
	return c.value;
}

/* ---- tests ---- */

/* Real getrandom bytes, the length asked for, an interrupt, counters. */
static void test_fill(void **state)
{
	struct fx *f = *state;
	uint8_t *a = fake_mem_at(&f->fm, DATA_GPA), *b = fake_mem_at(&f->fm, DATA_GPA + 64);
	assert_int_equal(request(f, &(struct seg){DATA_GPA, 64, true}, 1), 64);
	assert_int_equal(request(f, &(struct seg){DATA_GPA + 64, 64, true}, 1), 64);
	static const uint8_t zero[64];
	assert_memory_not_equal(a, zero, 64);
	assert_memory_not_equal(a, b, 64);
	assert_int_equal(f->notified, 2);
	assert_int_equal(counter(f, "requests"), 2);
	assert_int_equal(counter(f, "bytes"), 128);
	assert_int_equal(counter(f, "kicks"), 2);
	assert_int_equal(counter(f, "bad requests"), 0);
}

/* A chain in pieces is filled across them; nothing past them is
 * touched; getrandom never blocks. */
static void test_scattered(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	uint8_t *m = fake_mem_at(&f->fm, DATA_GPA);
	memset(m, 0, 0x3000);
	struct seg s[3] = {
	    {DATA_GPA, 10, true}, {DATA_GPA + 0x1000, 1, true}, {DATA_GPA + 0x2000, 100, true}};
	assert_int_equal(request(f, s, 3), 111);
	for (int i = 0; i < 3; i++) {
		uint8_t *p = fake_mem_at(&f->fm, s[i].gpa);
		for (uint32_t k = 0; k < s[i].len; k++)
			assert_int_equal(p[k], 0xA5);
		assert_int_equal(p[s[i].len], 0);
	}
	assert_true(src.flags & GRND_NONBLOCK);
}

/* A device-readable buffer: 0 bytes, counted, nothing written, and the
 * queue goes on (Firecracker's answer). */
static void test_readable_refused(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	uint8_t *w = fake_mem_at(&f->fm, DATA_GPA + 0x1000);
	memset(w, 0x11, 64);
	struct seg s[2] = {{DATA_GPA, 16, false}, {DATA_GPA + 0x1000, 64, true}};
	assert_int_equal(request(f, s, 2), 0);
	assert_int_equal(request(f, s, 1), 0); /* readable alone */
	for (int k = 0; k < 64; k++)
		assert_int_equal(w[k], 0x11);
	assert_int_equal(src.calls, 0);
	assert_int_equal(counter(f, "bad requests"), 2);
	assert_int_equal(counter(f, "requests"), 2);
	assert_int_equal(f->broken, 0);
	assert_int_equal(request(f, &s[1], 1), 64); /* still serving */
}

/* Zero length: 0 bytes, not an error, no host call. */
static void test_zero_length(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	assert_int_equal(request(f, &(struct seg){DATA_GPA, 0, true}, 1), 0);
	assert_int_equal(src.calls, 0);
	assert_int_equal(counter(f, "bad requests"), 0);
	assert_int_equal(counter(f, "host rng fails"), 0);
	assert_int_equal(f->broken, 0);
}

/* A 1 MiB buffer gets RNG_REQ_MAX bytes, and not one more. */
static void test_huge_capped(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	uint8_t *m = fake_mem_at(&f->fm, DATA_GPA);
	memset(m, 0, BIG_LEN);
	assert_int_equal(request(f, &(struct seg){DATA_GPA, BIG_LEN, true}, 1), RNG_REQ_MAX);
	assert_int_equal(m[RNG_REQ_MAX - 1], 0xA5);
	assert_int_equal(m[RNG_REQ_MAX], 0);
	assert_int_equal(counter(f, "bytes"), RNG_REQ_MAX);
}

/* A buffer outside guest RAM breaks the ring (virtq_pop's check): no
 * host memory is written, no completion. */
static void test_outside_ram(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	guest_add(f, &(struct seg){RAM_SIZE - 8, 64, true}, 1);
	kick(f);
	assert_int_equal(used_idx(f), 0);
	assert_int_equal(f->broken, 1);
	assert_int_equal(src.calls, 0);
	kick(f); /* broken: nothing more, no crash */
	assert_int_equal(used_idx(f), 0);
}

/* getrandom interrupted, then short: retried until full. */
static void test_source_eintr_short(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	src.eintr = 2;
	src.short_to = 100;
	assert_int_equal(request(f, &(struct seg){DATA_GPA, 300, true}, 1), 300);
	assert_int_equal(src.calls, 5); /* 2 EINTR, 3 short reads */
	assert_int_equal(counter(f, "host rng fails"), 0);
}

/* The host pool gives nothing (EAGAIN): 0 bytes and counted, never a
 * wait; what it gave before failing is given. */
static void test_source_fails(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	src.fail_after = 1;
	assert_int_equal(request(f, &(struct seg){DATA_GPA, 64, true}, 1), 0);
	assert_int_equal(counter(f, "host rng fails"), 1);
	assert_int_equal(src.calls, 1);
	memset(&src, 0, sizeof(src));
	src.short_to = 16;
	src.fail_after = 3;
	assert_int_equal(request(f, &(struct seg){DATA_GPA, 64, true}, 1), 32);
	assert_int_equal(counter(f, "host rng fails"), 1);
	/* Always EINTR: bounded tries, then nothing. */
	memset(&src, 0, sizeof(src));
	src.eintr = 1000;
	assert_int_equal(request(f, &(struct seg){DATA_GPA, 64, true}, 1), 0);
	assert_true(src.calls <= 8);
	assert_int_equal(counter(f, "host rng fails"), 2);
}

/* A full ring: a run answers RNG_POP_BUDGET chains, then asks the
 * transport to come back; the next run takes the rest. */
static void test_budget_requests(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	f->resched_ret = 0;
	for (int i = 0; i < 100; i++)
		guest_add(f, &(struct seg){DATA_GPA + 64 * (uint64_t)i, 64, true}, 1);
	kick(f);
	assert_int_equal(used_idx(f), RNG_POP_BUDGET);
	assert_int_equal(f->rescheds, 1);
	kick(f);
	assert_int_equal(used_idx(f), 100);
	assert_int_equal(f->rescheds, 1);
}

/* Bytes bound a run too: RNG_RUN_BYTES, then the transport comes back.
 * A trapped kick (no resched) goes on. */
static void test_budget_bytes(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	f->resched_ret = 0;
	unsigned int per_run = RNG_RUN_BYTES / RNG_REQ_MAX;
	for (unsigned int i = 0; i < per_run + 2; i++)
		guest_add(f, &(struct seg){DATA_GPA + (uint64_t)RNG_REQ_MAX * i, RNG_REQ_MAX, true},
			  1);
	kick(f);
	assert_int_equal(used_idx(f), per_run);
	assert_int_equal(f->rescheds, 1);
	f->resched_ret = -1;
	kick(f);
	assert_int_equal(used_idx(f), per_run + 2);
}

static uint64_t fake_now;
static uint64_t fake_clock(void)
{
	return fake_now;
}

/* ops=1 per second: the second request waits in the ring for the
 * limiter's timer, then is answered. */
static void test_rate_limited(void **state)
{
	struct fx *f = *state;
	dev_open(f, "ops=1:1000");
	fake_src(f);
	struct virtio_rng *r = f->vdev->priv;
	fake_now = 1000000000ull;
	r->throttle.clock_ns = fake_clock;
	throttle_update(&r->throttle, &(struct ratelimit_cfg){.b[RL_OPS] = {1, 0, 1000}},
			1u << RL_OPS);
	guest_add(f, &(struct seg){DATA_GPA, 64, true}, 1);
	guest_add(f, &(struct seg){DATA_GPA + 64, 64, true}, 1);
	kick(f);
	assert_int_equal(used_idx(f), 1);
	assert_int_equal(counter(f, "rate limiter throttled"), 1);
	assert_true(f->vdev->ops->queue_throttled(f->vdev, 0));
	kick(f); /* still waiting: nothing */
	assert_int_equal(used_idx(f), 1);
	fake_now += 1000000000ull;
	throttle_event(&r->throttle, 0);
	assert_int_equal(used_idx(f), 2);
	assert_int_equal(counter(f, "rate limiter events"), 1);
	assert_false(f->vdev->ops->queue_throttled(f->vdev, 0));
}

/* bw=100 bytes a second: 64 pass, the next 64 wait. */
static void test_rate_limited_bytes(void **state)
{
	struct fx *f = *state;
	dev_open(f, "rate=100:1000");
	fake_src(f);
	struct virtio_rng *r = f->vdev->priv;
	fake_now = 1000000000ull;
	r->throttle.clock_ns = fake_clock;
	throttle_update(&r->throttle, &(struct ratelimit_cfg){.b[RL_BYTES] = {100, 0, 1000}},
			1u << RL_BYTES);
	guest_add(f, &(struct seg){DATA_GPA, 64, true}, 1);
	guest_add(f, &(struct seg){DATA_GPA + 64, 64, true}, 1);
	kick(f);
	assert_int_equal(used_idx(f), 1);
	assert_int_equal(counter(f, "bytes"), 64);
}

/* After a reset the device touches the queue no more. */
static void test_reset(void **state)
{
	struct fx *f = *state;
	fake_src(f);
	f->vdev->ops->reset(f->vdev);
	guest_add(f, &(struct seg){DATA_GPA, 64, true}, 1);
	kick(f);
	assert_int_equal(used_idx(f), 0);
	assert_int_equal(src.calls, 0);
	/* Chains posted before DRIVER_OK are answered at activation. */
	assert_int_equal(f->vdev->ops->activate(f->vdev), 0);
	assert_int_equal(used_idx(f), 1);
}

/* The option table, the kind and the command line. */
static void test_spec_and_kind(void **state)
{
	(void)state;
	char err[300];
	assert_int_equal(devmgr_check("rng", "", true, err, sizeof(err)), 0);
	assert_int_equal(devmgr_check("rng", "bw=1000:100,ops=10:1000", true, err, sizeof(err)), 0);
	assert_int_equal(devmgr_check("rng", "rate=1000:100:50", true, err, sizeof(err)), 0);
	assert_int_equal(devmgr_check("rng", "speed=1", true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--rng speed=1: unknown rng option 'speed'"));
	assert_int_equal(devmgr_check("rng", "bw=fast", true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bw=fast"));
	/* One per VM. */
	struct rng_spec s;
	rng_spec_init(&s);
	struct dev_ctx ctx = {.name = "virtio-rng1", .index = 1};
	struct device d;
	assert_int_equal(virtio_rng_new_device(&ctx, &s, &d, err, sizeof(err)), -1);
	assert_string_equal(err, "a VM has one entropy device");
	ctx = (struct dev_ctx){.name = "virtio-rng0", .index = 0};
	assert_int_equal(virtio_rng_new_device(&ctx, &s, &d, err, sizeof(err)), 0);
	assert_ptr_equal(d.dev, d.vdev);
	d.ops->stop(d.dev);
	d.ops->destroy(d.dev);
}

/* `--rng` alone, before another option and last; with a value. */
static void test_cli(void **state)
{
	(void)state;
	static struct run_opts o;
	char err[300];
	char *a1[] = {"run", "--rng", "--kernel", "k"};
	assert_int_equal(run_opts_parse(4, a1, &o, err, sizeof(err)), 0);
	assert_int_equal(o.vm.nr_devs, 1);
	assert_string_equal(o.vm.devs[0].option, "rng");
	assert_string_equal(o.vm.devs[0].spec, "");
	assert_string_equal(o.vm.kernel, "k");
	char *a2[] = {"run", "--kernel", "k", "--rng"};
	assert_int_equal(run_opts_parse(4, a2, &o, err, sizeof(err)), 0);
	assert_int_equal(o.vm.nr_devs, 1);
	assert_string_equal(o.vm.devs[0].spec, "");
	char *a3[] = {"run", "--kernel", "k", "--rng", "ops=5:100"};
	assert_int_equal(run_opts_parse(5, a3, &o, err, sizeof(err)), 0);
	assert_string_equal(o.vm.devs[0].spec, "ops=5:100");
	/* Other device options still need their value. */
	char *a4[] = {"run", "--kernel", "k", "--disk"};
	assert_int_equal(run_opts_parse(4, a4, &o, err, sizeof(err)), -1);
	assert_string_equal(err, "option '--disk' needs a value");
}

int main(void)
{
#define T(fn)  cmocka_unit_test_setup_teardown(fn, setup_dev, teardown)
#define T0(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_fill),
	    T(test_scattered),
	    T(test_readable_refused),
	    T(test_zero_length),
	    T(test_huge_capped),
	    T(test_outside_ram),
	    T(test_source_eintr_short),
	    T(test_source_fails),
	    T(test_budget_requests),
	    T(test_budget_bytes),
	    T0(test_rate_limited),
	    T0(test_rate_limited_bytes),
	    T(test_reset),
	    T0(test_spec_and_kind),
	    T0(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
