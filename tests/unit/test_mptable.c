// SPDX-License-Identifier: Apache-2.0
/* x86 MP table: where Linux finds the floating pointer, both checksums,
 * the entries (per CPU count, APIC IDs as in the MADT, INTx as in the
 * _PRT) and the e820 reservation around both structures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pci/pci.h"
#include "x86/acpi.h"
#include "x86/layout.h"
#include "x86/mptable.h"
#include "x86/zeropage.h"

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Linux's default_find_smp_config(): the bottom KiB, the KiB below 640K,
 * the BIOS ROM, then the EBDA from 0x40e; each 16 bytes at a time, taking
 * the first "_MP_" of length 1, spec 1 or 4, summing to 0. Returns its
 * address and in *steps how many 16-byte places were tried. */
static uint64_t linux_scan(const uint8_t *low, unsigned int *steps)
{
	uint64_t ebda = (uint64_t)rd16(low + LAYOUT_BDA_EBDA) << 4;
	const uint64_t range[4][2] = {
	    {0, 0x400}, {639 * 0x400, 0x400}, {0xf0000, 0x10000}, {ebda, 0x400}};
	*steps = 0;
	for (int r = 0; r < 4; r++) {
		if (r == 3 && !ebda)
			break;
		for (uint64_t a = range[r][0]; a < range[r][0] + range[r][1]; a += 16) {
			(*steps)++;
			const uint8_t *p = low + a;
			if (!memcmp(p, "_MP_", 4) && p[8] == 1 && (p[9] == 1 || p[9] == 4) &&
			    acpi_checksum(p, 16) == 0)
				return a;
		}
	}
	return 0;
}

/* The MADT's local APIC IDs (in ids[], count returned) and IOAPIC ID. */
static int madt_ids(uint8_t *bios, uint8_t *ids, uint8_t *ioapic_id)
{
	uint8_t *x = bios + (rd32(bios + 24) - LAYOUT_ACPI); /* RSDP's XSDT, low half */
	int n = 0;
	for (uint32_t off = 36; off < rd32(x + 4); off += 8) {
		uint8_t *t = bios + (rd32(x + off) - LAYOUT_ACPI);
		if (memcmp(t, "APIC", 4))
			continue;
		for (uint32_t e = 44; e < rd32(t + 4); e += t[e + 1]) {
			if (t[e] == 0)
				ids[n++] = t[e + 3];
			if (t[e] == 1)
				*ioapic_id = t[e + 2];
		}
	}
	return n;
}

static void check_table(uint8_t *low, int cpus)
{
	/* The floating pointer: found by Linux's scan, in the EBDA's first
	 * KiB, before the scan reaches the BIOS ROM. */
	unsigned int steps;
	uint64_t fp = linux_scan(low, &steps);
	assert_int_equal(fp, LAYOUT_MPTABLE_FP);
	assert_true(steps <= 2 * 0x400 / 16);
	uint64_t ebda = (uint64_t)rd16(low + LAYOUT_BDA_EBDA) << 4;
	assert_int_equal(ebda, LAYOUT_EBDA);
	assert_true(fp >= ebda && fp + 16 <= ebda + 0x400);
	uint8_t *f = low + fp;
	assert_memory_equal(f, "_MP_", 4);
	assert_int_equal(acpi_checksum(f, 16), 0);
	assert_int_equal(f[8], 1);
	assert_int_equal(f[9], 4);
	assert_int_equal(f[11], 0); /* feature1 0: a configuration table follows */
	assert_int_equal(rd32(f + 4), LAYOUT_MPTABLE);

	/* The configuration table */
	uint8_t *c = low + rd32(f + 4);
	uint16_t len = rd16(c + 4);
	assert_memory_equal(c, "PCMP", 4);
	assert_int_equal(len, mptable_size(cpus));
	assert_true(LAYOUT_MPTABLE + len <= LAYOUT_MPTABLE_END);
	assert_int_equal(c[6], 4);
	assert_int_equal(acpi_checksum(c, len), 0);
	assert_int_equal(rd32(c + 36), LAYOUT_LAPIC);
	assert_int_equal(rd16(c + 40), 0); /* no extended table */

	uint8_t madt_apic[256], madt_ioapic = 0xff;
	int madt_n = madt_ids(low + LAYOUT_ACPI, madt_apic, &madt_ioapic);
	assert_int_equal(madt_n, cpus);

	int per_type[5] = {0}, last_type = 0, pci_seen = 0;
	unsigned int off = 44, count = rd16(c + 34);
	for (unsigned int i = 0; i < count; i++) {
		assert_true(off < len);
		uint8_t type = c[off];
		assert_true(type <= 4);
		assert_true(type >= last_type); /* sorted by type, as the spec asks */
		last_type = type;
		per_type[type]++;
		uint8_t *e = c + off;
		switch (type) {
		case 0: /* processor: APIC IDs as in the MADT, only #0 the BSP */
			assert_int_equal(e[1], madt_apic[per_type[0] - 1]);
			assert_int_equal(e[3] & 1, 1);
			assert_int_equal(e[3] >> 1 & 1, e[1] == 0);
			off += 20;
			break;
		case 1:
			assert_true(!memcmp(e + 2, "PCI   ", 6) ? e[1] == 0
								: !memcmp(e + 2, "ISA   ", 6));
			off += 8;
			break;
		case 2:
			assert_int_equal(e[1], madt_ioapic);
			assert_int_equal(e[3], 1);
			assert_int_equal(rd32(e + 4), LAYOUT_IOAPIC);
			off += 8;
			break;
		case 3:
			assert_int_equal(e[6], madt_ioapic);
			if (e[4] == 0) { /* PCI: the _PRT's pin, level, active low */
				unsigned int slot = e[5] >> 2, pin = e[5] & 3;
				assert_true(slot >= 1 && slot < PCI_MAX_DEVICES);
				assert_int_equal(e[7], pci_intx_gsi(slot, pin));
				assert_int_equal(rd16(e + 2), 0xf);
				pci_seen++;
			} else { /* ISA IRQ n on pin n: the MADT has no overrides */
				assert_int_equal(e[7], e[5]);
				assert_true(e[5] < 16 && e[5] != 2);
			}
			off += 8;
			break;
		case 4: /* LINT0 ExtINT, LINT1 NMI, to every local APIC */
			assert_int_equal(e[1], per_type[4] == 1 ? 3 : 1);
			assert_int_equal(e[6], 0xff);
			assert_int_equal(e[7], per_type[4] - 1);
			off += 8;
			break;
		}
	}
	assert_int_equal(off, len);
	assert_int_equal(per_type[0], cpus);
	assert_int_equal(per_type[1], 2);
	assert_int_equal(per_type[2], 1);
	assert_int_equal(per_type[3], 15 + (PCI_MAX_DEVICES - 1) * 4);
	assert_int_equal(pci_seen, (PCI_MAX_DEVICES - 1) * 4);
	assert_int_equal(per_type[4], 2);
}

static void test_mptable_per_cpu_count(void **state)
{
	(void)state;
	uint8_t *low = calloc(1, LAYOUT_BIOS_END);
	const int counts[] = {1, 2, 3, 8, 64, 255};
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		memset(low, 0, LAYOUT_BIOS_END);
		int cpus = counts[i];
		/* As boot_image_load() does: ACPI below the MP table. */
		assert_int_equal(acpi_build(low + LAYOUT_ACPI, LAYOUT_ACPI,
					    LAYOUT_MPTABLE - LAYOUT_ACPI, cpus, 0, 0),
				 LAYOUT_ACPI);
		assert_int_equal(mptable_build(low, cpus), 0);
		check_table(low, cpus);
	}
	free(low);
}

static void test_mptable_rejects_cpu_counts(void **state)
{
	(void)state;
	uint8_t *low = calloc(1, LAYOUT_BIOS_END);
	assert_int_equal(mptable_build(low, 0), -1);
	assert_int_equal(mptable_build(low, 256), -1);
	unsigned int steps;
	assert_int_equal(linux_scan(low, &steps), 0); /* nothing written */
	free(low);
}

/* Both structures lie in e820 reserved ranges and in no RAM range. */
static void test_mptable_e820_reserved(void **state)
{
	(void)state;
	struct guest_mem gm;
	guest_mem_init(&gm, NULL, 256ULL << 20);
	struct boot_e820_entry t[16];
	unsigned int n = e820_build(&gm, t, 16);
	const uint64_t r[2][2] = {{LAYOUT_MPTABLE_FP, 16}, {LAYOUT_MPTABLE, mptable_size(255)}};
	for (int k = 0; k < 2; k++) {
		uint64_t a = r[k][0], end = r[k][0] + r[k][1];
		int covered = 0;
		for (unsigned int i = 0; i < n; i++) {
			uint64_t s = t[i].addr, e = t[i].addr + t[i].size;
			if (t[i].type == 2 && s <= a && end <= e)
				covered = 1;
			if (t[i].type == 1)
				assert_true(end <= s || a >= e);
		}
		assert_true(covered);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mptable_per_cpu_count),
	    cmocka_unit_test(test_mptable_rejects_cpu_counts),
	    cmocka_unit_test(test_mptable_e820_reserved),
	};
	return cmocka_run_group_tests_name("mptable", tests, NULL, NULL);
}
