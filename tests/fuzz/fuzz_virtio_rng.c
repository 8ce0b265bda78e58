// SPDX-License-Identifier: Apache-2.0
/* virtio-rng (src/devices/virtio-rng/virtio_rng.c): fuzz bytes build chains (direct
 * or indirect, readable, empty, huge), kick, reset, and decide what the
 * host source does each call (fills, stops short, EINTR, EAGAIN); one
 * device unlimited, one behind a rate limiter whose clock never moves (so
 * it runs dry and waits, deterministically). Guest RAM changes under the
 * device (fuzz_common.h). Checked after each kick: no chain got more
 * bytes than it offered or than RNG_REQ_MAX, a refused chain (readable
 * buffers) got none, and a run stayed within its budget. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "devices/virtio-rng/virtio_rng.h"
#include "devices/virtio-rng/virtio_rng_priv.h"
#include "fuzz_common.h"
#include "virtio/virtio_dev.h"

static struct virtio_dev *devs[2]; /* unlimited, rate-limited */
static struct ratelimit_cfg limits[2];
static uint64_t popped, allowed; /* chains popped and the bytes they may get */

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

/* The I/O thread would run the queue again later: it is the next kick. */
static int fake_queue_resched(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
	return 0;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_resched = fake_queue_resched,
};

static ssize_t fake_source(void *buf, size_t len, unsigned int flags)
{
	FZ_CHECK(flags & GRND_NONBLOCK);
	uint8_t how = fz_u8();
	switch (how % 4) {
	case 0:
		errno = EINTR;
		return -1;
	case 1:
		errno = EAGAIN;
		return -1;
	case 2:
		len = len < 1u + how ? len : 1u + how; /* short */
		break;
	}
	memset(buf, 0x5A, len);
	return (ssize_t)len;
}

static void on_pop(const struct virtq *vq, const struct virtq_elem *e)
{
	(void)vq;
	for (unsigned int i = 0; i < e->out_num + e->in_num; i++)
		FZ_CHECK(fz_in_ram(e->iov[i].iov_base, e->iov[i].iov_len));
	popped++;
	if (!e->out_num)
		allowed += e->in_len < RNG_REQ_MAX ? e->in_len : RNG_REQ_MAX;
}

static uint64_t fake_now(void)
{
	return 1000000000ull;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char err[200];
	struct rng_spec s;
	for (int i = 0; i < 2; i++) {
		rng_spec_init(&s);
		if (i && opt_parse_spec(&rng_spec_table, "bw=300:1000,ops=5:1000", &s, err,
					sizeof(err)) < 0)
			abort();
		limits[i] = s.rl;
		devs[i] =
		    virtio_rng_create(i ? "virtio-rng1" : "virtio-rng0", &s, err, sizeof(err));
		if (!devs[i])
			abort();
		devs[i]->transport = &fake_transport;
		devs[i]->gm = &fz_gm;
		struct virtio_rng *r = devs[i]->priv;
		r->source = fake_source;
		r->throttle.clock_ns = fake_now;
	}
	fz_on_pop = on_pop;
	return 0;
}

static void kick(struct virtio_dev *v)
{
	struct virtio_rng *r = v->priv;
	uint64_t bytes = counter_get(&r->stats.bytes), pops = popped;
	v->ops->queue_notify(v, 0);
	uint64_t got = counter_get(&r->stats.bytes) - bytes;
	FZ_CHECK(got <= RNG_RUN_BYTES);
	FZ_CHECK(popped - pops <= RNG_POP_BUDGET);
	FZ_CHECK(counter_get(&r->stats.bytes) <= allowed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int which = size && data[size - 1] & 1;
	struct virtio_dev *v = devs[which];
	struct virtio_rng *r = v->priv;
	struct virtq *vq = &v->vqs[0];
	struct fz_q g;
	bool active = false;

	fz_begin(data, size);
	/* Each input from a full limiter and zero counts. */
	throttle_event(&r->throttle, 0);
	throttle_update(&r->throttle, &limits[which], (1u << RL_NR) - 1);
	memset(&r->stats, 0, sizeof(r->stats));
	popped = allowed = 0;
	v->driver_features = (1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTQ_F_INDIRECT_DESC |
			      1ULL << VIRTQ_F_EVENT_IDX) &
			     ~((uint64_t)fz_u8() << 28);
	if (virtio_dev_init_queues(v) < 0)
		abort();
	fzq_layout(&g, 0, (uint16_t)(1u << (fz_u8() % 9))); /* 1..256 */
	for (unsigned int steps = 0; fz_more() && steps < 1024; steps++) {
		uint8_t op = fz_u8();
		switch (op % 8) {
		case 0: /* DRIVER_OK, as the transport does it */
			if (active)
				break;
			fzq_configure(vq, &g, v->driver_features);
			if (virtq_activate(vq, &fz_gm) == 0 && v->ops->activate(v) == 0)
				active = true;
			break;
		case 1:
		case 2:
			kick(v);
			break;
		case 3: /* reset, as the transport does it */
			v->ops->reset(v);
			virtq_reset(vq);
			g.avail_idx = 0;
			active = false;
			break;
		case 4: { /* no configuration space: reads give zeroes */
			uint8_t buf[8];
			memset(buf, 0xFF, sizeof(buf));
			v->ops->config_read(v, fz_u8(), buf, 1 + fz_u8() % 8);
			FZ_CHECK(!buf[0]);
			break;
		}
		default:
			fzq_driver_op(&g, fz_u8());
		}
	}
	FZ_CHECK(counter_get(&r->stats.requests) <= popped);
	v->ops->reset(v);
	virtq_reset(vq);
	return 0;
}
