// SPDX-License-Identifier: Apache-2.0
/* A snapshot's memory file (docs/SNAPSHOT.md): guest RAM whole (Full), or
 * only the pages a dirty bitmap names, at their offsets in a sparse file of
 * the VM's size (Diff, as Firecracker's: merged over its base later). */
#ifndef SKIFF_VMM_SNAP_MEM_H
#define SKIFF_VMM_SNAP_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Cuts fd to zero, then to size (holes), then writes each run of set bits
 * of bits (a bit per 4 KiB page of ram) at its offset; synced. The bytes
 * written in *written. 0, or -1 with one line naming path in err. */
int snap_mem_write_diff(int fd, const char *path, const uint8_t *ram, uint64_t size,
			const uint64_t *bits, uint64_t *written, char *err, size_t errlen);

#endif
