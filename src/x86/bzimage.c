// SPDX-License-Identifier: Apache-2.0
#include "x86/bzimage.h"

#include <stdio.h>
#include <string.h>

#define SETUP_HDR_OFFSET 0x1f1
#define BOOT_FLAG_MAGIC	 0xAA55
#define HDRS_MAGIC	 0x53726448 /* "HdrS" */

int bzimage_parse(const uint8_t *buf, size_t len, struct bzimage *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (len < SETUP_HDR_OFFSET + sizeof(struct setup_header)) {
		snprintf(err, errlen, "not a bzImage: file too small (%zu bytes)", len);
		return -1;
	}
	memcpy(&out->hdr, buf + SETUP_HDR_OFFSET, sizeof(out->hdr));
	const struct setup_header *h = &out->hdr;
	if (h->boot_flag != BOOT_FLAG_MAGIC || h->header != HDRS_MAGIC) {
		snprintf(err, errlen, "not a bzImage: missing boot signature");
		return -1;
	}
	if (h->version < BZIMAGE_MIN_PROTOCOL) {
		snprintf(err, errlen, "bzImage boot protocol %u.%02u too old (need 2.12 or newer)",
			 h->version >> 8, h->version & 0xff);
		return -1;
	}
	if (!(h->loadflags & LOADED_HIGH)) {
		snprintf(err, errlen, "bzImage is not loaded high (zImage is not supported)");
		return -1;
	}
	if (!(h->xloadflags & XLF_KERNEL_64)) {
		snprintf(err, errlen, "bzImage has no 64-bit entry point");
		return -1;
	}
	if (!h->relocatable_kernel) {
		snprintf(err, errlen, "bzImage is not relocatable");
		return -1;
	}
	unsigned int setup_sects = h->setup_sects ? h->setup_sects : 4;
	out->setup_len = (size_t)(setup_sects + 1) * 512;
	uint64_t sys_len = (uint64_t)h->syssize * 16;
	if (out->setup_len >= len || sys_len == 0 || sys_len > len - out->setup_len) {
		snprintf(err, errlen, "truncated bzImage: %zu bytes, header promises %llu", len,
			 (unsigned long long)(out->setup_len + sys_len));
		return -1;
	}
	out->kernel = buf + out->setup_len;
	out->kernel_len = len - out->setup_len;
	/* The guest starts at load_addr + BZIMAGE_ENTRY64: inside what is
	 * loaded (found by fuzz_bzimage: a 16-byte kernel, entered past the
	 * end of guest RAM). */
	if (out->kernel_len <= BZIMAGE_ENTRY64) {
		snprintf(err, errlen, "bzImage kernel of %zu bytes has no 64-bit entry at %#x",
			 out->kernel_len, BZIMAGE_ENTRY64);
		return -1;
	}
	out->load_addr = h->pref_address ? h->pref_address : BZIMAGE_DEFAULT_LOAD;
	uint64_t align = h->kernel_alignment ? h->kernel_alignment : 0x200000;
	if (align & (align - 1)) {
		snprintf(err, errlen, "bzImage kernel_alignment %#llx is not a power of two",
			 (unsigned long long)align);
		return -1;
	}
	out->load_addr = (out->load_addr + align - 1) & ~(align - 1);
	out->init_size = h->init_size > out->kernel_len ? h->init_size : out->kernel_len;
	return 0;
}
