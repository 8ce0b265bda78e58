// SPDX-License-Identifier: Apache-2.0
#include "vmm/mig_proto.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/snap.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the stream is little-endian as-is");
_Static_assert(sizeof(struct mig_hello) == 32, "HELLO layout");
_Static_assert(sizeof(struct mig_pages) == 8, "PAGES layout");

/* Per type: its name and its payload's bounds. */
static const struct {
	const char *name;
	uint32_t min, max;
} mig_types[MIG_NR_TYPES] = {
    [MIG_HELLO] = {"HELLO", sizeof(struct mig_hello), sizeof(struct mig_hello)},
    [MIG_PAGES] = {"PAGES", sizeof(struct mig_pages) + 8 + MIG_PAGE,
		   sizeof(struct mig_pages) + MIG_PAGES_MAX *(8 + MIG_PAGE)},
    [MIG_ROUND] = {"ROUND", 16, 16},
    [MIG_STATE] = {"STATE", SNAP_HDR_SIZE, SNAP_MAX_FILE},
    [MIG_READY] = {"READY", 0, 0},
    [MIG_RELEASED] = {"RELEASED", 0, 0},
    [MIG_RUNNING] = {"RUNNING", 8, 8},
    [MIG_ERROR] = {"ERROR", 1, MIG_ERR_MAX},
    [MIG_CONFIG] = {"CONFIG", SNAP_HDR_SIZE, MIG_CONFIG_MAX},
};

const char *mig_type_name(uint32_t type)
{
	return type && type < MIG_NR_TYPES ? mig_types[type].name : "unknown";
}

int mig_hdr_check(uint32_t type, uint32_t len, char *err, size_t errlen)
{
	if (!type || type >= MIG_NR_TYPES) {
		snprintf(err, errlen, "migration stream: unknown frame type %u", type);
		return -1;
	}
	if (len < mig_types[type].min || len > mig_types[type].max) {
		snprintf(err, errlen, "migration stream: %s frame of %u bytes (%u to %u)",
			 mig_types[type].name, len, mig_types[type].min, mig_types[type].max);
		return -1;
	}
	return 0;
}

int mig_pages_check(const struct mig_pages *p, uint32_t len, char *err, size_t errlen)
{
	if (!p->count || p->count > MIG_PAGES_MAX || p->zero || len != mig_pages_len(p->count)) {
		snprintf(err, errlen, "migration stream: PAGES of %u pages in %u bytes", p->count,
			 len);
		return -1;
	}
	return 0;
}

int mig_pages_list_check(const uint64_t *page, uint32_t count, uint64_t ram, char *err,
			 size_t errlen)
{
	uint64_t pages = ram / MIG_PAGE;
	for (uint32_t i = 0; i < count; i++)
		if (page[i] >= pages) {
			snprintf(err, errlen,
				 "migration stream: PAGES names page %llu, not inside %llu pages",
				 (unsigned long long)page[i], (unsigned long long)pages);
			return -1;
		}
	return 0;
}

int mig_hello_check(const struct mig_hello *h, uint64_t max_ram, char *err, size_t errlen)
{
	if (memcmp(h->magic, MIG_MAGIC, 8)) {
		snprintf(err, errlen, "migration stream: not a skiff migration (no HELLO)");
		return -1;
	}
	if (h->version != MIG_VERSION) {
		snprintf(err, errlen, "migration stream version %u, this skiff speaks version %u",
			 h->version, MIG_VERSION);
		return -1;
	}
	if (!h->ram || h->ram % MIG_PAGE || h->ram > max_ram || h->zero || h->zero2) {
		snprintf(err, errlen, "migration stream: HELLO asks for %llu bytes of RAM",
			 (unsigned long long)h->ram);
		return -1;
	}
	return 0;
}

/* Milliseconds left until deadline (monotonic ns), 0 once it passed. */
static int ms_left(uint64_t deadline)
{
	uint64_t now = monotonic_ns();
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* The bound is the whole buffer's, not each wait's: a peer sending a byte
 * just inside every wait would otherwise hold the other side for ever. */
static int wait_fd(int fd, short ev, uint64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = ev};
	int r;
	do
		r = poll(&p, 1, ms_left(deadline));
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	return r > 0 ? 0 : -1;
}

int mig_write_all(int fd, const void *buf, size_t len, int ms)
{
	const uint8_t *b = buf;
	uint64_t deadline = monotonic_ns() + (uint64_t)ms * 1000000;
	while (len) {
		if (wait_fd(fd, POLLOUT, deadline) < 0)
			return -1;
		ssize_t n = write(fd, b, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

int mig_read_all(int fd, void *buf, size_t len, int ms)
{
	uint8_t *b = buf;
	uint64_t deadline = monotonic_ns() + (uint64_t)ms * 1000000;
	while (len) {
		if (wait_fd(fd, POLLIN, deadline) < 0)
			return -1;
		ssize_t n = read(fd, b, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == 0)
			errno = EPIPE;
		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Past the n bytes done: whole entries dropped, the next one cut. */
static void iov_advance(struct iovec **iov, int *n, size_t done)
{
	while (*n && done >= (*iov)->iov_len) {
		done -= (*iov)->iov_len;
		(*iov)++;
		(*n)--;
	}
	if (*n) {
		(*iov)->iov_base = (uint8_t *)(*iov)->iov_base + done;
		(*iov)->iov_len -= done;
	}
}

/* (No IOV_MAX split: callers pass at most MIG_PAGES_MAX + 2 entries.) */
static int iov_all(int fd, struct iovec *iov, int n, int ms, bool out)
{
	uint64_t deadline = monotonic_ns() + (uint64_t)ms * 1000000;
	iov_advance(&iov, &n, 0); /* (leading empty entries) */
	while (n) {
		if (wait_fd(fd, out ? POLLOUT : POLLIN, deadline) < 0)
			return -1;
		ssize_t r = out ? writev(fd, iov, n) : readv(fd, iov, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r == 0 && !out)
			errno = EPIPE;
		if (r <= 0)
			return -1;
		iov_advance(&iov, &n, (size_t)r);
	}
	return 0;
}

int mig_writev_all(int fd, struct iovec *iov, int n, int ms)
{
	return iov_all(fd, iov, n, ms, true);
}

int mig_readv_all(int fd, struct iovec *iov, int n, int ms)
{
	return iov_all(fd, iov, n, ms, false);
}

int mig_send2(int fd, uint32_t type, const void *a, uint32_t alen, const void *b, uint32_t blen)
{
	uint32_t h[2] = {type, alen + blen};
	if (mig_write_all(fd, h, sizeof(h), MIG_IO_MS) < 0 ||
	    (alen && mig_write_all(fd, a, alen, MIG_IO_MS) < 0) ||
	    (blen && mig_write_all(fd, b, blen, MIG_IO_MS) < 0))
		return -1;
	return 0;
}

int mig_send(int fd, uint32_t type, const void *payload, uint32_t len)
{
	return mig_send2(fd, type, payload, len, NULL, 0);
}

int mig_recv_hdr(int fd, uint32_t *type, uint32_t *len, char *err, size_t errlen)
{
	uint32_t h[2];
	if (mig_read_all(fd, h, sizeof(h), MIG_IO_MS) < 0) {
		snprintf(err, errlen, "migration stream: %s",
			 errno == EPIPE ? "the peer closed it" : strerror(errno));
		return -1;
	}
	*type = h[0];
	*len = h[1];
	return mig_hdr_check(h[0], h[1], err, errlen);
}

int mig_expect(int fd, uint32_t want, void *buf, uint32_t max, uint32_t *len, char *err,
	       size_t errlen)
{
	uint32_t type, n;
	char line[MIG_ERR_MAX + 1];
	if (mig_recv_hdr(fd, &type, &n, err, errlen) < 0)
		return -1;
	if (type == MIG_ERROR) {
		if (mig_read_all(fd, line, n, MIG_IO_MS) < 0)
			snprintf(line, sizeof(line), "(its line lost)");
		else
			line[n] = '\0';
		line[strcspn(line, "\n")] = '\0'; /* one line, whatever it sent */
		snprintf(err, errlen, "the migration's peer gave up: %s", line);
		return MIG_PEER_GAVE_UP;
	}
	if (type != want || n > max) {
		snprintf(err, errlen, "migration stream: %s frame where %s was due",
			 mig_type_name(type), mig_type_name(want));
		return -1;
	}
	if (n && mig_read_all(fd, buf, n, MIG_IO_MS) < 0) {
		snprintf(err, errlen, "migration stream: %s frame cut short", mig_type_name(type));
		return -1;
	}
	if (len)
		*len = n;
	return 0;
}
