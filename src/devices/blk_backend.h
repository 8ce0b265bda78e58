/* A raw disk image on the host: a regular file or a block device, read and
 * written in place with preadv/pwritev. No format, no cache of our own: the
 * host page cache is the disk's write-back cache, and blk_backend_flush
 * (fdatasync) is what makes writes durable.
 *
 * Threads: the I/O calls are positioned (no shared file offset), so any
 * thread may call them; open/close run while no I/O is in flight. */
#ifndef SKIFF_BLK_BACKEND_H
#define SKIFF_BLK_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define BLK_SECTOR_SIZE 512
#define BLK_ID_BYTES	20 /* virtio-blk GET_ID string length */

struct blk_backend {
	int fd;
	bool ro;
	uint64_t capacity; /* whole 512-byte sectors; a partial tail is unused */
	/* GET_ID answer: NUL-padded, not NUL-terminated when 20 bytes long. */
	char serial[BLK_ID_BYTES];
};

/* Opens path (read-only if ro) and takes an advisory lock (shared if ro,
 * else exclusive) so two VMMs cannot write one image. The serial is the
 * file name. Returns 0, or -1 with a one-line reason in err. */
int blk_backend_open(struct blk_backend *b, const char *path, bool ro, char *err, size_t errlen);
/* The same for the image that replaces cur (PATCH /drives): if path names
 * cur's own file, as after a resize, b gets cur's fd (and lock), not a
 * second one; close only one of the two. */
int blk_backend_open_for(struct blk_backend *b, const struct blk_backend *cur, const char *path,
			 bool ro, char *err, size_t errlen);
void blk_backend_close(struct blk_backend *b);

/* Transfer all of iov at byte offset off. The iov array is consumed
 * (advanced past short transfers). Return 0 or -errno (-EIO at EOF). */
int blk_backend_read(struct blk_backend *b, struct iovec *iov, unsigned int n, uint64_t off);
int blk_backend_write(struct blk_backend *b, struct iovec *iov, unsigned int n, uint64_t off);
/* Returns only once written data is on stable storage: 0 or -errno. */
int blk_backend_flush(struct blk_backend *b);
/* Deallocates [off, off + len) if the host can (a hint: 0 if it cannot). */
int blk_backend_discard(struct blk_backend *b, uint64_t off, uint64_t len);
/* Makes [off, off + len) read as zeroes, deallocating it if unmap and the
 * host can. 0 or -errno. */
int blk_backend_write_zeroes(struct blk_backend *b, uint64_t off, uint64_t len, bool unmap);

#endif
