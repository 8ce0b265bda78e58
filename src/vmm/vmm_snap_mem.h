// SPDX-License-Identifier: Apache-2.0
/* A snapshot's memory file (docs/SNAPSHOT.md), a sparse file of the VM's
 * size: Full holds every page that is not zero (a hole reads as the zero
 * page it stands for, as QEMU's stream marks zero pages instead of sending
 * them); Diff only the pages a dirty bitmap names, zero or not (a hole
 * there means "unchanged": it is merged over its base, as Firecracker's). */
#ifndef SKIFF_VMM_SNAP_MEM_H
#define SKIFF_VMM_SNAP_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Cuts fd to zero, then to size (holes), then writes each run of set bits
 * of bits (a bit per 4 KiB page of ram) at its offset; synced. The bytes
 * written in *written. 0, or -1 with one line naming path in err. */
int snap_mem_write_diff(int fd, const char *path, const uint8_t *ram, uint64_t size,
			const uint64_t *bits, uint64_t *written, char *err, size_t errlen);

/* A Full file: the pages of ram that are not zero, at their offsets, the
 * rest holes. As snap_mem_write_diff; ram_fd and pagemap as
 * dirty_bits_nonzero_file's (-1: ram is not mapped from a file). */
int snap_mem_write_full(int fd, const char *path, const uint8_t *ram, uint64_t size, int ram_fd,
			int pagemap, uint64_t *written, char *err, size_t errlen);

#endif
