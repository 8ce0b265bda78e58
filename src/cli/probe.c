// SPDX-License-Identifier: Apache-2.0
/* `skiff probe`: what this host's KVM offers, and whether guest kernel code
 * runs natively. A software KVM (such as PVM) runs guest user mode natively
 * but emulates ring 0, so a tiny guest times the same loop in both rings. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "core/log.h"
#include "core/guest_mem.h"
#include "core/vcpu.h"
#include "x86/cpu.h"
#include "x86/layout.h"

#define PROBE_MEM	     (4ULL << 20)
#define PROBE_CODE	     0x1000
#define PROBE_PORT	     0x10
#define PROBE_LOOPS	     500000u
#define PROBE_DONE_PORT_EXIT 1

struct cap_row {
	const char *name;
	long cap;
};

static const struct cap_row caps[] = {
    {"irqchip", KVM_CAP_IRQCHIP},
    {"ioeventfd", KVM_CAP_IOEVENTFD},
    {"irqfd", KVM_CAP_IRQFD},
    {"coalesced_mmio", KVM_CAP_COALESCED_MMIO},
    {"msi_routing", KVM_CAP_IRQ_ROUTING},
    {"signal_msi", KVM_CAP_SIGNAL_MSI},
    {"binary_stats_fd", KVM_CAP_BINARY_STATS_FD},
    {"immediate_exit", KVM_CAP_IMMEDIATE_EXIT},
};

/* mov ecx, N; 1: dec ecx; jnz 1b; out PROBE_PORT, al; jmp . */
static void probe_code_write(uint8_t *p)
{
	uint32_t n = PROBE_LOOPS;
	p[0] = 0xb9;
	memcpy(p + 1, &n, 4);
	const uint8_t rest[] = {0xff, 0xc9, 0x75, 0xfc, 0xe6, PROBE_PORT, 0xeb, 0xfe};
	memcpy(p + 5, rest, sizeof(rest));
}

/* Runs the loop at ring `cpl` (0 or 3); returns nanoseconds, or 0. */
static uint64_t probe_time_loop(int vcpu_fd, struct kvm_run *run, int cpl)
{
	if (x86_vcpu_set_boot_regs(vcpu_fd, PROBE_CODE, 0) < 0)
		return 0;
	struct kvm_sregs sr;
	struct kvm_regs regs;
	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sr) < 0 || ioctl(vcpu_fd, KVM_GET_REGS, &regs) < 0)
		return 0;
	if (cpl == 3) {
		sr.cs.dpl = 3;
		sr.cs.selector |= 3;
		sr.ss.dpl = sr.ds.dpl = sr.es.dpl = 3;
		sr.ss.selector |= 3;
		regs.rflags = 0x3002; /* IOPL 3: the final OUT is allowed in ring 3 */
	}
	regs.rsp = 0x8000;
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sr) < 0 || ioctl(vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return 0;
	uint64_t t0 = monotonic_ns();
	for (int tries = 0; tries < 1000; tries++) {
		if (ioctl(vcpu_fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (run->exit_reason == KVM_EXIT_IO && run->io.port == PROBE_PORT)
			return monotonic_ns() - t0 + 1;
		if (run->exit_reason != KVM_EXIT_INTR)
			return 0;
	}
	return 0;
}

static int probe_rings(int kvm_fd, uint64_t *ring0_ns, uint64_t *ring3_ns)
{
	int ret = -1, vcpu = -1;
	struct kvm_run *run = MAP_FAILED;
	struct guest_mem gm = {0};
	int vm = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm < 0)
		return -1;
	int run_size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size <= 0 || guest_mem_alloc(&gm, PROBE_MEM) < 0)
		goto out;
	struct kvm_userspace_memory_region r = {.memory_size = PROBE_MEM,
						.userspace_addr = (uint64_t)(uintptr_t)gm.host};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r) < 0)
		goto out;
	x86_boot_tables_write(gm.host, 1);
	probe_code_write(gm.host + PROBE_CODE);
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		goto out;
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		goto out;
	struct kvm_cpuid2 *cpuid = cpuid_get_supported(kvm_fd);
	if (cpuid) {
		cpuid_patch(cpuid, 0, 1);
		ioctl(vcpu, KVM_SET_CPUID2, cpuid);
		free(cpuid);
	}
	*ring0_ns = probe_time_loop(vcpu, run, 0);
	*ring3_ns = probe_time_loop(vcpu, run, 3);
	ret = (*ring0_ns && *ring3_ns) ? 0 : -1;
out:
	if (run != MAP_FAILED)
		munmap(run, (size_t)run_size);
	if (vcpu >= 0)
		close(vcpu);
	guest_mem_free(&gm);
	close(vm);
	return ret;
}

static void probe_dev(int quiet, const char *name, const char *path)
{
	int ok = access(path, R_OK | W_OK) == 0;
	if (!quiet)
		printf("%-16s %s (%s)\n", name, ok ? "yes" : "no", path);
}

int cmd_probe(int argc, char **argv)
{
	int quiet = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
			quiet = 1;
		} else {
			fprintf(stderr, "skiff: unknown option '%s' for probe (use --quiet)\n",
				argv[i]);
			return EXIT_USAGE;
		}
	}
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		log_err("cannot open /dev/kvm: %s", strerror(errno));
		return EXIT_USAGE;
	}
	int api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (!quiet)
		printf("%-16s yes, API version %d\n", "kvm", api);
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		int v = ioctl(vm >= 0 ? vm : kvm, KVM_CHECK_EXTENSION, caps[i].cap);
		if (!quiet)
			printf("%-16s %s\n", caps[i].name, v > 0 ? "yes" : "no");
	}
	if (vm >= 0)
		close(vm);
	probe_dev(quiet, "vhost_net", "/dev/vhost-net");
	probe_dev(quiet, "vhost_vsock", "/dev/vhost-vsock");
	probe_dev(quiet, "tun", "/dev/net/tun");

	uint64_t r0 = 0, r3 = 0;
	if (probe_rings(kvm, &r0, &r3) < 0) {
		close(kvm);
		log_err("the probe guest did not run on /dev/kvm");
		return EXIT_USAGE;
	}
	close(kvm);
	/* Hardware virtualization runs both loops at the same speed; an
	 * emulating KVM is two to three orders of magnitude slower at ring 0.
	 * 20x leaves room for noise; the 20 ms floor ignores tiny absolute gaps. */
	int native = !(r0 > 20 * r3 && r0 > 20000000ULL);
	if (!quiet)
		printf("%-16s %s (ring-0 loop %.2f ms, ring-3 loop %.2f ms, ratio %.1f)\n",
		       "guest_kernel", native ? "native" : "emulated", r0 / 1e6, r3 / 1e6,
		       (double)r0 / (double)r3);
	return native ? 0 : 1;
}
