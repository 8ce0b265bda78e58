// SPDX-License-Identifier: Apache-2.0
/* The snapshot container (core/snap.h): round trip, and every damaged
 * file refused with a line that names the damage, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "core/snap.h"

struct regs {
	uint64_t rip, rax;
};

static const struct regs regs0 = {0x1000, 42}, regs1 = {0x2000, 7};
static const char msrs[] = "some msrs";

/* A small image: three sections, one of them empty. */
static uint8_t *small_image(size_t *len)
{
	struct snap_writer w;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VCPU_REGS, 0, &regs0, sizeof(regs0)), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_VCPU_REGS, 1, &regs1, sizeof(regs1)), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_VCPU_MSRS, 0, msrs, sizeof(msrs)), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_UART, 0, NULL, 0), 0);
	const uint8_t *b = snap_writer_image(&w, len);
	assert_non_null(b);
	uint8_t *copy = malloc(*len);
	memcpy(copy, b, *len);
	snap_writer_free(&w);
	return copy;
}

/* What a restore would take from an image: 0 and equal, or -1. */
static int restore(const uint8_t *b, size_t len, char *err, size_t errlen)
{
	struct snap_image img;
	if (snap_parse(&img, b, len, err, errlen) < 0)
		return -1;
	struct regs r0, r1;
	char m[sizeof(msrs)];
	int rc = snap_get(&img, SNAP_ID_VCPU_REGS, 0, &r0, sizeof(r0), err, errlen) |
		 snap_get(&img, SNAP_ID_VCPU_REGS, 1, &r1, sizeof(r1), err, errlen) |
		 snap_get(&img, SNAP_ID_VCPU_MSRS, 0, m, sizeof(m), err, errlen) |
		 snap_get(&img, SNAP_ID_UART, 0, NULL, 0, err, errlen);
	snap_image_free(&img);
	if (rc)
		return -1;
	assert_memory_equal(&r0, &regs0, sizeof(r0));
	assert_memory_equal(&r1, &regs1, sizeof(r1));
	assert_memory_equal(m, msrs, sizeof(m));
	return 0;
}

static void test_round_trip(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = small_image(&len);
	char err[200] = "";
	assert_int_equal(restore(b, len, err, sizeof(err)), 0);
	assert_memory_equal(b, SNAP_MAGIC, 8);
	free(b);
}

/* Every prefix of a good file: one line saying it is truncated. */
static void test_every_truncation_refused(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = small_image(&len);
	for (size_t n = 0; n < len; n++) {
		char err[200] = "";
		uint8_t *cut = malloc(n ? n : 1); /* ASan sees a read past n */
		memcpy(cut, b, n);
		assert_int_equal(restore(cut, n, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "truncated"));
		assert_null(strchr(err, '\n'));
		free(cut);
	}
	free(b);
}

/* Every byte replaced by every other value it could take on one bit, and
 * by its complement: each refused, none restored differently. */
static void test_every_flip_refused(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = small_image(&len);
	unsigned int refused = 0, tries = 0;
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit <= 8; bit++) {
			uint8_t mask = bit == 8 ? 0xff : (uint8_t)(1u << bit);
			char err[200] = "";
			b[i] ^= mask;
			tries++;
			struct snap_image img;
			/* The parser itself, not only the payloads' reader. */
			if (snap_parse(&img, b, len, err, sizeof(err)) == 0)
				snap_image_free(&img);
			else
				refused++;
			if (restore(b, len, err, sizeof(err)) < 0) {
				assert_true(err[0] != '\0');
				assert_null(strchr(err, '\n'));
			}
			b[i] ^= mask;
		}
	}
	/* The checksums cover every byte: nothing damaged gets through. */
	assert_int_equal(refused, tries);
	free(b);
}

/* A header rewritten as another skiff would write it, checksum and all. */
static void rewrite_header(uint8_t *b, unsigned int off, uint32_t v)
{
	memcpy(b + off, &v, 4);
	uint64_t h = XXH64(b, 32, 0x736b696666ull);
	memcpy(b + 32, &h, 8);
}

static void test_foreign_version_and_arch(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = small_image(&len);
	char err[200];
	rewrite_header(b, 8, SNAP_VERSION + 1);
	assert_int_equal(restore(b, len, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot format version 2, this skiff reads version 1");
	rewrite_header(b, 8, SNAP_VERSION);
	rewrite_header(b, 12, 2);
	assert_int_equal(restore(b, len, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot of another architecture (2), this host is x86_64");
	rewrite_header(b, 12, SNAP_ARCH_X86_64);
	assert_int_equal(restore(b, len, err, sizeof(err)), 0);
	memcpy(b, "SKIFFSNQ", 8);
	assert_int_equal(restore(b, len, err, sizeof(err)), -1);
	assert_string_equal(err, "not a skiff snapshot (no SKIFFSNP magic)");
	free(b);
}

static void test_trailing_bytes_refused(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = small_image(&len);
	uint8_t *longer = calloc(1, len + 1);
	memcpy(longer, b, len);
	char err[200];
	assert_int_equal(restore(longer, len + 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too long"));
	free(longer);
	free(b);
}

static void test_missing_or_resized_section(void **state)
{
	(void)state;
	struct snap_writer w;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VCPU_REGS, 0, &regs0, sizeof(regs0) - 1), 0);
	size_t len;
	const uint8_t *b = snap_writer_image(&w, &len);
	struct snap_image img;
	char err[200];
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	struct regs r;
	assert_int_equal(snap_get(&img, SNAP_ID_VCPU_REGS, 0, &r, sizeof(r), err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot section vcpu-regs/0 is 15 bytes, expected 16");
	assert_int_equal(snap_get(&img, SNAP_ID_VCPU_REGS, 1, &r, sizeof(r), err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot has no vcpu-regs/1 section");
	snap_image_free(&img);
	snap_writer_free(&w);
}

static void test_duplicate_section_refused(void **state)
{
	(void)state;
	struct snap_writer w;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_UART, 0, "a", 1), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_UART, 0, "b", 1), 0);
	size_t len;
	const uint8_t *b = snap_writer_image(&w, &len);
	struct snap_image img;
	char err[200];
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot has section uart/0 twice");
	snap_writer_free(&w);
}

static void test_file_round_trip_and_errors(void **state)
{
	(void)state;
	char path[] = "/tmp/skiff-snap-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct snap_writer w;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VCPU_REGS, 0, &regs0, sizeof(regs0)), 0);
	char err[300];
	assert_int_equal(snap_write_file(&w, path, err, sizeof(err)), 0);
	snap_writer_free(&w);
	struct snap_image img;
	assert_int_equal(snap_read_file(&img, path, err, sizeof(err)), 0);
	struct regs r;
	assert_int_equal(snap_get(&img, SNAP_ID_VCPU_REGS, 0, &r, sizeof(r), err, sizeof(err)), 0);
	assert_memory_equal(&r, &regs0, sizeof(r));
	snap_image_free(&img);
	assert_int_equal(truncate(path, 50), 0);
	assert_int_equal(snap_read_file(&img, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "truncated"));
	unlink(path);
	assert_int_equal(snap_read_file(&img, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open snapshot"));
	assert_int_equal(snap_read_file(&img, "/tmp", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_every_truncation_refused),
	    cmocka_unit_test(test_every_flip_refused),
	    cmocka_unit_test(test_foreign_version_and_arch),
	    cmocka_unit_test(test_trailing_bytes_refused),
	    cmocka_unit_test(test_missing_or_resized_section),
	    cmocka_unit_test(test_duplicate_section_refused),
	    cmocka_unit_test(test_file_round_trip_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
