// SPDX-License-Identifier: Apache-2.0
/* virtio-rng's state, for its own files and its tests. */
#ifndef SKIFF_VIRTIO_RNG_PRIV_H
#define SKIFF_VIRTIO_RNG_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/counter.h"
#include "devices/throttle.h"
#include "devices/virtio-rng/virtio_rng.h"
#include "virtio/virtio_dev.h"

/* Relaxed atomics: bumped under mu, read by stats from any thread. */
struct virtio_rng_stats {
	counter_t kicks;
	counter_t requests; /* answered, Firecracker's entropy_event_count */
	counter_t bytes;
	counter_t bad;	      /* a device-readable buffer in the chain */
	counter_t host_fails; /* getrandom gave nothing */
	counter_t throttled;  /* waits begun by the rate limiter */
	counter_t rl_events;  /* its timer fired */
};

struct virtio_rng {
	struct virtio_dev vdev;
	char name[24];
	pthread_mutex_t mu; /* the queue, active, deferred, elem, buf */
	bool active;	    /* DRIVER_OK and not reset */
	bool deferred;	    /* the timer is armed for the rest of a run */
	struct throttle throttle;
	struct iothread *io;
	/* getrandom, or a test's stand-in. */
	ssize_t (*source)(void *buf, size_t len, unsigned int flags);
	struct virtio_rng_stats stats;
	struct virtq_elem elem;
	uint8_t buf[RNG_REQ_MAX];
};

#endif
