// SPDX-License-Identifier: Apache-2.0
/* Review of the snapshot paths (core/snap.c, vmm/vmm_snap.c, vmm.c's memory
 * file, virtio/virtq_state.c) as a hostile local API client or a hostile
 * file would attack them. Each test is a finding's proof: it failed before
 * the fix named in its comment. No KVM: create is driven on a VM that only
 * says it is paused, load up to where /dev/kvm is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/snap.h"
#include "fake_mem.h"
#include "virtio/virtq_state.h"
#include "vmm/vmm.h"

#include "snap_fx.h"
#define MEM (2u << 20)

struct fx {
	char dir[64], state[96], mem[96], fifo[96];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/skiff-rvsnap-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->mem, sizeof(f->mem), "%s/mem", f->dir);
	snprintf(f->fifo, sizeof(f->fifo), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(f->fifo, 0600), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	unlink(f->state);
	unlink(f->mem);
	unlink(f->fifo);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* fn in a child under an alarm, a guard against the hang (not a measure):
 * its exit status, or fail if it hung. */
static int in_child(int (*fn)(struct fx *f, char *err, size_t errlen), struct fx *f, char *err,
		    size_t errlen)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		alarm(20);
		char e[400] = "";
		int r = fn(f, e, sizeof(e));
		(void)!write(p[1], e, strlen(e) + 1);
		_exit(r == -1 ? 0 : 1);
	}
	close(p[1]);
	memset(err, 0, errlen);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < errlen && (r = read(p[0], err + n, errlen - 1 - n)) > 0)
		n += (size_t)r;
	close(p[0]);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("hung on a FIFO (signal %d)", WTERMSIG(st));
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static int read_fifo(struct fx *f, char *err, size_t errlen)
{
	struct snap_image img;
	return snap_read_file(&img, f->fifo, err, errlen);
}

/* Finding 1: PUT /snapshot/load with snapshot_path a FIFO blocked the
 * controller in open() until some writer came: the API hung. Fixed:
 * opened O_NONBLOCK, then refused as not a regular file. */
static void test_load_state_fifo(void **state)
{
	struct fx *f = *state;
	char err[400];
	assert_int_equal(in_child(read_fifo, f, err, sizeof(err)), 0);
	if (!strstr(err, "is not a regular file"))
		fail_msg("got '%s'", err);
}

static void write_state(const char *path)
{
	snap_fx_write_state(path, MEM);
}

static int load_mem(struct fx *f, const char *mem, char *err, size_t errlen)
{
	static struct vmm v;
	struct vmm_config base = {.iothreads = 1, .no_seccomp = true};
	int status;
	return vmm_snapshot_load(&v, &base, f->state, mem, false, 0, &status, err, errlen);
}

static int load_mem_fifo(struct fx *f, char *err, size_t errlen)
{
	return load_mem(f, f->fifo, err, errlen);
}

/* Finding 2: the same with mem_backend's path a FIFO (vmm_build's
 * memory file): a hang before the VM existed. A directory was called
 * "4096 bytes" long. Fixed: O_NONBLOCK, and "not a regular file". */
static void test_load_mem_not_regular(void **state)
{
	struct fx *f = *state;
	char err[400];
	write_state(f->state);
	assert_int_equal(in_child(load_mem_fifo, f, err, sizeof(err)), 0);
	if (!strstr(err, "is not a regular file"))
		fail_msg("got '%s'", err);
	assert_int_equal(load_mem(f, f->dir, err, sizeof(err)), -1);
	if (!strstr(err, "is not a regular file"))
		fail_msg("got '%s'", err);
}

static int create(const char *state, const char *mem, char *err, size_t errlen)
{
	static struct vmm v;
	memset(&v, 0, sizeof(v));
	pthread_mutex_init(&v.ctl_lock, NULL);
	v.paused = true; /* no VM behind it: the state cannot be built */
	v.vm.vm_fd = v.vm.kvm_fd = -1;
	int r = vmm_snapshot_create(&v, state, mem, false, err, errlen);
	pthread_mutex_destroy(&v.ctl_lock);
	return r;
}

static int create_mem_fifo(struct fx *f, char *err, size_t errlen)
{
	return create(f->state, f->fifo, err, errlen);
}

static int create_state_fifo(struct fx *f, char *err, size_t errlen)
{
	return create(f->fifo, f->mem, err, errlen);
}

/* Finding 3: PUT /snapshot/create onto a FIFO hung the controller in
 * open(); onto /dev/null it "succeeded" with the guest's RAM thrown
 * away; with snapshot_path and mem_file_path one file, the state
 * overwrote the memory and the reply was 204. Fixed: both files opened
 * (O_NONBLOCK) and checked before anything is built or written. */
static void test_create_paths(void **state)
{
	struct fx *f = *state;
	char err[400];
	int rd = open(f->fifo, O_RDONLY | O_NONBLOCK); /* a reader: open would not fail */
	assert_true(rd >= 0);
	assert_int_equal(in_child(create_mem_fifo, f, err, sizeof(err)), 0);
	if (!strstr(err, "is not a regular file"))
		fail_msg("got '%s'", err);
	close(rd);
	assert_int_equal(in_child(create_state_fifo, f, err, sizeof(err)), 0);
	if (!strstr(err, "is not a regular file"))
		fail_msg("got '%s'", err);
	assert_int_equal(create(f->state, "/dev/null", err, sizeof(err)), -1);
	if (!strstr(err, "/dev/null is not a regular file"))
		fail_msg("got '%s'", err);
	assert_int_equal(create(f->mem, f->mem, err, sizeof(err)), -1);
	if (!strstr(err, "are the same file"))
		fail_msg("got '%s'", err);
	char alias[200];
	snprintf(alias, sizeof(alias), "%s/../%s/mem", f->dir, strrchr(f->dir, '/') + 1);
	assert_int_equal(create(alias, f->mem, err, sizeof(err)), -1);
	if (!strstr(err, "are the same file"))
		fail_msg("got '%s'", err);
}

/* Finding 4: a queue saved with kicks off (VIRTQ_USED_F_NO_NOTIFY in the
 * used ring, no EVENT_IDX) came back with its shadow of used->flags at 0,
 * so re-enabling kicks never cleared the flag in guest memory: the guest
 * stopped kicking for good. Fixed: virtq_state_restore takes used_flags. */
static void test_virtq_notify_flags(void **state)
{
	(void)state;
	static struct fake_mem fm;
	assert_int_equal(fake_mem_init(&fm, 1u << 20), 0);
	struct virtq a, b;
	assert_int_equal(virtq_init(&a, "q", 256, NULL, NULL), 0);
	assert_int_equal(virtq_set_size(&a, 16), 0);
	assert_int_equal(virtq_set_addr(&a, VIRTQ_RING_DESC, 0x1000), 0);
	assert_int_equal(virtq_set_addr(&a, VIRTQ_RING_AVAIL, 0x2000), 0);
	assert_int_equal(virtq_set_addr(&a, VIRTQ_RING_USED, 0x3000), 0);
	assert_int_equal(virtq_activate(&a, &fm.gm), 0);
	virtq_disable_notify(&a, &fm.gm);
	uint16_t *used_flags = fake_mem_at(&fm, 0x3000);
	assert_int_equal(*used_flags, VIRTQ_USED_F_NO_NOTIFY);
	struct virtq_state s;
	virtq_state_save(&a, &s);
	char err[200];
	assert_int_equal(virtq_init(&b, "q", 256, NULL, NULL), 0);
	assert_int_equal(virtq_state_restore(&b, &fm.gm, &s, err, sizeof(err)), 0);
	virtq_enable_notify(&b, &fm.gm);
	assert_int_equal(*used_flags, 0); /* the guest may kick again */
	fake_mem_free(&fm);
}

/* A vCPU for arch_vcpu_restore without /dev/kvm: ioctl is interposed for
 * two made-up descriptors (every other one goes to the kernel), and
 * KVM_SET_MSRS keeps the kernel's rule, E2BIG at MAX_IO_MSRS (256). */
#define FAKE_VM	  1000
#define FAKE_VCPU 1001
static unsigned int msrs_set, msrs_calls;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != FAKE_VM && fd != FAKE_VCPU)
		return (int)syscall(SYS_ioctl, fd, req, arg);
	if (req == KVM_CHECK_EXTENSION)
		return (unsigned long)arg == KVM_CAP_XSAVE2 ? 4096 : 1;
	if (req == KVM_SET_MSRS) {
		struct kvm_msrs *m = arg;
		msrs_calls++;
		if (m->nmsrs >= 256) {
			errno = E2BIG;
			return -1;
		}
		msrs_set += m->nmsrs;
		return (int)m->nmsrs;
	}
	return 0;
}

/* Finding 5: a save keeps up to 1024 MSRs (and the check lets 1024
 * through), but KVM_SET_MSRS took them all at once, which KVM refuses
 * from 256 on: a host listing that many would write snapshots it cannot
 * load. Fixed: set in chunks of 255. */
static void test_many_msrs_restore(void **state)
{
	(void)state;
	static uint8_t zeros[8192];
	static struct kvm_msr_entry msrs[300];
	for (uint32_t i = 0; i < 300; i++)
		msrs[i] = (struct kvm_msr_entry){.index = 0x4b564d00u + i, .data = i};
	struct snap_writer w;
	snap_writer_init(&w);
	for (size_t i = 0; i < SNAP_FX_NR_VCPU; i++)
		if (snap_fx_vcpu[i].id != SNAP_ID_VCPU_MSRS)
			assert_int_equal(
			    snap_put(&w, snap_fx_vcpu[i].id, 0, zeros, snap_fx_vcpu[i].size), 0);
	assert_int_equal(snap_put(&w, SNAP_ID_VCPU_MSRS, 0, msrs, sizeof(msrs)), 0);
	size_t n;
	const uint8_t *b = snap_writer_image(&w, &n);
	struct snap_image img;
	char err[200] = "";
	assert_int_equal(snap_parse(&img, b, n, err, sizeof(err)), 0);
	int r = arch_vcpu_restore(-1, FAKE_VM, FAKE_VCPU, 0, &img, err, sizeof(err));
	snap_image_free(&img);
	snap_writer_free(&w);
	if (r < 0)
		fail_msg("restore refused: %s", err);
	assert_int_equal(msrs_set, 300);
	assert_int_equal(msrs_calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_load_state_fifo, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_load_mem_not_regular, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_create_paths, fx_setup, fx_teardown),
	    cmocka_unit_test(test_virtq_notify_flags),
	    cmocka_unit_test(test_many_msrs_restore),
	};
	return cmocka_run_group_tests_name("review_snap", tests, NULL, NULL);
}
