// SPDX-License-Identifier: Apache-2.0
#include "x86/cpu.h"

#include <cpuid.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/arch.h"
#include "x86/layout.h"

#define MSR_IA32_SYSENTER_CS	0x174
#define MSR_IA32_SYSENTER_ESP	0x175
#define MSR_IA32_SYSENTER_EIP	0x176
#define MSR_IA32_MISC_ENABLE	0x1a0
#define MSR_IA32_TSC		0x10
#define MSR_STAR		0xc0000081
#define MSR_LSTAR		0xc0000082
#define MSR_CSTAR		0xc0000083
#define MSR_SYSCALL_MASK	0xc0000084
#define MSR_KERNEL_GS_BASE	0xc0000102
#define MSR_MTRR_DEF_TYPE	0x2ff
#define MISC_ENABLE_FAST_STRING 1ULL
#define MISC_ENABLE_MWAIT	(1ULL << 18)
#define MTRR_DEF_ENABLE		(1ULL << 11)
#define MTRR_TYPE_WB		6ULL

#define CR0_PE	 (1ULL << 0)
#define CR0_MP	 (1ULL << 1)
#define CR0_ET	 (1ULL << 4)
#define CR0_NE	 (1ULL << 5)
#define CR0_PG	 (1ULL << 31)
#define CR4_PAE	 (1ULL << 5)
#define EFER_LME (1ULL << 8)
#define EFER_LMA (1ULL << 10)

#define PTE_P  1ULL
#define PTE_W  2ULL
#define PTE_U  4ULL
#define PTE_PS 0x80ULL

#define APIC_LVT0	 0x350
#define APIC_LVT1	 0x360
#define APIC_MODE_EXTINT 0x7
#define APIC_MODE_NMI	 0x4

/* misc_extra: bits added to IA32_MISC_ENABLE. */
static int msrs_set(int fd, uint64_t misc_extra)
{
	static const struct {
		uint32_t index;
		uint64_t value;
	} boot_msrs[] = {
	    {MSR_IA32_SYSENTER_CS, 0},
	    {MSR_IA32_SYSENTER_ESP, 0},
	    {MSR_IA32_SYSENTER_EIP, 0},
	    {MSR_STAR, 0},
	    {MSR_LSTAR, 0},
	    {MSR_CSTAR, 0},
	    {MSR_SYSCALL_MASK, 0},
	    {MSR_KERNEL_GS_BASE, 0},
	    {MSR_IA32_TSC, 0},
	    {MSR_IA32_MISC_ENABLE, MISC_ENABLE_FAST_STRING},
	    /* MTRRs on, everything write-back, as firmware leaves them:
	     * KVM resets them off (all memory UC), and Linux then turns
	     * PAT off too (no write-combining) and, where KVM honours guest
	     * memory types (non-coherent DMA, e.g. VFIO), guest RAM would
	     * be uncached. */
	    {MSR_MTRR_DEF_TYPE, MTRR_DEF_ENABLE | MTRR_TYPE_WB},
	};
	enum { N = sizeof(boot_msrs) / sizeof(boot_msrs[0]) };
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[N];
	} m;
	memset(&m, 0, sizeof(m));
	m.hdr.nmsrs = N;
	for (int i = 0; i < N; i++) {
		m.e[i].index = boot_msrs[i].index;
		m.e[i].data = boot_msrs[i].value;
		if (m.e[i].index == MSR_IA32_MISC_ENABLE)
			m.e[i].data |= misc_extra;
	}
	int r = ioctl(fd, KVM_SET_MSRS, &m);
	return r < 0 ? -errno : (r == N ? 0 : -EINVAL);
}

/* What firmware would do: LINT0 delivers the 8259's ExtINT, LINT1 NMI. */
static int lapic_lint_set(int fd)
{
	struct kvm_lapic_state la;
	if (ioctl(fd, KVM_GET_LAPIC, &la) < 0)
		return -errno;
	uint32_t lvt0, lvt1;
	memcpy(&lvt0, &la.regs[APIC_LVT0], 4);
	memcpy(&lvt1, &la.regs[APIC_LVT1], 4);
	lvt0 = (lvt0 & ~0x700u) | (APIC_MODE_EXTINT << 8);
	lvt1 = (lvt1 & ~0x700u) | (APIC_MODE_NMI << 8);
	memcpy(&la.regs[APIC_LVT0], &lvt0, 4);
	memcpy(&la.regs[APIC_LVT1], &lvt1, 4);
	return ioctl(fd, KVM_SET_LAPIC, &la) < 0 ? -errno : 0;
}

int arch_vcpu_init(int fd, const struct kvm_cpuid2 *supported, int index, int nr_cpus,
		   unsigned int idle_exits_off)
{
	bool mwait = idle_exits_off & KVM_X86_DISABLE_EXITS_MWAIT;
	uint32_t leaf5[4] = {0};
	if (mwait)
		__cpuid_count(5, 0, leaf5[0], leaf5[1], leaf5[2], leaf5[3]);
	size_t sz = sizeof(*supported) + supported->nent * sizeof(supported->entries[0]);
	struct kvm_cpuid2 *c = malloc(sz);
	if (!c)
		return -ENOMEM;
	memcpy(c, supported, sz);
	cpuid_patch(c, index, nr_cpus);
	cpuid_patch_idle(c, idle_exits_off, leaf5);
	int r = ioctl(fd, KVM_SET_CPUID2, c) < 0 ? -errno : 0;
	free(c);
	if (r < 0)
		return r;
	/* MWAIT enabled, as firmware leaves it where the CPU has it (QEMU
	 * sets it with MONITOR in CPUID: x86_cpu_reset). */
	if ((r = msrs_set(fd, mwait ? MISC_ENABLE_MWAIT : 0)) < 0)
		return r;
	struct kvm_fpu fpu = {.fcw = 0x37f, .mxcsr = 0x1f80};
	if (ioctl(fd, KVM_SET_FPU, &fpu) < 0)
		return -errno;
	return lapic_lint_set(fd);
}

static void segment_flat(struct kvm_segment *s, uint16_t sel, uint8_t type, int code)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->g = 1;
	s->l = code ? 1 : 0;
	s->db = code ? 0 : 1;
}

int x86_vcpu_set_boot_regs(int fd, uint64_t entry, uint64_t zero_page)
{
	struct kvm_sregs sr;
	if (ioctl(fd, KVM_GET_SREGS, &sr) < 0)
		return -errno;
	segment_flat(&sr.cs, BOOT_CS, 0xb, 1);
	segment_flat(&sr.ds, BOOT_DS, 0x3, 0);
	sr.es = sr.fs = sr.gs = sr.ss = sr.ds;
	/* VMX requires a usable TR even though the kernel loads its own. */
	memset(&sr.tr, 0, sizeof(sr.tr));
	sr.tr.selector = 0x20;
	sr.tr.limit = 0x67;
	sr.tr.type = 0xb;
	sr.tr.present = 1;
	sr.gdt.base = LAYOUT_GDT;
	sr.gdt.limit = 4 * 8 - 1;
	sr.idt.base = 0;
	sr.idt.limit = 0;
	sr.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_PG;
	sr.cr3 = LAYOUT_PML4;
	sr.cr4 = CR4_PAE;
	sr.efer = EFER_LME | EFER_LMA;
	if (ioctl(fd, KVM_SET_SREGS, &sr) < 0)
		return -errno;
	struct kvm_regs regs = {.rip = entry, .rsi = zero_page, .rflags = 2};
	return ioctl(fd, KVM_SET_REGS, &regs) < 0 ? -errno : 0;
}

void x86_boot_tables_write(uint8_t *low, int user)
{
	/* GDT: null, null, 64-bit code (0x10), data (0x18) */
	static const uint64_t gdt[4] = {0, 0, 0x00af9b000000ffffULL, 0x00cf93000000ffffULL};
	memcpy(low + LAYOUT_GDT, gdt, sizeof(gdt));

	uint64_t extra = user ? PTE_U : 0;
	uint64_t *pml4 = (uint64_t *)(low + LAYOUT_PML4);
	uint64_t *pdpt = (uint64_t *)(low + LAYOUT_PDPT);
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = LAYOUT_PDPT | PTE_P | PTE_W | extra;
	for (uint64_t g = 0; g < 4; g++) {
		uint64_t *pd = (uint64_t *)(low + LAYOUT_PD + g * 4096);
		pdpt[g] = (LAYOUT_PD + g * 4096) | PTE_P | PTE_W | extra;
		for (uint64_t i = 0; i < 512; i++)
			pd[i] = ((g << 30) | (i << 21)) | PTE_P | PTE_W | PTE_PS | extra;
	}
}

unsigned int arch_phys_bits(void)
{
	unsigned int a, b, c, d;
	/* KVM's supported CPUID passes the host's MAXPHYADDR through; 36 is
	 * the architectural floor when the leaf is missing. */
	if (!__get_cpuid(0x80000008, &a, &b, &c, &d) || (a & 0xff) < 36)
		return 36;
	return a & 0xff;
}
