// SPDX-License-Identifier: Apache-2.0
#include "jailer/jail_exec.h"

#include <elf.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

int jail_rlimits_set(const struct jail_args *a, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < a->n_rlimits; i++) {
		struct rlimit r = {a->rlimits[i].value, a->rlimits[i].value};
		if (setrlimit(a->rlimits[i].resource, &r) < 0) {
			snprintf(err, errlen, "setrlimit(%s, %llu): %s",
				 a->rlimits[i].resource == RLIMIT_FSIZE ? "fsize" : "no-file",
				 (unsigned long long)a->rlimits[i].value, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int jail_rlimits_check(const struct jail_args *a, char *err, size_t errlen)
{
	unsigned long long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");
	if (f && fscanf(f, "%llu", &nr_open) != 1)
		nr_open = 0;
	if (f)
		fclose(f);
	for (unsigned int i = 0; nr_open && i < a->n_rlimits; i++) {
		if (a->rlimits[i].resource == RLIMIT_NOFILE && a->rlimits[i].value > nr_open) {
			snprintf(err, errlen,
				 "invalid --resource-limit no-file=%llu: at most %llu (fs.nr_open)",
				 (unsigned long long)a->rlimits[i].value, nr_open);
			return -1;
		}
	}
	return 0;
}

int jail_enter(int netns_fd, int root_fd, const char *root_path, char *err, size_t errlen)
{
	const char *step;
	struct stat want, got;
	if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) < 0) {
		step = "setns(--netns)";
		goto fail;
	}
	step = "unshare(CLONE_NEWNS)";
	if (unshare(CLONE_NEWNS) < 0)
		goto fail;
	step = "making / a slave mount";
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		goto fail;
	/* pivot_root wants the new root to be a mount point. */
	step = "bind-mounting the jail";
	if (mount(root_path, root_path, NULL, MS_BIND, NULL) < 0)
		goto fail;
	step = "chdir into the jail";
	if (chdir(root_path) < 0)
		goto fail;
	/* The path is walked again here, and whoever may write below the base
	 * could have swapped a component for a symlink since the jail was made:
	 * only the directory made (ROOT_FD) is entered. */
	step = "checking the jail's root";
	if (fstat(root_fd, &want) < 0 || stat(".", &got) < 0)
		goto fail;
	errno = EXDEV;
	if (want.st_dev != got.st_dev || want.st_ino != got.st_ino) {
		snprintf(err, errlen, "%s is no longer the jail made (a component was replaced)",
			 root_path);
		return -1;
	}
	/* pivot_root(".", "."): the old root lands under the new one, and
	 * is detached at once: no directory for it in the jail. */
	step = "pivot_root";
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		step = "detaching the host's root";
		if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
			goto fail;
		return 0;
	}
	if (errno != EINVAL)
		goto fail;
	/* A host whose root is the initramfs (rootfs) cannot pivot it away
	 * (pivot_root(2): EINVAL). Do what switch_root does instead: move the
	 * jail over / and chroot into it. The old root stays beneath, out of
	 * reach once the capabilities are dropped (no CAP_SYS_CHROOT to
	 * chroot out again, and no file descriptor into it survives). */
	step = "moving the jail over / (rootfs cannot be pivoted)";
	if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
		goto fail;
	step = "chroot into the jail";
	if (chroot(".") < 0 || chdir("/") < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", step, strerror(errno));
	return -1;
}

int jail_drop(const struct jail_args *a, char *err, size_t errlen)
{
	const char *step = "setgroups";
	if (setgroups(0, NULL) < 0)
		goto fail;
	step = "setresgid";
	if (setresgid(a->gid, a->gid, a->gid) < 0)
		goto fail;
	step = "setresuid";
	if (setresuid(a->uid, a->uid, a->uid) < 0)
		goto fail;
	step = "PR_SET_NO_NEW_PRIVS";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		goto fail;
	/* No way back: a failed drop must not be mistaken for a done one. */
	step = "checking the drop";
	errno = EPERM;
	if (setuid(0) == 0 || geteuid() != a->uid || getegid() != a->gid)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", step, strerror(errno));
	return -1;
}

void jail_close_fds_scan(void)
{
	for (int fd = 3; fd < 1 << 20; fd++)
		close(fd);
}

void jail_close_fds(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	jail_close_fds_scan();
}

void jail_exec(const struct jail_args *a, char *err, size_t errlen)
{
	char path[NAME_MAX + 2];
	size_t n = 0, nenv = 0;
	while (a->exec_argv[n])
		n++;
	for (char **e = environ; e && *e; e++)
		nenv++;
	char **argv = calloc(n + 2, sizeof(*argv));
	char **envp = calloc(nenv + 1, sizeof(*envp));
	if (!argv || !envp) {
		snprintf(err, errlen, "out of memory");
		free(argv);
		free(envp);
		return;
	}
	argv[0] = (char *)a->exec_name;
	memcpy(argv + 1, a->exec_argv, n * sizeof(*argv));
	nenv = 0;
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "SKIFF_", 6))
			envp[nenv++] = *e;
	snprintf(path, sizeof(path), "/%s", a->exec_name);
	execve(path, argv, envp);
	snprintf(err, errlen, "cannot exec %s in the jail: %s", path, strerror(errno));
	free(argv);
	free(envp);
}

int jail_exec_file_check(int fd, const char *path, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--exec-file %s is not a regular file", path);
		return -1;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > 256) {
		snprintf(err, errlen, "--exec-file %s is not a 64-bit ELF executable", path);
		return -1;
	}
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    sizeof(ph)) {
			snprintf(err, errlen, "--exec-file %s: truncated ELF program headers",
				 path);
			return -1;
		}
		if (ph.p_type == PT_INTERP) {
			snprintf(err, errlen,
				 "--exec-file %s is dynamically linked: the jail has no libraries "
				 "(use a static build: make build/skiff-static)",
				 path);
			return -1;
		}
	}
	return 0;
}

int jail_netns_check(int fd, const char *path, char *err, size_t errlen)
{
	struct statfs fs;
	if (fstatfs(fd, &fs) == 0 && fs.f_type == NSFS_MAGIC &&
	    ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWNET)
		return 0;
	snprintf(err, errlen, "--netns %s is not a network namespace (such as /var/run/netns/NAME)",
		 path);
	return -1;
}
