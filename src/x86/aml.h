// SPDX-License-Identifier: Apache-2.0
/* A tiny AML (ACPI Machine Language) writer: just the constructs skiff's
 * DSDT needs (scopes, devices, named integers, EISA IDs, resource
 * buffers, packages, nested packages for _PRT). Nested objects are written in place and their
 * PkgLength patched when they are closed. */
#ifndef SKIFF_AML_H
#define SKIFF_AML_H

#include <stddef.h>
#include <stdint.h>

#define AML_MAX	      8192
#define AML_MAX_DEPTH 8

struct aml {
	uint8_t buf[AML_MAX];
	size_t len;
	size_t open[AML_MAX_DEPTH]; /* offsets of reserved PkgLength fields */
	int depth;
	int overflow; /* set when anything did not fit; the result is unusable */
};

void aml_init(struct aml *a);
void aml_bytes(struct aml *a, const void *p, size_t n);
/* Scope (path) { ... } and Device (name) { ... }; close with aml_close. */
void aml_scope_open(struct aml *a, const char *path);
void aml_device_open(struct aml *a, const char *name);
void aml_close(struct aml *a);
/* Name (NAME, integer) */
void aml_name_int(struct aml *a, const char *name, uint64_t v);
/* Name (NAME, "string") */
void aml_name_string(struct aml *a, const char *name, const char *str);
/* Name (NAME, EisaId ("PNP0501")) */
void aml_name_eisaid(struct aml *a, const char *name, const char *id);
/* Name (NAME, Buffer () { bytes }) */
void aml_name_buffer(struct aml *a, const char *name, const uint8_t *p, size_t n);
/* Name (NAME, Package () { small integers }) */
void aml_name_package(struct aml *a, const char *name, const uint8_t *vals, size_t n);
/* Name (NAME, <object>): the object (an integer, a package) follows. */
void aml_name(struct aml *a, const char *name);
/* An integer object, in its shortest encoding. */
void aml_int(struct aml *a, uint64_t v);
/* Package (n) { ... }: n elements follow (nested packages allowed); close
 * with aml_close. */
void aml_package_open(struct aml *a, uint8_t n);

/* Resource descriptors for _CRS buffers; each returns the bytes written
 * to out (which must have room). */
size_t aml_res_io(uint8_t *out, uint16_t base, uint8_t len);
size_t aml_res_irq(uint8_t *out, uint8_t irq);
size_t aml_res_end(uint8_t *out);
/* Address space descriptors a bridge produces (ACPI 6.4, 6.4.3.5):
 * WordBusNumber, WordIO (entire range) and DWordMemory (non-cacheable,
 * read/write), each for [min, max] with fixed bounds and no translation. */
#define AML_RES_WORD_LEN  16
#define AML_RES_DWORD_LEN 26
size_t aml_res_word_bus(uint8_t *out, uint16_t min, uint16_t max);
size_t aml_res_word_io(uint8_t *out, uint16_t min, uint16_t max);
size_t aml_res_dword_mem(uint8_t *out, uint32_t min, uint32_t max);
/* QWordMemory, cacheable (prefetchable BARs live there) and read/write,
 * for a window above 4 GiB: the 64-bit PCI window of QEMU's q35. */
#define AML_RES_QWORD_LEN 46
size_t aml_res_qword_mem(uint8_t *out, uint64_t min, uint64_t max);

/* EISA ID compression ("PNP0501" -> 0x0105d041); 0 if malformed. */
uint32_t aml_eisaid(const char *id);

#endif
