// SPDX-License-Identifier: Apache-2.0
/* --cpu-pm on: the guest's idle instructions stay in the guest. What skiff
 * asks for and what it then tells the guest are QEMU's for
 * `-overcommit cpu-pm=on` (target/i386/kvm/kvm.c: kvm_arch_init's
 * kvm_vm_enable_disable_exits, kvm_arch_get_supported_cpuid; and
 * target/i386/host-cpu.c: host_cpu_enable_cpu_pm), so that the two modes
 * can be compared one for one. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>

#include "core/arch.h"
#include "core/vm.h"
#include "x86/cpu.h"

/* What QEMU asks for, in the order the note names them. */
static const struct {
	unsigned int bit;
	const char *name;
} idle_exits[] = {
    {KVM_X86_DISABLE_EXITS_MWAIT, "MWAIT"},
    {KVM_X86_DISABLE_EXITS_HLT, "HLT"},
    {KVM_X86_DISABLE_EXITS_PAUSE, "PAUSE"},
    {KVM_X86_DISABLE_EXITS_CSTATE, "C-state"},
};
#define NR_IDLE_EXITS (sizeof(idle_exits) / sizeof(idle_exits[0]))

/* "MWAIT C-state": the names of the bits in mask. */
static void exit_names(unsigned int mask, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NR_IDLE_EXITS && n < len; i++)
		if (mask & idle_exits[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "",
					      idle_exits[i].name);
}

bool arch_idle_halts_in_guest(unsigned int idle_exits_off)
{
	return idle_exits_off & KVM_X86_DISABLE_EXITS_HLT;
}

unsigned int arch_idle_exits_off(const struct vm_caps *k, char *note, size_t notelen)
{
	unsigned int all = 0, want = 0, off = 0;
	/* KVM_CHECK_EXTENSION answers with the bits this host allows (HLT and
	 * C-states not where it mitigates SMT RSB, MWAIT only where the host
	 * has a usable MWAIT); asking for any other is refused whole. */
	int offered = k->check(k->ctx, KVM_CAP_X86_DISABLE_EXITS);
	for (size_t i = 0; i < NR_IDLE_EXITS; i++) {
		all |= idle_exits[i].bit;
		if (offered > 0 && ((unsigned int)offered & idle_exits[i].bit))
			want |= idle_exits[i].bit;
	}
	if (want && k->enable(k->ctx, KVM_CAP_X86_DISABLE_EXITS, want) == 0) {
		off = want;
	} else {
		/* Refused together: one at a time, so that what the host does
		 * take still applies (each call only adds to the VM's set). */
		for (size_t i = 0; i < NR_IDLE_EXITS; i++)
			if ((want & idle_exits[i].bit) &&
			    k->enable(k->ctx, KVM_CAP_X86_DISABLE_EXITS, idle_exits[i].bit) == 0)
				off |= idle_exits[i].bit;
	}
	if (off != all) {
		char kept[64], gone[64];
		exit_names(all & ~off, kept, sizeof(kept));
		exit_names(off, gone, sizeof(gone));
		snprintf(note, notelen, "--cpu-pm: the host keeps the guest's %s exits (%s%s)",
			 kept, off ? "off: " : "KVM_CAP_X86_DISABLE_EXITS refused them all",
			 off ? gone : "");
	}
	return off;
}
