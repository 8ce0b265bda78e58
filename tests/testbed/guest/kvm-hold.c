/* kvm-hold: keeps one empty KVM VM alive in L1 for the whole boot.
 *
 * Why: L1's KVM (Linux 6.1) enables SVM on every CPU and turns on the
 * scheduler's preempt-notifier static key when the first VM is created, and
 * undoes both when the last one goes. The key flip live-patches __schedule
 * (text_poke_bp: an int3 first, then IPIs) while the other CPU runs it.
 * Under L0's software CPU that cross-modifying code has wedged L1: one CPU
 * found looping in exc_int3 for __schedule+0x2aa, the other stuck just past
 * that byte, both with interrupts off (tests/testbed/README.md). With a VM
 * held from boot, neither happens again when scenarios start and stop
 * VMMs. The VM has no vCPU: it never runs and adds nothing to KVM's exit
 * counters. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0 || ioctl(kvm, KVM_CREATE_VM, 0) < 0) {
		perror("kvm-hold");
		return 1;
	}
	for (;;)
		pause();
}
