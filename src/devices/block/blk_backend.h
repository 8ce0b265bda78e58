// SPDX-License-Identifier: Apache-2.0
/* A raw disk image on the host: a regular file or a block device, read and
 * written in place with preadv/pwritev. No format, no cache of our own: the
 * host page cache is the disk's write-back cache, and blk_backend_flush
 * (fdatasync) is what makes writes durable. With direct, a second open file
 * of the image with O_DIRECT (QEMU's cache=none) takes every transfer whose
 * buffers, lengths and offset are BLK_DIRECT_ALIGN-aligned, bypassing the
 * host page cache; the rest still go through the first, buffered, which
 * Linux keeps coherent with direct I/O (it writes back and invalidates the
 * cached range around each direct transfer).
 *
 * Threads: the I/O calls are positioned (no shared file offset), so any
 * thread may call them; open/close run while no I/O is in flight. */
#ifndef SKIFF_BLK_BACKEND_H
#define SKIFF_BLK_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define BLK_SECTOR_SIZE 512
#define BLK_ID_BYTES	20 /* virtio-blk GET_ID string length */
/* O_DIRECT's alignment: the largest logical block size in common use (4Kn
 * disks, file systems of 4 KiB blocks) rather than one asked of the host,
 * which would take an ioctl or statx the sandbox does not allow. A host
 * that wants more (a 16 KiB-sector device) refuses such a transfer with
 * EINVAL: it is redone buffered, and from then on the disk goes buffered
 * (direct_refused), said once on stderr. */
#define BLK_DIRECT_ALIGN 4096

struct blk_backend {
	int fd;
	int dfd;		    /* the O_DIRECT open file of the image, or -1 */
	atomic_bool direct_refused; /* dfd said EINVAL: fd takes everything */
	bool ro;
	uint64_t capacity; /* whole 512-byte sectors; a partial tail is unused */
	/* GET_ID answer: NUL-padded, not NUL-terminated when 20 bytes long. */
	char serial[BLK_ID_BYTES];
};

/* Gives up (lock false) or takes again the image's lock, as open took it:
 * a live migration hands the image over. 0 or -errno (EWOULDBLOCK: another
 * process holds it). */
int blk_backend_lock(struct blk_backend *b, bool lock);

/* Opens path (read-only if ro; also with O_DIRECT if direct) and takes an
 * advisory lock (shared if ro, else exclusive) so two VMMs cannot write one
 * image. The serial is the file name. Returns 0, or -1 with a one-line
 * reason in err. */
int blk_backend_open(struct blk_backend *b, const char *path, bool ro, bool direct, char *err,
		     size_t errlen);
/* The same for the image that replaces cur (PATCH /drives), with cur's ro
 * and direct: if path names cur's own file, as after a resize, b gets
 * cur's fds (and lock), not second ones; close only one of the two. */
int blk_backend_open_for(struct blk_backend *b, const struct blk_backend *cur, const char *path,
			 bool ro, bool direct, char *err, size_t errlen);
void blk_backend_close(struct blk_backend *b);
/* The open file for a transfer of iov[0, n) at off: the direct one when
 * there is one, the host has not refused it and everything is aligned for
 * it, else the buffered one. */
int blk_backend_fd_for(const struct blk_backend *b, const struct iovec *iov, unsigned int n,
		       uint64_t off);
/* After EINVAL from the direct file (a transfer it had to take, aligned
 * to BLK_DIRECT_ALIGN): sends everything to the buffered one from now on,
 * with one stderr line naming the image. Returns false if it already had. */
bool blk_backend_refuse_direct(struct blk_backend *b);

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
