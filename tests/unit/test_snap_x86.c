// SPDX-License-Identifier: Apache-2.0
/* x86 machine state in a snapshot (x86/vcpu_state.c, vm_state.c): what a
 * restore checks before it sets anything. The ioctls themselves need
 * /dev/kvm: test_snap_vm.c runs them on a tiny guest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#include "core/arch.h"
#include "core/snap.h"

static uint8_t zeros[128 << 10];

/* A vCPU's sections as a save writes them; skip: one id left out,
 * resize: that id's length instead. */
static void put_vcpu(struct snap_writer *w, uint32_t cpu, uint32_t skip, uint32_t resize,
		     size_t len)
{
	static const struct {
		uint32_t id;
		size_t size;
	} items[] = {
	    {SNAP_ID_VCPU_TSC_KHZ, 4},
	    {SNAP_ID_VCPU_MP_STATE, sizeof(struct kvm_mp_state)},
	    {SNAP_ID_VCPU_REGS, sizeof(struct kvm_regs)},
	    {SNAP_ID_VCPU_SREGS, sizeof(struct kvm_sregs)},
	    {SNAP_ID_VCPU_XSAVE, 4096},
	    {SNAP_ID_VCPU_XCRS, sizeof(struct kvm_xcrs)},
	    {SNAP_ID_VCPU_DEBUGREGS, sizeof(struct kvm_debugregs)},
	    {SNAP_ID_VCPU_LAPIC, sizeof(struct kvm_lapic_state)},
	    {SNAP_ID_VCPU_MSRS, 3 * sizeof(struct kvm_msr_entry)},
	    {SNAP_ID_VCPU_EVENTS, sizeof(struct kvm_vcpu_events)},
	};
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		if (items[i].id != skip)
			assert_int_equal(snap_put(w, items[i].id, cpu, zeros,
						  items[i].id == resize ? len : items[i].size),
					 0);
}

static int check(uint32_t skip, uint32_t resize, size_t len, bool add_fpu, char *err, size_t errlen)
{
	struct snap_writer w;
	snap_writer_init(&w);
	put_vcpu(&w, 1, skip, resize, len);
	if (add_fpu)
		assert_int_equal(snap_put(&w, SNAP_ID_VCPU_FPU, 1, zeros, sizeof(struct kvm_fpu)),
				 0);
	size_t n;
	const uint8_t *b = snap_writer_image(&w, &n);
	struct snap_image img;
	assert_int_equal(snap_parse(&img, b, n, err, errlen), 0);
	err[0] = '\0';
	int r = arch_vcpu_check(&img, 1, err, errlen);
	snap_image_free(&img);
	snap_writer_free(&w);
	return r;
}

static void test_vcpu_whole_passes(void **state)
{
	(void)state;
	char err[200];
	assert_int_equal(check(0, 0, 0, false, err, sizeof(err)), 0);
	/* XCRS is optional (a host without KVM_CAP_XCRS saves none). */
	assert_int_equal(check(SNAP_ID_VCPU_XCRS, 0, 0, false, err, sizeof(err)), 0);
	/* FPU in place of XSAVE. */
	assert_int_equal(check(SNAP_ID_VCPU_XSAVE, 0, 0, true, err, sizeof(err)), 0);
}

static void test_vcpu_missing_piece_refused(void **state)
{
	(void)state;
	char err[200];
	assert_int_equal(check(SNAP_ID_VCPU_REGS, 0, 0, false, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot has no REGS for vCPU 1");
	assert_int_equal(check(SNAP_ID_VCPU_EVENTS, 0, 0, false, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot has no VCPU_EVENTS for vCPU 1");
	assert_int_equal(check(SNAP_ID_VCPU_XSAVE, 0, 0, false, err, sizeof(err)), -1);
	assert_string_equal(err, "vCPU 1: snapshot needs exactly one of XSAVE and FPU");
	assert_int_equal(check(0, 0, 0, true, err, sizeof(err)), -1);
	assert_string_equal(err, "vCPU 1: snapshot needs exactly one of XSAVE and FPU");
}

static void test_vcpu_wrong_size_refused(void **state)
{
	(void)state;
	char err[200];
	assert_int_equal(check(0, SNAP_ID_VCPU_SREGS, 8, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "vCPU 1: SREGS is 8 bytes, expected"));
	assert_int_equal(check(0, SNAP_ID_VCPU_LAPIC, 1025, false, err, sizeof(err)), -1);
	assert_int_equal(check(0, SNAP_ID_VCPU_MSRS, 17, false, err, sizeof(err)), -1);
	assert_string_equal(err, "vCPU 1: MSR list of 17 bytes is not valid");
	assert_int_equal(check(0, SNAP_ID_VCPU_MSRS, 0, false, err, sizeof(err)), 0);
	assert_int_equal(check(0, SNAP_ID_VCPU_XSAVE, 100, false, err, sizeof(err)), -1);
	assert_string_equal(err, "vCPU 1: XSAVE area of 100 bytes is not valid");
	assert_int_equal(check(0, SNAP_ID_VCPU_XSAVE, 65 << 10, false, err, sizeof(err)), -1);
	assert_int_equal(check(0, SNAP_ID_VCPU_XSAVE, 8192, false, err, sizeof(err)), 0);
}

/* The restore checks before its first ioctl: with bad fds, a damaged
 * image fails on the check, not on an ioctl. */
static void test_vcpu_restore_checks_first(void **state)
{
	(void)state;
	struct snap_writer w;
	snap_writer_init(&w);
	put_vcpu(&w, 0, SNAP_ID_VCPU_LAPIC, 0, 0);
	size_t n;
	const uint8_t *b = snap_writer_image(&w, &n);
	struct snap_image img;
	char err[200];
	assert_int_equal(snap_parse(&img, b, n, err, sizeof(err)), 0);
	assert_int_equal(arch_vcpu_restore(-1, -1, -1, 0, &img, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot has no LAPIC for vCPU 0");
	snap_image_free(&img);
	snap_writer_free(&w);
}

static void test_vm_chips_checked(void **state)
{
	(void)state;
	struct snap_writer w;
	snap_writer_init(&w);
	struct kvm_pit_state2 pit = {0};
	assert_int_equal(snap_put(&w, SNAP_ID_PIT, 0, &pit, sizeof(pit)), 0);
	for (uint32_t id = 0; id < 3; id++) {
		struct kvm_irqchip c = {.chip_id = id == 2 ? 0 : id}; /* IOAPIC's holds a PIC */
		assert_int_equal(snap_put(&w, SNAP_ID_IRQCHIP, id, &c, sizeof(c)), 0);
	}
	size_t n;
	const uint8_t *b = snap_writer_image(&w, &n);
	struct snap_image img;
	char err[200];
	assert_int_equal(snap_parse(&img, b, n, err, sizeof(err)), 0);
	assert_int_equal(arch_vm_check(&img, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot irqchip 2 holds chip 0");
	assert_int_equal(arch_vm_restore(-1, &img, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot irqchip 2 holds chip 0");
	snap_image_free(&img);
	snap_writer_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vcpu_whole_passes),
	    cmocka_unit_test(test_vcpu_missing_piece_refused),
	    cmocka_unit_test(test_vcpu_wrong_size_refused),
	    cmocka_unit_test(test_vcpu_restore_checks_first),
	    cmocka_unit_test(test_vm_chips_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
