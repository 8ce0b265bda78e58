// SPDX-License-Identifier: Apache-2.0
/* The Intel MultiProcessor Specification 1.4 table: a floating pointer
 * structure in the EBDA's first KiB and a configuration table in the BIOS
 * area, describing the same platform as the ACPI MADT and _PRT. Linux uses
 * ACPI when it is there; it reads the MP table only if ACPI is off. What
 * the table buys is that Linux's search for one (smp_scan_config) stops
 * early: without it, it maps and unmaps every 16 bytes of 0xf0000..0xfffff,
 * which under shadow paging costs tens of thousands of INVLPG exits. */
#ifndef SKIFF_X86_MPTABLE_H
#define SKIFF_X86_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the configuration table for `nr_cpus` processors. */
size_t mptable_size(int nr_cpus);

/* Writes the floating pointer at LAYOUT_MPTABLE_FP, the configuration table
 * at LAYOUT_MPTABLE and the EBDA segment at LAYOUT_BDA_EBDA, into `low`,
 * the guest's first LAYOUT_BIOS_END bytes. 0, or -1 if nr_cpus is out of
 * range (1..255) or the table would not fit below LAYOUT_MPTABLE_END. */
int mptable_build(uint8_t *low, int nr_cpus);

#endif
