// SPDX-License-Identifier: Apache-2.0
/* Where the x86 boot code puts things in guest physical memory. Everything
 * below 1 MiB except the BIOS areas is ordinary RAM that the kernel may
 * reclaim once it has copied what it needs. */
#ifndef SKIFF_X86_LAYOUT_H
#define SKIFF_X86_LAYOUT_H

#include <stdint.h>

#define LAYOUT_GDT	   0x0500
#define LAYOUT_ZERO_PAGE   0x7000
#define LAYOUT_PML4	   0x9000
#define LAYOUT_PDPT	   0xa000
#define LAYOUT_PD	   0xb000 /* four page directories: 0xb000..0xefff */
#define LAYOUT_CMDLINE	   0x20000
#define LAYOUT_CMDLINE_MAX 0x10000
#define LAYOUT_BDA_EBDA	   0x040e	     /* BIOS data area: the EBDA's segment (16 bits) */
#define LAYOUT_EBDA	   0x9fc00	     /* to 0xa0000, reserved in e820 */
#define LAYOUT_MPTABLE_FP  LAYOUT_EBDA	     /* MP floating pointer: EBDA's first KiB */
#define LAYOUT_BIOS_START  0xe0000	     /* reserved in e820 up to LAYOUT_BIOS_END */
#define LAYOUT_ACPI	   LAYOUT_BIOS_START /* ACPI tables, up to LAYOUT_MPTABLE */
#define LAYOUT_MPTABLE	   0xf0000	     /* MP configuration table */
#define LAYOUT_MPTABLE_END 0x100000
#define LAYOUT_BIOS_END	   0x100000
#define LAYOUT_HIMEM	   0x100000

/* Platform devices (port I/O) */
#define LAYOUT_COM1	      0x3f8
#define LAYOUT_COM1_IRQ	      4
#define LAYOUT_KBD_DATA	      0x60 /* i8042 (devices/legacy/i8042.h): data port */
#define LAYOUT_KBD_CMD	      0x64 /* and status/command port */
#define LAYOUT_KBD_IRQ	      1
#define LAYOUT_ACPI_SLEEP_CTL 0x600 /* ACPI hardware-reduced sleep control */
#define LAYOUT_ACPI_SLEEP_STS 0x601
#define LAYOUT_ACPI_RESET     0x604 /* FADT reset register */
#define LAYOUT_PVPANIC	      0x505 /* QEMU's pvpanic port */
#define LAYOUT_PCI_CONFIG     0xcf8 /* 0xcf8 address, 0xcf9 reset control, 0xcfc data */
#define LAYOUT_PCI_CONFIG_LEN 8

/* PCI INTx: INTA..INTD of the slots share IOAPIC pins 16..23 (the DSDT's
 * _PRT says which; pci_intx_gsi() computes it). */
#define LAYOUT_PCI_INTX_GSI	  16
#define LAYOUT_PCI_INTX_GSI_COUNT 8
#define LAYOUT_PCI_SLOTS	  32 /* on bus 0; slot 0 is the host bridge */

/* INTA..INTD (pin 0..3) of `slot` go to this GSI; the DSDT's _PRT is built
 * from it. Rotating by slot spreads devices over the 8 lines. */
static inline unsigned int layout_pci_intx_gsi(unsigned int slot, unsigned int pin)
{
	return LAYOUT_PCI_INTX_GSI + (slot + pin) % LAYOUT_PCI_INTX_GSI_COUNT;
}

/* MMIO: PCI BARs are placed in [START, END) (the DSDT's PCI0 window). */
#define LAYOUT_PCI_MMIO_START 0xc0000000ULL
#define LAYOUT_PCI_MMIO_END   0xfec00000ULL

/* The 64-bit PCI window (QEMU q35's "pci hole64"), for 64-bit prefetchable
 * BARs (a GPU's or ivshmem's, of many GiB) and 64-bit BARs the window
 * below 4 GiB cannot hold: from the first GiB boundary above guest RAM and
 * 4 GiB to the end of the guest's physical address space (phys_bits, as
 * the host's CPUID gives it). It stops below 1012 GiB on every host: AMD
 * keeps [1012 GiB, 1 TiB) for HyperTransport (QEMU avoids it too), and one
 * layout for both vendors keeps the guest's view the same across hosts.
 * The DSDT's PCI0 _CRS describes it; guest RAM never reaches it. */
#define LAYOUT_PCI_MMIO64_ALIGN (1ULL << 30)
#define LAYOUT_AMD_HT_HOLE	0xfd00000000ULL
static inline uint64_t layout_pci_mmio64_start(uint64_t ram_end)
{
	uint64_t s = ram_end > 0x100000000ULL ? ram_end : 0x100000000ULL;
	return (s + LAYOUT_PCI_MMIO64_ALIGN - 1) & ~(LAYOUT_PCI_MMIO64_ALIGN - 1);
}
static inline uint64_t layout_pci_mmio64_end(unsigned int phys_bits)
{
	uint64_t e = phys_bits >= 63 ? LAYOUT_AMD_HT_HOLE : 1ULL << phys_bits;
	return e < LAYOUT_AMD_HT_HOLE ? e : LAYOUT_AMD_HT_HOLE;
}
#define LAYOUT_IOAPIC 0xfec00000ULL
#define LAYOUT_LAPIC  0xfee00000ULL

#endif
