// SPDX-License-Identifier: Apache-2.0
/* A minimal bzImage that passes skiff's header checks: a setup header
 * (protocol 2.15, 64-bit, relocatable) and an empty protected-mode part.
 * The caller frees it. */
#ifndef SKIFF_TEST_FAKE_BZIMAGE_H
#define SKIFF_TEST_FAKE_BZIMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "x86/bzimage.h"

#define FAKE_SETUP_SECTS 4
#define FAKE_SYS_LEN	 (64 * 1024)
#define FAKE_LEN	 ((FAKE_SETUP_SECTS + 1) * 512 + FAKE_SYS_LEN)

static inline uint8_t *fake_bzimage(void)
{
	uint8_t *b = calloc(1, FAKE_LEN);
	struct setup_header h;
	memset(&h, 0, sizeof(h));
	h.setup_sects = FAKE_SETUP_SECTS;
	h.syssize = FAKE_SYS_LEN / 16;
	h.boot_flag = 0xAA55;
	h.header = 0x53726448;
	h.version = 0x020f;
	h.loadflags = LOADED_HIGH;
	h.relocatable_kernel = 1;
	h.xloadflags = XLF_KERNEL_64;
	h.kernel_alignment = 0x200000;
	h.cmdline_size = 2047;
	h.initrd_addr_max = 0x7fffffff;
	h.pref_address = 0x1000000;
	h.init_size = 0x2000000;
	if (b)
		memcpy(b + 0x1f1, &h, sizeof(h));
	return b;
}

#endif
