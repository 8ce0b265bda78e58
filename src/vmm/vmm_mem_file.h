// SPDX-License-Identifier: Apache-2.0
/* The memory file a snapshot load maps privately as guest RAM
 * (mem_backend's path): every page the guest has not written yet is read
 * from that file for the VM's life, so a snapshot written over it would
 * change the RAM under the guest, and one cut short would unmap it.
 *
 *  - The load holds the file open with a shared flock(2) until the VM is
 *    destroyed (after its RAM is unmapped).
 *  - A snapshot's create takes an exclusive flock on each of its two
 *    files before writing them, held until it closes them: refused while
 *    any VM of any skiff on this host runs from that file, under whatever
 *    name it has there (a hard link, a bind mount, another jail's
 *    chroot), and a load of a file a snapshot is still writing is
 *    refused in turn.
 *  - This VM's own file is refused first by its identity, in words of its
 *    own: the same device and inode, or, where the device number differs
 *    (overlayfs shows a layer's file under its own device, and both
 *    names share the file's pages), the same inode number, size and
 *    modification and change times.
 *
 * The locks are advisory: skiff's snapshots and loads honour them, other
 * programs may not. Threads: the controller's (its filter has flock and
 * fstat). */
#ifndef SKIFF_VMM_MEM_FILE_H
#define SKIFF_VMM_MEM_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct vmm_mem_file {
	bool held;	/* fd open, its shared lock taken */
	int fd;		/* valid while held */
	int pagemap;	/* /proc/self/pagemap, or -1 (dirty_bits_nonzero_file) */
	struct stat st; /* at the load */
};

/* Opens path, which must be a regular file of exactly size bytes, and
 * takes its shared lock; O_NONBLOCK, as a FIFO's open would wait. 0, or -1
 * with one line in err and nothing held. */
int vmm_mem_file_open(struct vmm_mem_file *mf, const char *path, uint64_t size, char *err,
		      size_t errlen);
/* Lets go of it (not held: nothing). */
void vmm_mem_file_close(struct vmm_mem_file *mf);
/* b names a's file: the same device and inode, or, under another device
 * number (an overlayfs name of a layer's file: it reports the layer's
 * inode number and times), the same inode number, size and times. */
bool vmm_same_file(const struct stat *a, const struct stat *b);
/* fd, a snapshot's file opened for writing as path: 0 if no running VM's
 * RAM is read from it (this one's, mf, NULL or not held if it has none);
 * fd then holds an exclusive lock until it is closed. -1 with one line. */
int vmm_mem_file_guard(const struct vmm_mem_file *mf, int fd, const char *path, char *err,
		       size_t errlen);

#endif
