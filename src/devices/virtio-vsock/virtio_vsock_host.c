// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's host side: the listening Unix socket, the streams to
 * host peers, the connection table. Every function runs with mu held;
 * every socket is non-blocking, so none waits. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio-vsock/virtio_vsock_priv.h"

#define ACCEPT_MAX 16 /* per listener event: the loop comes back for more */

static int uds_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	size_t n = strlen(path);
	if (!n || n >= sizeof(a->sun_path))
		return -1;
	memcpy(a->sun_path, path, n);
	return 0;
}

int vsock_host_listen(struct virtio_vsock *v, char *err, size_t errlen)
{
	struct sockaddr_un a;
	if (uds_addr(&a, v->uds) < 0) {
		snprintf(err, errlen, "bad uds path '%s'", v->uds);
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0) {
		/* Firecracker's rule: the path must not exist (EADDRINUSE). */
		snprintf(err, errlen, "cannot listen on uds path '%s': %s", v->uds,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = VSOCK_EV_LISTEN};
	if (epoll_ctl(v->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		snprintf(err, errlen, "cannot watch uds path '%s': %s", v->uds, strerror(errno));
		close(fd);
		unlink(v->uds);
		return -1;
	}
	v->listen_fd = fd;
	struct stat st;
	/* What this bind made, so that a migration's switch unlinks only it. */
	if (lstat(v->uds, &st) == 0 && S_ISSOCK(st.st_mode)) {
		v->uds_dev = st.st_dev;
		v->uds_ino = st.st_ino;
	}
	return 0;
}

/* ---- the connection table ---- */

static uint64_t conn_tag(const struct virtio_vsock *v, const struct vsock_conn *c)
{
	return (uint64_t)c->gen << 32 | (uint64_t)(c - v->conns);
}

struct vsock_conn *vsock_conn_new(struct virtio_vsock *v, int fd, uint32_t events)
{
	if (v->nr_conns >= VSOCK_MAX_CONNS)
		return NULL;
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];
		if (c->state != VS_FREE)
			continue;
		uint32_t gen = c->gen + 1;
		*c = (struct vsock_conn){.gen = gen, .fd = fd, .state = VS_ESTAB};
		struct epoll_event ev = {.events = events | EPOLLET, .data.u64 = conn_tag(v, c)};
		if (epoll_ctl(v->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			c->state = VS_FREE;
			counter_add(&v->stats.conn_event_fails, 1);
			return NULL;
		}
		v->nr_conns++;
		v->hw = i + 1 > v->hw ? i + 1 : v->hw;
		counter_add(&v->stats.conns_added, 1);
		return c;
	}
	return NULL;
}

/* The guest's streams: a packet names (its dst_port, its src_port). A
 * half-open host peer (no port yet) is nobody's. */
struct vsock_conn *vsock_conn_find(struct virtio_vsock *v, uint32_t local, uint32_t peer)
{
	for (unsigned int i = 0; i < v->hw; i++) {
		struct vsock_conn *c = &v->conns[i];
		if (c->state != VS_FREE && c->state != VS_HOST_LINE && c->local_port == local &&
		    c->peer_port == peer)
			return c;
	}
	return NULL;
}

/* Closes the host end. rst: the guest is owed a RST, and the slot stays
 * (VS_CLOSING) until the RX side sends it. */
void vsock_conn_close(struct virtio_vsock *v, struct vsock_conn *c, bool rst)
{
	if (c->fd >= 0) {
		epoll_ctl(v->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
	free(c->buf);
	c->buf = NULL;
	c->buf_len = 0;
	/* A host peer the guest never heard of needs no RST. */
	if (rst && c->state != VS_HOST_LINE) {
		c->state = VS_CLOSING;
		c->owe = VS_OWE_RST;
		counter_add(&v->stats.conns_killed, 1);
		return;
	}
	c->state = VS_FREE;
	c->owe = 0;
	v->nr_conns--;
	counter_add(&v->stats.conns_removed, 1);
}

void vsock_conn_reset_all(struct virtio_vsock *v)
{
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++)
		if (v->conns[i].state != VS_FREE)
			vsock_conn_close(v, &v->conns[i], false);
	v->nr_orphans = 0;
	v->hw = 0;
}

int vsock_host_connect(struct virtio_vsock *v, uint32_t port)
{
	char path[sizeof(v->uds) + 16];
	struct sockaddr_un a;
	snprintf(path, sizeof(path), "%s_%" PRIu32, v->uds, port);
	if (uds_addr(&a, path) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A Unix stream connects at once or not at all (EAGAIN: its backlog
	 * is full): either way no wait, and anything but success is a RST. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- writing to the host peer ---- */

static ssize_t send_some(int fd, const void *p, size_t n)
{
	ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return w;
}

int vsock_host_flush(struct virtio_vsock *v, struct vsock_conn *c)
{
	if (c->fd < 0)
		return 0;
	while (c->line_len) {
		ssize_t w = send_some(c->fd, c->line, c->line_len);
		if (w < 0)
			return -1;
		if (!w)
			return 0;
		memmove(c->line, c->line + w, c->line_len - (uint32_t)w);
		c->line_len -= (uint32_t)w;
	}
	while (c->buf_len) {
		uint32_t run = VSOCK_CONN_BUF - c->buf_head;
		run = run < c->buf_len ? run : c->buf_len;
		ssize_t w = send_some(c->fd, c->buf + c->buf_head, run);
		if (w < 0) {
			counter_add(&v->stats.tx_flush_fails, 1);
			return -1;
		}
		if (!w)
			return 0;
		c->buf_head = (c->buf_head + (uint32_t)w) % VSOCK_CONN_BUF;
		c->buf_len -= (uint32_t)w;
		c->fwd_cnt += (uint32_t)w;
		if (c->fwd_cnt - c->fwd_told >= VSOCK_CREDIT_STEP)
			c->owe |= VS_OWE_CREDIT;
	}
	/* Drained: the ring goes until the host stalls again; the guest may
	 * be waiting for the credit that frees. */
	free(c->buf);
	c->buf = NULL;
	c->buf_head = 0;
	if (c->fwd_cnt != c->fwd_told)
		c->owe |= VS_OWE_CREDIT;
	if (c->guest_shut_send) {
		if (c->guest_shut_rcv || c->host_eof) {
			vsock_conn_close(v, c, true); /* both ways done */
			return 0;
		}
		shutdown(c->fd, SHUT_WR);
	}
	return 0;
}

/* ---- host events ---- */

/* "CONNECT <port>\n": the port, or -1. */
static int64_t parse_connect(const char *s, size_t n)
{
	static const char word[] = "CONNECT ";
	if (n <= sizeof(word) - 1 || memcmp(s, word, sizeof(word) - 1))
		return -1;
	uint64_t port = 0;
	for (size_t i = sizeof(word) - 1; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || port > UINT32_MAX / 10)
			return -1;
		port = port * 10 + (uint64_t)(s[i] - '0');
	}
	return port <= UINT32_MAX ? (int64_t)port : -1;
}

static uint32_t pick_local_port(struct virtio_vsock *v)
{
	for (;;) {
		uint32_t p = v->next_port++;
		if (v->next_port < VSOCK_LOCAL_PORT)
			v->next_port = VSOCK_LOCAL_PORT;
		bool used = false;
		for (unsigned int i = 0; i < v->hw && !used; i++)
			used = v->conns[i].state != VS_FREE && v->conns[i].local_port == p;
		if (!used)
			return p; /* at most VSOCK_MAX_CONNS ports are ever in use */
	}
}

/* A host peer's first line; the rest of its bytes stay in the socket.
 * events: what epoll saw (0 right after accept). A peer that hung up
 * without a whole line is done: the peek keeps finding its unread bytes,
 * never EOF, and an edge-triggered socket raises no other event for it. */
static void host_line(struct virtio_vsock *v, struct vsock_conn *c, uint32_t events)
{
	char buf[VSOCK_LINE_MAX];
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	char *nl = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;
	if (!nl) {
		if (n <= 0 || (size_t)n == sizeof(buf) ||
		    (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
			goto bad; /* gone, or a line too long */
		return;		  /* the rest of the line is still coming */
	}
	size_t len = (size_t)(nl - buf) + 1;
	if (recv(c->fd, buf, len, MSG_DONTWAIT) != (ssize_t)len)
		goto bad;
	int64_t port = parse_connect(buf, len - 1);
	if (port < 0)
		goto bad;
	c->peer_port = (uint32_t)port;
	c->local_port = pick_local_port(v);
	c->state = VS_REQ_SENT;
	c->owe = VS_OWE_REQUEST;
	c->readable = true; /* bytes after the line raise no new edge */
	return;
bad:
	counter_add(&v->stats.host_bad_lines, 1);
	vsock_conn_close(v, c, false);
}

static unsigned int lines_waiting(const struct virtio_vsock *v)
{
	unsigned int n = 0;
	for (unsigned int i = 0; i < v->hw; i++)
		n += v->conns[i].state == VS_HOST_LINE;
	return n;
}

/* Clients that have not sent their line yet are nobody's stream: a
 * bounded few, or silent ones (any process that may open the socket)
 * would hold every slot and refuse the guest's own REQUESTs. */
static void host_accept(struct virtio_vsock *v)
{
	for (int i = 0; i < ACCEPT_MAX; i++) {
		int fd = accept4(v->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct vsock_conn *c = lines_waiting(v) < VSOCK_LINE_WAIT_MAX
					   ? vsock_conn_new(v, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP)
					   : NULL;
		if (!c) {
			counter_add(&v->stats.refused, 1);
			close(fd);
			continue;
		}
		c->state = VS_HOST_LINE;
		host_line(v, c, 0); /* the line may be there already */
	}
}

static void conn_event(struct virtio_vsock *v, uint64_t tag, uint32_t events)
{
	uint32_t i = (uint32_t)tag;
	if (i >= VSOCK_MAX_CONNS)
		return;
	struct vsock_conn *c = &v->conns[i];
	if (c->gen != (uint32_t)(tag >> 32) || c->fd < 0)
		return; /* an event for a stream closed in this batch */
	if (c->state == VS_HOST_LINE) {
		host_line(v, c, events);
		return;
	}
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		c->readable = true; /* the RX side reads it as credit allows */
	if ((events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) && vsock_host_flush(v, c) < 0)
		vsock_conn_close(v, c, true);
}

void vsock_host_events(struct virtio_vsock *v, const struct epoll_event *evs, int n)
{
	for (int i = 0; i < n; i++) {
		if (evs[i].data.u64 == VSOCK_EV_LISTEN) {
			host_accept(v);
		} else if (evs[i].data.u64 == VSOCK_EV_WAKE) {
			uint64_t cnt;
			if (read(v->wake_fd, &cnt, sizeof(cnt)) == sizeof(cnt))
				v->woken = true;
		} else {
			conn_event(v, evs[i].data.u64, evs[i].events);
		}
	}
}
