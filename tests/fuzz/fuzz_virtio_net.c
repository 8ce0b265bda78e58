/* virtio-net TX and RX (src/devices/virtio_net*.c) with a SOCK_SEQPACKET
 * socketpair as the tap (tap_from_fd, one packet per message, 12-byte vnet
 * header in front): fuzz bytes pick the negotiated features (offloads,
 * MRG_RXBUF, NOTF_COAL), build chains on all three queues (rx, tx and
 * the control queue, where coalescing is set), send frames of any length
 * and header from the "host" side, kick, fire the coalescing timers, fill
 * the wire until TX blocks, and reset. Guest RAM changes under the device
 * (fuzz_common.h).
 *
 * Checked beyond ASan/UBSan: every packet the device writes to the tap has
 * a whole header, a frame no longer than VIRTIO_NET_MAX_FRAME, and only the
 * header flags and GSO types the driver negotiated. */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "devices/virtio_net_priv.h"
#include "fuzz_common.h"

static struct virtio_net *net;
static int wire = -1; /* the host's end of the "tap" */
static uint8_t frame[VIRTIO_NET_HDR_LEN + VIRTIO_NET_MAX_FRAME + 64];

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	char err[200];
	struct tap tap;
	int sv[2];

	(void)argc, (void)argv;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	tap_from_fd(&tap, sv[0]);
	wire = sv[1];
	net = virtio_net_create("virtio-net0", &tap, 1, mac, err, sizeof(err));
	if (!net)
		abort();
	net->vdev.gm = &fz_gm;
	net->vdev.transport = &fake_transport;
	/* The fuzzer plays the I/O thread: it fires the timers (case 9). */
	atomic_store(&net->coal_watched, true);
	pthread_mutex_init(&net->vdev.lock, NULL);
	return 0;
}

/* Reads what the device sent and checks it. */
static void wire_drain(void)
{
	const struct virtio_dev *v = &net->vdev;
	ssize_t r;

	while ((r = recv(wire, frame, sizeof(frame), MSG_TRUNC)) >= 0) {
		struct virtio_net_hdr h;
		FZ_CHECK(r >= VIRTIO_NET_HDR_LEN);
		FZ_CHECK(r - VIRTIO_NET_HDR_LEN <= VIRTIO_NET_MAX_FRAME);
		memcpy(&h, frame, sizeof(h));
		FZ_CHECK((h.flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM) == 0);
		FZ_CHECK(!h.flags || virtio_has_feature(v, VIRTIO_NET_F_CSUM));
		FZ_CHECK(virtio_net_gso_ok(v, h.gso_type, VIRTIO_NET_F_HOST_TSO4,
					   VIRTIO_NET_F_HOST_TSO6));
		FZ_CHECK(h.num_buffers == 0);
	}
}

/* Empties both ends and the scheduler's eventfd: a clean start. */
static void flush_all(void)
{
	uint64_t cnt;
	while (recv(wire, frame, sizeof(frame), MSG_TRUNC) >= 0) {
	}
	while (recv(net->pairs[0].tap.fd, frame, sizeof(frame), MSG_TRUNC) >= 0) {
	}
	while (read(net->sched_fd, &cnt, sizeof(cnt)) > 0) {
	}
	atomic_store(&net->sched, 0);
}

/* A frame from the host: a header from the stream, a length, a pattern. */
static void wire_send(void)
{
	uint8_t sel = fz_u8();
	size_t len = sel & 1 ? fz_u16() % (VIRTIO_NET_MAX_FRAME + 64) : fz_u8();
	size_t head = len < 64 ? len : 64;

	if (sel & 2) {
		memset(frame, 0, VIRTIO_NET_HDR_LEN);
		frame[0] = fz_u8() & 3;
		frame[1] = fz_u8();
	} else {
		fz_bytes(frame, VIRTIO_NET_HDR_LEN);
	}
	if (sel & 4) /* shorter than a header */
		len = fz_u8() % VIRTIO_NET_HDR_LEN, head = 0;
	else
		len += VIRTIO_NET_HDR_LEN;
	fz_bytes(frame + (len > head ? len - head : 0), head);
	if (send(wire, frame, len, 0) < 0 && errno != EAGAIN)
		abort();
}

/* The host stops reading: fill the wire until sends fail. */
static void wire_fill(void)
{
	static const uint8_t junk[2048];
	while (send(net->pairs[0].tap.fd, junk, sizeof(junk), 0) >= 0) {
	}
}

/* rx, tx, control. The control queue's rings (fzq_layout: 0x8000) lie
 * among the chains' buffers: a guest may overlap them too. */
#define NQ 3

static void dev_reset(struct virtio_dev *v)
{
	v->ops->reset(v);
	for (unsigned int q = 0; q < NQ; q++)
		virtq_reset(&v->vqs[q]);
}

/* A well-formed coalescing command on the control queue, laid out as
 * Linux does (header, data, ack), so that runs reach the parameters
 * soon; its direction and values come from the stream. */
static void ctrl_coal(struct fz_q *g)
{
	uint16_t sz = g->size ? g->size : 1, i = fz_u8() % sz;
	uint64_t buf = 0xf000;
	uint8_t cmd[10] = {VIRTIO_NET_CTRL_NOTF_COAL, fz_u8() & 1, fz_u8()};
	uint16_t us = fz_u16(); /* up to 65 ms: mostly accepted */
	memcpy(cmd + 6, &us, 2);
	memcpy(fz_at(buf), cmd, sizeof(cmd));
	fzq_put_desc(g->desc, i, buf, 2, VIRTQ_DESC_F_NEXT, (uint16_t)((i + 1) % sz));
	fzq_put_desc(g->desc, (i + 1) % sz, buf + 2, 8, VIRTQ_DESC_F_NEXT,
		     (uint16_t)((i + 2) % sz));
	fzq_put_desc(g->desc, (i + 2) % sz, buf + 16, 1, VIRTQ_DESC_F_WRITE, 0);
	fzq_publish(g, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_dev *v = &net->vdev;
	struct fz_q g[NQ];
	bool active = false;

	fz_begin(data, size);
	flush_all();
	v->driver_features = v->host_features & ~fz_u64();
	if (virtio_dev_init_queues(v) < 0)
		abort();
	for (unsigned int q = 0; q < NQ; q++)
		fzq_layout(&g[q], q, (uint16_t)(1u << (fz_u8() % 9))); /* 1..256 */
	for (unsigned int steps = 0; fz_more() && steps < 512; steps++) {
		uint8_t op = fz_u8();
		switch (op % 12) {
		case 0: /* DRIVER_OK */
			if (active)
				break;
			for (unsigned int q = 0; q < NQ; q++) {
				fzq_configure(&v->vqs[q], &g[q], v->driver_features);
				virtq_activate(&v->vqs[q], &fz_gm);
			}
			active = v->ops->activate(v) == 0;
			break;
		case 1:
			v->ops->queue_notify(v, (op >> 6) % NQ); /* refill, TX or control kick */
			break;
		case 2:
			wire_send();
			break;
		case 3:
			virtio_net_tap_event(&net->pairs[0], EPOLLIN);
			break;
		case 4:
			wire_drain();
			virtio_net_tap_event(&net->pairs[0], EPOLLOUT);
			break;
		case 5:
			virtio_net_sched_event(net, EPOLLIN);
			break;
		case 6:
			if (op & 0x80)
				wire_fill();
			else
				wire_drain();
			break;
		case 7:
			dev_reset(v);
			for (unsigned int q = 0; q < NQ; q++)
				g[q].avail_idx = 0;
			active = false;
			break;
		case 9:
			ctrl_coal(&g[2]);
			v->ops->queue_notify(v, 2);
			break;
		case 8: /* a coalescing timer expires */
			virtio_net_coal_event(
			    op & 0x80 ? &net->pairs[0].tx_coal : &net->pairs[0].rx_coal, EPOLLIN);
			break;
		default:
			fzq_driver_op(&g[(op >> 6) % NQ], fz_u8());
		}
	}
	wire_drain();
	dev_reset(v);
	return 0;
}
