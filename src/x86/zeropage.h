// SPDX-License-Identifier: Apache-2.0
/* The zero page (struct boot_params): e820 map, command line, initrd. */
#ifndef SKIFF_ZEROPAGE_H
#define SKIFF_ZEROPAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "x86/bzimage.h"

/* Fills `table` (at most `max` entries) with the guest's memory map for a
 * RAM layout; returns the number of entries. */
unsigned int e820_build(const struct guest_mem *gm, struct boot_e820_entry *table,
			unsigned int max);

/* Picks the highest page-aligned address for an initrd of `size` bytes that
 * lies above `min_addr`, ends at or below initrd_addr_max + 1 and inside low
 * RAM. Returns 0 and *addr, or -1 if it does not fit. */
int initrd_place(const struct guest_mem *gm, uint64_t min_addr, uint32_t initrd_addr_max,
		 uint64_t size, uint64_t *addr);

/* Checks the command line against the kernel's limit (cmdline_size);
 * -1 with a reason if too long. */
int cmdline_check(const struct bzimage *bz, const char *cmdline, char *err, size_t errlen);

/* Builds the zero page in `bp` from the image header and the placements. */
void zeropage_build(struct boot_params *bp, const struct bzimage *bz, const struct guest_mem *gm,
		    uint64_t cmdline_addr, uint64_t initrd_addr, uint64_t initrd_size,
		    uint64_t rsdp_addr);

#endif
