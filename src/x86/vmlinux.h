// SPDX-License-Identifier: Apache-2.0
/* Host-side kernel decompression: a bzImage carries its kernel as a
 * compressed ELF (vmlinux) that it would otherwise unpack itself, inside the
 * guest, on every boot. Unpacking once on the host and entering the ELF at
 * its 64-bit entry point skips that work (the cost that dominates boot time
 * when guest code runs slowly). The decompressor's KASLR is skipped too: the
 * kernel runs at its link address, as with Firecracker's vmlinux boot. */
#ifndef SKIFF_VMLINUX_H
#define SKIFF_VMLINUX_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "x86/bzimage.h"

#define VMLINUX_MAX_SIZE (512ULL << 20)

/* Decompresses the bzImage's payload into a malloc'd buffer. Returns 0, or
 * -1 with a reason (an unsupported compression format is not an error the
 * user sees: the caller falls back to in-guest decompression). */
int vmlinux_extract(const struct bzimage *bz, uint8_t **out, size_t *out_len, char *err,
		    size_t errlen);

/* Checks an ELF64 x86-64 vmlinux: segments inside the file, physical
 * addresses below `mem_limit`. Returns 0 and the entry point and the end
 * of the highest segment, or -1 with a reason. */
int vmlinux_check(const uint8_t *elf, size_t len, uint64_t mem_limit, uint64_t *entry,
		  uint64_t *end, char *err, size_t errlen);

/* Copies the PT_LOAD segments into guest RAM and zeroes their bss
 * (vmlinux_check must have passed). -1 if a segment is not RAM. */
int vmlinux_load(const uint8_t *elf, size_t len, const struct guest_mem *gm);

#endif
