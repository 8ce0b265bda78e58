// SPDX-License-Identifier: Apache-2.0
#include "x86/kcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

uint64_t kcache_hash(const uint8_t *p, size_t len)
{
	return XXH3_64bits(p, len);
}

static int kcache_dir(char *out, size_t len)
{
	const char *d = getenv("SKIFF_CACHE_DIR");
	if (d)
		return *d ? (snprintf(out, len, "%s", d) < (int)len ? 0 : -1) : -1;
	if ((d = getenv("XDG_CACHE_HOME")) && *d)
		return snprintf(out, len, "%s/skiff", d) < (int)len ? 0 : -1;
	if ((d = getenv("HOME")) && *d)
		return snprintf(out, len, "%s/.cache/skiff", d) < (int)len ? 0 : -1;
	return -1;
}

static int kcache_path(uint64_t key, char *out, size_t len)
{
	char dir[PATH_MAX];
	if (kcache_dir(dir, sizeof(dir)) < 0)
		return -1;
	return snprintf(out, len, "%s/vmlinux-%016llx", dir, (unsigned long long)key) < (int)len
		   ? 0
		   : -1;
}

const uint8_t *kcache_lookup(uint64_t key, size_t *len)
{
	char path[PATH_MAX];
	if (kcache_path(key, path, sizeof(path)) < 0)
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *p = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return p;
}

static void mkdir_parents(char *dir)
{
	for (char *s = dir + 1; *s; s++) {
		if (*s == '/') {
			*s = 0;
			mkdir(dir, 0700);
			*s = '/';
		}
	}
	mkdir(dir, 0700);
}

void kcache_store(uint64_t key, const uint8_t *p, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 32];
	if (kcache_dir(dir, sizeof(dir)) < 0 || kcache_path(key, path, sizeof(path)) < 0)
		return;
	mkdir_parents(dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (close(fd) == 0 && done == len && rename(tmp, path) == 0)
		return;
	unlink(tmp);
}

void kcache_release(const uint8_t *p, size_t len)
{
	if (p)
		munmap((void *)p, len);
}
