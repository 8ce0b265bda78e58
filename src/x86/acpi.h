// SPDX-License-Identifier: Apache-2.0
/* Minimal ACPI tables for a hardware-reduced platform: RSDP, XSDT, FADT,
 * DSDT (only \_S5 so Linux can power off) and MADT (one local APIC per vCPU
 * and the IOAPIC). The FADT also tells Linux there is no VGA and no CMOS
 * RTC, so it does not spend thousands of exits probing them, and that
 * there is an i8042 (Ctrl-Alt-Del and the reset pulse go through it). */
#ifndef SKIFF_ACPI_H
#define SKIFF_ACPI_H

#include <stddef.h>
#include <stdint.h>

/* Writes the tables into `buf` (guest physical address `base`, `len` bytes
 * available). Returns the RSDP's guest address, or 0 if they do not fit. */
uint64_t acpi_build(uint8_t *buf, uint64_t base, size_t len, int nr_cpus, uint64_t mmio64_start,
		    uint64_t mmio64_end);

/* Sum of `len` bytes: a valid ACPI table sums to 0. */
uint8_t acpi_checksum(const void *p, size_t len);

/* Values the guest writes to the sleep control register to enter S5. */
#define ACPI_SLP_EN	   0x20
#define ACPI_SLP_TYP_SHIFT 2
#define ACPI_SLP_TYP_MASK  0x1c
#define ACPI_S5_TYPE	   5
#define ACPI_RESET_VALUE   0x1

#endif
