// SPDX-License-Identifier: Apache-2.0
#include "x86/zeropage.h"

#include <stdio.h>
#include <string.h>

#include "x86/layout.h"

#define E820_RAM      1
#define E820_RESERVED 2
#define PAGE_SIZE     4096ULL

static unsigned int e820_add(struct boot_e820_entry *t, unsigned int n, unsigned int max,
			     uint64_t addr, uint64_t size, uint32_t type)
{
	if (n >= max || size == 0)
		return n;
	t[n].addr = addr;
	t[n].size = size;
	t[n].type = type;
	return n + 1;
}

unsigned int e820_build(const struct guest_mem *gm, struct boot_e820_entry *t, unsigned int max)
{
	unsigned int n = 0;
	n = e820_add(t, n, max, 0, LAYOUT_EBDA, E820_RAM);
	n = e820_add(t, n, max, LAYOUT_EBDA, 0xa0000 - LAYOUT_EBDA, E820_RESERVED);
	n = e820_add(t, n, max, LAYOUT_BIOS_START, LAYOUT_BIOS_END - LAYOUT_BIOS_START,
		     E820_RESERVED);
	if (gm->low_size > LAYOUT_HIMEM)
		n = e820_add(t, n, max, LAYOUT_HIMEM, gm->low_size - LAYOUT_HIMEM, E820_RAM);
	if (gm->size > gm->low_size)
		n = e820_add(t, n, max, GUEST_MEM_HIGH_BASE, gm->size - gm->low_size, E820_RAM);
	return n;
}

int initrd_place(const struct guest_mem *gm, uint64_t min_addr, uint32_t initrd_addr_max,
		 uint64_t size, uint64_t *addr)
{
	uint64_t top = (uint64_t)initrd_addr_max + 1;
	if (top > gm->low_size)
		top = gm->low_size;
	min_addr = (min_addr + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	if (size > top || top - size < min_addr)
		return -1;
	*addr = (top - size) & ~(PAGE_SIZE - 1);
	return 0;
}

int cmdline_check(const struct bzimage *bz, const char *cmdline, char *err, size_t errlen)
{
	size_t len = strlen(cmdline);
	size_t max = bz->hdr.cmdline_size ? bz->hdr.cmdline_size : 255;
	if (max > LAYOUT_CMDLINE_MAX - 1)
		max = LAYOUT_CMDLINE_MAX - 1;
	if (len > max) {
		snprintf(err, errlen, "command line too long: %zu bytes, kernel accepts %zu", len,
			 max);
		return -1;
	}
	return 0;
}

void zeropage_build(struct boot_params *bp, const struct bzimage *bz, const struct guest_mem *gm,
		    uint64_t cmdline_addr, uint64_t initrd_addr, uint64_t initrd_size,
		    uint64_t rsdp_addr)
{
	memset(bp, 0, sizeof(*bp));
	bp->hdr = bz->hdr;
	bp->hdr.type_of_loader = 0xff; /* undefined loader */
	bp->hdr.loadflags |= CAN_USE_HEAP;
	bp->hdr.loadflags &= ~KEEP_SEGMENTS;
	bp->hdr.heap_end_ptr = 0xfe00;
	bp->hdr.cmd_line_ptr = (uint32_t)cmdline_addr;
	bp->ext_cmd_line_ptr = (uint32_t)(cmdline_addr >> 32);
	bp->hdr.ramdisk_image = (uint32_t)initrd_addr;
	bp->hdr.ramdisk_size = (uint32_t)initrd_size;
	bp->ext_ramdisk_image = (uint32_t)(initrd_addr >> 32);
	bp->ext_ramdisk_size = (uint32_t)(initrd_size >> 32);
	bp->hdr.code32_start = (uint32_t)bz->load_addr;
	bp->acpi_rsdp_addr = rsdp_addr;
	bp->e820_entries = (uint8_t)e820_build(gm, bp->e820_table, E820_MAX_ENTRIES_ZEROPAGE);
}
