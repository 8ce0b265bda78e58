// SPDX-License-Identifier: Apache-2.0
#include "x86/mptable.h"

#include <string.h>

#include "x86/acpi.h"
#include "x86/layout.h"

/* MP spec 1.4 chapter 4: the floating pointer (16 bytes) and the
 * configuration table's header (44 bytes), then entries sorted by type. */
struct mpf {
	char signature[4]; /* "_MP_" */
	uint32_t physptr;  /* the configuration table */
	uint8_t length;	   /* in 16-byte units: 1 */
	uint8_t spec_rev;  /* 4 = 1.4 */
	uint8_t checksum;
	uint8_t feature1; /* 0: a configuration table is present */
	uint8_t feature2; /* bit 7 clear: virtual wire mode, no IMCR */
	uint8_t feature3[3];
} __attribute__((packed));

struct mpc_header {
	char signature[4]; /* "PCMP" */
	uint16_t length;   /* base table, header included */
	uint8_t spec_rev;
	uint8_t checksum;
	char oem_id[8];
	char product_id[12];
	uint32_t oem_ptr;
	uint16_t oem_size;
	uint16_t count; /* entries */
	uint32_t lapic;
	uint16_t ext_length;
	uint8_t ext_checksum;
	uint8_t reserved;
} __attribute__((packed));

struct mpc_cpu {
	uint8_t type, apic_id, apic_ver, flags;
	uint32_t signature, features;
	uint32_t reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type, id;
	char name[6];
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type, id, ver, flags;
	uint32_t addr;
} __attribute__((packed));

struct mpc_intsrc { /* I/O (type 3) and local (type 4) interrupt assignment */
	uint8_t type, irq_type;
	uint16_t flags;
	uint8_t src_bus, src_irq, dst_apic, dst_pin;
} __attribute__((packed));

_Static_assert(sizeof(struct mpf) == 16, "MP floating pointer layout");
_Static_assert(sizeof(struct mpc_header) == 44, "MP config header layout");
_Static_assert(sizeof(struct mpc_cpu) == 20, "MP processor entry layout");

#define MP_CPU	   0
#define MP_BUS	   1
#define MP_IOAPIC  2
#define MP_INTSRC  3
#define MP_LINTSRC 4

#define MP_CPU_EN      1
#define MP_CPU_BP      2
#define MP_IOAPIC_EN   1
#define MP_INT	       0
#define MP_NMI	       1
#define MP_EXTINT      3
#define MP_ACTIVE_HIGH 0x1 /* polarity, bits 0-1 */
#define MP_ACTIVE_LOW  0x3
#define MP_EDGE	       (0x1 << 2) /* trigger mode, bits 2-3 */
#define MP_LEVEL       (0x3 << 2)
#define MP_ALL_LAPICS  0xff

/* Bus IDs; PCI's must be its bus number. A PCI source IRQ is the slot in
 * bits 2-6 and the pin (INTA = 0) in bits 0-1. */
#define MP_BUS_PCI     0
#define MP_BUS_ISA     1
#define MP_ISA_IRQS    16
#define MP_ISA_CASCADE 2 /* the 8259 cascade: no ISA device behind it */

/* What KVM's in-kernel LAPIC and IOAPIC report in their version registers. */
#define MP_LAPIC_VER  0x14
#define MP_IOAPIC_VER 0x11
/* Family 6 and FPU|APIC: the processor entry's CPUID fields. Linux reads
 * neither (it takes CPUID itself). */
#define MP_CPU_SIGNATURE (6u << 8)
#define MP_CPU_FEATURES	 ((1u << 0) | (1u << 9))

#define MP_PCI_SLOTS (LAYOUT_PCI_SLOTS - 1) /* slot 0 is the host bridge */

size_t mptable_size(int nr_cpus)
{
	size_t intsrc = (MP_ISA_IRQS - 1) + (size_t)MP_PCI_SLOTS * 4 + 2;
	return sizeof(struct mpc_header) + (size_t)nr_cpus * sizeof(struct mpc_cpu) +
	       2 * sizeof(struct mpc_bus) + sizeof(struct mpc_ioapic) +
	       intsrc * sizeof(struct mpc_intsrc);
}

static uint8_t *entry_put(uint8_t *p, const void *e, size_t len, uint16_t *count)
{
	memcpy(p, e, len);
	(*count)++;
	return p + len;
}

static uint8_t *intsrc_put(uint8_t *p, uint16_t *count, uint8_t type, uint8_t irq_type,
			   uint16_t flags, uint8_t bus, uint8_t irq, uint8_t apic, uint8_t pin)
{
	struct mpc_intsrc e = {.type = type,
			       .irq_type = irq_type,
			       .flags = flags,
			       .src_bus = bus,
			       .src_irq = irq,
			       .dst_apic = apic,
			       .dst_pin = pin};
	return entry_put(p, &e, sizeof(e), count);
}

int mptable_build(uint8_t *low, int nr_cpus)
{
	if (nr_cpus < 1 || nr_cpus > 255)
		return -1;
	size_t len = mptable_size(nr_cpus);
	if (len > LAYOUT_MPTABLE_END - LAYOUT_MPTABLE || len > UINT16_MAX)
		return -1;
	uint8_t *base = low + LAYOUT_MPTABLE;
	memset(base, 0, len);
	uint8_t *p = base + sizeof(struct mpc_header);
	uint16_t count = 0;

	/* APIC IDs 0..n-1 and the IOAPIC's ID n, as in the MADT and CPUID. */
	for (int i = 0; i < nr_cpus; i++) {
		struct mpc_cpu c = {.type = MP_CPU,
				    .apic_id = (uint8_t)i,
				    .apic_ver = MP_LAPIC_VER,
				    .flags = MP_CPU_EN | (i == 0 ? MP_CPU_BP : 0),
				    .signature = MP_CPU_SIGNATURE,
				    .features = MP_CPU_FEATURES};
		p = entry_put(p, &c, sizeof(c), &count);
	}
	struct mpc_bus pci = {.type = MP_BUS, .id = MP_BUS_PCI};
	struct mpc_bus isa = {.type = MP_BUS, .id = MP_BUS_ISA};
	memcpy(pci.name, "PCI   ", 6);
	memcpy(isa.name, "ISA   ", 6);
	p = entry_put(p, &pci, sizeof(pci), &count);
	p = entry_put(p, &isa, sizeof(isa), &count);
	uint8_t ioapic_id = (uint8_t)nr_cpus;
	struct mpc_ioapic io = {.type = MP_IOAPIC,
				.id = ioapic_id,
				.ver = MP_IOAPIC_VER,
				.flags = MP_IOAPIC_EN,
				.addr = (uint32_t)LAYOUT_IOAPIC};
	p = entry_put(p, &io, sizeof(io), &count);

	/* ISA IRQ n on IOAPIC pin n: the MADT has no interrupt source
	 * overrides, which says the same to an ACPI guest. */
	for (unsigned int irq = 0; irq < MP_ISA_IRQS; irq++) {
		if (irq == MP_ISA_CASCADE)
			continue;
		p = intsrc_put(p, &count, MP_INTSRC, MP_INT, MP_ACTIVE_HIGH | MP_EDGE, MP_BUS_ISA,
			       (uint8_t)irq, ioapic_id, (uint8_t)irq);
	}
	/* PCI INTx: the DSDT's _PRT, from the same layout_pci_intx_gsi(). */
	for (unsigned int slot = 1; slot < LAYOUT_PCI_SLOTS; slot++)
		for (unsigned int pin = 0; pin < 4; pin++)
			p = intsrc_put(p, &count, MP_INTSRC, MP_INT, MP_ACTIVE_LOW | MP_LEVEL,
				       MP_BUS_PCI, (uint8_t)(slot << 2 | pin), ioapic_id,
				       (uint8_t)layout_pci_intx_gsi(slot, pin));
	/* LINT0 ExtINT and LINT1 NMI on every vCPU, as cpu.c programs them. */
	p = intsrc_put(p, &count, MP_LINTSRC, MP_EXTINT, 0, MP_BUS_ISA, 0, MP_ALL_LAPICS, 0);
	p = intsrc_put(p, &count, MP_LINTSRC, MP_NMI, 0, MP_BUS_ISA, 0, MP_ALL_LAPICS, 1);
	if ((size_t)(p - base) != len) /* mptable_size() and this must agree */
		return -1;

	struct mpc_header h = {.length = (uint16_t)len,
			       .spec_rev = 4,
			       .count = count,
			       .lapic = (uint32_t)LAYOUT_LAPIC};
	memcpy(h.signature, "PCMP", 4);
	memcpy(h.oem_id, "SKIFF   ", 8);
	memcpy(h.product_id, "SKIFFVM     ", 12);
	memcpy(base, &h, sizeof(h));
	base[offsetof(struct mpc_header, checksum)] = (uint8_t)(0 - acpi_checksum(base, len));

	struct mpf f = {.physptr = LAYOUT_MPTABLE, .length = 1, .spec_rev = 4};
	memcpy(f.signature, "_MP_", 4);
	f.checksum = (uint8_t)(0 - acpi_checksum(&f, sizeof(f)));
	memcpy(low + LAYOUT_MPTABLE_FP, &f, sizeof(f));

	/* The BIOS data area's pointer to the EBDA (a real-mode segment):
	 * where the spec says to look for the floating pointer first. */
	uint16_t seg = LAYOUT_EBDA >> 4;
	memcpy(low + LAYOUT_BDA_EBDA, &seg, sizeof(seg));
	return 0;
}
