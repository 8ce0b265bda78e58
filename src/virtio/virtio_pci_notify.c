// SPDX-License-Identifier: Apache-2.0
/* virtio-pci notifications both ways: queue kicks from the driver
 * (trapped notify writes or ioeventfds polled by the I/O thread) and
 * interrupts to the driver (MSI-X vectors, or the ISR with INTx). */
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "pci/pci_msix.h"
#include <stddef.h>

#include "core/counter.h"
#include "virtio/virtio_pci_impl.h"

/* Queue work from outside the vCPU threads (a kick, a poller) starts here
 * unless a reset is stopping the device. The counter lets vp_reset wait for
 * work that already passed the check: it then resets the rings, which that
 * work reads. Returns false if the queue is not live. */
static bool vp_work_enter(struct virtio_pci *vp, unsigned int q)
{
	atomic_fetch_add(&vp->kicks_inflight, 1);
	if (atomic_load(&vp->live) && atomic_load(&vp->q[q].live))
		return true;
	atomic_fetch_sub(&vp->kicks_inflight, 1);
	return false;
}

static void vp_work_exit(struct virtio_pci *vp)
{
	atomic_fetch_sub(&vp->kicks_inflight, 1);
}

static void vp_kick(struct virtio_pci *vp, unsigned int q)
{
	if (!vp_work_enter(vp, q))
		return;
	vp->vdev->ops->queue_notify(vp->vdev, q);
	vp_work_exit(vp);
}

/* I/O thread: the queue's ioeventfd fired. */
void vp_kick_ready(void *opaque, uint32_t events)
{
	struct virtio_pci_queue *q = opaque;
	uint64_t n;
	(void)events;
	/* A kick already in this epoll batch when vhost took the queue is
	 * vhost's to read. */
	if (__atomic_load_n(&q->handed_off, __ATOMIC_ACQUIRE) ||
	    read(q->kick_fd, &n, sizeof(n)) != sizeof(n))
		return;
	counter_add(&q->kicks, 1);
	if (q->polled)
		iothread_poller_kick(q->vp->io, &q->poller);
	vp_kick(q->vp, q->index);
}

/* Poller callbacks run on the device's I/O thread, which is also where the
 * device pops a polled queue (polling needs ioeventfd). A device that
 * touches a queue from another thread too (virtio-blk pushes from its
 * workers) names that queue's lock in vdev->queue_lock[q]: the ring check
 * and the kick suppression state then change under that lock, like every
 * other access to the queue, instead of relying on which virtq fields
 * each side happens to touch. The lock is not held across queue_notify,
 * which takes it itself. */
static void vp_queue_lock(struct virtio_dev *vdev, unsigned int q, bool lock)
{
	pthread_mutex_t *mu = vdev->queue_lock[q];
	if (!mu)
		return;
	if (lock)
		pthread_mutex_lock(mu);
	else
		pthread_mutex_unlock(mu);
}

static bool vp_throttled(struct virtio_dev *vdev, unsigned int q)
{
	return vdev->ops->queue_throttled && vdev->ops->queue_throttled(vdev, q);
}

static bool vp_poll_queue(void *opaque)
{
	struct virtio_pci_queue *q = opaque;
	struct virtio_dev *vdev = q->vp->vdev;
	struct virtq *vq = &vdev->vqs[q->index];
	if (!vp_work_enter(q->vp, q->index))
		return false;
	vp_queue_lock(vdev, q->index, true);
	bool work = virtq_has_work(vq, vdev->gm) && !vp_throttled(vdev, q->index);
	vp_queue_lock(vdev, q->index, false);
	if (work)
		vdev->ops->queue_notify(vdev, q->index);
	vp_work_exit(q->vp);
	return work;
}

static bool vp_poll_set_notify(void *opaque, bool enable)
{
	struct virtio_pci_queue *q = opaque;
	struct virtio_dev *vdev = q->vp->vdev;
	struct virtq *vq = &vdev->vqs[q->index];
	if (!vp_work_enter(q->vp, q->index))
		return false;
	bool more = false;
	vp_queue_lock(vdev, q->index, true);
	if (vq->enabled && !vq->broken)
		more = virtq_poll_hold(vq, vdev->gm, !enable) && !vp_throttled(vdev, q->index);
	vp_queue_lock(vdev, q->index, false);
	vp_work_exit(q->vp);
	return more;
}

/* vhost owns a handed-off queue: its ring and its kick suppression. The
 * poller reading it would find vhost's work forever and spin. */
static bool vp_poll_parked(void *opaque)
{
	struct virtio_pci_queue *q = opaque;
	return __atomic_load_n(&q->handed_off, __ATOMIC_ACQUIRE);
}

int vp_pollers_add(struct virtio_pci *vp)
{
	struct virtio_dev *vdev = vp->vdev;
	for (unsigned int i = 0; i < vdev->num_queues; i++) {
		struct virtio_pci_queue *q = &vp->q[i];
		snprintf(q->poller_name, sizeof(q->poller_name), "%s q%u", vdev->name, i);
		if (!vp->use_ioeventfd || !vp->io || !(vdev->poll_queues & (1u << i)) ||
		    vdev->poll.mode == POLL_OFF)
			continue;
		struct iothread_poller *p = &q->poller;
		p->name = q->poller_name;
		p->policy = vdev->poll;
		p->poll = vp_poll_queue;
		p->set_notify = vp_poll_set_notify;
		p->parked = vp_poll_parked;
		p->opaque = q;
		int r = iothread_add_poller(vp->io, p);
		if (r < 0)
			return r;
		q->polled = true;
	}
	return 0;
}

void vp_notify_write(struct virtio_pci *vp, uint64_t q)
{
	if (q >= vp->vdev->num_queues)
		return;
	if (vp->use_ioeventfd) {
		/* The ioeventfd was not registered (yet) or the write missed
		 * it: hand the kick to the I/O thread all the same, so queue
		 * work stays on one thread. */
		uint64_t one = 1;
		if (write(vp->q[q].kick_fd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow short of 2^64 kicks */
		}
		return;
	}
	vp_kick(vp, (unsigned int)q);
}

void vp_isr_clear(struct virtio_pci *vp)
{
	pthread_mutex_lock(&vp->isr_lock);
	vp->isr = 0;
	pci_intx_set(&vp->pci, false);
	pthread_mutex_unlock(&vp->isr_lock);
}

uint8_t vp_isr_read(struct virtio_pci *vp)
{
	/* Reading ISR acknowledges: it clears and deasserts INTx. */
	pthread_mutex_lock(&vp->isr_lock);
	uint8_t v = vp->isr;
	vp->isr = 0;
	pci_intx_set(&vp->pci, false);
	pthread_mutex_unlock(&vp->isr_lock);
	return v;
}

/* virtio 1.2 §4.1.4.5: the config bit is set for every configuration
 * interrupt, the queue bit and INTx only while MSI-X is off. */
void vp_interrupt(struct virtio_pci *vp, uint16_t vector, uint8_t isr_bit)
{
	if (isr_bit == VIRTIO_ISR_CONFIG) {
		pthread_mutex_lock(&vp->isr_lock);
		vp->isr |= isr_bit;
		pthread_mutex_unlock(&vp->isr_lock);
	}
	if (pci_msix_notify(&vp->pci, vector) != PCI_MSIX_OFF)
		return;
	pthread_mutex_lock(&vp->isr_lock);
	vp->isr |= isr_bit;
	pci_intx_set(&vp->pci, true);
	pthread_mutex_unlock(&vp->isr_lock);
}

static void vp_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_pci *vp = vdev->transport_data;
	if (q >= vdev->num_queues)
		return;
	counter_add(&vp->q[q].irqs, 1);
	vp_interrupt(vp, atomic_load(&vp->q[q].vector), VIRTIO_ISR_QUEUE);
}

static void vp_notify_config(struct virtio_dev *vdev)
{
	struct virtio_pci *vp = vdev->transport_data;
	counter_add(&vp->config_irqs, 1);
	vp_interrupt(vp, atomic_load(&vp->config_vector), VIRTIO_ISR_CONFIG);
}

/* The queue's vector stores above, the vector's sends below: the count
 * first (vp_queue_set_vector's order), so a store between the two loads
 * leaves the old count with the new vector, a value no later read gives. */
static int vp_queue_irq_seq(struct virtio_dev *vdev, unsigned int q, uint64_t *seq)
{
	struct virtio_pci *vp = vdev->transport_data;
	uint64_t sent;
	if (q >= vdev->num_queues)
		return -1;
	uint32_t sets = atomic_load(&vp->q[q].vector_sets);
	if (pci_msix_vector_seq(&vp->pci, atomic_load(&vp->q[q].vector), &sent) < 0)
		return -1;
	*seq = (uint64_t)sets << 32 | (uint32_t)sent;
	return 0;
}

static int vp_queue_vector(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_pci *vp = vdev->transport_data;
	if (q >= vdev->num_queues || !pci_msix_enabled(&vp->pci))
		return -1;
	uint16_t v = atomic_load(&vp->q[q].vector);
	return v == VIRTIO_MSI_NO_VECTOR ? -1 : v;
}

static int vp_queue_handoff(struct virtio_dev *vdev, unsigned int q, int *kick_fd, int *call_fd)
{
	struct virtio_pci *vp = vdev->transport_data;
	if (q >= vdev->num_queues || vp->q[q].kick_fd < 0 || !vp->io)
		return -1;
	int call = pci_msix_vector_fd(&vp->pci, atomic_load(&vp->q[q].vector));
	if (call < 0)
		return -1;
	if (!vp->q[q].handed_off) {
		/* Both epoll and vhost reading the eventfd would split kicks. */
		if (iothread_del_fd(vp->io, vp->q[q].kick_fd) < 0)
			return -1;
		__atomic_store_n(&vp->q[q].handed_off, true, __ATOMIC_RELEASE);
	}
	*kick_fd = vp->q[q].kick_fd;
	*call_fd = call;
	return 0;
}

static void vp_queue_takeback(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_pci *vp = vdev->transport_data;
	if (q >= vdev->num_queues || !vp->q[q].handed_off)
		return;
	if (iothread_add_fd(vp->io, vp->q[q].kick_fd, EPOLLIN, vp_kick_ready, &vp->q[q]) == 0)
		vp->q[q].handed_off = false;
}

/* The kick eventfd signalled as if the guest had kicked: the I/O thread's
 * loop gets to it after the fds already pending. */
static int vp_queue_resched(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_pci *vp = vdev->transport_data;
	uint64_t one = 1;
	if (q >= vdev->num_queues || vp->q[q].kick_fd < 0 || !vp->io ||
	    __atomic_load_n(&vp->q[q].handed_off, __ATOMIC_ACQUIRE))
		return -1;
	return write(vp->q[q].kick_fd, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
}

const struct virtio_transport_ops vp_transport_ops = {
    .notify_queue = vp_notify_queue,
    .notify_config = vp_notify_config,
    .queue_handoff = vp_queue_handoff,
    .queue_takeback = vp_queue_takeback,
    .queue_resched = vp_queue_resched,
    .queue_irq_seq = vp_queue_irq_seq,
    .queue_vector = vp_queue_vector,
};

void virtio_pci_counters(const struct virtio_dev *vdev, counter_emit_fn emit, void *ctx)
{
	static const struct counter_field poll[] = {
	    {"poll starts", offsetof(struct poll_state, starts)},
	    {"poll iterations with work", offsetof(struct poll_state, iters_work)},
	    {"poll iterations empty", offsetof(struct poll_state, iters_empty)},
	    {"poll stops idle", offsetof(struct poll_state, stops_idle)},
	    {"poll stops cap", offsetof(struct poll_state, stops_cap)},
	    {"poll stops contended", offsetof(struct poll_state, stops_contended)},
	};
	const struct virtio_pci *vp = vdev->transport_data;
	char what[64];
	emit(ctx, vdev->name, "config interrupts", counter_get(&vp->config_irqs));
	for (unsigned int i = 0; i < vdev->num_queues; i++) {
		const struct virtio_pci_queue *q = &vp->q[i];
		snprintf(what, sizeof(what), "q%u ioeventfd kicks", i);
		emit(ctx, vdev->name, what, counter_get(&q->kicks));
		snprintf(what, sizeof(what), "q%u interrupts", i);
		emit(ctx, vdev->name, what, counter_get(&q->irqs));
		for (size_t k = 0; q->polled && k < sizeof(poll) / sizeof(poll[0]); k++) {
			snprintf(what, sizeof(what), "q%u %s", i, poll[k].what);
			emit(ctx, vdev->name, what,
			     counter_get(
				 (const counter_t *)((const char *)&q->poller.st + poll[k].off)));
		}
		virtq_counters(&vdev->vqs[i], emit, ctx);
	}
}
