// SPDX-License-Identifier: Apache-2.0
#include "vmm/vmm_mem_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static int mf_fail(int fd)
{
	if (fd >= 0)
		close(fd);
	return -1;
}

int vmm_mem_file_open(struct vmm_mem_file *mf, const char *path, uint64_t size, char *err,
		      size_t errlen)
{
	struct stat st;
	mf->held = false;
	mf->fd = mf->pagemap = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot open the memory file %s: %s", path, strerror(errno));
		return mf_fail(fd);
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "the memory file %s is not a regular file", path);
		return mf_fail(fd);
	}
	if ((uint64_t)st.st_size != size) {
		snprintf(err, errlen,
			 "the memory file %s is %llu bytes, the snapshot's VM has %llu", path,
			 (unsigned long long)st.st_size, (unsigned long long)size);
		return mf_fail(fd);
	}
	/* Another skiff's snapshot create holds it exclusively while it
	 * writes it. Another failure (a filesystem without locks) leaves the
	 * file unguarded against other processes, as before locks. */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		snprintf(err, errlen,
			 "the memory file %s is being written by a snapshot: load it once that is "
			 "done",
			 path);
		return mf_fail(fd);
	}
	mf->fd = fd;
	mf->st = st;
	mf->held = true;
	/* Which of the RAM's pages the guest wrote, for a scan that reads
	 * only those and the file's data (a restored guest's migration or
	 * Full snapshot); without it every page is read, as before. */
	mf->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	return 0;
}

void vmm_mem_file_close(struct vmm_mem_file *mf)
{
	if (mf->held)
		close(mf->fd);
	if (mf->held && mf->pagemap >= 0)
		close(mf->pagemap);
	mf->held = false;
	mf->fd = mf->pagemap = -1;
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool vmm_same_file(const struct stat *a, const struct stat *b)
{
	if (a->st_ino != b->st_ino)
		return false;
	return a->st_dev == b->st_dev ||
	       (a->st_size == b->st_size && same_time(a->st_mtim, b->st_mtim) &&
		same_time(a->st_ctim, b->st_ctim));
}

int vmm_mem_file_guard(const struct vmm_mem_file *mf, int fd, const char *path, char *err,
		       size_t errlen)
{
	struct stat st;
	if (mf && mf->held && fstat(fd, &st) == 0 && vmm_same_file(&mf->st, &st)) {
		snprintf(err, errlen,
			 "%s is the memory file this microVM was restored from (its RAM is read "
			 "from it): write the snapshot to another file",
			 path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		snprintf(err, errlen,
			 "%s is in use: a running microVM's RAM is read from it, or a snapshot "
			 "is being written to it: write the snapshot to another file",
			 path);
		return -1;
	}
	return 0;
}
