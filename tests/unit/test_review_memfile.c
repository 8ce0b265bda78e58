// SPDX-License-Identifier: Apache-2.0
/* Review of the refusal to write a snapshot over the memory file a
 * restored VM's RAM is read from (vmm/vmm_mem_file.c, vmm_snap.c's
 * snap_files_open): the ways around a check by device and inode. Each
 * test is a finding's proof and failed before the fix named in its
 * comment; the names that were already refused are checked too. No KVM:
 * create is driven on a VM that only says it is paused (it fails
 * building the state, after the files' checks), load up to /dev/kvm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/guest_mem.h"
#include "core/snap.h"
#include "vmm/vmm.h"

#include "snap_fx.h"
#define MEM	 (2u << 20)
#define SKIPPED	 77
#define OWN_FILE "is the memory file this microVM was restored from"

struct fx {
	char dir[64], path[8][128];
};
enum { STATE, MEM_FILE, STATE2, LINK, SYM, LOWER, UPPER, WORK };
static const char *const names[] = {"state", "mem",   "state2", "link",
				    "sym",   "lower", "upper",	"work"};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/skiff-rvmemf-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	/* (from a copy: GCC's -Wrestrict sees f->dir and f->path as one object) */
	char dir[sizeof(f->dir)];
	memcpy(dir, f->dir, sizeof(dir));
	for (int i = 0; i < 8; i++)
		snprintf(f->path[i], sizeof(f->path[i]), "%s/%s", dir, names[i]);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", f->dir, f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void make_file(const char *path, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)len), 0);
	close(fd);
}

/* PUT /snapshot/create on a paused VM whose RAM is read from mf (NULL: a
 * booted VM): -1, its line in err. */
static int create(const struct vmm_mem_file *mf, const char *state, const char *mem, char *err,
		  size_t errlen)
{
	static struct vmm v;
	memset(&v, 0, sizeof(v));
	pthread_mutex_init(&v.ctl_lock, NULL);
	v.paused = true;
	v.vm.vm_fd = v.vm.kvm_fd = -1;
	if (mf)
		v.mem_file = *mf;
	int r = vmm_snapshot_create(&v, state, mem, false, err, errlen);
	pthread_mutex_destroy(&v.ctl_lock);
	return r;
}

static void expect_create_refused(const struct vmm_mem_file *mf, const char *state, const char *mem,
				  const char *words)
{
	char err[400] = "";
	assert_int_equal(create(mf, state, mem, err, sizeof(err)), -1);
	if (!strstr(err, words))
		fail_msg("create %s %s: wanted '%s', got '%s'", state, mem, words, err);
}

/* This VM's own file under every name that shares its inode (held before
 * this review: a hard link, a symlink, the state's name too). */
static void test_own_file_names(void **state)
{
	struct fx *f = *state;
	struct vmm_mem_file mf;
	char err[300];
	make_file(f->path[MEM_FILE], MEM);
	make_file(f->path[STATE2], 0);
	assert_int_equal(vmm_mem_file_open(&mf, f->path[MEM_FILE], MEM, err, sizeof(err)), 0);
	assert_int_equal(link(f->path[MEM_FILE], f->path[LINK]), 0);
	assert_int_equal(symlink(f->path[MEM_FILE], f->path[SYM]), 0);
	expect_create_refused(&mf, f->path[STATE2], f->path[MEM_FILE], OWN_FILE);
	expect_create_refused(&mf, f->path[STATE2], f->path[LINK], OWN_FILE);
	expect_create_refused(&mf, f->path[STATE2], f->path[SYM], OWN_FILE);
	expect_create_refused(&mf, f->path[SYM], f->path[STATE2], OWN_FILE);
	vmm_mem_file_close(&mf);
	/* Another file of the same size: not refused for being this one. */
	make_file(f->path[STATE], MEM);
	assert_int_equal(vmm_mem_file_open(&mf, f->path[STATE], MEM, err, sizeof(err)), 0);
	assert_int_equal(create(&mf, f->path[STATE2], f->path[MEM_FILE], err, sizeof(err)), -1);
	assert_null(strstr(err, OWN_FILE));
	assert_null(strstr(err, "is in use"));
	vmm_mem_file_close(&mf);
}

/* Another process standing for another skiff: it loaded path as a VM's
 * memory file (mapped privately, as vmm_build does) and runs until told. */
struct holder {
	pid_t pid;
	int go[2], done[2];
};

static void holder_start(struct holder *h, const char *path)
{
	assert_int_equal(pipe(h->go), 0);
	assert_int_equal(pipe(h->done), 0);
	fflush(NULL);
	h->pid = fork();
	assert_true(h->pid >= 0);
	if (h->pid == 0) {
		struct vmm_mem_file mf;
		struct guest_mem gm;
		char err[300], c = 0;
		alarm(20);
		int ok = vmm_mem_file_open(&mf, path, MEM, err, sizeof(err)) == 0 &&
			 guest_mem_map_file(&gm, MEM, mf.fd) == 0;
		(void)!write(h->go[1], ok ? "y" : "n", 1);
		(void)!read(h->done[0], &c, 1);
		_exit(0);
	}
	char c = 0;
	assert_int_equal(read(h->go[0], &c, 1), 1);
	assert_int_equal(c, 'y');
}

static void holder_end(struct holder *h)
{
	int st;
	(void)!write(h->done[1], "x", 1);
	assert_int_equal(waitpid(h->pid, &st, 0), h->pid);
	for (int i = 0; i < 2; i++) {
		close(h->go[i]);
		close(h->done[i]);
	}
}

/* Finding (medium): the refusal knew only this VM's file. A VM restored
 * by another skiff (a clone of one golden snapshot, each jail holding a
 * hard link of its memory file) had its RAM rewritten, or cut to zero by
 * a Full's ftruncate, by any other VM's snapshot written to a name of
 * that file; SNAPSHOT.md said skiff could not see other processes.
 * Fixed: the load holds a shared flock on the file for the VM's life,
 * create takes an exclusive one on each file first. */
static void test_other_vm_file_refused(void **state)
{
	struct fx *f = *state;
	struct holder h;
	make_file(f->path[MEM_FILE], MEM);
	make_file(f->path[STATE2], 0);
	assert_int_equal(link(f->path[MEM_FILE], f->path[LINK]), 0);
	holder_start(&h, f->path[MEM_FILE]);
	expect_create_refused(NULL, f->path[STATE2], f->path[LINK], "is in use");
	expect_create_refused(NULL, f->path[LINK], f->path[STATE2], "is in use");
	holder_end(&h);
	/* That VM gone, the file is free. */
	char err[300];
	assert_int_equal(create(NULL, f->path[STATE2], f->path[LINK], err, sizeof(err)), -1);
	assert_null(strstr(err, "is in use"));
}

static void write_state(const char *path)
{
	snap_fx_write_state(path, MEM);
}

/* Same fix, the other way: a load of a memory file another skiff's
 * snapshot is still writing (its exclusive lock held) is refused before
 * anything is built, rather than mapping a half-written RAM. */
static void test_load_while_written_refused(void **state)
{
	struct fx *f = *state;
	static struct vmm v;
	struct vmm_config base = {.iothreads = 1, .no_seccomp = true};
	char err[400];
	int status;
	write_state(f->path[STATE]);
	make_file(f->path[MEM_FILE], MEM);
	int w = open(f->path[MEM_FILE], O_WRONLY | O_CLOEXEC);
	assert_true(w >= 0);
	assert_int_equal(flock(w, LOCK_EX | LOCK_NB), 0);
	assert_int_equal(vmm_snapshot_load(&v, &base, f->path[STATE], f->path[MEM_FILE], false, 0,
					   &status, err, sizeof(err)),
			 -1);
	if (!strstr(err, "is being written by a snapshot"))
		fail_msg("got '%s'", err);
	close(w);
	/* Its load's lock goes with the VM (at once without /dev/kvm, where
	 * the build fails; with it the VM would be built and kept). */
	if (access("/dev/kvm", R_OK | W_OK) == 0)
		return;
	assert_int_equal(vmm_snapshot_load(&v, &base, f->path[STATE], f->path[MEM_FILE], false, 0,
					   &status, err, sizeof(err)),
			 -1);
	assert_null(strstr(err, "is being written"));
	w = open(f->path[MEM_FILE], O_WRONLY | O_CLOEXEC);
	assert_int_equal(flock(w, LOCK_EX | LOCK_NB), 0);
	close(w);
}

/* A mount namespace of this test's own, so that no mount leaks: 0, or
 * SKIPPED if the host allows none (not root, no user namespaces). */
static int own_mount_ns(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWNS | (uid ? CLONE_NEWUSER : 0)) < 0)
		return SKIPPED;
	if (uid) {
		char map[64];
		int fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd < 0 || write(fd, "deny", 4) != 4)
			return SKIPPED;
		close(fd);
		const char *file[2] = {"/proc/self/uid_map", "/proc/self/gid_map"};
		unsigned int id[2] = {uid, gid};
		for (int i = 0; i < 2; i++) {
			int n = snprintf(map, sizeof(map), "0 %u 1", id[i]);
			fd = open(file[i], O_WRONLY);
			if (fd < 0 || write(fd, map, (size_t)n) != n)
				return SKIPPED;
			close(fd);
		}
	}
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ? SKIPPED : 0;
}

/* The bind mount and overlay cases, in a child: 0 as expected, SKIPPED,
 * or 1 with why on stderr. */
static int mount_cases(struct fx *f)
{
	char err[400], plain[160], bind[160], via_bind[192];
	struct vmm_mem_file mf;
	if (own_mount_ns())
		return SKIPPED;
	/* A bind mount shows the file under its own device: refused before
	 * this review. */
	snprintf(plain, sizeof(plain), "%s/plain", f->path[LOWER]);
	snprintf(bind, sizeof(bind), "%s/bind", f->dir);
	snprintf(via_bind, sizeof(via_bind), "%s/plain", bind);
	make_file(plain, MEM);
	if (mount(f->path[LOWER], bind, NULL, MS_BIND, NULL) < 0)
		return SKIPPED;
	if (vmm_mem_file_open(&mf, plain, MEM, err, sizeof(err)) < 0 ||
	    create(&mf, f->path[STATE2], via_bind, err, sizeof(err)) != -1 ||
	    !strstr(err, OWN_FILE))
		return fprintf(stderr, "mem over a bind mount: '%s'\n", err), 1;
	vmm_mem_file_close(&mf);
	/* The overlay: merged/mem is upper/mem under another device. */
	char opts[512], merged[160], via_overlay[192], via_upper[192];
	snprintf(merged, sizeof(merged), "%s/merged", f->dir);
	snprintf(via_overlay, sizeof(via_overlay), "%s/mem", merged);
	snprintf(via_upper, sizeof(via_upper), "%s/mem", f->path[UPPER]);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", f->path[LOWER],
		 f->path[UPPER], f->path[WORK]);
	if (mount("overlay", merged, "overlay", 0, opts) < 0)
		return SKIPPED;
	make_file(via_overlay, MEM);
	struct guest_mem gm;
	struct stat up;
	if (vmm_mem_file_open(&mf, via_overlay, MEM, err, sizeof(err)) < 0 ||
	    guest_mem_map_file(&gm, MEM, mf.fd) < 0 || stat(via_upper, &up) < 0 ||
	    up.st_dev == mf.st.st_dev)
		return fprintf(stderr, "overlay setup: %s\n", err), 1;
	if (create(&mf, f->path[STATE2], via_upper, err, sizeof(err)) != -1 ||
	    !strstr(err, OWN_FILE))
		return fprintf(stderr, "mem over the upper name: '%s'\n", err), 1;
	/* One file under two of its names as state and memory. */
	char state_over[192], state_upper[192];
	snprintf(state_over, sizeof(state_over), "%s/s", merged);
	snprintf(state_upper, sizeof(state_upper), "%s/s", f->path[UPPER]);
	make_file(state_over, 0);
	if (create(NULL, state_over, state_upper, err, sizeof(err)) != -1 ||
	    !strstr(err, "are the same file"))
		return fprintf(stderr, "state and mem one file: '%s'\n", err), 1;
	/* Why it matters: a write through the upper name reaches the RAM
	 * (last: it changes the file's times). */
	int w = open(via_upper, O_WRONLY);
	if (w < 0 || pwrite(w, "X", 1, 4096) != 1 || gm.host[4096] != 'X')
		return fprintf(stderr, "the upper name does not reach the RAM\n"), 1;
	close(w);
	return 0;
}

static int mount_child(void *arg)
{
	return mount_cases(arg);
}

/* Finding (low): overlayfs (a container's root) shows a layer's file
 * under the overlay's device number: a VM restored from merged/mem was
 * not refused a snapshot written to upper/mem, the same file, whose
 * pages its RAM reads; nor were state and memory written to one file
 * under those two names. Fixed: vmm_same_file also takes the same inode
 * number, size and times under another device (overlayfs reports the
 * layer's), for both checks. A bind mount was refused before. */
static void test_mount_names_refused(void **state)
{
	struct fx *f = *state;
	char d[160];
	const int dirs[] = {LOWER, UPPER, WORK};
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(mkdir(f->path[dirs[i]], 0700), 0);
	snprintf(d, sizeof(d), "%s/merged", f->dir);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/bind", f->dir);
	assert_int_equal(mkdir(d, 0700), 0);
	make_file(f->path[STATE2], 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(20);
		_exit(mount_child(f));
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == SKIPPED) {
		fprintf(
		    stderr,
		    "test_mount_names_refused: no mount namespace or overlayfs here: skipped\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_own_file_names),
	    T(test_other_vm_file_refused),
	    T(test_load_while_written_refused),
	    T(test_mount_names_refused),
	};
	return cmocka_run_group_tests_name("review_memfile", tests, NULL, NULL);
}
