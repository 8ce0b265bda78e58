// SPDX-License-Identifier: Apache-2.0
/* skiff-jailer (src/jailer/): its arguments (IDs, paths, cgroup files,
 * resource limits, devices) refused before anything is made; the cgroup
 * writer against a temporary cgroup root; the resource limits set in a
 * child; the jail directory made fresh, never through a symlink, and
 * removed whole on failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail_fx.h"
#include "jailer/jail_cgroup.h"
#include "jailer/jail_dev.h"
#include "jailer/jail_exec.h"

static void test_ids(void **state)
{
	(void)state;
	char long_id[80];
	assert_int_equal(jail_id_check("vm-1", err, sizeof(err)), 0);
	memset(long_id, 'a', 64);
	long_id[64] = 0;
	assert_int_equal(jail_id_check(long_id, err, sizeof(err)), 0);
	long_id[64] = 'a';
	long_id[65] = 0;
	assert_int_equal(jail_id_check(long_id, err, sizeof(err)), -1);
	const char *bad[] = {"", "..", "../x", "a/b", "a.b", "a b", "a_b", "é", "a\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(jail_id_check(bad[i], err, sizeof(err)), -1);
		assert_non_null(strstr(err, "invalid --id"));
	}
}

static void test_args(void **state)
{
	(void)state;
	struct jail_args a;
	const char *ok[] = {"--id",
			    "vm-1",
			    "--exec-file",
			    "/usr/bin/skiff",
			    "--uid",
			    "1000",
			    "--gid",
			    "1001",
			    "--chroot-base-dir",
			    "/tmp/j",
			    "--netns",
			    "/var/run/netns/vm1",
			    "--cgroup-version",
			    "2",
			    "--cgroup",
			    "memory.max=256M",
			    "--cgroup",
			    "pids.max=64",
			    "--resource-limit",
			    "fsize=1048576",
			    "--device",
			    "vhost-net",
			    "--new-pid-ns",
			    "--daemonize",
			    "--",
			    "run",
			    "--api-sock",
			    "/api.sock",
			    NULL};
	assert_int_equal(parse(ok, &a), 0);
	assert_string_equal(a.id, "vm-1");
	assert_string_equal(a.exec_name, "skiff");
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.gid, 1001);
	assert_string_equal(a.chroot_base, "/tmp/j");
	assert_string_equal(a.netns, "/var/run/netns/vm1");
	assert_string_equal(a.parent_cgroup, JAIL_DEFAULT_PARENT);
	assert_int_equal(a.n_cgroups, 2);
	assert_string_equal(jail_cgroup_value(a.cgroups[1]), "64");
	/* no-file's default (Firecracker's 2048) and the fsize given */
	assert_int_equal(a.n_rlimits, 2);
	assert_int_equal(a.rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(a.rlimits[0].value, 2048);
	assert_int_equal(a.rlimits[1].value, 1048576);
	assert_true(a.new_pid_ns && a.daemonize);
	assert_string_equal(a.exec_argv[0], "run");
	assert_string_equal(a.exec_argv[2], "/api.sock");
	assert_null(a.exec_argv[3]);

	const char *limit[] = {"--resource-limit", "no-file=64", NULL};
	assert_int_equal(parse_min(limit, &a), 0);
	assert_string_equal(a.chroot_base, JAIL_DEFAULT_BASE);
	assert_null(a.exec_argv[0]);
	assert_int_equal(a.n_rlimits, 1); /* a later no-file replaces the default */
	assert_int_equal(a.rlimits[0].value, 64);
}

/* Each bad command line: refused, with its one line naming the fault. */
static void test_args_bad(void **state)
{
	(void)state;
	struct jail_args a;
	static const struct {
		const char *args[12];
		const char *msg;
	} bad[] = {
	    {{"--exec-file", "/s", "--uid", "1", "--gid", "1"}, "missing --id"},
	    {{"--id", "x", "--uid", "1", "--gid", "1"}, "missing --exec-file"},
	    {{"--id", "x", "--exec-file", "/s", "--gid", "1"}, "missing --uid"},
	    {{"--id", "x", "--exec-file", "/s", "--uid", "1"}, "missing --gid"},
	    {{"--id", "../x", "--exec-file", "/s"}, "invalid --id"},
	    {{"--id", "x", "--exec-file", "skiff"}, "invalid --exec-file 'skiff'"},
	    {{"--id", "x", "--exec-file", "/usr/bin/.."}, "invalid --exec-file name '..'"},
	    {{"--id", "x", "--exec-file", "/usr/bin/"}, "invalid --exec-file name ''"},
	    {{"--uid", "0"}, "invalid --uid '0'"},
	    {{"--gid", "0"}, "invalid --gid '0'"},
	    {{"--uid", "-1"}, "invalid --uid"},
	    {{"--uid", "4294967295"}, "invalid --uid"},
	    {{"--uid", "12ab"}, "invalid --uid"},
	    {{"--chroot-base-dir", "srv/jailer"}, "invalid --chroot-base-dir"},
	    {{"--netns", "netns/vm"}, "invalid --netns"},
	    {{"--cgroup-version", "1"}, "only 2"},
	    {{"--parent-cgroup", "../x"}, "invalid --parent-cgroup"},
	    {{"--parent-cgroup", "/sys/fs/cgroup"}, "invalid --parent-cgroup"},
	    {{"--parent-cgroup", "a//b"}, "invalid --parent-cgroup"},
	    {{"--parent-cgroup", "a/"}, "invalid --parent-cgroup"},
	    {{"--parent-cgroup", "a/../b"}, "invalid --parent-cgroup"},
	    {{"--cgroup", "cgroup.procs=1"}, "invalid --cgroup"},
	    {{"--resource-limit", "cpu=1"}, "invalid --resource-limit"},
	    {{"--device", "sda"}, "invalid --device"},
	    {{"--frob"}, "unknown option '--frob'"},
	    {{"--id"}, "--id needs a value"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i].args, &a), -1);
		if (!strstr(err, bad[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].msg);
		assert_null(strchr(err, '\n'));
	}
}

static void test_cgroup_values(void **state)
{
	(void)state;
	const char *ok[] = {"memory.max=256M",	 "cpu.max=max 100000", "memory.swap.max=0",
			    "pids.max=64",	 "cpuset.cpus=0-1",    "io.weight=default 100",
			    "hugetlb.2MB.max=0", "hugetlb.1GB.max=0"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(jail_cgroup_check(ok[i], err, sizeof(err)), 0);
	/* Paths out of the leaf, the core files, malformed pairs. */
	const char *bad[] = {"../memory.max=1",
			     "memory.max/../../cgroup.procs=1",
			     "memory.max/x=1",
			     "/etc/passwd=x",
			     "memory..max=1",
			     "cgroup.procs=1",
			     "cgroup.subtree_control=+memory",
			     "memory.max",
			     "=1",
			     "memory=1",
			     ".max=1",
			     "memory.=1",
			     "Memory.max=1",
			     "memory.max=",
			     "memory.max=1\n2",
			     "memory.max=1\r"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		if (jail_cgroup_check(bad[i], err, sizeof(err)) != -1)
			fail_msg("'%s' was taken", bad[i]);
		assert_non_null(strstr(err, "invalid --cgroup"));
	}
}

static void test_rlimit_parse(void **state)
{
	(void)state;
	struct jail_rlimit r;
	assert_int_equal(jail_rlimit_parse("fsize=4096", &r, err, sizeof(err)), 0);
	assert_int_equal(r.resource, RLIMIT_FSIZE);
	assert_int_equal(r.value, 4096);
	assert_int_equal(jail_rlimit_parse("no-file=0", &r, err, sizeof(err)), 0);
	assert_int_equal(r.resource, RLIMIT_NOFILE);
	const char *bad[] = {"fsize",
			     "fsize=",
			     "fsize=-1",
			     "fsize=1x",
			     "nofile=1",
			     "no-file1",
			     "=1",
			     "fsiz=1",
			     "fsize= 1",
			     "fsize=+1",
			     "fsize=18446744073709551615",
			     "fsize=18446744073709551616"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (jail_rlimit_parse(bad[i], &r, err, sizeof(err)) != -1)
			fail_msg("'%s' was taken", bad[i]);
}

static void test_devices(void **state)
{
	(void)state;
	const char *ok[] = {"vhost-net", "vhost-vsock", "urandom", "vfio/vfio", "vfio/12"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(jail_device_check(ok[i], err, sizeof(err)), 0);
	const char *bad[] = {"sda",    "vfio/",	   "vfio/../kvm", "vfio/1234567",
			     "../kvm", "/dev/kvm", "vfio/1a"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (jail_device_check(bad[i], err, sizeof(err)) != -1)
			fail_msg("'%s' was taken", bad[i]);
}

/* The limits hold in the process that set them (a child here), soft and
 * hard: a write past fsize is cut short. */
static void test_rlimits_set(void **state)
{
	(void)state;
	struct jail_args a;
	const char *limits[] = {"--resource-limit", "fsize=4096", "--resource-limit", "no-file=32",
				NULL};
	char path[] = "/tmp/skiff-jail-fsize-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(parse_min(limits, &a), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit r;
		static char buf[8192];
		signal(SIGXFSZ, SIG_IGN);
		if (jail_rlimits_set(&a, err, sizeof(err)) < 0)
			_exit(10);
		if (getrlimit(RLIMIT_FSIZE, &r) < 0 || r.rlim_cur != 4096 || r.rlim_max != 4096)
			_exit(11);
		if (getrlimit(RLIMIT_NOFILE, &r) < 0 || r.rlim_cur != 32 || r.rlim_max != 32)
			_exit(12);
		if (write(fd, buf, sizeof(buf)) != 4096)
			_exit(13);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(fd);
	unlink(path);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

static char *read_file(const char *dir, const char *name)
{
	static char buf[256];
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static bool exists(const char *dir, const char *name)
{
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void touch(const char *dir, const char *name)
{
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
}

/* The writer against a temporary root: controllers enabled where the
 * root has a subtree_control, each value in its file, the pid moved in;
 * a leaf that exists refused; removal leaves the root as it was. */
static void test_cgroup_writer(void **state)
{
	(void)state;
	static struct jail_cgroup cg;
	struct jail_args a;
	char root[] = "/tmp/skiff-cgroot-XXXXXX";
	assert_non_null(mkdtemp(root));
	touch(root, "cgroup.subtree_control");
	const char *args[] = {"--id",	     "vm1",
			      "--exec-file", "/s",
			      "--uid",	     "5",
			      "--gid",	     "6",
			      "--cgroup",    "memory.max=256M",
			      "--cgroup",    "pids.max=64",
			      "--cgroup",    "memory.high=200M",
			      NULL};
	assert_int_equal(parse(args, &a), 0);
	assert_int_equal(jail_cgroup_setup(root, &a, 4242, &cg, err, sizeof(err)), 0);
	assert_string_equal(read_file(root, "cgroup.subtree_control"), "+memory +pids");
	assert_string_equal(read_file(root, "skiff/vm1/memory.max"), "256M");
	assert_string_equal(read_file(root, "skiff/vm1/memory.high"), "200M");
	assert_string_equal(read_file(root, "skiff/vm1/pids.max"), "64");
	assert_string_equal(read_file(root, "skiff/vm1/cgroup.procs"), "4242");

	/* The same id again: refused (exit status 2), the first untouched. */
	static struct jail_cgroup cg2;
	assert_int_equal(jail_cgroup_setup(root, &a, 4343, &cg2, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "exists"));
	assert_string_equal(read_file(root, "skiff/vm1/cgroup.procs"), "4242");

	jail_cgroup_remove(&cg, &a);
	assert_false(exists(root, "skiff/vm1"));
	assert_false(exists(root, "skiff")); /* made by the writer: removed */

	/* A parent that was there stays; nested parents are made. */
	assert_int_equal(mkdir(strcat(strcpy((char[PATH_MAX]){0}, root), "/tenants"), 0755), 0);
	const char *nested[] = {
	    "--id",  "vm2", "--exec-file",     "/s",	    "--uid",	"5",
	    "--gid", "6",   "--parent-cgroup", "tenants/a", "--cgroup", "pids.max=8",
	    NULL};
	assert_int_equal(parse(nested, &a), 0);
	assert_int_equal(jail_cgroup_setup(root, &a, 4444, &cg, err, sizeof(err)), 0);
	assert_string_equal(read_file(root, "tenants/a/vm2/pids.max"), "8");
	jail_cgroup_remove(&cg, &a);
	assert_false(exists(root, "tenants/a"));
	assert_true(exists(root, "tenants"));

	/* A failure part way (the parent is a file): nothing made. */
	touch(root, "notadir");
	const char *broken[] = {
	    "--id",  "vm3", "--exec-file",     "/s",	    "--uid",	"5",
	    "--gid", "6",   "--parent-cgroup", "notadir/x", "--cgroup", "pids.max=8",
	    NULL};
	assert_int_equal(parse(broken, &a), 0);
	assert_int_equal(jail_cgroup_setup(root, &a, 4545, &cg, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "cannot make cgroup"));
	assert_false(exists(root, "notadir/x"));
	rm_rf(root);
}

static void test_cgroup_root(void **state)
{
	(void)state;
	unsetenv("SKIFF_JAILER_CGROUP_ROOT");
	assert_string_equal(jail_cgroup_root(), "/sys/fs/cgroup");
	setenv("SKIFF_JAILER_CGROUP_ROOT", "/tmp/cg", 1);
	assert_string_equal(jail_cgroup_root(), "/tmp/cg");
	setenv("SKIFF_JAILER_CGROUP_ROOT", "relative", 1);
	assert_string_equal(jail_cgroup_root(), "/sys/fs/cgroup");
	unsetenv("SKIFF_JAILER_CGROUP_ROOT");
}

/* A file with only an ELF header and PROGRAM headers of TYPES. */
static int elf_file(char *path, const uint32_t *types, unsigned int n)
{
	int fd = mkstemp(path);
	Elf64_Ehdr eh = {.e_type = ET_EXEC,
			 .e_machine = EM_X86_64,
			 .e_phoff = sizeof(eh),
			 .e_phentsize = sizeof(Elf64_Phdr),
			 .e_phnum = (uint16_t)n};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	assert_int_equal(write(fd, &eh, sizeof(eh)), sizeof(eh));
	for (unsigned int i = 0; i < n; i++) {
		Elf64_Phdr ph = {.p_type = types[i]};
		assert_int_equal(write(fd, &ph, sizeof(ph)), sizeof(ph));
	}
	return fd;
}

static void test_exec_file(void **state)
{
	(void)state;
	char p1[] = "/tmp/skiff-elf-XXXXXX", p2[] = "/tmp/skiff-elf-XXXXXX";
	int fd = elf_file(p1, (uint32_t[]){PT_LOAD, PT_LOAD}, 2);
	assert_int_equal(jail_exec_file_check(fd, p1, err, sizeof(err)), 0);
	close(fd);
	fd = elf_file(p2, (uint32_t[]){PT_LOAD, PT_INTERP}, 2);
	assert_int_equal(jail_exec_file_check(fd, p2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "dynamically linked"));
	close(fd);
	assert_int_equal(truncate(p2, 70), 0); /* the header, half a program header */
	fd = open(p2, O_RDONLY);
	assert_int_equal(jail_exec_file_check(fd, p2, err, sizeof(err)), -1);
	close(fd);
	fd = open("/tmp", O_RDONLY | O_DIRECTORY);
	assert_int_equal(jail_exec_file_check(fd, "/tmp", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	close(fd);
	unlink(p1);
	unlink(p2);
}

static int mode_of(const char *dir, const char *name, struct stat *st)
{
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, st);
}

/* The jail directory (as root: mknod and chown): its layout, owners and
 * modes; a second one with the same id refused; a symlink where the exec
 * name's directory should be is not followed; removal leaves nothing. */
static void test_jail_dir(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char top[] = "/tmp/skiff-jail-XXXXXX", base[PATH_MAX], exe[PATH_MAX];
	struct jail_args a;
	struct jail_dir d;
	struct stat st;
	assert_non_null(mkdtemp(top));
	snprintf(base, sizeof(base), "%s/base/srv", top);
	snprintf(exe, sizeof(exe), "%s/skiff", top);
	int fd = open(exe, O_RDWR | O_CREAT, 0700);
	assert_int_equal(write(fd, "binary", 6), 6);
	const char *args[] = {"--id",	  "vm1",       "--exec-file",
			      exe,	  "--uid",     "1000",
			      "--gid",	  "1001",      "--chroot-base-dir",
			      base,	  "--device",  "vfio/vfio",
			      "--device", "vfio/vfio", NULL};
	assert_int_equal(parse(args, &a), 0);
	assert_int_equal(jail_dir_create(&a, fd, &d, err, sizeof(err)), 0);
	assert_string_equal(read_file(base, "skiff/vm1/root/skiff"), "binary");
	assert_int_equal(mode_of(base, "skiff/vm1/root", &st), 0);
	assert_true(st.st_uid == 1000 && st.st_gid == 1001 && (st.st_mode & 07777) == 0700);
	assert_int_equal(mode_of(base, "skiff/vm1/root/skiff", &st), 0);
	assert_true(st.st_uid == 0 && (st.st_mode & 07777) == 0555);
	const char *nodes[] = {"kvm", "net/tun", "vfio/vfio"};
	for (size_t i = 0; i < 3; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "skiff/vm1/root/dev/%s", nodes[i]);
		assert_int_equal(mode_of(base, rel, &st), 0);
		assert_true(S_ISCHR(st.st_mode) && (st.st_mode & 07777) == 0600);
		assert_true(st.st_uid == 1000 && st.st_gid == 1001);
	}
	assert_int_equal(mode_of(base, "skiff/vm1/root/dev/kvm", &st), 0);
	assert_int_equal(major(st.st_rdev), 10);
	assert_int_equal(minor(st.st_rdev), 232);
	assert_false(exists(base, "skiff/vm1/root/dev/vhost-net")); /* not asked for */

	struct jail_dir d2;
	assert_int_equal(jail_dir_create(&a, fd, &d2, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "exists"));
	assert_true(exists(base, "skiff/vm1/root/skiff"));

	jail_dir_remove(&d, &a);
	assert_false(exists(top, "base/srv")); /* all of it was made here */
	assert_true(exists(top, "base"));

	/* <base>/<exec name> a symlink elsewhere: refused, nothing there. */
	char elsewhere[PATH_MAX], link[2 * PATH_MAX];
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", top);
	snprintf(link, sizeof(link), "%s/skiff", base);
	assert_int_equal(mkdir(base, 0755), 0);
	assert_int_equal(mkdir(elsewhere, 0755), 0);
	assert_int_equal(symlink(elsewhere, link), 0);
	assert_int_equal(jail_dir_create(&a, fd, &d, err, sizeof(err)), 1);
	assert_false(exists(elsewhere, "vm1"));
	assert_int_equal(mode_of(base, "skiff", &st), 0);
	assert_true(S_ISLNK(st.st_mode)); /* not ours: left */
	close(fd);
	rm_rf(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids),		 cmocka_unit_test(test_args),
	    cmocka_unit_test(test_args_bad),	 cmocka_unit_test(test_cgroup_values),
	    cmocka_unit_test(test_rlimit_parse), cmocka_unit_test(test_devices),
	    cmocka_unit_test(test_rlimits_set),	 cmocka_unit_test(test_cgroup_writer),
	    cmocka_unit_test(test_cgroup_root),	 cmocka_unit_test(test_exec_file),
	    cmocka_unit_test(test_jail_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
