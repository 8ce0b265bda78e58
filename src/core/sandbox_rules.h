/* The per-role allowlists (sandbox_rules.c), read by the mechanism in
 * sandbox.c. Internal to the sandbox. */
#ifndef SKIFF_SANDBOX_RULES_H
#define SKIFF_SANDBOX_RULES_H

#include <stddef.h>
#include <stdint.h>

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

#endif
