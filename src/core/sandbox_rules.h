// SPDX-License-Identifier: Apache-2.0
/* The shape of an allowlist: the per-role tables (sandbox_rules.c) and
 * the sets a device kind adds for the threads that run its code (its
 * folder's *_sandbox.c; sandbox_add_rules), both read by the mechanism in
 * sandbox.c. */
#ifndef SKIFF_SANDBOX_RULES_H
#define SKIFF_SANDBOX_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "core/sandbox.h"

/* (argument arg & mask) == val; with pid set, val is the caller's pid at
 * install time. */
struct sandbox_cmp {
	uint8_t arg;
	uint8_t pid;
	uint64_t mask;
	uint64_t val;
};

/* One allowed system call; all of its comparisons must hold (none: any
 * arguments). A call listed twice is allowed if either entry matches. */
struct sandbox_rule {
	int nr;
	uint8_t ncmp;
	struct sandbox_cmp cmp[2];
};

struct sandbox_rules {
	const struct sandbox_rule *rule;
	size_t n;
};

/* A role's allowlist: groups of rules, shared where roles overlap. */
struct sandbox_table {
	const struct sandbox_rules *group;
	size_t n;
};

extern const struct sandbox_table sandbox_tables[SANDBOX_NR_ROLES];

/* Writing rules: a call by its name (the native architecture's number,
 * as libseccomp's SCMP_SYS gives it), with argument i & mask == val, an
 * ioctl by its exact request number (the 32 bits the kernel reads). */
#define SANDBOX_ALLOW(name)                                                                        \
	{                                                                                          \
		__NR_##name, 0,                                                                    \
		{                                                                                  \
			{                                                                          \
				0, 0, 0, 0                                                         \
			}                                                                          \
		}                                                                                  \
	}
#define SANDBOX_ARG(name, i, m, val)                                                               \
	{                                                                                          \
		__NR_##name, 1,                                                                    \
		{                                                                                  \
			{                                                                          \
				i, 0, m, val                                                       \
			}                                                                          \
		}                                                                                  \
	}
#define SANDBOX_IOCTL(req) SANDBOX_ARG(ioctl, 1, 0xffffffffull, (uint32_t)(req))
#define SANDBOX_RULES(arr)                                                                         \
	{                                                                                          \
		arr, sizeof(arr) / sizeof((arr)[0])                                                \
	}

#endif
