// SPDX-License-Identifier: Apache-2.0
/* Loading a Linux bzImage, initrd and command line into guest memory and
 * building the zero page, ACPI tables and boot page tables. */
#ifndef SKIFF_X86_BOOT_H
#define SKIFF_X86_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "x86/bzimage.h"

struct boot_image {
	uint8_t *kernel_file; /* whole bzImage, owned */
	size_t kernel_file_len;
	struct bzimage bz;
	int initrd_fd; /* -1 if none */
	uint64_t initrd_size;
	const char *initrd_path;
	const char *cmdline;
	/* Host-decompressed kernel (see vmlinux.h); NULL: the guest unpacks */
	const uint8_t *vmlinux;
	size_t vmlinux_len;
	int vmlinux_mapped; /* from the cache (munmap) or malloc'd (free) */
	uint64_t vmlinux_entry;
};

enum boot_unpack { BOOT_UNPACK_HOST, BOOT_UNPACK_GUEST };

/* Reads and validates the kernel, opens the initrd, and checks that both
 * fit in `mem_size` bytes of RAM and that the command line fits, before
 * any VM exists. -1 with a one-line reason on bad input. */
int boot_image_open(struct boot_image *img, const char *kernel, const char *initrd,
		    const char *cmdline, uint64_t mem_size, enum boot_unpack unpack, char *err,
		    size_t errlen);
/* Decompresses the kernel on the host, through the cache (0, or -1 if the
 * payload cannot be unpacked here; the image then boots the usual way). */
int boot_image_unpack(struct boot_image *img, char *err, size_t errlen);
void boot_image_close(struct boot_image *img);

/* Places everything in guest RAM; returns the 64-bit entry point in *entry
 * (0 on success, -1 with a reason). */
int boot_image_load(const struct boot_image *img, const struct guest_mem *gm, int nr_cpus,
		    uint64_t *entry, char *err, size_t errlen);

#endif
