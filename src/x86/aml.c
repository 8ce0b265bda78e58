// SPDX-License-Identifier: Apache-2.0
#include "x86/aml.h"

#include <ctype.h>
#include <string.h>

#define AML_NAME_OP	  0x08
#define AML_BYTE_PREFIX	  0x0a
#define AML_WORD_PREFIX	  0x0b
#define AML_STRING_PREFIX 0x0d
#define AML_DWORD_PREFIX  0x0c
#define AML_QWORD_PREFIX  0x0e
#define AML_ZERO_OP	  0x00
#define AML_ONE_OP	  0x01
#define AML_SCOPE_OP	  0x10
#define AML_BUFFER_OP	  0x11
#define AML_PACKAGE_OP	  0x12
#define AML_EXT_PREFIX	  0x5b
#define AML_DEVICE_OP	  0x82
#define AML_ROOT_CHAR	  '\\'

void aml_init(struct aml *a)
{
	memset(a, 0, sizeof(*a));
}

void aml_bytes(struct aml *a, const void *p, size_t n)
{
	if (a->overflow || n > AML_MAX - a->len) {
		a->overflow = 1;
		return;
	}
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

static void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

/* A NameSeg is exactly 4 characters, padded with '_'. */
static void aml_nameseg(struct aml *a, const char *s)
{
	char seg[4] = {'_', '_', '_', '_'};
	for (int i = 0; i < 4 && s[i]; i++)
		seg[i] = s[i];
	aml_bytes(a, seg, 4);
}

static void aml_integer(struct aml *a, uint64_t v)
{
	if (v == 0) {
		aml_byte(a, AML_ZERO_OP);
	} else if (v == 1) {
		aml_byte(a, AML_ONE_OP);
	} else if (v <= 0xff) {
		aml_byte(a, AML_BYTE_PREFIX);
		aml_byte(a, (uint8_t)v);
	} else if (v <= 0xffff) {
		uint16_t w = (uint16_t)v;
		aml_byte(a, AML_WORD_PREFIX);
		aml_bytes(a, &w, 2);
	} else if (v <= 0xffffffff) {
		uint32_t d = (uint32_t)v;
		aml_byte(a, AML_DWORD_PREFIX);
		aml_bytes(a, &d, 4);
	} else {
		aml_byte(a, AML_QWORD_PREFIX);
		aml_bytes(a, &v, 8);
	}
}

/* Reserves the largest PkgLength (4 bytes); aml_close shrinks it. */
static void aml_open(struct aml *a)
{
	if (a->depth >= AML_MAX_DEPTH) {
		a->overflow = 1;
		return;
	}
	a->open[a->depth++] = a->len;
	aml_bytes(a, "\0\0\0\0", 4);
}

void aml_close(struct aml *a)
{
	if (a->overflow || a->depth == 0) {
		a->overflow = 1;
		return;
	}
	size_t at = a->open[--a->depth];
	size_t body = a->len - at - 4;
	/* PkgLength counts its own bytes. One byte holds 6 bits; with n
	 * following bytes the lead holds 4 bits and each follower 8. */
	size_t n;
	if (body + 1 < 0x40)
		n = 1;
	else if (body + 2 < 0x1000)
		n = 2;
	else if (body + 3 < 0x100000)
		n = 3;
	else
		n = 4;
	size_t total = body + n;
	uint8_t enc[4];
	if (n == 1) {
		enc[0] = (uint8_t)total;
	} else {
		enc[0] = (uint8_t)(((n - 1) << 6) | (total & 0xf));
		for (size_t i = 1; i < n; i++)
			enc[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	}
	memmove(a->buf + at + n, a->buf + at + 4, body);
	memcpy(a->buf + at, enc, n);
	a->len = at + n + body;
}

void aml_scope_open(struct aml *a, const char *path)
{
	aml_byte(a, AML_SCOPE_OP);
	aml_open(a);
	if (path[0] == AML_ROOT_CHAR) {
		aml_byte(a, AML_ROOT_CHAR);
		path++;
	}
	aml_nameseg(a, path);
}

void aml_device_open(struct aml *a, const char *name)
{
	aml_byte(a, AML_EXT_PREFIX);
	aml_byte(a, AML_DEVICE_OP);
	aml_open(a);
	aml_nameseg(a, name);
}

void aml_name_int(struct aml *a, const char *name, uint64_t v)
{
	aml_byte(a, AML_NAME_OP);
	aml_nameseg(a, name);
	aml_integer(a, v);
}

uint32_t aml_eisaid(const char *id)
{
	if (strlen(id) != 7)
		return 0;
	for (int i = 0; i < 3; i++)
		if (id[i] < 'A' || id[i] > 'Z')
			return 0;
	uint32_t prod = 0;
	for (int i = 3; i < 7; i++) {
		if (!isxdigit((unsigned char)id[i]))
			return 0;
		char c = (char)toupper((unsigned char)id[i]);
		prod = (prod << 4) | (uint32_t)(c <= '9' ? c - '0' : c - 'A' + 10);
	}
	uint32_t mfg = ((uint32_t)(id[0] - 0x40) << 10) | ((uint32_t)(id[1] - 0x40) << 5) |
		       (uint32_t)(id[2] - 0x40);
	/* Stored big-endian: manufacturer bytes first, then product. */
	return ((mfg >> 8) & 0xff) | ((mfg & 0xff) << 8) | (((prod >> 8) & 0xff) << 16) |
	       ((prod & 0xff) << 24);
}

void aml_name_string(struct aml *a, const char *name, const char *str)
{
	aml_byte(a, AML_NAME_OP);
	aml_nameseg(a, name);
	aml_byte(a, AML_STRING_PREFIX);
	aml_bytes(a, str, strlen(str) + 1);
}

void aml_name_eisaid(struct aml *a, const char *name, const char *id)
{
	uint32_t v = aml_eisaid(id);
	aml_byte(a, AML_NAME_OP);
	aml_nameseg(a, name);
	aml_byte(a, AML_DWORD_PREFIX); /* an EISA ID is always a DWord */
	aml_bytes(a, &v, 4);
}

void aml_name_buffer(struct aml *a, const char *name, const uint8_t *p, size_t n)
{
	aml_byte(a, AML_NAME_OP);
	aml_nameseg(a, name);
	aml_byte(a, AML_BUFFER_OP);
	aml_open(a);
	aml_integer(a, n);
	aml_bytes(a, p, n);
	aml_close(a);
}

void aml_name(struct aml *a, const char *name)
{
	aml_byte(a, AML_NAME_OP);
	aml_nameseg(a, name);
}

void aml_int(struct aml *a, uint64_t v)
{
	aml_integer(a, v);
}

void aml_package_open(struct aml *a, uint8_t n)
{
	aml_byte(a, AML_PACKAGE_OP);
	aml_open(a);
	aml_byte(a, n); /* NumElements */
}

void aml_name_package(struct aml *a, const char *name, const uint8_t *vals, size_t n)
{
	aml_byte(a, AML_NAME_OP);
	aml_nameseg(a, name);
	aml_byte(a, AML_PACKAGE_OP);
	aml_open(a);
	aml_byte(a, (uint8_t)n);
	for (size_t i = 0; i < n; i++)
		aml_integer(a, vals[i]);
	aml_close(a);
}

size_t aml_res_io(uint8_t *out, uint16_t base, uint8_t len)
{
	/* Small item 0x08 (I/O port), 7 bytes: 16-bit decode, min = max. */
	out[0] = 0x47;
	out[1] = 0x01;
	memcpy(out + 2, &base, 2);
	memcpy(out + 4, &base, 2);
	out[6] = 0x01;
	out[7] = len;
	return 8;
}

size_t aml_res_irq(uint8_t *out, uint8_t irq)
{
	/* Small item 0x04 (IRQ), 2 bytes: edge, active high, a mask of one. */
	uint16_t mask = (uint16_t)(1u << (irq & 15));
	out[0] = 0x22;
	memcpy(out + 1, &mask, 2);
	return 3;
}

size_t aml_res_end(uint8_t *out)
{
	out[0] = 0x79;
	out[1] = 0x00; /* checksum 0: "treat as valid" */
	return 2;
}

/* Large item header of an address space descriptor: type, then the
 * general flags (producer, min and max fixed, positive decode) and the
 * type-specific flags. */
#define AML_RES_WORD_ADDR   0x88
#define AML_RES_DWORD_ADDR  0x87
#define AML_RES_QWORD_ADDR  0x8a
#define AML_ADDR_TYPE_MEM   0
#define AML_ADDR_TYPE_IO    1
#define AML_ADDR_TYPE_BUS   2
#define AML_ADDR_MIN_FIXED  0x04
#define AML_ADDR_MAX_FIXED  0x08
#define AML_IO_ENTIRE_RANGE 0x03
#define AML_MEM_READ_WRITE  0x01
#define AML_MEM_CACHEABLE   0x02 /* _MEM bits 2:1 = 1 */

static size_t res_word(uint8_t *out, uint8_t type, uint8_t type_flags, uint16_t min, uint16_t max)
{
	uint16_t body = AML_RES_WORD_LEN - 3, zero = 0, len = (uint16_t)(max - min + 1);
	out[0] = AML_RES_WORD_ADDR;
	memcpy(out + 1, &body, 2);
	out[3] = type;
	out[4] = AML_ADDR_MIN_FIXED | AML_ADDR_MAX_FIXED;
	out[5] = type_flags;
	memcpy(out + 6, &zero, 2); /* granularity */
	memcpy(out + 8, &min, 2);
	memcpy(out + 10, &max, 2);
	memcpy(out + 12, &zero, 2); /* translation offset */
	memcpy(out + 14, &len, 2);
	return AML_RES_WORD_LEN;
}

size_t aml_res_word_bus(uint8_t *out, uint16_t min, uint16_t max)
{
	return res_word(out, AML_ADDR_TYPE_BUS, 0, min, max);
}

size_t aml_res_word_io(uint8_t *out, uint16_t min, uint16_t max)
{
	return res_word(out, AML_ADDR_TYPE_IO, AML_IO_ENTIRE_RANGE, min, max);
}

size_t aml_res_dword_mem(uint8_t *out, uint32_t min, uint32_t max)
{
	uint16_t body = AML_RES_DWORD_LEN - 3;
	uint32_t zero = 0, len = max - min + 1;
	out[0] = AML_RES_DWORD_ADDR;
	memcpy(out + 1, &body, 2);
	out[3] = AML_ADDR_TYPE_MEM;
	out[4] = AML_ADDR_MIN_FIXED | AML_ADDR_MAX_FIXED;
	out[5] = AML_MEM_READ_WRITE; /* non-cacheable */
	memcpy(out + 6, &zero, 4);   /* granularity */
	memcpy(out + 10, &min, 4);
	memcpy(out + 14, &max, 4);
	memcpy(out + 18, &zero, 4); /* translation offset */
	memcpy(out + 22, &len, 4);
	return AML_RES_DWORD_LEN;
}

size_t aml_res_qword_mem(uint8_t *out, uint64_t min, uint64_t max)
{
	uint16_t body = AML_RES_QWORD_LEN - 3;
	uint64_t zero = 0, len = max - min + 1;
	out[0] = AML_RES_QWORD_ADDR;
	memcpy(out + 1, &body, 2);
	out[3] = AML_ADDR_TYPE_MEM;
	out[4] = AML_ADDR_MIN_FIXED | AML_ADDR_MAX_FIXED;
	out[5] = AML_MEM_READ_WRITE | AML_MEM_CACHEABLE;
	memcpy(out + 6, &zero, 8); /* granularity */
	memcpy(out + 14, &min, 8);
	memcpy(out + 22, &max, 8);
	memcpy(out + 30, &zero, 8); /* translation offset */
	memcpy(out + 38, &len, 8);
	return AML_RES_QWORD_LEN;
}
