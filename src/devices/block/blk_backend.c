// SPDX-License-Identifier: Apache-2.0
#include "devices/block/blk_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dirty.h"
#include "core/log.h"

static void backend_set_serial(struct blk_backend *b, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path; /* not empty: path names a file */
	/* GET_ID wants it NUL-padded to 20 bytes (memset by the caller),
	 * truncated without a terminator when the name is longer. */
	memcpy(b->serial, base, strnlen(base, sizeof(b->serial)));
}

/* cur's own file (the same inode): with cur's fds in b, true. */
static bool backend_is_cur(struct blk_backend *b, const struct blk_backend *cur,
			   const struct stat *st)
{
	struct stat cst;
	if (!cur || cur->fd < 0 || fstat(cur->fd, &cst) < 0 || cst.st_dev != st->st_dev ||
	    cst.st_ino != st->st_ino)
		return false;
	close(b->fd);
	b->fd = cur->fd;
	b->dfd = cur->dfd;
	atomic_store(&b->direct_refused, atomic_load(&cur->direct_refused));
	return true;
}

/* The second, O_DIRECT, open file of the image b->fd has open (st): not
 * locked (the lock on b->fd covers the image, and a second flock of ours
 * would conflict with it), and checked to be the same file in case path
 * changed in between. */
static int backend_open_direct(struct blk_backend *b, const char *path, const struct stat *st,
			       char *err, size_t errlen)
{
	/* O_NONBLOCK as for the first open; F_SETFL then sets the status
	 * flags to O_DIRECT alone, dropping O_NONBLOCK. */
	b->dfd = open(path, (b->ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK | O_DIRECT);
	if (b->dfd < 0) {
		if (errno == EINVAL)
			snprintf(err, errlen, "%s: direct: the host file system has no O_DIRECT",
				 path);
		else
			snprintf(err, errlen, "cannot open %s with direct: %s", path,
				 strerror(errno));
		return -1;
	}
	struct stat dst;
	if (fstat(b->dfd, &dst) < 0 || dst.st_dev != st->st_dev || dst.st_ino != st->st_ino) {
		snprintf(err, errlen, "%s changed while it was opened", path);
		return -1;
	}
	if (fcntl(b->dfd, F_SETFL, O_DIRECT) < 0) {
		snprintf(err, errlen, "cannot use %s with direct: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int blk_backend_open(struct blk_backend *b, const char *path, bool ro, bool direct, char *err,
		     size_t errlen)
{
	return blk_backend_open_for(b, NULL, path, ro, direct, err, errlen);
}

int blk_backend_open_for(struct blk_backend *b, const struct blk_backend *cur, const char *path,
			 bool ro, bool direct, char *err, size_t errlen)
{
	bool shared = false; /* b's fds are cur's */
	memset(b, 0, sizeof(*b));
	b->fd = b->dfd = -1;
	b->ro = ro;
	if (!*path) {
		snprintf(err, errlen, "empty image path");
		return -1;
	}
	/* O_NONBLOCK: opening a FIFO for reading (or a serial line waiting
	 * for carrier) would otherwise block until someone else acts, with
	 * the main thread, which opens a PATCHed drive's image, stuck in it.
	 * It is dropped once the file is known to be an image (below). */
	b->fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK);
	if (b->fd < 0) {
		if (errno == EISDIR)
			snprintf(err, errlen, "%s is a directory, not a disk image", path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(b->fd, &st) < 0) {
		snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is a directory, not a disk image", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file or block device", path);
		goto fail;
	}
	/* io_uring answers EAGAIN, instead of waiting, on a file left
	 * O_NONBLOCK. F_SETFL changes only the status flags: this clears
	 * O_NONBLOCK, the only one set. */
	if (fcntl(b->fd, F_SETFL, 0) < 0) {
		snprintf(err, errlen, "cannot use %s: %s", path, strerror(errno));
		goto fail;
	}
	/* A second open file of cur's image would conflict with cur's own
	 * lock (flock locks belong to the open file): keep cur's, and its
	 * lock with it. */
	shared = backend_is_cur(b, cur, &st);
	if (!shared && flock(b->fd, (ro ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0) {
		snprintf(err, errlen, "%s is in use (locked by another --disk or process)", path);
		goto fail;
	}
	if (!shared && direct && backend_open_direct(b, path, &st, err, errlen) < 0)
		goto fail;
	/* lseek works for files and block devices alike (st_size is 0 for
	 * the latter). */
	off_t size = lseek(b->fd, 0, SEEK_END);
	if (size < 0) {
		snprintf(err, errlen, "cannot get the size of %s: %s", path, strerror(errno));
		goto fail;
	}
	b->capacity = (uint64_t)size / BLK_SECTOR_SIZE;
	backend_set_serial(b, path);
	return 0;
fail:
	if (shared)
		b->fd = b->dfd = -1; /* cur's, not ours to close */
	blk_backend_close(b);
	return -1;
}

void blk_backend_close(struct blk_backend *b)
{
	if (b->fd >= 0)
		close(b->fd);
	if (b->dfd >= 0)
		close(b->dfd);
	b->fd = b->dfd = -1;
}

int blk_backend_fd_for(const struct blk_backend *b, const struct iovec *iov, unsigned int n,
		       uint64_t off)
{
	/* Relaxed: a transfer that reads a stale false is one more EINVAL,
	 * redone buffered like the first. */
	if (b->dfd < 0 || atomic_load_explicit(&b->direct_refused, memory_order_relaxed))
		return b->fd;
	uint64_t bits = off;
	for (unsigned int i = 0; i < n; i++)
		bits |= (uintptr_t)iov[i].iov_base | iov[i].iov_len;
	return bits % BLK_DIRECT_ALIGN ? b->fd : b->dfd;
}

bool blk_backend_refuse_direct(struct blk_backend *b)
{
	if (b->dfd < 0 || atomic_exchange(&b->direct_refused, true))
		return false;
	/* The serial is the image's name, not always NUL-terminated. */
	log_warn("disk %.*s: the host refused an O_DIRECT transfer aligned to %d bytes "
		 "(it wants more); this disk goes through the page cache from now on",
		 BLK_ID_BYTES, b->serial, BLK_DIRECT_ALIGN);
	return true;
}

/* Drops the first n bytes of iov[0, *cnt), after a short transfer. */
static struct iovec *backend_iov_advance(struct iovec *iov, unsigned int *cnt, size_t n)
{
	while (*cnt && n >= iov->iov_len) {
		n -= iov->iov_len;
		iov++;
		(*cnt)--;
	}
	if (*cnt) {
		iov->iov_base = (uint8_t *)iov->iov_base + n;
		iov->iov_len -= n;
	}
	return iov;
}

static int backend_rw(struct blk_backend *b, struct iovec *iov, unsigned int n, uint64_t off,
		      bool write)
{
	bool buffered = false; /* the direct file refused this one */
	while (n) {
		if (!iov->iov_len) { /* preadv would return 0: not EOF */
			iov++;
			n--;
			continue;
		}
		/* Chosen again after a short transfer, which may leave the
		 * rest unaligned. */
		int fd = buffered ? b->fd : blk_backend_fd_for(b, iov, n, off);
		ssize_t r = write ? pwritev(fd, iov, (int)n, (off_t)off)
				  : preadv(fd, iov, (int)n, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* The direct file wants more alignment: redone on the
			 * buffered one (fd_for's choice from now on). */
			if (errno == EINVAL && fd == b->dfd && fd != b->fd) {
				blk_backend_refuse_direct(b);
				buffered = true;
				continue;
			}
			return -errno;
		}
		if (r == 0)
			return -EIO; /* the image shrank under us */
		if (!write)	     /* preadv wrote guest RAM behind KVM's back */
			dirty_mark_iov(iov, n, (size_t)r);
		off += (uint64_t)r;
		iov = backend_iov_advance(iov, &n, (size_t)r);
	}
	return 0;
}

int blk_backend_lock(struct blk_backend *b, bool lock)
{
	int op = lock ? (b->ro ? LOCK_SH : LOCK_EX) | LOCK_NB : LOCK_UN;
	return flock(b->fd, op) < 0 ? -errno : 0;
}

int blk_backend_read(struct blk_backend *b, struct iovec *iov, unsigned int n, uint64_t off)
{
	return backend_rw(b, iov, n, off, false);
}

int blk_backend_write(struct blk_backend *b, struct iovec *iov, unsigned int n, uint64_t off)
{
	return backend_rw(b, iov, n, off, true);
}

int blk_backend_flush(struct blk_backend *b)
{
	while (fdatasync(b->fd) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static int backend_fallocate(struct blk_backend *b, int mode, uint64_t off, uint64_t len)
{
	while (fallocate(b->fd, mode, (off_t)off, (off_t)len) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

int blk_backend_discard(struct blk_backend *b, uint64_t off, uint64_t len)
{
	int r = backend_fallocate(b, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	/* Discard is a hint: a host that cannot punch holes just keeps the data. */
	return r == -EOPNOTSUPP || r == -ENOSYS ? 0 : r;
}

static int backend_write_zero_bytes(struct blk_backend *b, uint64_t off, uint64_t len)
{
	static const uint8_t zeroes[64 * 1024];
	while (len) {
		size_t chunk = len < sizeof(zeroes) ? (size_t)len : sizeof(zeroes);
		struct iovec iov = {.iov_base = (void *)zeroes, .iov_len = chunk};
		int r = backend_rw(b, &iov, 1, off, true);
		if (r < 0)
			return r;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

int blk_backend_write_zeroes(struct blk_backend *b, uint64_t off, uint64_t len, bool unmap)
{
	int r = -EOPNOTSUPP;
	/* Cheapest first; each falls through to the next when the host file
	 * system lacks it (tmpfs has PUNCH_HOLE but not ZERO_RANGE). A hole
	 * reads as zeroes, so it serves when the guest allows unmapping. */
	if (unmap)
		r = backend_fallocate(b, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	if (r == -EOPNOTSUPP || r == -ENOSYS)
		r = backend_fallocate(b, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len);
	if (r == -EOPNOTSUPP || r == -ENOSYS)
		r = backend_write_zero_bytes(b, off, len);
	return r;
}
