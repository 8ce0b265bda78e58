// SPDX-License-Identifier: Apache-2.0
/* The decompressed-kernel cache: the key follows the bzImage's bytes, and
 * an entry stored is the entry found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "x86/kcache.h"

#define IMG_LEN (1u << 20)

static void test_kcache_hash_follows_bytes(void **state)
{
	(void)state;
	uint8_t *a = malloc(IMG_LEN);
	assert_non_null(a);
	for (size_t i = 0; i < IMG_LEN; i++)
		a[i] = (uint8_t)(i * 131 + (i >> 9));
	uint64_t k = kcache_hash(a, IMG_LEN);
	assert_true(k == kcache_hash(a, IMG_LEN));
	/* One byte anywhere, or one byte fewer, is another kernel. */
	const size_t at[] = {0, 4095, IMG_LEN / 2, IMG_LEN - 1};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		a[at[i]] ^= 1;
		assert_true(kcache_hash(a, IMG_LEN) != k);
		a[at[i]] ^= 1;
	}
	assert_true(kcache_hash(a, IMG_LEN - 1) != k);
	free(a);
}

static void test_kcache_store_lookup(void **state)
{
	(void)state;
	char dir[] = "/tmp/skiff-kcache-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[sizeof(dir) + 8];
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	setenv("SKIFF_CACHE_DIR", sub, 1);

	const uint8_t img[] = "a kernel image";
	const uint8_t vmlinux[] = "\x7f"
				  "ELF and the rest";
	uint64_t key = kcache_hash(img, sizeof(img));
	size_t len = 0;
	assert_null(kcache_lookup(key, &len));
	kcache_store(key, vmlinux, sizeof(vmlinux));
	const uint8_t *p = kcache_lookup(key, &len);
	assert_non_null(p);
	assert_int_equal(len, sizeof(vmlinux));
	assert_memory_equal(p, vmlinux, sizeof(vmlinux));
	kcache_release(p, len);
	assert_null(kcache_lookup(key + 1, &len));

	/* An empty SKIFF_CACHE_DIR turns the cache off. */
	setenv("SKIFF_CACHE_DIR", "", 1);
	assert_null(kcache_lookup(key, &len));

	char path[sizeof(sub) + 32];
	snprintf(path, sizeof(path), "%s/vmlinux-%016llx", sub, (unsigned long long)key);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/a", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	unsetenv("SKIFF_CACHE_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kcache_hash_follows_bytes),
	    cmocka_unit_test(test_kcache_store_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
