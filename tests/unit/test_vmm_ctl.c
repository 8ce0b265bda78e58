// SPDX-License-Identifier: Apache-2.0
/* vmm_pause / vmm_resume / vmm_ctrl_alt_del outside a running VM (the
 * running case needs /dev/kvm: the gate they use is test_vcpu_gate.c's):
 * before the VM exists and once it is stopping they refuse, and touch
 * nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "vmm/vmm.h"

static void test_refused_without_vm(void **state)
{
	(void)state;
	static struct vmm v;
	memset(&v, 0, sizeof(v));
	pthread_mutex_init(&v.ctl_lock, NULL);
	assert_int_equal(vmm_pause(&v), -1);
	assert_int_equal(vmm_resume(&v), -1);
	assert_int_equal(vmm_ctrl_alt_del(&v), -1);
	assert_false(v.paused);
	pthread_mutex_destroy(&v.ctl_lock);
}

/* A VM whose exit was requested (poweroff, signal, vmm_stop) is not
 * paused any more: the vCPUs are on their way out. */
static void test_refused_once_stopping(void **state)
{
	(void)state;
	static struct vmm v;
	memset(&v, 0, sizeof(v));
	pthread_mutex_init(&v.ctl_lock, NULL);
	vcpu_gate_init(&v.vm.gate);
	i8042_init(&v.kbd, NULL, NULL, NULL);
	v.vm_created = true;
	v.vm.exit_pipe[0] = v.vm.exit_pipe[1] = -1;
	v.vm.vm_fd = v.vm.kvm_fd = -1;
	atomic_store(&v.vm.exit_kind, VM_EXIT_QUIT);
	assert_int_equal(vmm_pause(&v), -1);
	assert_false(vcpu_gate_closed(&v.vm.gate));
	assert_int_equal(vmm_ctrl_alt_del(&v), -1);
	assert_int_equal(v.kbd.q_count, 0);
	i8042_destroy(&v.kbd);
	vcpu_gate_destroy(&v.vm.gate);
	pthread_mutex_destroy(&v.ctl_lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refused_without_vm),
	    cmocka_unit_test(test_refused_once_stopping),
	};
	return cmocka_run_group_tests_name("vmm_ctl", tests, NULL, NULL);
}
