// SPDX-License-Identifier: Apache-2.0
/* vmm_snapshot_create / vmm_snapshot_load up to where /dev/kvm is needed
 * (the rest: test_snap_guest): create refuses a VM that is not paused;
 * load reads and checks the whole state file, then the memory file,
 * before it builds anything, and says what is wrong in one line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/snap.h"
#include "vmm/vmm.h"

#include "vmm/vmm_mig_allow.h"
#include "snap_fx.h"

#define MEM (2u << 20)

static uint8_t zeros[8192];
/* write_state adds one network card, iface_id eth0 on tap0 (its list and
 * ids sections as devmgr_snap.c writes them). */
static bool with_net;
static const uint8_t net_list[] = "\1\0\0\0"
				  "\13\0virtio-net0"
				  "\3\0net"
				  "\3\0tap"
				  "\4\0tap0"
				  "\0\0";
static const uint8_t net_ids[] = "\1\0\0\0\4\0eth0";

struct shape {
	uint64_t mem;
	uint32_t cpus, nr_devs;
};

/* A state file with every section a 2-vCPU VM needs; skip_id leaves that
 * id out for vCPU 1. */
static void write_state(const char *path, struct shape sc, uint32_t skip_id)
{
	struct snap_writer w;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CONFIG, 0, &sc, sizeof(sc)), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CLOCK, 0, zeros, 8), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_PIT, 0, zeros, sizeof(struct kvm_pit_state2)), 0);
	for (uint32_t c = 0; c < 3; c++) {
		struct kvm_irqchip chip = {.chip_id = c};
		assert_int_equal(snap_put(&w, SNAP_ID_IRQCHIP, c, &chip, sizeof(chip)), 0);
	}
	for (uint32_t cpu = 0; cpu < 2; cpu++)
		for (size_t i = 0; i < SNAP_FX_NR_VCPU; i++)
			if (!(cpu == 1 && snap_fx_vcpu[i].id == skip_id))
				assert_int_equal(snap_put(&w, snap_fx_vcpu[i].id, cpu, zeros,
							  snap_fx_vcpu[i].size),
						 0);
	assert_int_equal(snap_put(&w, SNAP_ID_UART, 0, zeros, 272), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_I8042, 0, zeros, 24), 0);
	if (with_net) {
		assert_int_equal(snap_put(&w, SNAP_ID_DEV_LIST, 0, net_list, sizeof(net_list) - 1),
				 0);
		assert_int_equal(snap_put(&w, SNAP_ID_DEV_IDS, 0, net_ids, sizeof(net_ids) - 1), 0);
	}
	char err[200];
	assert_int_equal(snap_write_file(&w, path, err, sizeof(err)), 0);
	snap_writer_free(&w);
}

struct fx {
	char dir[64], state[96], mem[96];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/skiff-vmmsnap-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->mem, sizeof(f->mem), "%s/mem", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	unlink(f->state);
	unlink(f->mem);
	rmdir(f->dir);
	free(f);
	return 0;
}

static const struct vmm_net_override *overrides;
static unsigned int nr_overrides;
static const struct vmm_allow *allow; /* a migration's skiff_allow */

static int load(struct fx *f, char *err, size_t errlen, int *status)
{
	static struct vmm v;
	struct vmm_config base = {.iothreads = 1,
				  .no_seccomp = true,
				  .net_overrides = overrides,
				  .nr_net_overrides = nr_overrides,
				  .allow = allow};
	int r = vmm_snapshot_load(&v, &base, f->state, f->mem, true, 0, status, err, errlen);
	assert_false(v.nr_vcpus_started); /* nothing ran */
	return r;
}

static void test_create_needs_pause(void **state)
{
	(void)state;
	static struct vmm v;
	pthread_mutex_init(&v.ctl_lock, NULL);
	char err[200];
	assert_int_equal(
	    vmm_snapshot_create(&v, "/nonexistent/s", "/nonexistent/m", false, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "the microVM is not paused");
	pthread_mutex_destroy(&v.ctl_lock);
}

/* Firecracker's words, before any file is opened (the paths do not exist). */
static void test_diff_needs_tracking(void **state)
{
	(void)state;
	static struct vmm v;
	pthread_mutex_init(&v.ctl_lock, NULL);
	v.paused = true;
	char err[200];
	assert_int_equal(
	    vmm_snapshot_create(&v, "/nonexistent/s", "/nonexistent/m", true, err, sizeof(err)),
	    -1);
	assert_string_equal(
	    err, "Diff snapshots are not allowed on uVMs with dirty page tracking disabled.");
	pthread_mutex_destroy(&v.ctl_lock);
}

/* network_overrides: an iface_id the snapshot has not is refused in one
 * line naming it, before anything is built; one it has goes on (here to
 * the memory file, which does not exist). */
static void test_net_overrides(void **state)
{
	struct fx *f = *state;
	char err[300];
	int status;
	with_net = true;
	write_state(f->state, (struct shape){MEM, 2, 1}, 0);
	with_net = false;
	static const struct vmm_net_override bad[] = {{"eth0", "tap7"}, {"eth9", "tap9"}};
	overrides = bad;
	nr_overrides = 2;
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_int_equal(status, 2);
	if (!strstr(err, "Unknown Network Device") || !strstr(err, "`eth9`"))
		fail_msg("got '%s'", err);
	nr_overrides = 1; /* eth0 alone: known */
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	overrides = NULL;
	nr_overrides = 0;
	if (!strstr(err, "memory file"))
		fail_msg("got '%s'", err);
}

/* skiff_allow (vmm_mig_allow.h) is checked where the state's devices are
 * known, before anything is built or opened: a tap it does not list is
 * refused in one line naming the card and the tap, status 2; listed (or
 * given by an override), the restore goes on (to the memory file). */
static void test_allow_before_build(void **state)
{
	struct fx *f = *state;
	char err[300];
	int status;
	with_net = true;
	write_state(f->state, (struct shape){MEM, 2, 1}, 0);
	with_net = false;
	static struct vmm_allow a = {.taps = {"tap1"}, .nr_taps = 1};
	allow = &a;
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_int_equal(status, 2);
	if (!strstr(err, "skiff_allow refuses virtio-net0's tap=tap0") || strchr(err, '\n'))
		fail_msg("got '%s'", err);
	static const struct vmm_net_override ov[] = {{"eth0", "tap5"}};
	overrides = ov;
	nr_overrides = 1;
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	overrides = NULL;
	nr_overrides = 0;
	allow = NULL;
	if (!strstr(err, "memory file"))
		fail_msg("got '%s'", err);
}

static void test_load_checks_state_first(void **state)
{
	struct fx *f = *state;
	char err[300];
	int status;
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_non_null(strstr(err, "cannot open snapshot"));
	assert_int_equal(status, 2);
	/* vCPU 1's LAPIC missing, and no memory file: the state is what is
	 * named, so it was checked before the memory file was looked at. */
	write_state(f->state, (struct shape){MEM, 2, 0}, SNAP_ID_VCPU_LAPIC);
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_string_equal(err, "snapshot has no LAPIC for vCPU 1");
	write_state(f->state, (struct shape){MEM, 0, 0}, 0);
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_non_null(strstr(err, "impossible VM (0 vCPUs"));
	write_state(f->state, (struct shape){VM_MEM_MAX + 4096, 2, 0}, 0);
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_non_null(strstr(err, "impossible VM (2 vCPUs"));
	write_state(f->state, (struct shape){MEM, 2, 1}, 0);
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_string_equal(err, "snapshot lists 0 devices, its VM had 1");
}

static void test_load_checks_memory_file(void **state)
{
	struct fx *f = *state;
	char err[300], want[300];
	int status;
	write_state(f->state, (struct shape){MEM, 2, 0}, 0);
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	assert_non_null(strstr(err, "cannot open the memory file"));
	FILE *m = fopen(f->mem, "w");
	assert_non_null(m);
	assert_int_equal(fwrite(zeros, 1, 4096, m), 4096);
	fclose(m);
	assert_int_equal(load(f, err, sizeof(err), &status), -1);
	snprintf(want, sizeof(want), "the memory file %s is 4096 bytes, the snapshot's VM has %u",
		 f->mem, MEM);
	assert_string_equal(err, want);
	assert_int_equal(status, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_needs_pause),
	    cmocka_unit_test(test_diff_needs_tracking),
	    cmocka_unit_test_setup_teardown(test_net_overrides, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_allow_before_build, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_load_checks_state_first, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_load_checks_memory_file, fx_setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
