// SPDX-License-Identifier: Apache-2.0
#include "vmm/mig_hosts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

const char *mig_hosts_path = "/etc/hosts";

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool mig_host_name_ok(const char *s)
{
	size_t n = strlen(s), label = 0;
	bool digits = true; /* the current label's */
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-')
				return false;
			if (c == '\0')
				return !digits;
			label = 0;
			digits = true;
			continue;
		}
		if (!is_alnum(c) && !(c == '-' && label > 0))
			return false;
		digits = digits && c >= '0' && c <= '9';
		label++;
	}
	return false; /* not reached */
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The next blank-separated field of [*p, end), or NULL at the line's end
 * (end: the newline or the comment). */
static const char *field(const char **p, const char *end, size_t *flen)
{
	const char *s = *p;
	while (s < end && is_blank(*s))
		s++;
	const char *f = s;
	while (s < end && !is_blank(*s))
		s++;
	*p = s;
	*flen = (size_t)(s - f);
	return *flen ? f : NULL;
}

/* A line's address field into out: 0, or -1 if it is none. */
static int parse_addr(const char *f, size_t flen, struct mig_host_addr *out)
{
	char buf[INET6_ADDRSTRLEN];
	if (flen >= sizeof(buf))
		return -1;
	memcpy(buf, f, flen);
	buf[flen] = '\0';
	if (inet_pton(AF_INET, buf, &out->a.v4) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, &out->a.v6) == 1)
		out->family = AF_INET6;
	else
		return -1;
	return 0;
}

/* Whether the line [p, end) names name; its address in *out if so. */
static bool line_names(const char *p, const char *end, const char *name, size_t nlen,
		       struct mig_host_addr *out)
{
	size_t flen;
	const char *f = field(&p, end, &flen);
	if (!f || parse_addr(f, flen, out) < 0)
		return false;
	while ((f = field(&p, end, &flen)))
		if (flen == nlen && !strncasecmp(f, name, nlen))
			return true;
	return false;
}

int mig_hosts_find(const char *text, size_t len, const char *name, struct mig_host_addr *out,
		   int max)
{
	const char *p = text, *stop = text + len;
	size_t nlen = strlen(name);
	int n = 0;
	while (p < stop && n < max) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		const char *eol = nl ? nl : stop;
		const char *hash = memchr(p, '#', (size_t)(eol - p));
		if (line_names(p, hash ? hash : eol, name, nlen, &out[n]))
			n++;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

int mig_hosts_lookup(const char *path, const char *name, struct mig_host_addr *out, int max,
		     char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO put there cannot hold the open (the controller's
	 * filter allows no other flag); reading one ends at once, empty. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *buf = malloc(MIG_HOSTS_MAX + 1);
	size_t len = 0;
	ssize_t r = 0;
	while (
	    fd >= 0 && buf && len <= MIG_HOSTS_MAX &&
	    ((r = read(fd, buf + len, MIG_HOSTS_MAX + 1 - len)) > 0 || (r < 0 && errno == EINTR)))
		len += r > 0 ? (size_t)r : 0;
	int e = errno, n = -1;
	if (fd < 0 || r < 0)
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(e));
	else if (!buf)
		snprintf(err, errlen, "cannot read %s: out of memory", path);
	else if (len > MIG_HOSTS_MAX)
		snprintf(err, errlen, "%s is over %u bytes", path, MIG_HOSTS_MAX);
	else
		n = mig_hosts_find(buf, len, name, out, max);
	if (fd >= 0)
		close(fd);
	free(buf);
	return n;
}
