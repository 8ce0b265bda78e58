// SPDX-License-Identifier: Apache-2.0
#include "x86/vmlinux.h"

#include <elf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t xz_magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0x00};

int vmlinux_extract(const struct bzimage *bz, uint8_t **out, size_t *out_len, char *err,
		    size_t errlen)
{
	uint64_t off = bz->hdr.payload_offset, plen = bz->hdr.payload_length;
	if (plen < sizeof(xz_magic) + 4 || off > bz->kernel_len || plen > bz->kernel_len - off) {
		snprintf(err, errlen, "no payload");
		return -1;
	}
	const uint8_t *p = bz->kernel + off;
	if (memcmp(p, xz_magic, sizeof(xz_magic))) {
		snprintf(err, errlen, "payload is not xz");
		return -1;
	}
	/* The kernel build appends the decompressed size (LE32) to the payload. */
	uint32_t size;
	memcpy(&size, p + plen - 4, 4);
	if (size == 0 || size > VMLINUX_MAX_SIZE) {
		snprintf(err, errlen, "implausible decompressed size %u", size);
		return -1;
	}
	uint8_t *buf = malloc(size);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	uint64_t memlimit = 256ULL << 20;
	size_t in_pos = 0, out_pos = 0;
	lzma_ret r = lzma_stream_buffer_decode(&memlimit, 0, NULL, p, &in_pos, plen - 4, buf,
					       &out_pos, size);
	if (r != LZMA_OK || out_pos != size) {
		free(buf);
		snprintf(err, errlen, "xz decompression failed (%d)", (int)r);
		return -1;
	}
	*out = buf;
	*out_len = size;
	return 0;
}

int vmlinux_check(const uint8_t *elf, size_t len, uint64_t mem_limit, uint64_t *entry,
		  uint64_t *end, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	if (len < sizeof(eh)) {
		snprintf(err, errlen, "vmlinux too small");
		return -1;
	}
	memcpy(&eh, elf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
		snprintf(err, errlen, "vmlinux is not an x86-64 ELF64");
		return -1;
	}
	if (eh.e_phoff > len || (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > len - eh.e_phoff) {
		snprintf(err, errlen, "vmlinux program headers outside the file");
		return -1;
	}
	uint64_t hi = 0;
	int loads = 0;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, elf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD)
			continue;
		uint64_t seg_end;
		if (ph.p_filesz > ph.p_memsz || ph.p_offset > len ||
		    ph.p_filesz > len - ph.p_offset ||
		    __builtin_add_overflow(ph.p_paddr, ph.p_memsz, &seg_end) ||
		    seg_end > mem_limit) {
			snprintf(err, errlen, "vmlinux segment %u does not fit", i);
			return -1;
		}
		if (seg_end > hi)
			hi = seg_end;
		loads++;
	}
	if (!loads || eh.e_entry >= hi) {
		snprintf(err, errlen, "vmlinux has no loadable entry point");
		return -1;
	}
	*entry = eh.e_entry;
	*end = hi;
	return 0;
}

int vmlinux_load(const uint8_t *elf, size_t len, const struct guest_mem *gm)
{
	Elf64_Ehdr eh;
	memcpy(&eh, elf, sizeof(eh));
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, elf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD)
			continue;
		uint8_t *dst = guest_mem_ptr(gm, ph.p_paddr, ph.p_memsz);
		if (!dst || ph.p_offset + ph.p_filesz > len)
			return -1;
		memcpy(dst, elf + ph.p_offset, ph.p_filesz);
		memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
	}
	return 0;
}
