// SPDX-License-Identifier: Apache-2.0
/* Parsing and validating a Linux x86 bzImage (Documentation/arch/x86/boot.rst). */
#ifndef SKIFF_BZIMAGE_H
#define SKIFF_BZIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include <asm/bootparam.h>

#define BZIMAGE_MIN_PROTOCOL 0x020c	  /* 2.12: xloadflags, 64-bit entry */
#define BZIMAGE_DEFAULT_LOAD 0x1000000ULL /* 16 MiB, CONFIG_PHYSICAL_START */
#define BZIMAGE_ENTRY64	     0x200	  /* the 64-bit entry, into the kernel */

struct bzimage {
	struct setup_header hdr; /* copy of the image's setup header */
	const uint8_t *kernel;	 /* protected-mode code inside the file buffer */
	size_t kernel_len;
	size_t setup_len;   /* real-mode part, (setup_sects + 1) * 512 */
	uint64_t load_addr; /* where the protected-mode code goes */
	uint64_t init_size; /* memory the kernel needs from load_addr on */
};

/* Validates `buf` as a bzImage; on error returns -1 and a one-line reason. */
int bzimage_parse(const uint8_t *buf, size_t len, struct bzimage *out, char *err, size_t errlen);

#endif
