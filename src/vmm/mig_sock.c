// SPDX-License-Identifier: Apache-2.0
/* The migration's socket: "unix:PATH" or "tcp:HOST:PORT", as Cloud
 * Hypervisor's receiver_url and destination_url. HOST is numeric (an IPv4
 * address, or an IPv6 one in brackets) or a name of the hosts file
 * (mig_hosts.h): the source resolves nothing else under its seccomp
 * filter. A name's addresses are tried in the file's order. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/mig_hosts.h"
#include "vmm/mig_proto.h"

union mig_addr {
	struct sockaddr sa;
	struct sockaddr_un un;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/* What a URL names: one address, or a name's (at most MIG_HOSTS_ADDRS_MAX). */
struct mig_addrs {
	union mig_addr a[MIG_HOSTS_ADDRS_MAX];
	socklen_t len[MIG_HOSTS_ADDRS_MAX];
	int n;
};

static void addr_put(struct mig_addrs *m, const struct mig_host_addr *h, uint16_t port)
{
	union mig_addr *a = &m->a[m->n];
	memset(a, 0, sizeof(*a));
	if (h->family == AF_INET6) {
		a->in6 = (struct sockaddr_in6){
		    .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = h->a.v6};
		m->len[m->n++] = sizeof(a->in6);
	} else {
		a->in = (struct sockaddr_in){
		    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = h->a.v4};
		m->len[m->n++] = sizeof(a->in);
	}
}

/* HOST:PORT: 0; -1 if it is not one (the caller says how it should look);
 * -2 for a name the hosts file has not, with err said. */
static int tcp_addrs(const char *hp, struct mig_addrs *m, char *err, size_t errlen)
{
	char host[256];
	struct mig_host_addr h[MIG_HOSTS_ADDRS_MAX];
	const char *colon = strrchr(hp, ':');
	if (!colon || colon == hp || (size_t)(colon - hp) >= sizeof(host))
		return -1;
	memcpy(host, hp, (size_t)(colon - hp));
	host[colon - hp] = '\0';
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !colon[1] || !port || port > 65535 || colon[1] < '0' || colon[1] > '9')
		return -1;
	size_t hl = strlen(host);
	m->n = 0;
	if (host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &h[0].a.v6) != 1)
			return -1;
		h[0].family = AF_INET6;
	} else if (inet_pton(AF_INET, host, &h[0].a.v4) == 1) {
		h[0].family = AF_INET;
	} else if (!mig_host_name_ok(host)) {
		return -1;
	} else {
		char why[200];
		int n = mig_hosts_lookup(mig_hosts_path, host, h, MIG_HOSTS_ADDRS_MAX, why,
					 sizeof(why));
		if (n == 0)
			snprintf(why, sizeof(why),
				 "%s has no such name (skiff looks host names up there alone: no "
				 "DNS under its seccomp filter; add it, or give the address)",
				 mig_hosts_path);
		if (n <= 0) {
			snprintf(err, errlen, "cannot resolve `%s`: %s", host, why);
			return -2;
		}
		for (int i = 0; i < n; i++)
			addr_put(m, &h[i], (uint16_t)port);
		return 0;
	}
	addr_put(m, &h[0], (uint16_t)port);
	return 0;
}

static int mig_addr_parse(const char *url, struct mig_addrs *m, char *err, size_t errlen)
{
	union mig_addr *a = &m->a[0];
	if (!strncmp(url, "unix:", 5) && url[5] && strlen(url + 5) < sizeof(a->un.sun_path)) {
		memset(a, 0, sizeof(*a));
		a->un.sun_family = AF_UNIX;
		strcpy(a->un.sun_path, url + 5);
		m->len[0] = sizeof(a->un);
		m->n = 1;
		return 0;
	}
	int r = !strncmp(url, "tcp:", 4) ? tcp_addrs(url + 4, m, err, errlen) : -1;
	if (r == -1)
		snprintf(err, errlen,
			 "invalid migration URL `%.200s`: expected unix:PATH or tcp:HOST:PORT (a "
			 "numeric address, or a name of %s)",
			 url, mig_hosts_path);
	return r < 0 ? -1 : 0;
}

int mig_connect(const char *url, char *err, size_t errlen)
{
	struct mig_addrs m;
	if (mig_addr_parse(url, &m, err, errlen) < 0)
		return -1;
	int e = 0;
	for (int i = 0; i < m.n; i++) {
		int fd = socket(m.a[i].sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* Non-blocking once connected: a peer that stops reading must
		 * not hold a write past its poll's bound (mig_write_all). */
		if (fd >= 0 && connect(fd, &m.a[i].sa, m.len[i]) == 0 &&
		    fcntl(fd, F_SETFL, O_NONBLOCK) == 0)
			return fd;
		e = errno;
		if (fd >= 0)
			close(fd);
	}
	snprintf(err, errlen, "cannot connect to %.200s: %s", url, strerror(e));
	return -1;
}

/* A listener on the first of m's addresses that binds; its index in *at. */
static int listen_first(const struct mig_addrs *m, int *at)
{
	int one = 1, e = 0;
	for (int i = 0; i < m->n; i++) {
		int fd = socket(m->a[i].sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && m->a[i].sa.sa_family != AF_UNIX)
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fd >= 0 && bind(fd, &m->a[i].sa, m->len[i]) == 0) {
			*at = i;
			return fd;
		}
		e = errno;
		if (fd >= 0)
			close(fd);
	}
	errno = e;
	return -1;
}

int mig_listen_accept(const char *url, int ms, char *err, size_t errlen)
{
	struct mig_addrs m;
	int at = -1, c = -1;
	if (mig_addr_parse(url, &m, err, errlen) < 0)
		return -1;
	int fd = listen_first(&m, &at);
	if (fd < 0 || listen(fd, 1) < 0) {
		snprintf(err, errlen, "cannot listen on %.200s: %s", url, strerror(errno));
		goto out;
	}
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;
	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		snprintf(err, errlen, "no migration came to %.200s within %d s", url, ms / 1000);
		goto out;
	}
	c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		snprintf(err, errlen, "cannot accept on %.200s: %s", url, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	/* One connection only: the socket file goes with the listener (a
	 * file that was there before, bind refused: not ours to remove). */
	if (at >= 0 && m.a[at].sa.sa_family == AF_UNIX)
		unlink(m.a[at].un.sun_path);
	return c;
}
