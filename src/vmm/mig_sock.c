// SPDX-License-Identifier: Apache-2.0
/* The migration's socket: "unix:PATH" or "tcp:HOST:PORT", as Cloud
 * Hypervisor's receiver_url and destination_url. HOST is numeric (an IPv4
 * address, or an IPv6 one in brackets): the source resolves nothing under
 * its seccomp filter. */
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

#include "vmm/mig_proto.h"

union mig_addr {
	struct sockaddr sa;
	struct sockaddr_un un;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

static int tcp_addr(const char *hp, union mig_addr *a, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(hp, ':');
	if (!colon || colon == hp || (size_t)(colon - hp) >= sizeof(host))
		return -1;
	memcpy(host, hp, (size_t)(colon - hp));
	host[colon - hp] = '\0';
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (errno || *end || !colon[1] || !port || port > 65535)
		return -1;
	memset(a, 0, sizeof(*a));
	size_t hl = strlen(host);
	if (host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		a->in6.sin6_family = AF_INET6;
		a->in6.sin6_port = htons((uint16_t)port);
		*len = sizeof(a->in6);
		return inet_pton(AF_INET6, host + 1, &a->in6.sin6_addr) == 1 ? 0 : -1;
	}
	a->in.sin_family = AF_INET;
	a->in.sin_port = htons((uint16_t)port);
	*len = sizeof(a->in);
	return inet_pton(AF_INET, host, &a->in.sin_addr) == 1 ? 0 : -1;
}

static int mig_addr_parse(const char *url, union mig_addr *a, socklen_t *len, char *err,
			  size_t errlen)
{
	if (!strncmp(url, "unix:", 5) && url[5] && strlen(url + 5) < sizeof(a->un.sun_path)) {
		memset(a, 0, sizeof(*a));
		a->un.sun_family = AF_UNIX;
		strcpy(a->un.sun_path, url + 5);
		*len = sizeof(a->un);
		return 0;
	}
	if (!strncmp(url, "tcp:", 4) && tcp_addr(url + 4, a, len) == 0)
		return 0;
	snprintf(err, errlen,
		 "invalid migration URL `%.200s`: expected unix:PATH or tcp:ADDRESS:PORT (a "
		 "numeric address)",
		 url);
	return -1;
}

int mig_connect(const char *url, char *err, size_t errlen)
{
	union mig_addr a;
	socklen_t len;
	if (mig_addr_parse(url, &a, &len, err, errlen) < 0)
		return -1;
	int fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Non-blocking once connected: a peer that stops reading must not
	 * hold a write past its poll's bound (mig_write_all). */
	if (fd < 0 || connect(fd, &a.sa, len) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		snprintf(err, errlen, "cannot connect to %.200s: %s", url, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int mig_listen_accept(const char *url, int ms, char *err, size_t errlen)
{
	union mig_addr a;
	socklen_t len;
	if (mig_addr_parse(url, &a, &len, err, errlen) < 0)
		return -1;
	int one = 1, fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), c = -1;
	bool bound = false;
	if (fd >= 0 && a.sa.sa_family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd >= 0 && bind(fd, &a.sa, len) == 0)
		bound = true;
	if (!bound || listen(fd, 1) < 0) {
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
	if (bound && a.sa.sa_family == AF_UNIX)
		unlink(a.un.sun_path);
	return c;
}
