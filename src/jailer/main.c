// SPDX-License-Identifier: Apache-2.0
/* skiff-jailer: starts skiff (or any static program) in a jail of its own,
 * as Firecracker's jailer does: a fresh chroot with only its device
 * nodes, a cgroup v2 leaf, a network and mount namespace, an unprivileged
 * UID/GID, resource limits. SECURITY.md, "Two layers", says what it stops.
 * Bad arguments: one line and exit status 2, nothing made. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jailer/jail_args.h"
#include "jailer/jail_cgroup.h"
#include "jailer/jail_exec.h"
#include "jailer/jail_fs.h"

#define ERRLEN 512

struct jailer {
	struct jail_args a;
	struct jail_dir dir;
	struct jail_cgroup cg;
	bool have_cg;
	int exec_fd, netns_fd, null_fd;
	char err[ERRLEN];
};

static int die(struct jailer *j, int status)
{
	jail_err_oneline(j->err); /* paths quoted in it may hold a newline */
	fprintf(stderr, "skiff-jailer: %s\n", j->err);
	return status;
}

/* A failure once the jail exists: everything made goes again. */
static int undo(struct jailer *j)
{
	if (j->have_cg)
		jail_cgroup_remove(&j->cg, &j->a);
	jail_dir_remove(&j->dir, &j->a);
	return die(j, 1);
}

/* Opens what the arguments name before anything is made. O_NONBLOCK: a
 * FIFO in their place (their directories may be others') hung the root
 * jailer in open(2); O_NOCTTY: a terminal is never made the jailer's.
 * The exec file is looked at first, so that no device is opened as it
 * (an open may act: a watchdog starts), and checked again once open. */
#define INPUT_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

static int open_inputs(struct jailer *j)
{
	struct stat st;
	if (stat(j->a.exec_file, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(j->err, ERRLEN, "--exec-file %s is not a regular file", j->a.exec_file);
		return -1;
	}
	j->exec_fd = open(j->a.exec_file, INPUT_FLAGS);
	if (j->exec_fd < 0) {
		snprintf(j->err, ERRLEN, "cannot open --exec-file %s: %s", j->a.exec_file,
			 strerror(errno));
		return -1;
	}
	if (jail_exec_file_check(j->exec_fd, j->a.exec_file, j->err, ERRLEN) < 0)
		return -1;
	if (j->a.netns) {
		j->netns_fd = open(j->a.netns, INPUT_FLAGS);
		if (j->netns_fd < 0) {
			snprintf(j->err, ERRLEN, "cannot open --netns %s: %s", j->a.netns,
				 strerror(errno));
			return -1;
		}
		if (jail_netns_check(j->netns_fd, j->a.netns, j->err, ERRLEN) < 0)
			return -1;
	}
	return 0;
}

/* --new-pid-ns: the child is pid 1 of a new namespace and goes on; the
 * parent writes its pid to <exec name>.pid in the jail and exits. */
static int new_pid_ns(struct jailer *j)
{
	char name[NAME_MAX + 8], num[32];
	if (unshare(CLONE_NEWPID) < 0) {
		snprintf(j->err, ERRLEN, "unshare(CLONE_NEWPID): %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(j->err, ERRLEN, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* The one to move back on failure: the parent's pid, written
		 * from this namespace, named nobody, the child stayed and the
		 * leaf could not go. cgroup.procs reads it in the writer's. */
		if (j->have_cg)
			j->cg.moved = getpid();
		return 0;
	}
	snprintf(name, sizeof(name), "%s.pid", j->a.exec_name);
	int n = snprintf(num, sizeof(num), "%d\n", (int)pid);
	int fd = openat(j->dir.root_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644);
	if (fd < 0 || write(fd, num, (size_t)n) != n)
		fprintf(stderr, "skiff-jailer: cannot write %s: %s\n", name, strerror(errno));
	if (fd >= 0)
		close(fd);
	_exit(0);
}

/* setsid(2) refuses a process-group leader (the jailer started by a
 * shell with job control, by setsid(1), or by an orchestrator that gives
 * each child a group): then fork first, as daemon(3) and Firecracker do,
 * and the parent exits 0. */
static int daemonize(struct jailer *j)
{
	if (getpgrp() == getpid()) {
		pid_t pid = fork();
		if (pid < 0) {
			snprintf(j->err, ERRLEN, "fork: %s", strerror(errno));
			return -1;
		}
		if (pid > 0)
			_exit(0);
		if (j->have_cg)
			j->cg.moved = getpid(); /* the one to move back on failure */
	}
	if (setsid() < 0) {
		snprintf(j->err, ERRLEN, "setsid: %s", strerror(errno));
		return -1;
	}
	for (int fd = 0; fd < 3; fd++) {
		if (dup2(j->null_fd, fd) < 0) {
			snprintf(j->err, ERRLEN, "redirecting stdio: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct jailer j = {.exec_fd = -1, .netns_fd = -1, .null_fd = -1};
	/* The jail's modes are its own (0755 directories the UID walks
	 * through to its nodes), not whatever umask the caller had. */
	umask(022);
	/* Nothing inherited but stdio goes further (Firecracker's order too):
	 * closed again before the exec, where only the jailer's own remain. */
	jail_close_fds();
	if (jail_args_parse(argc, argv, &j.a, j.err, ERRLEN) < 0)
		return die(&j, 2);
	if (j.a.help) {
		fputs(jail_usage, stdout);
		return 0;
	}
	if (geteuid() != 0) {
		snprintf(j.err, ERRLEN,
			 "must run as root (it makes device nodes, a cgroup and "
			 "namespaces, then drops to --uid)");
		return die(&j, 2);
	}
	if (open_inputs(&j) < 0 || jail_rlimits_check(&j.a, j.err, ERRLEN) < 0 ||
	    (j.a.n_cgroups && jail_cgroup_root_check(jail_cgroup_root(), j.err, ERRLEN) < 0))
		return die(&j, 2);
	int st = jail_dir_create(&j.a, j.exec_fd, &j.dir, j.err, ERRLEN);
	if (st)
		return die(&j, st);
	if (j.a.n_cgroups) {
		st = jail_cgroup_setup(jail_cgroup_root(), &j.a, getpid(), &j.cg, j.err, ERRLEN);
		if (st) {
			jail_dir_remove(&j.dir, &j.a);
			return die(&j, st);
		}
		j.have_cg = true;
	}
	if (j.a.daemonize && (j.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		snprintf(j.err, ERRLEN, "cannot open /dev/null: %s", strerror(errno));
		return undo(&j);
	}
	/* Everything that can fail is done before the pivot, while the host's
	 * paths still lead to the jail and cgroup to remove. */
	if ((j.a.new_pid_ns && new_pid_ns(&j) < 0) || (j.a.daemonize && daemonize(&j) < 0) ||
	    jail_enter(j.netns_fd, j.dir.root_fd, j.dir.root_path, j.err, ERRLEN) < 0)
		return undo(&j);
	/* The limits are the jailed file's, set last (checked at the start):
	 * set before the fork, fsize=0 killed the parent writing the pid file
	 * (SIGXFSZ) and a small no-file made its open fail. */
	if (jail_rlimits_set(&j.a, j.err, ERRLEN) < 0 || jail_drop(&j.a, j.err, ERRLEN) < 0)
		return die(&j, 1);
	jail_close_fds();
	jail_exec(&j.a, j.err, ERRLEN);
	return die(&j, 1);
}
