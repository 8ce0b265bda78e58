// SPDX-License-Identifier: Apache-2.0
/* KVM's own counters through the binary stats interface (KVM_GET_STATS_FD,
 * Linux 5.14+): exits by kind as the kernel counts them, including the ones
 * skiff never sees (halts and interrupts handled in the kernel). */
#ifndef SKIFF_KVM_STATS_H
#define SKIFF_KVM_STATS_H

#include <stdint.h>
#include <stdio.h>

#define KVM_STATS_MAX 128

struct kvm_counter {
	char name[64];
	uint64_t value;
};

struct kvm_counters {
	unsigned int n;
	struct kvm_counter c[KVM_STATS_MAX];
};

/* Adds the cumulative counters of the object behind `fd` (a vCPU or VM fd)
 * into `out`, summing by name. Returns 0, or -1 if the kernel lacks the
 * interface. */
int kvm_stats_collect(int fd, struct kvm_counters *out);
uint64_t kvm_stats_get(const struct kvm_counters *k, const char *name);

#endif
