// SPDX-License-Identifier: Apache-2.0
#include "api/api_server.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/sandbox.h"
#include "core/thread.h"

int api_server_open(struct api_server *s, const char *path, struct api_ctl *ctl, char *err,
		    size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->sock.fd = -1;
	s->ctl = ctl;
	for (int i = 0; i < API_CONNS_MAX; i++)
		s->fds[i] = -1;
	s->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_efd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return -1;
	}
	return api_sock_open(&s->sock, path, err, errlen);
}

/* Writes all of buf or gives up: a client that does not read its reply
 * cannot hold the thread (the socket is non-blocking). The budget is for
 * the whole reply, not for each wait: a client that reads a byte now and
 * then would otherwise keep the thread here for as long as it liked. */
static int send_all(int fd, const char *buf, size_t len)
{
	uint64_t end = monotonic_ns() + API_SEND_BUDGET_MS * 1000000ull;
	for (size_t off = 0; off < len;) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			uint64_t now = monotonic_ns();
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			if (now >= end || poll(&p, 1, (int)((end - now) / 1000000u) + 1) <= 0)
				return -1;
			continue;
		}
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static int reply_send(int fd, struct api_reply *rep, bool keep_alive)
{
	size_t cap = rep->len + 512;
	char *out = malloc(cap);
	int r = -1;
	if (out) {
		size_t n =
		    api_http_response(out, cap, rep->status, rep->ctype, rep->body, rep->len,
				      keep_alive, rep->deprecated ? "Deprecation: true\r\n" : "");
		r = n ? send_all(fd, out, n) : -1;
	}
	free(out);
	free(rep->body);
	rep->body = NULL;
	return keep_alive ? r : -1;
}

int api_server_conn_step(struct api_server *s, int i)
{
	struct api_conn *c = s->conns[i];
	for (;;) {
		struct api_reply rep = {0};
		enum api_feed f = api_conn_feed(c);
		if (f == API_FEED_MORE && c->expect_continue && !c->continue_sent) {
			static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
			c->continue_sent = true;
			if (send_all(s->fds[i], cont, sizeof(cont) - 1) < 0)
				return -1;
		}
		if (f == API_FEED_MORE) {
			if (!c->partial && !c->in_len)
				s->started_ns[i] = 0;
			else if (!s->started_ns[i])
				s->started_ns[i] = monotonic_ns();
			return 0;
		}
		if (f == API_FEED_BAD) {
			api_reply_fault(&rep, 400, "Invalid HTTP request: %s.",
					http_errno_description(HTTP_PARSER_ERRNO(&c->p)));
			return reply_send(s->fds[i], &rep, false);
		}
		if (f == API_FEED_TOO_LARGE) {
			api_reply_fault(
			    &rep, 400,
			    "Request payload with size %llu is larger than the limit of "
			    "%d allowed by server.",
			    (unsigned long long)(c->p.content_length != ULLONG_MAX
						     ? c->p.content_length
						     : c->body_len),
			    API_BODY_MAX);
			return reply_send(s->fds[i], &rep, false);
		}
		if (c->url_long)
			api_reply_fault(&rep, 400,
					"Invalid request method and/or path: URI too long.");
		else if (api_route(api_conn_method(c), http_method_str(c->p.method), c->url,
				   c->body, c->body_len, &s->req, &rep) == 0)
			api_ctl_call(s->ctl, &s->req, &rep);
		bool keep = api_conn_keep_alive(c);
		api_conn_next(c);
		s->started_ns[i] = 0;
		s->last_ns[i] = monotonic_ns();
		if (reply_send(s->fds[i], &rep, keep) < 0)
			return -1;
	}
}

static void conn_close(struct api_server *s, int i)
{
	close(s->fds[i]);
	s->fds[i] = -1;
	api_conn_free(s->conns[i]);
	free(s->conns[i]);
	s->conns[i] = NULL;
}

/* Since when a connection has held its slot without a whole request:
 * its pending request's first byte, or its last answer (or accept). */
static uint64_t conn_since(const struct api_server *s, int i)
{
	return s->started_ns[i] ? s->started_ns[i] : s->last_ns[i];
}

/* All slots taken: the connection that has gone longest without a whole
 * request makes room, whether it says nothing or sends a byte at a time,
 * so such clients cannot lock the others out; a client that sends its
 * request at once is answered before it could be the oldest. */
static int conn_evict_oldest(struct api_server *s)
{
	int best = -1;
	for (int i = 0; i < API_CONNS_MAX; i++)
		if (s->fds[i] >= 0 && (best < 0 || conn_since(s, i) < conn_since(s, best)))
			best = i;
	if (best >= 0)
		conn_close(s, best);
	return best;
}

static void conn_accept(struct api_server *s)
{
	int fd = api_sock_accept(&s->sock);
	if (fd < 0)
		return;
	bool full = true;
	for (int i = 0; i < API_CONNS_MAX && full; i++)
		full = s->fds[i] >= 0;
	if (full)
		conn_evict_oldest(s);
	for (int i = 0; i < API_CONNS_MAX; i++) {
		if (s->fds[i] >= 0)
			continue;
		s->conns[i] = malloc(sizeof(struct api_conn));
		if (!s->conns[i] || api_conn_init(s->conns[i]) < 0) {
			free(s->conns[i]);
			s->conns[i] = NULL;
			break;
		}
		s->fds[i] = fd;
		s->started_ns[i] = 0;
		s->last_ns[i] = monotonic_ns();
		return;
	}
	close(fd); /* full: the client sees its connection closed */
}

static void conn_read(struct api_server *s, int i)
{
	struct api_conn *c = s->conns[i];
	ssize_t n = recv(s->fds[i], c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(s, i);
		return;
	}
	s->last_ns[i] = monotonic_ns();
	if (!s->started_ns[i])
		s->started_ns[i] = monotonic_ns();
	c->in_len += (size_t)n;
	if (api_server_conn_step(s, i) < 0)
		conn_close(s, i);
}

static void *api_server_thread(void *arg)
{
	struct api_server *s = arg;
	thread_name_self("api");
	/* Before any byte a client sent is read. */
	sandbox_enter_or_die(SANDBOX_API);
	for (;;) {
		struct pollfd p[API_CONNS_MAX + 2];
		int idx[API_CONNS_MAX], n = 2;
		p[0] = (struct pollfd){.fd = s->stop_efd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = s->sock.fd, .events = POLLIN};
		for (int i = 0; i < API_CONNS_MAX; i++) {
			if (s->fds[i] < 0)
				continue;
			idx[n - 2] = i;
			p[n++] = (struct pollfd){.fd = s->fds[i], .events = POLLIN};
		}
		if (poll(p, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			conn_accept(s);
		for (int k = 2; k < n; k++) {
			int i = idx[k - 2];
			if (p[k].revents)
				conn_read(s, i);
			uint64_t now = monotonic_ns();
			/* A slow client loses its connection; the others never wait for it. */
			if (s->fds[i] >= 0 && s->started_ns[i] &&
			    now - s->started_ns[i] > API_READ_TIMEOUT_MS * 1000000ull)
				conn_close(s, i);
		}
	}
	return NULL;
}

int api_server_start(struct api_server *s)
{
	int r = pthread_create(&s->thread, NULL, api_server_thread, s);
	if (r)
		return -r;
	s->running = true;
	return 0;
}

void api_server_close(struct api_server *s)
{
	if (s->running) {
		uint64_t one = 1;
		if (write(s->stop_efd, &one, sizeof(one)) != sizeof(one)) {
			/* cannot fail on a fresh eventfd */
		}
		pthread_join(s->thread, NULL);
		s->running = false;
	}
	for (int i = 0; i < API_CONNS_MAX; i++)
		if (s->fds[i] >= 0)
			conn_close(s, i);
	if (s->stop_efd >= 0)
		close(s->stop_efd);
	s->stop_efd = -1;
	api_sock_close(&s->sock);
}
