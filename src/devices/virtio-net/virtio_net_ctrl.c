// SPDX-License-Identifier: Apache-2.0
/* virtio-net's control queue (virtio 1.2 5.1.6.5, VIRTIO_NET_F_CTRL_VQ),
 * for VIRTIO_NET_F_MQ's enabling of pairs and VIRTIO_NET_F_NOTF_COAL's
 * coalescing parameters.
 *
 * A command is one chain: device-readable class, command and data, then
 * one device-writable ack byte. The readable part is copied to host
 * memory once, then checked: a chain too short for a header, a command
 * of the wrong length, an unknown class or command, or a pair count out
 * of 1..max_virtqueue_pairs is answered VIRTIO_NET_ERR. A chain with no
 * byte for the ack cannot be answered: that breaks the queue, as other
 * protocol violations do. The commands known are in ctrl_cmds: MQ's
 * VQ_PAIRS_SET (Linux sends it at probe, and for ethtool -L) and
 * NOTF_COAL's TX_SET and RX_SET (ethtool -C); the driver may send nothing
 * else, since no other control feature is offered.
 *
 * Threads: kicks arrive on the I/O thread (ioeventfd) or the kicking vCPU
 * (--no-ioeventfd); reset runs on a vCPU. ctrl_lock serializes them, and
 * is taken before a pair's rx_lock or tx_lock, never after (the order:
 * virtio_net_priv.h). */
#include <errno.h>
#include <string.h>

#include "core/dma.h"
#include "devices/virtio-net/virtio_net_priv.h"

/* The most a pair change waits for: one RX and one TX run of each pair it
 * disables (their locks taken once), so that after the ack no packet
 * reaches the pair's rx queue (5.1.6.5.5). */
static void net_pair_quiesce(struct virtio_net_pair *p)
{
	pthread_mutex_lock(&p->rx_lock);
	pthread_mutex_unlock(&p->rx_lock);
	pthread_mutex_lock(&p->tx_lock);
	pthread_mutex_unlock(&p->tx_lock);
}

/* Attaches the tap queues of pairs [from, to); on a failure detaches the
 * ones it attached, and only those: pairs enabled before keep theirs (a
 * detached queue of an enabled pair receives nothing and refuses every
 * send). 0 or -errno. */
static int net_pairs_attach(struct virtio_net *n, unsigned int from, unsigned int to)
{
	unsigned int mine = 0; /* the pairs this call attached, a bit each */
	for (unsigned int i = from; i < to; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		if (p->tap_attached)
			continue;
		int r = tap_set_queue(&p->tap, true);
		if (r < 0) {
			for (unsigned int j = from; j < i; j++) {
				if ((mine & 1u << j) && tap_set_queue(&n->pairs[j].tap, false) == 0)
					n->pairs[j].tap_attached = false;
			}
			return r;
		}
		mine |= 1u << i;
		p->tap_attached = true;
	}
	return 0;
}

int virtio_net_set_pairs(struct virtio_net *n, unsigned int pairs)
{
	unsigned int old = atomic_load(&n->curr_pairs);
	int r = net_pairs_attach(n, 1, pairs);
	if (r < 0)
		return r;
	atomic_store(&n->curr_pairs, pairs);
	for (unsigned int i = pairs; i < n->npairs; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		net_pair_quiesce(p);
		if (i > 0 && p->tap_attached) {
			int d = tap_set_queue(&p->tap, false);
			if (d == 0)
				p->tap_attached = false;
			else if (r == 0)
				r = d;
		}
	}
	/* Packets may have waited in a newly attached queue: no edge for
	 * them. A run finds the pair idle while the device is not active. */
	for (unsigned int i = old; i < pairs; i++)
		virtio_net_schedule(&n->pairs[i], VIRTIO_NET_SCHED_RX | VIRTIO_NET_SCHED_TX);
	return r;
}

/* At DRIVER_OK: what the accepted features do not allow is as at
 * power-on. Only a load brings any (the card's section is restored
 * before the transport's features, so its checks cannot see them):
 * without MQ, q2 is the control queue, and a second pair's receive
 * would write frames into it while the control queue reads it. */
void virtio_net_ctrl_clamp(struct virtio_net *n)
{
	pthread_mutex_lock(&n->ctrl_lock);
	if (!virtio_has_feature(&n->vdev, VIRTIO_NET_F_MQ) && atomic_load(&n->curr_pairs) > 1)
		virtio_net_set_pairs(n,
				     1); /* detaching: a tap's refusal leaves it attached, idle */
	for (unsigned int d = 0; d < 2 && !virtio_has_feature(&n->vdev, VIRTIO_NET_F_NOTF_COAL);
	     d++) {
		atomic_store(&n->coal_max[d], 0);
		atomic_store(&n->coal_usecs[d], 0);
	}
	pthread_mutex_unlock(&n->ctrl_lock);
}

static uint8_t ctrl_mq_pairs(struct virtio_net *n, const uint8_t *data)
{
	/* struct virtio_net_ctrl_mq: le16 virtqueue_pairs. */
	unsigned int pairs = (unsigned int)data[0] | (unsigned int)data[1] << 8;
	if (pairs < 1 || pairs > n->npairs)
		return VIRTIO_NET_ERR;
	return virtio_net_set_pairs(n, pairs) < 0 ? VIRTIO_NET_ERR : VIRTIO_NET_OK;
}

static uint8_t ctrl_coal_rx(struct virtio_net *n, const uint8_t *data)
{
	return virtio_net_coal_set(n, VIRTIO_NET_RXQ, data);
}

static uint8_t ctrl_coal_tx(struct virtio_net *n, const uint8_t *data)
{
	return virtio_net_coal_set(n, VIRTIO_NET_TXQ, data);
}

/* The commands known: class, command, the exact data length, the feature
 * the driver must have accepted, and what runs it. */
static const struct {
	uint8_t cls, cmd;
	uint32_t len;
	unsigned int feature;
	uint8_t (*run)(struct virtio_net *n, const uint8_t *data);
} ctrl_cmds[] = {
    {VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 2, VIRTIO_NET_F_MQ, ctrl_mq_pairs},
    {VIRTIO_NET_CTRL_NOTF_COAL, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 8, VIRTIO_NET_F_NOTF_COAL,
     ctrl_coal_tx},
    {VIRTIO_NET_CTRL_NOTF_COAL, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 8, VIRTIO_NET_F_NOTF_COAL,
     ctrl_coal_rx},
};

/* class and command, and the largest data a known command has. */
#define CTRL_HDR_LEN 2
#define CTRL_MAX_LEN (CTRL_HDR_LEN + 8)

/* Runs one command whose readable part (out_len bytes) starts with cmd,
 * copied from the chain. Returns the ack. */
static uint8_t ctrl_exec(struct virtio_net *n, const uint8_t *cmd, uint32_t out_len)
{
	if (out_len < CTRL_HDR_LEN)
		return VIRTIO_NET_ERR;
	for (size_t i = 0; i < sizeof(ctrl_cmds) / sizeof(ctrl_cmds[0]); i++) {
		if (cmd[0] != ctrl_cmds[i].cls || cmd[1] != ctrl_cmds[i].cmd)
			continue;
		if (!virtio_has_feature(&n->vdev, ctrl_cmds[i].feature) ||
		    out_len != CTRL_HDR_LEN + ctrl_cmds[i].len)
			return VIRTIO_NET_ERR;
		return ctrl_cmds[i].run(n, cmd + CTRL_HDR_LEN);
	}
	return VIRTIO_NET_ERR;
}

/* Answers one popped chain. Returns false if the queue broke. */
static bool ctrl_one(struct virtio_net *n, struct virtq *vq, const struct virtq_elem *e)
{
	uint8_t cmd[CTRL_MAX_LEN] = {0};
	if (e->in_len < 1) {
		counter_add(&n->stats.ctrl_err, 1);
		virtq_mark_broken(vq, VIRTQ_ERR_DEVICE);
		return false;
	}
	/* Relaxed: ordered by virtq_pop's acquire fence after the avail index.
	 * Copied once: everything below reads the copy. */
	uint32_t len = e->out_len < sizeof(cmd) ? e->out_len : (uint32_t)sizeof(cmd);
	dma_sg_read_relaxed(e->iov, e->out_num, 0, cmd, len);
	uint8_t ack = ctrl_exec(n, cmd, e->out_len);
	counter_add(ack == VIRTIO_NET_OK ? &n->stats.ctrl_ok : &n->stats.ctrl_err, 1);
	/* Relaxed: ordered by virtq_push's release fence. */
	dma_sg_write_relaxed(e->iov + e->out_num, e->in_num, 0, &ack, 1);
	return virtq_push(vq, n->vdev.gm, e->head, 1) == 0;
}

void virtio_net_ctrl_run(struct virtio_net *n)
{
	struct virtio_dev *v = &n->vdev;
	unsigned int budget = VIRTIO_NET_BUDGET;
	bool pushed = false;

	pthread_mutex_lock(&n->ctrl_lock);
	unsigned int q = atomic_load(&n->ctrlq);
	struct virtq *vq = q < v->num_queues ? &v->vqs[q] : NULL;
	while (vq && vq->enabled && !vq->broken) {
		if (!budget) {
			/* From the I/O thread, later; a trapped kick carries on. */
			if (v->transport->queue_resched && v->transport->queue_resched(v, q) == 0)
				break;
			budget = VIRTIO_NET_BUDGET;
		}
		budget--;
		int r = virtq_pop(vq, v->gm, &n->ctrl_elem);
		if (r <= 0 || !ctrl_one(n, vq, &n->ctrl_elem))
			break;
		pushed = true;
	}
	if (pushed)
		virtio_notify_if_needed(v, q);
	pthread_mutex_unlock(&n->ctrl_lock);
}
