// SPDX-License-Identifier: Apache-2.0
/* A tiny real guest through a snapshot (needs /dev/kvm; skipped without
 * it): it counts in memory and writes the count to a port; after five
 * counts its state is saved (core/snap.h, arch_vm_save, arch_vcpu_save)
 * and its RAM written to a file; the VM is destroyed; a new VM is built
 * over that file mapped privately (vm_create_mem), restored, and run: the
 * count goes on from 5, not from 0, and the file is untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/snap.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "x86/cpu.h"

#define MEM	 (2u << 20)
#define CODE	 0x1000
#define COUNTER	 0x2000
#define OUT_PORT 0x10

/* 16-bit real mode, at CODE:
 *   inc word [COUNTER]; mov ax, [COUNTER]; out OUT_PORT, al; jmp CODE */
static const uint8_t guest_code[] = {0xff, 0x06, 0x00,	   0x20, 0xa1, 0x00,
				     0x20, 0xe6, OUT_PORT, 0xeb, 0xf5};

/* Runs until the guest writes the port: the byte, or -1. */
static int run_to_out(struct vcpu *c)
{
	for (int i = 0; i < 1000; i++) {
		if (ioctl(c->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		struct kvm_run *r = c->run;
		if (r->exit_reason == KVM_EXIT_IO && r->io.port == OUT_PORT &&
		    r->io.direction == KVM_EXIT_IO_OUT)
			return *((uint8_t *)r + r->io.data_offset);
		if (r->exit_reason != KVM_EXIT_INTR)
			return -1;
	}
	return -1;
}

static struct vcpu *new_vcpu(struct vm *vm)
{
	struct kvm_cpuid2 *cpuid = cpuid_get_supported(vm->kvm_fd);
	assert_non_null(cpuid);
	struct vcpu *c = vcpu_create(vm, 0, cpuid);
	free(cpuid);
	assert_non_null(c);
	return c;
}

static bool have_kvm(struct vm *vm)
{
	char err[256];
	if (vm_create(vm, MEM, 1, err, sizeof(err)) == 0)
		return true;
	fprintf(stderr, "test_snap_guest: %s: skipped\n", err);
	vm_destroy(vm);
	return false;
}

static void test_count_continues(void **state)
{
	(void)state;
	static struct vm a, b;
	if (!have_kvm(&a))
		skip();
	struct vcpu *ca = new_vcpu(&a);
	memcpy(guest_mem_ptr(&a.mem, CODE, sizeof(guest_code)), guest_code, sizeof(guest_code));
	struct kvm_sregs sregs;
	assert_int_equal(ioctl(ca->fd, KVM_GET_SREGS, &sregs), 0);
	sregs.cs.base = 0, sregs.cs.selector = 0;
	assert_int_equal(ioctl(ca->fd, KVM_SET_SREGS, &sregs), 0);
	struct kvm_regs regs = {.rip = CODE, .rflags = 2};
	assert_int_equal(ioctl(ca->fd, KVM_SET_REGS, &regs), 0);
	for (int n = 1; n <= 5; n++)
		assert_int_equal(run_to_out(ca), n);
	/* Paused as the vCPU thread parks: the OUT finished first. */
	vcpu_complete_exit(ca);

	struct snap_writer w;
	snap_writer_init(&w);
	char err[300] = "";
	uint64_t clock;
	assert_int_equal(vm_clock_get(&a, &clock), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CLOCK, 0, &clock, sizeof(clock)), 0);
	assert_int_equal(arch_vm_save(a.vm_fd, &w, err, sizeof(err)), 0);
	assert_int_equal(arch_vcpu_save(a.kvm_fd, a.vm_fd, ca->fd, 0, &w, err, sizeof(err)), 0);
	char state_path[] = "/tmp/skiff-snapstate-XXXXXX", mem_path[] = "/tmp/skiff-snapmem-XXXXXX";
	int sfd = mkstemp(state_path), mfd = mkstemp(mem_path);
	assert_true(sfd >= 0 && mfd >= 0);
	close(sfd);
	assert_int_equal(snap_write_file(&w, state_path, err, sizeof(err)), 0);
	assert_int_equal(write(mfd, a.mem.host, MEM), (ssize_t)MEM);
	snap_writer_free(&w);
	vcpu_destroy(ca);
	vm_destroy(&a);

	struct snap_image img;
	assert_int_equal(snap_read_file(&img, state_path, err, sizeof(err)), 0);
	assert_int_equal(vm_create_mem(&b, MEM, mfd, NULL, 1, err, sizeof(err)), 0);
	struct vcpu *cb = new_vcpu(&b);
	assert_int_equal(arch_vm_restore(b.vm_fd, &img, err, sizeof(err)), 0);
	assert_int_equal(
	    snap_get(&img, SNAP_ID_VM_CLOCK, 0, &clock, sizeof(clock), err, sizeof(err)), 0);
	assert_int_equal(vm_clock_set(&b, clock), 0);
	assert_int_equal(arch_vcpu_restore(b.kvm_fd, b.vm_fd, cb->fd, 0, &img, err, sizeof(err)),
			 0);
	assert_int_equal(run_to_out(cb), 6);
	assert_int_equal(run_to_out(cb), 7);
	/* MAP_PRIVATE: the guest's writes stayed out of the file. */
	uint16_t in_file;
	assert_int_equal(pread(mfd, &in_file, sizeof(in_file), COUNTER), 2);
	assert_int_equal(in_file, 5);
	snap_image_free(&img);
	vcpu_destroy(cb);
	vm_destroy(&b);
	close(mfd);
	unlink(state_path);
	unlink(mem_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_count_continues),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
