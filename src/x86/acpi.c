// SPDX-License-Identifier: Apache-2.0
#include "x86/acpi.h"

#include <string.h>

#include "x86/aml.h"
#include "x86/layout.h"

struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));

struct acpi_rsdp {
	char signature[8];
	uint8_t checksum;
	char oem_id[6];
	uint8_t revision;
	uint32_t rsdt_address;
	uint32_t length;
	uint64_t xsdt_address;
	uint8_t extended_checksum;
	uint8_t reserved[3];
} __attribute__((packed));

struct acpi_gas { /* generic address structure */
	uint8_t space_id, bit_width, bit_offset, access_size;
	uint64_t address;
} __attribute__((packed));

struct acpi_fadt { /* revision 6 layout, 276 bytes */
	struct acpi_header h;
	uint32_t firmware_ctrl, dsdt;
	uint8_t reserved0, pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
	uint32_t pm1a_evt, pm1b_evt, pm1a_cnt, pm1b_cnt, pm2_cnt, pm_tmr, gpe0, gpe1;
	uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len, gpe0_len, gpe1_len, gpe1_base;
	uint8_t cst_cnt;
	uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
	uint8_t duty_offset, duty_width, day_alrm, mon_alrm, century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl, x_dsdt;
	struct acpi_gas x_pm1a_evt, x_pm1b_evt, x_pm1a_cnt, x_pm1b_cnt, x_pm2_cnt, x_pm_tmr;
	struct acpi_gas x_gpe0, x_gpe1, sleep_control, sleep_status;
	uint64_t hypervisor_id;
} __attribute__((packed));

_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT layout");

#define FADT_WBINVD	      (1u << 0)
#define FADT_PWR_BUTTON	      (1u << 4) /* no fixed power button */
#define FADT_SLP_BUTTON	      (1u << 5)
#define FADT_RESET_REG_SUP    (1u << 10)
#define FADT_HW_REDUCED	      (1u << 20)
#define BOOT_ARCH_8042	      (1u << 1)
#define BOOT_ARCH_NO_VGA      (1u << 2)
#define BOOT_ARCH_NO_CMOS_RTC (1u << 5)
#define GAS_SYSTEM_IO	      1
#define GAS_ACCESS_BYTE	      1

#define MADT_PCAT_COMPAT 1
#define MADT_TYPE_LAPIC	 0
#define MADT_TYPE_IOAPIC 1

uint8_t acpi_checksum(const void *p, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += ((const uint8_t *)p)[i];
	return sum;
}

static void header_fill(struct acpi_header *h, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(h->signature, sig, 4);
	h->length = len;
	h->revision = rev;
	memcpy(h->oem_id, "SKIFF ", 6);
	memcpy(h->oem_table_id, "SKIFFVM ", 8);
	h->oem_revision = 1;
	memcpy(h->creator_id, "SKIF", 4);
	h->creator_revision = 1;
	h->checksum = 0;
	h->checksum = (uint8_t)(0 - acpi_checksum(h, len));
}

static struct acpi_gas gas_port(uint16_t port)
{
	return (struct acpi_gas){.space_id = GAS_SYSTEM_IO,
				 .bit_width = 8,
				 .access_size = GAS_ACCESS_BYTE,
				 .address = port};
}

/* The DSDT: \_S5 (so Linux offers poweroff) and the platform devices
 * Linux cannot find otherwise. On a hardware-reduced platform Linux maps no
 * legacy ISA IRQs by itself, so COM1 must be an ACPI device whose _CRS
 * names IRQ 4; then the IRQ is routed through the IOAPIC. The i8042 (KBD)
 * is a PNP0303 device for the same reason (IRQ 1). Likewise Linux
 * scans PCI only below an ACPI host bridge (PNP0A03): PCI0 claims the
 * config ports, decodes bus 0, the I/O space around them and the MMIO
 * window, and its _PRT wires every slot's INTA..INTD to IOAPIC pins (the
 * same mapping layout_pci_intx_gsi() gives the devices' Interrupt Line). */
static void dsdt_body(struct aml *a, uint64_t mmio64_start, uint64_t mmio64_end)
{
	static const uint8_t s5[] = {ACPI_S5_TYPE, 0, 0, 0};
	aml_name_package(a, "_S5_", s5, sizeof(s5));
	aml_scope_open(a, "\\_SB_");
	aml_device_open(a, "COM1");
	aml_name_eisaid(a, "_HID", "PNP0501");
	aml_name_int(a, "_UID", 0);
	uint8_t crs[32]; /* the largest: two I/O ranges, an IRQ, the end */
	size_t n = aml_res_io(crs, LAYOUT_COM1, 8);
	n += aml_res_irq(crs + n, LAYOUT_COM1_IRQ);
	n += aml_res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	aml_close(a);

	aml_device_open(a, "KBD_");
	aml_name_eisaid(a, "_HID", "PNP0303");
	aml_name_int(a, "_UID", 0);
	n = aml_res_io(crs, LAYOUT_KBD_DATA, 1);
	n += aml_res_io(crs + n, LAYOUT_KBD_CMD, 1);
	n += aml_res_irq(crs + n, LAYOUT_KBD_IRQ);
	n += aml_res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	aml_close(a);

	/* QEMU's pvpanic: Linux's pvpanic-mmio driver writes here on panic. */
	aml_device_open(a, "PEVT");
	aml_name_string(a, "_HID", "QEMU0001");
	aml_name_int(a, "_UID", 0);
	n = aml_res_io(crs, LAYOUT_PVPANIC, 1);
	n += aml_res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	aml_close(a);

	aml_device_open(a, "PCI0");
	aml_name_eisaid(a, "_HID", "PNP0A03");
	aml_name_int(a, "_SEG", 0);
	aml_name_int(a, "_BBN", 0);
	aml_name_int(a, "_UID", 0);
	uint8_t pcrs[3 * AML_RES_WORD_LEN + 8 + AML_RES_DWORD_LEN + AML_RES_QWORD_LEN + 2];
	n = aml_res_word_bus(pcrs, 0, 0xff);
	n += aml_res_io(pcrs + n, LAYOUT_PCI_CONFIG, LAYOUT_PCI_CONFIG_LEN);
	n += aml_res_word_io(pcrs + n, 0, LAYOUT_PCI_CONFIG - 1);
	n += aml_res_word_io(pcrs + n, 0x0d00, 0xffff);
	n += aml_res_dword_mem(pcrs + n, (uint32_t)LAYOUT_PCI_MMIO_START,
			       (uint32_t)(LAYOUT_PCI_MMIO_END - 1));
	if (mmio64_end > mmio64_start)
		n += aml_res_qword_mem(pcrs + n, mmio64_start, mmio64_end - 1);
	n += aml_res_end(pcrs + n);
	aml_name_buffer(a, "_CRS", pcrs, n);
	/* _PRT entries: { slot address 0xSSSSFFFF, pin, source 0 (GSI), GSI } */
	aml_name(a, "_PRT");
	aml_package_open(a, (LAYOUT_PCI_SLOTS - 1) * 4);
	for (unsigned int slot = 1; slot < LAYOUT_PCI_SLOTS; slot++) {
		for (unsigned int pin = 0; pin < 4; pin++) {
			aml_package_open(a, 4);
			aml_int(a, (slot << 16) | 0xffff);
			aml_int(a, pin);
			aml_int(a, 0);
			aml_int(a, layout_pci_intx_gsi(slot, pin));
			aml_close(a);
		}
	}
	aml_close(a);
	aml_close(a);
	aml_close(a);
}

static size_t align16(size_t x)
{
	return (x + 15) & ~(size_t)15;
}

uint64_t acpi_build(uint8_t *buf, uint64_t base, size_t len, int nr_cpus, uint64_t mmio64_start,
		    uint64_t mmio64_end)
{
	size_t madt_len = sizeof(struct acpi_header) + 8 + (size_t)nr_cpus * 8 + 12;
	size_t off_rsdp = 0;
	size_t off_xsdt = align16(off_rsdp + sizeof(struct acpi_rsdp));
	size_t xsdt_len = sizeof(struct acpi_header) + 2 * 8;
	size_t off_fadt = align16(off_xsdt + xsdt_len);
	size_t off_dsdt = align16(off_fadt + sizeof(struct acpi_fadt));
	static struct aml dsdt_aml; /* 8 KiB: too big for a vCPU-sized stack frame */
	struct aml *dsdt = &dsdt_aml;
	aml_init(dsdt);
	dsdt_body(dsdt, mmio64_start, mmio64_end);
	if (dsdt->overflow)
		return 0;
	size_t dsdt_len = sizeof(struct acpi_header) + dsdt->len;
	size_t off_madt = align16(off_dsdt + dsdt_len);
	if (nr_cpus < 1 || nr_cpus > 255 || off_madt + madt_len > len)
		return 0;
	memset(buf, 0, off_madt + madt_len);

	/* DSDT */
	memcpy(buf + off_dsdt + sizeof(struct acpi_header), dsdt->buf, dsdt->len);
	header_fill((struct acpi_header *)(buf + off_dsdt), "DSDT", (uint32_t)dsdt_len, 2);

	/* MADT: header, local APIC address, flags, then entries */
	uint8_t *m = buf + off_madt;
	uint8_t *p = m + sizeof(struct acpi_header);
	uint32_t lapic = (uint32_t)LAYOUT_LAPIC, flags = MADT_PCAT_COMPAT;
	memcpy(p, &lapic, 4);
	memcpy(p + 4, &flags, 4);
	p += 8;
	for (int i = 0; i < nr_cpus; i++, p += 8) {
		uint32_t enabled = 1;
		p[0] = MADT_TYPE_LAPIC;
		p[1] = 8;
		p[2] = (uint8_t)i; /* ACPI processor UID */
		p[3] = (uint8_t)i; /* APIC ID */
		memcpy(p + 4, &enabled, 4);
	}
	uint32_t ioapic = (uint32_t)LAYOUT_IOAPIC, gsi_base = 0;
	p[0] = MADT_TYPE_IOAPIC;
	p[1] = 12;
	p[2] = (uint8_t)nr_cpus; /* IOAPIC ID after the CPUs' */
	memcpy(p + 4, &ioapic, 4);
	memcpy(p + 8, &gsi_base, 4);
	header_fill((struct acpi_header *)m, "APIC", (uint32_t)madt_len, 5);

	/* FADT */
	struct acpi_fadt *f = (struct acpi_fadt *)(buf + off_fadt);
	f->dsdt = (uint32_t)(base + off_dsdt);
	f->x_dsdt = base + off_dsdt;
	f->flags =
	    FADT_WBINVD | FADT_PWR_BUTTON | FADT_SLP_BUTTON | FADT_RESET_REG_SUP | FADT_HW_REDUCED;
	/* The 8042 flag, besides the DSDT's PNP0303: without either Linux
	 * does not probe the i8042. */
	f->iapc_boot_arch = BOOT_ARCH_8042 | BOOT_ARCH_NO_VGA | BOOT_ARCH_NO_CMOS_RTC;
	f->reset_reg = gas_port(LAYOUT_ACPI_RESET);
	f->reset_value = ACPI_RESET_VALUE;
	f->sleep_control = gas_port(LAYOUT_ACPI_SLEEP_CTL);
	f->sleep_status = gas_port(LAYOUT_ACPI_SLEEP_STS);
	f->minor_version = 0;
	memcpy(&f->hypervisor_id, "SKIFF\0\0\0", 8);
	header_fill(&f->h, "FACP", sizeof(*f), 6);

	/* XSDT */
	uint8_t *x = buf + off_xsdt;
	uint64_t entries[2] = {base + off_fadt, base + off_madt};
	memcpy(x + sizeof(struct acpi_header), entries, sizeof(entries));
	header_fill((struct acpi_header *)x, "XSDT", (uint32_t)xsdt_len, 1);

	/* RSDP (ACPI 2.0+): first checksum covers 20 bytes, the extended one all */
	struct acpi_rsdp *r = (struct acpi_rsdp *)(buf + off_rsdp);
	memcpy(r->signature, "RSD PTR ", 8);
	memcpy(r->oem_id, "SKIFF ", 6);
	r->revision = 2;
	r->length = sizeof(*r);
	r->xsdt_address = base + off_xsdt;
	r->checksum = (uint8_t)(0 - acpi_checksum(r, 20));
	r->extended_checksum = (uint8_t)(0 - acpi_checksum(r, sizeof(*r)));
	return base + off_rsdp;
}
