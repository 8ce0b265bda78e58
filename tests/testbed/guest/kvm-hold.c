// SPDX-License-Identifier: Apache-2.0
/* kvm-hold: keeps one KVM VM, with one vCPU that never runs, alive in L1
 * for the whole boot.
 *
 * Why: L1's KVM (Linux 6.1) flips static keys when VMs and vCPUs come and
 * go, and each flip live-patches kernel text (text_poke_bp: an int3 first,
 * then IPIs) while the other CPU may run it. Under L0's software CPU that
 * cross-modifying code has wedged L1: one CPU found looping in exc_int3 for
 * __schedule+0x2aa, the other stuck just past that byte, both with
 * interrupts off (tests/testbed/README.md).
 * - The first VM turns on SVM on every CPU and the scheduler's
 *   preempt-notifier key; the last one's exit undoes both. The held VM
 *   keeps them on.
 * - Each vCPU's in-kernel LAPIC starts software-disabled and counts in
 *   KVM's LAPIC keys until its guest sets it up; then they are released,
 *   deferred. With no other vCPU they flipped at every L2 life: 44 patched
 *   sites (the SLOW l1-textpatch scenario counts them). The held vCPU never
 *   runs, so its LAPIC stays disabled and the keys stay on: 0 sites.
 * - All of that patching happens in the three ioctls below. l1-init
 *   waits for the file named by argv[1], made after them, before it says
 *   "ready": started in the background without that wait, the patching
 *   overlapped each scenario's first steps, and L1 froze right after
 *   "ready" (fcapi and snapshot in one CI run, powercut once: one CPU in
 *   native_queued_spin_lock_slowpath, the other in exc_int3, IF=0).
 * It adds nothing to KVM's exit counters. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int vm = kvm < 0 ? -1 : ioctl(kvm, KVM_CREATE_VM, 0);
	/* The irqchip first: a vCPU without an in-kernel LAPIC would flip a
	 * key of its own (kvm_has_noapic_vcpu) and hold the wrong one. */
	if (vm < 0 || ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0 || ioctl(vm, KVM_CREATE_VCPU, 0) < 0) {
		perror("kvm-hold");
		return 1;
	}
	if (argc > 1) {
		int fd = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			perror("kvm-hold: ready file");
			return 1;
		}
		close(fd);
	}
	for (;;)
		pause();
}
