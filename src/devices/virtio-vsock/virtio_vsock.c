// SPDX-License-Identifier: Apache-2.0
#include "devices/virtio-vsock/virtio_vsock.h"

#include <endian.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "core/sandbox.h"
#include "core/thread.h"

#define VSOCK_QSIZE 256 /* Firecracker's */

static struct virtio_vsock *vsock_of(struct virtio_dev *vdev)
{
	return vdev->priv;
}

/* ---- running the queues ---- */

/* Queue work runs on the device's thread only: its sandbox has the
 * socket calls, an I/O thread's or a vCPU's has not. A kick elsewhere
 * wakes it. Before the thread runs (tests), work runs where it is asked. */
static bool on_own_thread(const struct virtio_vsock *v)
{
	return !v->running || pthread_equal(pthread_self(), v->thread);
}

static void vsock_wake(struct virtio_vsock *v)
{
	uint64_t one = 1;
	if (write(v->wake_fd, &one, sizeof(one)) < 0)
		counter_add(&v->stats.conn_event_fails, 1);
}

/* Closes the host ends resets dropped (vsock_reset: a vCPU may not
 * close). Before any work that may open streams: a reset adds the fds of
 * the streams open then, so with this before every opening the list never
 * holds more than VSOCK_MAX_CONNS, however often the guest resets. */
static void vsock_close_dead(struct virtio_vsock *v)
{
	while (v->nr_dead)
		close(v->dead[--v->nr_dead]);
}

static void vsock_run(struct virtio_vsock *v)
{
	vsock_close_dead(v);
	vsock_tx_run(v);
	vsock_rx_run(v);
}

/* One turn: what epfd has within timeout ms (-1: until something). The
 * events are taken here, once: the streams are edge-triggered. */
static void vsock_serve(struct virtio_vsock *v, int timeout)
{
	struct epoll_event evs[VSOCK_EVENTS_MAX];
	int n = epoll_wait(v->epfd, evs, VSOCK_EVENTS_MAX, timeout);
	pthread_mutex_lock(&v->mu);
	/* Held (a snapshot's or a switch's write, virtio_vsock_hold): the
	 * events taken wait here, and nothing touches the guest. */
	while (v->held && !atomic_load(&v->stop))
		pthread_cond_wait(&v->held_cv, &v->mu);
	vsock_close_dead(v);
	v->woken = false;
	vsock_host_events(v, evs, n > 0 ? n : 0);
	if (v->woken)
		vsock_tx_run(v);
	vsock_rx_run(v);
	vsock_evq_run(v); /* a failed migration's take-back owes a reset */
	pthread_mutex_unlock(&v->mu);
}

void virtio_vsock_poll(struct virtio_dev *vdev)
{
	vsock_serve(vsock_of(vdev), 0);
}

int virtio_vsock_epoll_fd(struct virtio_dev *vdev)
{
	return vsock_of(vdev)->epfd;
}

/* ---- virtio_dev_ops ---- */

void virtio_vsock_config_cid(uint64_t cid, uint32_t offset, void *buf, uint32_t len)
{
	uint64_t le = htole64(cid); /* struct virtio_vsock_config */
	memset(buf, 0, len);
	if (offset < sizeof(le))
		memcpy(buf, (uint8_t *)&le + offset,
		       len < sizeof(le) - offset ? len : sizeof(le) - offset);
}

static void vsock_config_read(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len)
{
	virtio_vsock_config_cid(vsock_of(vdev)->cid, offset, buf, len);
}

static void vsock_config_write(struct virtio_dev *vdev, uint32_t offset, const void *buf,
			       uint32_t len)
{
	(void)vdev, (void)offset, (void)buf, (void)len; /* read-only */
}

static int vsock_activate(struct virtio_dev *vdev)
{
	struct virtio_vsock *v = vsock_of(vdev);
	pthread_mutex_lock(&v->mu);
	v->active = true;
	vsock_evq_run(v); /* after a restore: the guest drops its streams */
	if (on_own_thread(v))
		vsock_run(v);
	else
		vsock_wake(v); /* buffers and host peers that came before DRIVER_OK */
	pthread_mutex_unlock(&v->mu);
	return 0;
}

/* The guest forgot its streams: so do we. The host ends are closed by
 * the I/O thread (a vCPU may not close), which ignores their events from
 * now on (the slots' generations moved). */
static void vsock_reset(struct virtio_dev *vdev)
{
	struct virtio_vsock *v = vsock_of(vdev);
	pthread_mutex_lock(&v->mu);
	v->active = false;
	v->reset_owed = false; /* a driver that starts again has no streams */
	for (unsigned int i = 0; i < v->hw; i++) {
		struct vsock_conn *c = &v->conns[i];
		if (c->state == VS_FREE)
			continue;
		if (c->fd >= 0)
			v->dead[v->nr_dead++] = c->fd;
		c->fd = -1;
		vsock_conn_close(v, c, false);
	}
	v->nr_orphans = 0;
	v->hw = 0;
	if (v->nr_dead)
		vsock_wake(v);
	pthread_mutex_unlock(&v->mu);
}

static void vsock_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_vsock *v = vsock_of(vdev);
	if (q == VSOCK_EVQ) {
		/* Its buffers wait for a TRANSPORT_RESET, owed only after a
		 * restore (virtio_vsock_snap.c). */
		pthread_mutex_lock(&v->mu);
		vsock_evq_run(v);
		pthread_mutex_unlock(&v->mu);
		return;
	}
	counter_add(
	    q == VSOCK_RXQ ? &v->stats.rx_queue_event_count : &v->stats.tx_queue_event_count, 1);
	pthread_mutex_lock(&v->mu);
	if (on_own_thread(v))
		vsock_run(v);
	else
		vsock_wake(v);
	pthread_mutex_unlock(&v->mu);
}

static const struct virtio_dev_ops vsock_ops = {
    .config_read = vsock_config_read,
    .config_write = vsock_config_write,
    .activate = vsock_activate,
    .reset = vsock_reset,
    .queue_notify = vsock_queue_notify,
};

/* ---- creation and the device kind ---- */

struct virtio_dev *virtio_vsock_create(const char *name, const struct vsock_spec *s, char *err,
				       size_t errlen)
{
	struct virtio_vsock *v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->cid = s->cid;
	snprintf(v->uds, sizeof(v->uds), "%s", s->uds);
	v->next_port = VSOCK_LOCAL_PORT;
	v->listen_fd = -1;
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++)
		v->conns[i].fd = -1;
	struct virtio_dev *vdev = &v->vdev;
	vdev->name = v->name;
	vdev->device_id = VIRTIO_ID_VSOCK;
	vdev->host_features = 0; /* STREAM only: no SEQPACKET */
	vdev->config_len = sizeof(struct virtio_vsock_config);
	vdev->num_queues = VSOCK_NR_QUEUES;
	vdev->msix_vectors = VSOCK_MSIX_VECTORS;
	vdev->queue_max_size = VSOCK_QSIZE;
	vdev->ops = &vsock_ops;
	vdev->priv = v;
	for (unsigned int q = 0; q < VSOCK_NR_QUEUES; q++)
		vdev->queue_lock[q] = &v->mu;
	poll_policy_default(&vdev->poll);
	pthread_mutex_init(&vdev->lock, NULL);
	pthread_mutex_init(&v->mu, NULL);
	pthread_cond_init(&v->held_cv, NULL);
	v->epfd = epoll_create1(EPOLL_CLOEXEC);
	v->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = VSOCK_EV_WAKE};
	if (v->epfd < 0 || v->wake_fd < 0 ||
	    epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->wake_fd, &ev) < 0) {
		snprintf(err, errlen, "vsock: cannot make its event fds: %s", strerror(errno));
		virtio_vsock_destroy(vdev);
		return NULL;
	}
	if (vsock_host_listen(v, err, errlen) < 0) {
		virtio_vsock_destroy(vdev);
		return NULL;
	}
	return vdev;
}

void virtio_vsock_destroy(struct virtio_dev *vdev)
{
	struct virtio_vsock *v = vsock_of(vdev);
	vsock_conn_reset_all(v);
	vsock_close_dead(v);
	if (v->listen_fd >= 0)
		close(v->listen_fd);
	if (v->wake_fd >= 0)
		close(v->wake_fd);
	if (v->epfd >= 0)
		close(v->epfd);
	pthread_cond_destroy(&v->held_cv);
	pthread_mutex_destroy(&v->mu);
	pthread_mutex_destroy(&vdev->lock);
	free(v);
}

void virtio_vsock_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx)
{
#define F(n)                                                                                       \
	{                                                                                          \
#n, offsetof(struct virtio_vsock_stats, n)                                         \
	}
	static const struct counter_field c[] = {
	    F(rx_queue_event_count), F(tx_queue_event_count),
	    F(rx_packets_count),     F(tx_packets_count),
	    F(rx_bytes_count),	     F(tx_bytes_count),
	    F(conns_added),	     F(conns_killed),
	    F(conns_removed),	     F(conn_event_fails),
	    F(tx_flush_fails),	     F(rx_read_fails),
	    F(killq_resync),	     F(bad_packets),
	    F(credit_lies),	     F(refused),
	    F(host_bad_lines),
	};
#undef F
	const struct virtio_vsock *v = vsock_of(vdev);
	counter_emit_fields(emit, ctx, v->name, &v->stats, c, sizeof(c) / sizeof(c[0]));
}

static void *vsock_thread(void *arg)
{
	struct virtio_dev *vdev = arg;
	struct virtio_vsock *v = vsock_of(vdev);
	thread_name_self("vsock");
	sandbox_enter_or_die(SANDBOX_DEVICE);
	while (!atomic_load(&v->stop))
		vsock_serve(v, -1);
	return NULL;
}

/* The device's thread is the one that moves data from the host's
 * sockets into guest memory while the VM is paused: a snapshot's or a
 * switch's write holds it (dev_ops.hold), as it parks the I/O threads.
 * Once this returns with on, the thread is outside the lock and waits
 * at its next turn. */
void virtio_vsock_hold(void *dev, bool on)
{
	struct virtio_vsock *v = vsock_of(dev);
	pthread_mutex_lock(&v->mu);
	v->held = on;
	if (!on)
		pthread_cond_broadcast(&v->held_cv);
	pthread_mutex_unlock(&v->mu);
}

/* Created by the main thread before any filter is in (core/sandbox.h). */
static int vsock_dev_start(void *dev, char *err, size_t errlen)
{
	struct virtio_vsock *v = vsock_of(dev);
	int e = pthread_create(&v->thread, NULL, vsock_thread, dev);
	if (e) {
		snprintf(err, errlen, "cannot start the vsock thread: %s", strerror(e));
		return -1;
	}
	v->running = true;
	return 0;
}

/* The I/O threads and the vCPUs have stopped: nothing kicks the queues. */
static void vsock_dev_stop(void *dev)
{
	struct virtio_vsock *v = vsock_of(dev);
	if (!v->running)
		return;
	atomic_store(&v->stop, true);
	vsock_wake(v);
	virtio_vsock_hold(dev, false); /* a held thread too */
	pthread_join(v->thread, NULL);
	v->running = false;
}

static void vsock_dev_destroy(void *dev)
{
	virtio_vsock_destroy(dev);
}

static void vsock_dev_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	virtio_vsock_counters(dev, emit, ctx);
}

static const struct dev_ops vsock_dev_ops = {
    .start = vsock_dev_start,
    .stop = vsock_dev_stop,
    .destroy = vsock_dev_destroy,
    .counters = vsock_dev_counters,
    .save = virtio_vsock_save,
    .restore = virtio_vsock_restore,
    .handover = virtio_vsock_handover,
    .hold = virtio_vsock_hold,
};

int virtio_vsock_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			    char *err, size_t errlen)
{
	const struct vsock_spec *s = spec;
	const struct dev_ops *ops = &vsock_dev_ops;
	if (ctx->index > 0) {
		snprintf(err, errlen, "a VM has one vsock device");
		return -1;
	}
	struct virtio_dev *vdev =
	    s->backend == VSOCK_BACKEND_VHOST
		? virtio_vsock_vhost_create(ctx->name, s, "/dev/vhost-vsock", &ops, err, errlen)
		: virtio_vsock_create(ctx->name, s, err, errlen);
	if (!vdev)
		return -1;
	*out = (struct device){.dev = vdev, .ops = ops, .vdev = vdev};
	return 0;
}
