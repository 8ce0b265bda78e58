// SPDX-License-Identifier: Apache-2.0
/* The dedicated-CPU mode's talks with KVM, against a fake host: which idle
 * exits --cpu-pm asks KVM_CAP_X86_DISABLE_EXITS for, given what
 * KVM_CHECK_EXTENSION answered, what it reports kept, and --halt-poll's
 * KVM_CAP_HALT_POLL. The testbed's net-cpupm scenario runs it on KVM. */
#include <linux/kvm.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "core/arch.h"
#include "core/vm.h"
#include "vmm/vmm.h"

#define MWAIT  KVM_X86_DISABLE_EXITS_MWAIT
#define HLT    KVM_X86_DISABLE_EXITS_HLT
#define PAUSE  KVM_X86_DISABLE_EXITS_PAUSE
#define CSTATE KVM_X86_DISABLE_EXITS_CSTATE
#define ALL    (MWAIT | HLT | PAUSE | CSTATE)

struct fake_kvm {
	int offers_exits;    /* KVM_CHECK_EXTENSION(KVM_CAP_X86_DISABLE_EXITS) */
	int offers_poll;     /* KVM_CHECK_EXTENSION(KVM_CAP_HALT_POLL) */
	unsigned int refuse; /* enable fails if args[0] has any of these */
	int nr_calls;
	struct {
		unsigned int cap;
		uint64_t arg0;
	} calls[8];
	unsigned int exits_on; /* what the fake VM has taken */
};

static int fake_check(void *ctx, unsigned int cap)
{
	struct fake_kvm *f = ctx;
	return cap == KVM_CAP_X86_DISABLE_EXITS ? f->offers_exits
	       : cap == KVM_CAP_HALT_POLL	? f->offers_poll
						: 0;
}

static int fake_enable(void *ctx, unsigned int cap, uint64_t arg0)
{
	struct fake_kvm *f = ctx;
	assert_true(f->nr_calls < 8);
	f->calls[f->nr_calls].cap = cap;
	f->calls[f->nr_calls++].arg0 = arg0;
	if (cap == KVM_CAP_X86_DISABLE_EXITS) {
		/* KVM refuses a bit it did not offer, and the whole call. */
		if ((arg0 & ~(uint64_t)(unsigned int)f->offers_exits) || (arg0 & f->refuse))
			return -EINVAL;
		f->exits_on |= (unsigned int)arg0;
	}
	return 0;
}

static unsigned int setup(struct fake_kvm *f, bool cpu_pm, bool poll, uint64_t ns, char *note)
{
	struct vm_caps k = {.check = fake_check, .enable = fake_enable, .ctx = f};
	return vm_idle_setup(&k, cpu_pm, poll, ns, note, 256);
}

static void test_all_offered(void **state)
{
	(void)state;
	struct fake_kvm f = {.offers_exits = ALL};
	char note[256];
	assert_int_equal(setup(&f, true, false, 0, note), ALL);
	assert_true(arch_idle_halts_in_guest(ALL)); /* devices are told */
	assert_int_equal(f.nr_calls, 1);
	assert_int_equal(f.calls[0].cap, KVM_CAP_X86_DISABLE_EXITS);
	assert_int_equal(f.calls[0].arg0, ALL);
	assert_string_equal(note, "");
}

/* Only what the host offers is asked for; the rest is named in one line. */
static void test_mwait_kept(void **state)
{
	(void)state;
	/* A host without a usable MWAIT, offering APERF/MPERF (bit 5) too. */
	struct fake_kvm f = {.offers_exits = HLT | PAUSE | CSTATE | (1 << 5)};
	char note[256];
	assert_int_equal(setup(&f, true, false, 0, note), HLT | PAUSE | CSTATE);
	assert_int_equal(f.nr_calls, 1);
	assert_int_equal(f.calls[0].arg0, HLT | PAUSE | CSTATE);
	assert_non_null(strstr(note, "--cpu-pm"));
	assert_non_null(strstr(note, "keeps the guest's MWAIT exits"));
	assert_non_null(strstr(note, "off: HLT PAUSE C-state"));
	assert_null(strchr(note, '\n'));
}

static void test_nothing_offered(void **state)
{
	(void)state;
	char note[256];
	for (int offered = -1; offered <= 0; offered++) {
		struct fake_kvm f = {.offers_exits = offered};
		assert_int_equal(setup(&f, true, false, 0, note), 0);
		assert_int_equal(f.nr_calls, 0);
		assert_non_null(strstr(note, "MWAIT HLT PAUSE C-state"));
	}
}

/* Refused together, each bit alone: what the host takes still applies. */
static void test_partly_refused(void **state)
{
	(void)state;
	struct fake_kvm f = {.offers_exits = ALL, .refuse = HLT};
	char note[256];
	assert_int_equal(setup(&f, true, false, 0, note), MWAIT | PAUSE | CSTATE);
	assert_false(arch_idle_halts_in_guest(MWAIT | PAUSE | CSTATE));
	assert_int_equal(f.exits_on, MWAIT | PAUSE | CSTATE);
	assert_int_equal(f.nr_calls, 5);
	assert_non_null(strstr(note, "keeps the guest's HLT exits"));
}

static void test_off_asks_nothing(void **state)
{
	(void)state;
	struct fake_kvm f = {.offers_exits = ALL, .offers_poll = 1};
	char note[256];
	assert_int_equal(setup(&f, false, false, 0, note), 0);
	assert_int_equal(f.nr_calls, 0);
	assert_string_equal(note, "");
}

static void test_halt_poll(void **state)
{
	(void)state;
	struct fake_kvm f = {.offers_poll = 1};
	char note[256];
	assert_int_equal(setup(&f, false, true, 50000, note), 0);
	assert_int_equal(f.nr_calls, 1);
	assert_int_equal(f.calls[0].cap, KVM_CAP_HALT_POLL);
	assert_int_equal(f.calls[0].arg0, 50000);
	assert_string_equal(note, "");
	/* 0 is a value (no polling), not "not given". */
	f.nr_calls = 0;
	setup(&f, false, true, 0, note);
	assert_int_equal(f.nr_calls, 1);
	assert_int_equal(f.calls[0].arg0, 0);
}

/* A host without KVM_CAP_HALT_POLL: said, beside --cpu-pm's note, on one line. */
static void test_halt_poll_refused(void **state)
{
	(void)state;
	struct fake_kvm f = {.offers_exits = HLT};
	char note[256];
	assert_int_equal(setup(&f, true, true, 1000, note), HLT);
	assert_int_equal(f.nr_calls, 1); /* never asked for KVM_CAP_HALT_POLL */
	assert_non_null(strstr(note, "keeps the guest's MWAIT PAUSE C-state exits"));
	assert_non_null(strstr(note, "; --halt-poll: the host keeps its own halt polling"));
	assert_null(strchr(note, '\n'));
}

/* An API's vCPU or I/O-thread count that differs from the command line's
 * pin= list is bad input, told before /dev/kvm or the kernel is touched. */
static void test_pins_must_match(void **state)
{
	(void)state;
	static struct vmm v;
	struct vmm_config c = {.kernel = "/nonexistent",
			       .cmdline = "console=ttyS0",
			       .mem = 256ULL << 20,
			       .cpus = 2,
			       .iothreads = 1,
			       .vcpu_pin = {0},
			       .nr_vcpu_pin = 1};
	char err[256];
	int status = 0;
	assert_int_equal(vmm_build(&v, &c, 0, &status, err, sizeof(err)), -1);
	assert_int_equal(status, 2);
	assert_string_equal(err, "2 vCPUs but 1 host CPUs in --cpus pin= (one each)");
	vmm_destroy(&v);
	c = (struct vmm_config){.kernel = "/nonexistent",
				.cmdline = "console=ttyS0",
				.mem = 256ULL << 20,
				.cpus = 1,
				.iothreads = 2,
				.io_pin = {0, 0, 0},
				.nr_io_pin = 3};
	assert_int_equal(vmm_build(&v, &c, 0, &status, err, sizeof(err)), -1);
	assert_int_equal(status, 2);
	assert_non_null(strstr(err, "2 I/O threads but 3 host CPUs in --iothreads pin="));
	vmm_destroy(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_offered),	      cmocka_unit_test(test_mwait_kept),
	    cmocka_unit_test(test_nothing_offered),   cmocka_unit_test(test_partly_refused),
	    cmocka_unit_test(test_off_asks_nothing),  cmocka_unit_test(test_halt_poll),
	    cmocka_unit_test(test_halt_poll_refused), cmocka_unit_test(test_pins_must_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
