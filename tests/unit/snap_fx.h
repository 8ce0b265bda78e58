// SPDX-License-Identifier: Apache-2.0
/* A state file a restore's checks accept: one vCPU, no device, every
 * section there at its size and zero (the review tests' VM of mem bytes). */
#ifndef SKIFF_TEST_SNAP_FX_H
#define SKIFF_TEST_SNAP_FX_H

#include <linux/kvm.h>
#include <stdint.h>

#include "core/snap.h"

/* Every section of one vCPU, at the size its check wants (MSRs: none). */
static const struct {
	uint32_t id;
	size_t size;
} snap_fx_vcpu[] = {
    {SNAP_ID_VCPU_TSC_KHZ, 4},
    {SNAP_ID_VCPU_MP_STATE, sizeof(struct kvm_mp_state)},
    {SNAP_ID_VCPU_REGS, sizeof(struct kvm_regs)},
    {SNAP_ID_VCPU_SREGS, sizeof(struct kvm_sregs)},
    {SNAP_ID_VCPU_XSAVE, 4096},
    {SNAP_ID_VCPU_DEBUGREGS, sizeof(struct kvm_debugregs)},
    {SNAP_ID_VCPU_LAPIC, sizeof(struct kvm_lapic_state)},
    {SNAP_ID_VCPU_MSRS, 0},
    {SNAP_ID_VCPU_EVENTS, sizeof(struct kvm_vcpu_events)},
};
#define SNAP_FX_NR_VCPU (sizeof(snap_fx_vcpu) / sizeof(snap_fx_vcpu[0]))

static inline void snap_fx_write_state(const char *path, uint64_t mem)
{
	static uint8_t zeros[8192];
	struct {
		uint64_t mem;
		uint32_t cpus, nr_devs;
	} sc = {mem, 1, 0};
	struct snap_writer w;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CONFIG, 0, &sc, sizeof(sc)), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CLOCK, 0, zeros, 8), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_PIT, 0, zeros, sizeof(struct kvm_pit_state2)), 0);
	for (uint32_t c = 0; c < 3; c++) {
		struct kvm_irqchip chip = {.chip_id = c};
		assert_int_equal(snap_put(&w, SNAP_ID_IRQCHIP, c, &chip, sizeof(chip)), 0);
	}
	for (size_t i = 0; i < SNAP_FX_NR_VCPU; i++)
		assert_int_equal(snap_put(&w, snap_fx_vcpu[i].id, 0, zeros, snap_fx_vcpu[i].size),
				 0);
	assert_int_equal(snap_put(&w, SNAP_ID_UART, 0, zeros, 272), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_I8042, 0, zeros, 24), 0);
	char err[200];
	assert_int_equal(snap_write_file(&w, path, err, sizeof(err)), 0);
	snap_writer_free(&w);
}

#endif
