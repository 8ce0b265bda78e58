// SPDX-License-Identifier: Apache-2.0
/* Unit tests for virtio-vsock (src/devices/virtio-vsock/virtio_vsock*.c): the test
 * plays the guest driver on a fake guest RAM (RX, TX and event queues)
 * and the host peers, with real Unix sockets in a temporary directory.
 * No device thread: the test calls virtio_vsock_poll where the thread
 * would wake, and kicks run the queues inline. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"

#include "vsock_fx.h"

/* ---- tests ---- */

static void test_layout(void **state)
{
	struct fx *f = *state;
	assert_int_equal(f->vdev->device_id, 19); /* virtio 1.2 §5.10.1 */
	assert_int_equal(f->vdev->num_queues, 3);
	assert_int_equal(f->vdev->msix_vectors, 2); /* config and one for the queues */
	assert_int_equal(f->vdev->config_len, 8);
	uint64_t cid = 0;
	f->vdev->ops->config_read(f->vdev, 0, &cid, 8);
	assert_int_equal(cid, CID);
	uint32_t hi = 1;
	f->vdev->ops->config_read(f->vdev, 4, &hi, 4);
	assert_int_equal(hi, 0);
}

static void *poll_once(void *vdev)
{
	virtio_vsock_poll(vdev);
	return NULL;
}

/* A snapshot's or a switch's hold (dev_ops.hold): what the host sends
 * meanwhile stays out of guest memory, the thread that took its event
 * waiting, and reaches the guest once released. */
static void test_hold(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	uint32_t local;
	int fd = host_stream(f, &local);
	virtio_vsock_hold(f->vdev, true);
	assert_int_equal(write(fd, "held", 4), 4);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, poll_once, f->vdev), 0);
	usleep(100 * 1000); /* time to deliver it, were the device not held */
	struct virtio_vsock_hdr h;
	assert_false(rx_take(f, &h, NULL));
	virtio_vsock_hold(f->vdev, false);
	assert_int_equal(pthread_join(t, NULL), 0);
	uint8_t data[8];
	assert_true(rx_take(f, &h, data));
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_int_equal(h.len, 4);
	assert_memory_equal(data, "held", 4);
	close(fd);
}

/* CONNECT -> REQUEST, RESPONSE -> OK, then bytes both ways. */
static void test_host_connect(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	uint32_t local;
	int fd = host_stream(f, &local);
	assert_int_equal(local, VSOCK_LOCAL_PORT);
	assert_int_equal(write(fd, "hello", 5), 5);
	struct virtio_vsock_hdr h;
	uint8_t data[64];
	virtio_vsock_poll(f->vdev);
	assert_true(rx_take(f, &h, data));
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_int_equal(h.len, 5);
	assert_memory_equal(data, "hello", 5);
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_RW, 52, local);
	g.len = 5;
	tx_send(f, g, "world");
	char got[6] = "";
	host_read(fd, got, 5);
	assert_string_equal(got, "world");
	/* A second host peer gets the next port. */
	uint32_t local2;
	int fd2 = host_stream(f, &local2);
	assert_int_equal(local2, VSOCK_LOCAL_PORT + 1);
	close(fd2);
	close(fd);
}

/* Bytes right behind the CONNECT line (no new edge for them) reach the
 * guest once it answers. */
static void test_host_pipelined(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	int fd = host_dial(f->uds);
	assert_int_equal(write(fd, "CONNECT 52\nearly", 16), 16);
	struct virtio_vsock_hdr h = expect_op(f, VIRTIO_VSOCK_OP_REQUEST);
	tx_send(f, ghdr(VIRTIO_VSOCK_OP_RESPONSE, 52, h.src_port), NULL);
	uint8_t data[16];
	virtio_vsock_poll(f->vdev);
	assert_true(rx_take(f, &h, data));
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_int_equal(h.len, 5);
	assert_memory_equal(data, "early", 5);
	close(fd);
}

/* A bad first line: the peer is dropped and the guest hears nothing. */
static void test_host_bad_line(void **state)
{
	struct fx *f = *state;
	rx_post(f, 4);
	int fd = host_dial(f->uds);
	assert_int_equal(write(fd, "CONNECT x\n", 10), 10);
	virtio_vsock_poll(f->vdev);
	struct virtio_vsock_hdr h;
	assert_false(rx_take(f, &h, NULL));
	char c;
	assert_int_equal(read(fd, &c, 1), 0); /* closed */
	assert_int_equal(counter(f, "host_bad_lines"), 1);
	close(fd);
}

/* A guest REQUEST to port P reaches <uds>_P; bytes both ways. */
static void test_guest_connect(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	int lfd;
	int a = guest_stream(f, &lfd);
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_RW, 5000, 1234);
	g.len = 3;
	tx_send(f, g, "abc");
	char got[4] = "";
	host_read(a, got, 3);
	assert_string_equal(got, "abc");
	assert_int_equal(write(a, "xyz", 3), 3);
	uint8_t data[16];
	struct virtio_vsock_hdr h;
	virtio_vsock_poll(f->vdev);
	assert_true(rx_take(f, &h, data));
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_int_equal(h.src_port, 1234);
	assert_int_equal(h.dst_port, 5000);
	assert_memory_equal(data, "xyz", 3);
	close(a);
	close(lfd);
}

/* No listener: RST, and nothing is left open. */
static void test_refused_rst(void **state)
{
	struct fx *f = *state;
	rx_post(f, 4);
	tx_send(f, ghdr(VIRTIO_VSOCK_OP_REQUEST, 7, 999), NULL);
	struct virtio_vsock_hdr h = expect_op(f, VIRTIO_VSOCK_OP_RST);
	assert_int_equal(h.src_port, 999);
	assert_int_equal(h.dst_port, 7);
	assert_int_equal(f->v->nr_conns, 0);
	assert_int_equal(counter(f, "refused"), 1);
}

/* The guest's credit: never more in flight than it advertised. */
static void test_credit_to_guest(void **state)
{
	struct fx *f = *state;
	rx_post(f, 64);
	int lfd;
	int a = guest_stream(f, &lfd);
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_CREDIT_UPDATE, 5000, 1234);
	g.buf_alloc = 6000;
	tx_send(f, g, NULL);
	static uint8_t big[20000];
	memset(big, 7, sizeof(big));
	assert_int_equal(write(a, big, sizeof(big)), (ssize_t)sizeof(big));
	uint32_t total = 0;
	struct virtio_vsock_hdr h;
	virtio_vsock_poll(f->vdev);
	while (rx_take(f, &h, NULL))
		if (h.op == VIRTIO_VSOCK_OP_RW)
			total += h.len;
	assert_int_equal(total, 6000);
	/* The guest read 5000: 5000 more may come. */
	g.fwd_cnt = 5000;
	tx_send(f, g, NULL);
	virtio_vsock_poll(f->vdev);
	while (rx_take(f, &h, NULL))
		if (h.op == VIRTIO_VSOCK_OP_RW)
			total += h.len;
	assert_int_equal(total, 11000);
	close(a);
	close(lfd);
}

/* A host peer that does not read: the device holds at most its buffer,
 * the guest's credit runs out (the headers say so), and a guest that
 * sends past it is reset, never buffered. */
static void test_stalled_host_reader(void **state)
{
	struct fx *f = *state;
	rx_post(f, 64);
	int lfd;
	int a = guest_stream(f, &lfd);
	struct vsock_conn *c = vsock_conn_find(f->v, 1234, 5000);
	assert_non_null(c);
	int small = 4096;
	assert_int_equal(setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	static uint8_t chunk[4096];
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_RW, 5000, 1234);
	g.len = sizeof(chunk);
	uint32_t sent = 0;
	/* Exactly the credit the device advertised (fwd_cnt 0 so far). */
	while (sent + sizeof(chunk) <= VSOCK_CONN_BUF + c->fwd_cnt) {
		tx_send(f, g, chunk);
		sent += sizeof(chunk);
		assert_true(c->buf_len <= VSOCK_CONN_BUF);
		assert_int_equal(counter(f, "credit_lies"), 0);
	}
	assert_true(c->buf_len > 0); /* the host did stall */
	assert_int_equal(sent - c->fwd_cnt, c->buf_len);
	/* One more chunk is a lie about credit: RST, the host end closed. */
	tx_send(f, g, chunk);
	assert_int_equal(counter(f, "credit_lies"), 1);
	struct virtio_vsock_hdr h;
	bool rst = false;
	virtio_vsock_poll(f->vdev);
	while (rx_take(f, &h, NULL))
		rst |= h.op == VIRTIO_VSOCK_OP_RST;
	assert_true(rst);
	assert_null(vsock_conn_find(f->v, 1234, 5000));
	close(a);
	close(lfd);
}

/* A guest may keep four packets of the largest size in flight on one
 * stream, with a host peer that reads nothing meanwhile: credit for one
 * made Linux's driver send a 64 KiB packet and wait a round trip for the
 * next (guest->host at half QEMU's vhost-vsock; docs/bench/2026-12-07-vsockbuf). */
static void test_full_packets_in_flight(void **state)
{
	struct fx *f = *state;
	rx_post(f, 64);
	int lfd;
	int a = guest_stream(f, &lfd); /* it checks buf_alloc is VSOCK_CONN_BUF */
	struct vsock_conn *c = vsock_conn_find(f->v, 1234, 5000);
	assert_non_null(c);
	int small = 4096;
	assert_int_equal(setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	static uint8_t pkt[VSOCK_PKT_MAX];
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_RW, 5000, 1234);
	g.len = sizeof(pkt);
	for (int i = 0; i < 4; i++) {
		memset(pkt, 'a' + i, sizeof(pkt));
		tx_send(f, g, pkt);
	}
	assert_int_equal(counter(f, "credit_lies"), 0);
	assert_ptr_equal(vsock_conn_find(f->v, 1234, 5000), c); /* not reset */
	/* Every byte reaches the host peer, in order, as it reads. */
	static uint8_t got[4 * VSOCK_PKT_MAX];
	for (size_t n = 0; n < sizeof(got);) {
		virtio_vsock_poll(f->vdev); /* flushes what the socket takes */
		assert_true(host_readable(a));
		ssize_t r = read(a, got + n, sizeof(got) - n);
		assert_true(r > 0);
		n += (size_t)r;
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(got[(size_t)i * VSOCK_PKT_MAX + VSOCK_PKT_MAX - 1], 'a' + i);
	close(a);
	close(lfd);
}

/* Credit comes back as the host reads: a CREDIT_UPDATE with fwd_cnt. */
static void test_credit_update_as_host_reads(void **state)
{
	struct fx *f = *state;
	rx_post(f, 64);
	int lfd;
	int a = guest_stream(f, &lfd);
	static uint8_t chunk[8192];
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_RW, 5000, 1234);
	g.len = sizeof(chunk);
	for (unsigned int i = 0; i < VSOCK_CONN_BUF / sizeof(chunk); i++)
		tx_send(f, g, chunk);
	/* More than the socket holds waits in the device's ring, which its
	 * thread would flush as the host reads: here, poll between reads. */
	static uint8_t sink[VSOCK_CONN_BUF];
	struct virtio_vsock_hdr h;
	uint32_t fwd = 0;
	for (size_t got = 0; got < VSOCK_CONN_BUF;) {
		size_t n = VSOCK_CONN_BUF - got < 4096 ? VSOCK_CONN_BUF - got : 4096;
		host_read(a, sink + got, n);
		got += n;
		virtio_vsock_poll(f->vdev);
		while (rx_take(f, &h, NULL))
			fwd = h.fwd_cnt;
	}
	assert_int_equal(fwd, VSOCK_CONN_BUF);
	/* CREDIT_REQUEST is answered. */
	tx_send(f, ghdr(VIRTIO_VSOCK_OP_CREDIT_REQUEST, 5000, 1234), NULL);
	h = expect_op(f, VIRTIO_VSOCK_OP_CREDIT_UPDATE);
	assert_int_equal(h.fwd_cnt, VSOCK_CONN_BUF);
	close(a);
	close(lfd);
}

/* The host's half-close reaches the guest as SHUTDOWN(SEND); the guest's
 * close (SHUTDOWN both) gets its RST and the host sees the end. */
static void test_shutdown_both_ways(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	uint32_t local;
	int fd = host_stream(f, &local);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	struct virtio_vsock_hdr h = expect_op(f, VIRTIO_VSOCK_OP_SHUTDOWN);
	assert_int_equal(h.flags, VIRTIO_VSOCK_SHUTDOWN_SEND);
	/* The guest may still send: the host half-closed only. */
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_RW, 52, local);
	g.len = 2;
	tx_send(f, g, "hi");
	char got[3] = "";
	host_read(fd, got, 2);
	assert_string_equal(got, "hi");
	g = ghdr(VIRTIO_VSOCK_OP_SHUTDOWN, 52, local);
	g.flags = VIRTIO_VSOCK_SHUTDOWN_RCV | VIRTIO_VSOCK_SHUTDOWN_SEND;
	tx_send(f, g, NULL);
	expect_op(f, VIRTIO_VSOCK_OP_RST);
	char c;
	assert_int_equal(read(fd, &c, 1), 0);
	assert_int_equal(f->v->nr_conns, 0);
	close(fd);
}

/* The guest's RST closes the host end. */
static void test_guest_rst_closes(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	int lfd;
	int a = guest_stream(f, &lfd);
	tx_send(f, ghdr(VIRTIO_VSOCK_OP_RST, 5000, 1234), NULL);
	char c;
	assert_int_equal(read(a, &c, 1), 0);
	assert_int_equal(f->v->nr_conns, 0);
	virtio_vsock_poll(f->vdev);
	struct virtio_vsock_hdr h;
	assert_false(rx_take(f, &h, NULL)); /* no answer to a RST */
	close(a);
	close(lfd);
}

/* Headers a guest must not send: dropped and counted; a wrong type or op
 * gets a RST, a wrong address nothing; no queue breaks. */
static void test_hostile_headers(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	struct virtio_vsock_hdr h;
	struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_REQUEST, 1, 2);
	g.src_cid = CID + 1; /* not the guest's own */
	tx_send(f, g, NULL);
	g = ghdr(VIRTIO_VSOCK_OP_REQUEST, 1, 2);
	g.dst_cid = 7; /* not the host */
	tx_send(f, g, NULL);
	g = ghdr(VIRTIO_VSOCK_OP_RW, 1, 2);
	g.len = 100; /* more than the chain holds */
	tx_send_len(f, g, NULL, VSOCK_HDR_LEN + 10);
	g.len = VSOCK_PKT_MAX + 1;
	tx_send_len(f, g, NULL, VSOCK_HDR_LEN);
	tx_send_len(f, g, NULL, 20); /* a short header */
	virtio_vsock_poll(f->vdev);
	assert_false(rx_take(f, &h, NULL));
	assert_int_equal(counter(f, "bad_packets"), 5);
	g = ghdr(VIRTIO_VSOCK_OP_REQUEST, 1, 2);
	g.type = VIRTIO_VSOCK_TYPE_SEQPACKET;
	tx_send(f, g, NULL);
	expect_op(f, VIRTIO_VSOCK_OP_RST);
	tx_send(f, ghdr(99, 1, 2), NULL);
	expect_op(f, VIRTIO_VSOCK_OP_RST);
	assert_int_equal(counter(f, "bad_packets"), 7);
	assert_int_equal(f->v->nr_conns, 0);
}

/* Packets for no connection get RSTs from a bounded queue: a flood with
 * no RX buffers keeps VSOCK_ORPHAN_MAX of them, drops the rest. */
static void test_unknown_conn_flood_bounded(void **state)
{
	struct fx *f = *state;
	for (uint32_t i = 0; i < VSOCK_ORPHAN_MAX + 40; i++) {
		struct virtio_vsock_hdr g = ghdr(VIRTIO_VSOCK_OP_RW, 100 + i, 1234);
		g.len = 1;
		tx_send(f, g, "x");
	}
	assert_int_equal(f->v->nr_orphans, VSOCK_ORPHAN_MAX);
	assert_int_equal(counter(f, "killq_resync"), 40);
	rx_post(f, 128);
	unsigned int rsts = 0;
	struct virtio_vsock_hdr h;
	while (rx_take(f, &h, NULL)) {
		assert_int_equal(h.op, VIRTIO_VSOCK_OP_RST);
		rsts++;
	}
	assert_int_equal(rsts, VSOCK_ORPHAN_MAX);
}

/* A driver reset forgets every stream: the host ends see EOF. */
static void test_reset_closes_streams(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	uint32_t local;
	int fd = host_stream(f, &local);
	f->vdev->ops->reset(f->vdev);
	virtio_vsock_poll(f->vdev); /* the device's thread closes them */
	char c;
	assert_true(host_readable(fd)); /* EOF, never a wait */
	assert_int_equal(read(fd, &c, 1), 0);
	assert_int_equal(f->v->nr_conns, 0);
	close(fd);
}

/* Bad specs: one line each. */
/* As the device kind takes a spec: its table, then its check. */
static int spec_parse_check(const char *spec, struct vsock_spec *s, char *err, size_t errlen)
{
	vsock_spec_init(s);
	if (opt_parse_spec(&vsock_spec_table, spec, s, err, errlen) < 0)
		return -1;
	return vsock_spec_check(s, err, errlen);
}

static void test_spec_errors(void **state)
{
	(void)state;
	static const char *const bad[] = {"cid=2,uds=/tmp/x", "uds=/tmp/x", "cid=3",
					  "cid=3,uds=", "cid=4294967296,uds=/tmp/x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vsock_spec s;
		char err[256] = "";
		assert_int_equal(spec_parse_check(bad[i], &s, err, sizeof(err)), -1);
		assert_non_null(err[0] ? err : NULL);
		assert_null(strchr(err, '\n'));
	}
	char longp[VSOCK_UDS_MAX + 16];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = 0;
	char spec[sizeof(longp) + 16];
	snprintf(spec, sizeof(spec), "cid=3,uds=%s", longp);
	struct vsock_spec s;
	char err[256] = "";
	vsock_spec_init(&s);
	assert_int_equal(opt_parse_spec(&vsock_spec_table, spec, &s, err, sizeof(err)), -1);
}

/* The uds path exists already: refused with a reason, as Firecracker. */
static void test_uds_exists(void **state)
{
	struct fx *f = *state;
	struct vsock_spec s = {.cid = 3};
	snprintf(s.uds, sizeof(s.uds), "%.64s", f->uds);
	char err[256] = "";
	assert_null(virtio_vsock_create("virtio-vsock1", &s, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot listen"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_layout),
	    T(test_host_connect),
	    T(test_hold),
	    T(test_host_pipelined),
	    T(test_host_bad_line),
	    T(test_guest_connect),
	    T(test_refused_rst),
	    T(test_credit_to_guest),
	    T(test_stalled_host_reader),
	    T(test_full_packets_in_flight),
	    T(test_credit_update_as_host_reads),
	    T(test_shutdown_both_ways),
	    T(test_guest_rst_closes),
	    T(test_hostile_headers),
	    T(test_unknown_conn_flood_bounded),
	    T(test_reset_closes_streams),
	    cmocka_unit_test(test_spec_errors),
	    T(test_uds_exists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
