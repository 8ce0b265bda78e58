// SPDX-License-Identifier: Apache-2.0
/* Live migration's stream (docs/MIGRATION.md): frames of a type and a
 * length, little-endian, each checked before its payload is read:
 *
 *   header   type (4), payload length (4)
 *   HELLO    source -> target: magic "SKIFFMIG", version, zero, RAM bytes,
 *            zero (8): the target's memory is made for it
 *   CONFIG   source -> target, right after HELLO: a state image (core/snap.h)
 *            of the device list alone, so that the target prepares for
 *            those devices (their threads' filters) while pages stream; the
 *            STATE's own list is still what it builds
 *   PAGES    count (4, 1..MIG_PAGES_MAX), zero (4), count page numbers
 *            (8 each, any order: the pages a bitmap names, not one run),
 *            then those pages, 4096 bytes each, in that order
 *   ROUND    a pre-copy round's end: round (4), zero (4), pages sent (8)
 *   STATE    the snapshot state file's image (core/snap.h), whole
 *   READY    target -> source: the state is checked, nothing taken yet
 *   RELEASED source -> target: the source let go of its disk images' locks
 *   RUNNING  target -> source: the guest runs there
 *   ERROR    either way: one line, why the sender gives up
 *
 * Everything from the peer is hostile: a length beyond its type's bound,
 * a page outside RAM, a frame out of order is one line in err, never a
 * read past a buffer; every read and write is bounded in time. */
#ifndef SKIFF_MIG_PROTO_H
#define SKIFF_MIG_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define MIG_MAGIC      "SKIFFMIG"
#define MIG_VERSION    3u /* 3: CONFIG; 2: PAGES lists its pages (1: one run) */
#define MIG_CONFIG_MAX (1u << 20)
#define MIG_PAGE       4096u
#define MIG_PAGES_MAX  256u /* 1 MiB of pages in a frame */
#define MIG_ERR_MAX    512u
#define MIG_IO_MS      30000 /* a peer silent this long is gone */
/* Pre-copy rounds at most, the switch's last round not counted: the
 * target refuses a stream longer than these and that one, each of at most
 * all of RAM. */
#define MIG_ROUNDS_MAX 8u

enum mig_type {
	MIG_HELLO = 1,
	MIG_PAGES,
	MIG_ROUND,
	MIG_STATE,
	MIG_READY,
	MIG_RELEASED,
	MIG_RUNNING,
	MIG_ERROR,
	MIG_CONFIG,
	MIG_NR_TYPES
};

struct mig_hello {
	char magic[8];
	uint32_t version, zero;
	uint64_t ram, zero2;
};

struct mig_pages {
	uint32_t count, zero;
	/* then uint64_t page[count], then the pages */
};

/* A PAGES frame's payload bytes for count pages. */
static inline uint64_t mig_pages_len(uint64_t count)
{
	return sizeof(struct mig_pages) + count * (sizeof(uint64_t) + MIG_PAGE);
}

/* "HELLO", for messages. */
const char *mig_type_name(uint32_t type);
/* A header's type and length against the type's bounds: 0, or -1 with
 * one line in err. */
int mig_hdr_check(uint32_t type, uint32_t len, char *err, size_t errlen);
/* A PAGES header against the frame's length. */
int mig_pages_check(const struct mig_pages *p, uint32_t len, char *err, size_t errlen);
/* Its page numbers against RAM of ram bytes. */
int mig_pages_list_check(const uint64_t *page, uint32_t count, uint64_t ram, char *err,
			 size_t errlen);
/* A HELLO: magic, version, RAM within (0, max_ram] and whole pages. */
int mig_hello_check(const struct mig_hello *h, uint64_t max_ram, char *err, size_t errlen);

/* All of buf to / from fd within ms, the whole of it (a peer trickling a
 * byte per wait cannot stretch it): 0, or -1 with errno (ETIMEDOUT; EPIPE
 * when the peer closed). */
int mig_write_all(int fd, const void *buf, size_t len, int ms);
int mig_read_all(int fd, void *buf, size_t len, int ms);
/* All of iov[0, n) to / from fd within ms, as mig_write_all (iov is
 * advanced in place). */
int mig_writev_all(int fd, struct iovec *iov, int n, int ms);
int mig_readv_all(int fd, struct iovec *iov, int n, int ms);
/* A frame: header then payload (len may be 0). */
int mig_send(int fd, uint32_t type, const void *payload, uint32_t len);
/* A frame whose payload is two pieces (PAGES: header, then the pages). */
int mig_send2(int fd, uint32_t type, const void *a, uint32_t alen, const void *b, uint32_t blen);
/* The next header, checked: 0, or -1 with one line in err. */
int mig_recv_hdr(int fd, uint32_t *type, uint32_t *len, char *err, size_t errlen);
/* Waits for frame `want` with no payload beyond max (payload into buf):
 * 0; MIG_PEER_GAVE_UP when the peer sent an ERROR frame (its line in err:
 * it answered, and gave up); -1 for anything else (a closed or silent
 * stream, a wrong frame: no answer), one line in err. */
#define MIG_PEER_GAVE_UP (-2)
int mig_expect(int fd, uint32_t want, void *buf, uint32_t max, uint32_t *len, char *err,
	       size_t errlen);

/* "unix:PATH" or "tcp:HOST:PORT" (a numeric IPv4 or [IPv6] address, or a
 * name of the hosts file: mig_hosts.h; no DNS under seccomp) to a socket
 * connected (mig_connect: the first of a name's addresses that connects)
 * or accepting one connection within ms (mig_listen_accept: on the first
 * that binds). fd or -1 with one line in err. */
int mig_connect(const char *url, char *err, size_t errlen);
int mig_listen_accept(const char *url, int ms, char *err, size_t errlen);

#endif
