// SPDX-License-Identifier: Apache-2.0
/* x86 boot: bzImage header parsing and rejection, e820, initrd placement,
 * command-line limits, zero page, ACPI checksums. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fake_bzimage.h"
#include "x86/acpi.h"
#include "x86/bzimage.h"
#include "x86/layout.h"
#include "x86/zeropage.h"

static struct setup_header *hdr_of(uint8_t *b)
{
	return (struct setup_header *)(b + 0x1f1);
}

static void expect_reject(uint8_t *b, size_t len, const char *needle)
{
	struct bzimage bz;
	char err[256] = "";
	assert_int_equal(bzimage_parse(b, len, &bz, err, sizeof(err)), -1);
	assert_non_null(strstr(err, needle));
	assert_null(strchr(err, '\n')); /* one line */
}

static void test_bzimage_valid(void **state)
{
	(void)state;
	uint8_t *b = fake_bzimage();
	struct bzimage bz;
	char err[256];
	assert_int_equal(bzimage_parse(b, FAKE_LEN, &bz, err, sizeof(err)), 0);
	assert_int_equal(bz.setup_len, 5 * 512);
	assert_int_equal(bz.kernel_len, FAKE_SYS_LEN);
	assert_int_equal(bz.load_addr, 0x1000000);
	assert_int_equal(bz.init_size, 0x2000000);
	assert_ptr_equal(bz.kernel, b + 5 * 512);
	free(b);
}

static void test_bzimage_setup_sects_zero_means_four(void **state)
{
	(void)state;
	uint8_t *b = fake_bzimage();
	hdr_of(b)->setup_sects = 0;
	struct bzimage bz;
	char err[256];
	assert_int_equal(bzimage_parse(b, FAKE_LEN, &bz, err, sizeof(err)), 0);
	assert_int_equal(bz.setup_len, 5 * 512);
	free(b);
}

static void test_bzimage_rejects(void **state)
{
	(void)state;
	uint8_t *b = fake_bzimage();
	expect_reject(b, 100, "too small");
	hdr_of(b)->boot_flag = 0x1234;
	expect_reject(b, FAKE_LEN, "not a bzImage");
	free(b);

	b = fake_bzimage();
	hdr_of(b)->header = 0;
	expect_reject(b, FAKE_LEN, "not a bzImage");
	free(b);

	b = fake_bzimage();
	hdr_of(b)->version = 0x0204;
	expect_reject(b, FAKE_LEN, "too old");
	free(b);

	b = fake_bzimage();
	hdr_of(b)->xloadflags = 0;
	expect_reject(b, FAKE_LEN, "64-bit");
	free(b);

	b = fake_bzimage();
	hdr_of(b)->relocatable_kernel = 0;
	expect_reject(b, FAKE_LEN, "relocatable");
	free(b);

	b = fake_bzimage();
	hdr_of(b)->loadflags = 0;
	expect_reject(b, FAKE_LEN, "loaded high");
	free(b);

	b = fake_bzimage();
	hdr_of(b)->kernel_alignment = 0x300000;
	expect_reject(b, FAKE_LEN, "not a power of two");
	free(b);
}

/* A protected-mode kernel that ends before its 64-bit entry (fuzz_bzimage:
 * 16 bytes, entered past the end of guest RAM): rejected, not run. */
static void test_bzimage_entry_inside(void **state)
{
	(void)state;
	uint8_t *b = fake_bzimage();
	size_t setup = (FAKE_SETUP_SECTS + 1) * 512;
	hdr_of(b)->syssize = 1;
	expect_reject(b, setup + 16, "no 64-bit entry");
	expect_reject(b, setup + BZIMAGE_ENTRY64, "no 64-bit entry");
	struct bzimage bz;
	char err[200];
	assert_int_equal(bzimage_parse(b, setup + BZIMAGE_ENTRY64 + 1, &bz, err, sizeof(err)), 0);
	free(b);
}

static void test_bzimage_truncated(void **state)
{
	(void)state;
	uint8_t *b = fake_bzimage();
	expect_reject(b, FAKE_LEN - 1, "truncated");
	expect_reject(b, 4096, "truncated");
	expect_reject(b, 5 * 512, "truncated");
	hdr_of(b)->syssize = 0xffffffff; /* absurd size must not overflow */
	expect_reject(b, FAKE_LEN, "truncated");
	free(b);
}

static void test_e820_small_guest(void **state)
{
	(void)state;
	struct guest_mem gm;
	guest_mem_init(&gm, NULL, 256ULL << 20);
	struct boot_e820_entry t[16];
	unsigned int n = e820_build(&gm, t, 16);
	assert_int_equal(n, 4);
	assert_int_equal(t[0].addr, 0);
	assert_int_equal(t[0].size, LAYOUT_EBDA);
	assert_int_equal(t[0].type, 1);
	assert_int_equal(t[2].type, 2); /* BIOS area with ACPI tables */
	assert_int_equal(t[3].addr, 0x100000);
	assert_int_equal(t[3].addr + t[3].size, 256ULL << 20);
	for (unsigned int i = 1; i < n; i++) /* sorted, no overlaps */
		assert_true(t[i - 1].addr + t[i - 1].size <= t[i].addr);
}

static void test_e820_large_guest_splits_at_pci_hole(void **state)
{
	(void)state;
	struct guest_mem gm;
	guest_mem_init(&gm, NULL, 6ULL << 30);
	struct boot_e820_entry t[16];
	unsigned int n = e820_build(&gm, t, 16);
	assert_int_equal(n, 5);
	assert_int_equal(t[3].addr + t[3].size, GUEST_MEM_LOW_MAX);
	assert_int_equal(t[4].addr, 4ULL << 30);
	assert_int_equal(t[4].size, (6ULL << 30) - GUEST_MEM_LOW_MAX);
	uint64_t ram = 0;
	for (unsigned int i = 0; i < n; i++)
		if (t[i].type == 1)
			ram += t[i].size;
	assert_true(ram <= 6ULL << 30);
}

static void test_initrd_placement(void **state)
{
	(void)state;
	struct guest_mem gm;
	uint64_t addr;
	guest_mem_init(&gm, NULL, 256ULL << 20);
	/* highest page-aligned spot below the end of RAM */
	assert_int_equal(initrd_place(&gm, 0x3000000, 0x7fffffff, 10000, &addr), 0);
	assert_int_equal(addr % 4096, 0);
	assert_true(addr + 10000 <= 256ULL << 20);
	assert_true(addr >= 0x3000000);
	/* respects initrd_addr_max */
	guest_mem_init(&gm, NULL, 3ULL << 30);
	assert_int_equal(initrd_place(&gm, 0x3000000, 0x37ffffff, 1 << 20, &addr), 0);
	assert_true(addr + (1 << 20) <= 0x38000000ULL);
	/* too large for the space above the kernel */
	guest_mem_init(&gm, NULL, 64ULL << 20);
	assert_int_equal(initrd_place(&gm, 0x3000000, 0x7fffffff, 100ULL << 20, &addr), -1);
	assert_int_equal(initrd_place(&gm, 0x3000000, 0x7fffffff, 20ULL << 20, &addr), -1);
	assert_int_equal(initrd_place(&gm, 0x3000000, 0x7fffffff, 16ULL << 20, &addr), 0);
}

static void test_cmdline_limit(void **state)
{
	(void)state;
	struct bzimage bz;
	memset(&bz, 0, sizeof(bz));
	bz.hdr.cmdline_size = 10;
	char err[128];
	assert_int_equal(cmdline_check(&bz, "0123456789", err, sizeof(err)), 0);
	assert_int_equal(cmdline_check(&bz, "0123456789a", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "too long"));
	bz.hdr.cmdline_size = 0; /* pre-2.06 default is 255 */
	char big[300];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(cmdline_check(&bz, big, err, sizeof(err)), -1);
}

static void test_zeropage(void **state)
{
	(void)state;
	uint8_t *b = fake_bzimage();
	struct bzimage bz;
	char err[128];
	assert_int_equal(bzimage_parse(b, FAKE_LEN, &bz, err, sizeof(err)), 0);
	struct guest_mem gm;
	guest_mem_init(&gm, NULL, 512ULL << 20);
	struct boot_params *bp = malloc(sizeof(*bp));
	zeropage_build(bp, &bz, &gm, LAYOUT_CMDLINE, 0x10000000, 12345, 0xe0000);
	assert_int_equal(bp->hdr.type_of_loader, 0xff);
	assert_int_equal(bp->hdr.cmd_line_ptr, LAYOUT_CMDLINE);
	assert_int_equal(bp->hdr.ramdisk_image, 0x10000000);
	assert_int_equal(bp->hdr.ramdisk_size, 12345);
	assert_int_equal(bp->hdr.boot_flag, 0xAA55);
	assert_int_equal(bp->acpi_rsdp_addr, 0xe0000);
	assert_true(bp->hdr.loadflags & CAN_USE_HEAP);
	assert_int_equal(bp->e820_entries, 4);
	free(bp);
	free(b);
}

static void test_acpi_checksums(void **state)
{
	(void)state;
	size_t len = LAYOUT_BIOS_END - LAYOUT_BIOS_START;
	uint8_t *buf = calloc(1, len);
	for (int cpus = 1; cpus <= 64; cpus *= 4) {
		uint64_t rsdp = acpi_build(buf, LAYOUT_BIOS_START, len, cpus, 0, 0);
		assert_int_equal(rsdp, LAYOUT_BIOS_START);
		assert_memory_equal(buf, "RSD PTR ", 8);
		assert_int_equal(acpi_checksum(buf, 20), 0);
		assert_int_equal(acpi_checksum(buf, 36), 0);
		uint64_t xsdt;
		memcpy(&xsdt, buf + 24, 8);
		uint8_t *x = buf + (xsdt - LAYOUT_BIOS_START);
		assert_memory_equal(x, "XSDT", 4);
		uint32_t xlen;
		memcpy(&xlen, x + 4, 4);
		assert_int_equal(acpi_checksum(x, xlen), 0);
		for (uint32_t off = 36; off < xlen; off += 8) {
			uint64_t t;
			memcpy(&t, x + off, 8);
			uint8_t *tab = buf + (t - LAYOUT_BIOS_START);
			uint32_t tlen;
			memcpy(&tlen, tab + 4, 4);
			assert_int_equal(acpi_checksum(tab, tlen), 0);
			if (!memcmp(tab, "APIC", 4)) /* one LAPIC per CPU + IOAPIC */
				assert_int_equal(tlen, 36 + 8 + cpus * 8 + 12);
			if (!memcmp(tab, "FACP", 4)) {
				uint32_t dsdt;
				memcpy(&dsdt, tab + 40, 4);
				uint8_t *d = buf + (dsdt - LAYOUT_BIOS_START);
				uint32_t dlen;
				memcpy(&dlen, d + 4, 4);
				assert_memory_equal(d, "DSDT", 4);
				assert_int_equal(acpi_checksum(d, dlen), 0);
			}
		}
	}
	assert_int_equal(acpi_build(buf, LAYOUT_BIOS_START, 64, 4, 0, 0), 0); /* does not fit */
	assert_int_equal(acpi_build(buf, LAYOUT_BIOS_START, len, 0, 0, 0), 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bzimage_valid),
	    cmocka_unit_test(test_bzimage_setup_sects_zero_means_four),
	    cmocka_unit_test(test_bzimage_rejects),
	    cmocka_unit_test(test_bzimage_truncated),
	    cmocka_unit_test(test_bzimage_entry_inside),
	    cmocka_unit_test(test_e820_small_guest),
	    cmocka_unit_test(test_e820_large_guest_splits_at_pci_hole),
	    cmocka_unit_test(test_initrd_placement),
	    cmocka_unit_test(test_cmdline_limit),
	    cmocka_unit_test(test_zeropage),
	    cmocka_unit_test(test_acpi_checksums),
	};
	return cmocka_run_group_tests_name("boot", tests, NULL, NULL);
}
