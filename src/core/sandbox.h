// SPDX-License-Identifier: Apache-2.0
/* The system-call filters skiff runs under once the VM is set up
 * (libseccomp). Each long-lived thread has a role and installs its role's
 * allowlist for itself alone (no TSYNC) when its setup is done and before
 * it touches anything the guest or a client controls: a vCPU before its
 * first KVM_RUN, an I/O, disk, console or API thread before its loop, the
 * main thread after it has started all the others. The tables are in
 * sandbox_rules.c, one per role, and hold no device kind's calls: each
 * kind keeps its own (its folder's *_sandbox.c, named by its row) and the
 * VM's builder adds those of the kinds it has (sandbox_add_rules) before
 * any thread filters itself; SECURITY.md says what each role may do.
 *
 * Why the main thread goes last: a filter is inherited by the threads its
 * thread creates and filters stack (the strictest answer wins), so a thread
 * created by a filtered thread could do only what both filters allow. Every
 * thread is created by the main thread (disk workers while devices are
 * built, the rest in vmm_run) before it loads its own filter, so each one
 * starts unfiltered and ends up with exactly its role's allowlist. No
 * thread is created after that, and no role may create one.
 *
 * What every role shares: ioctls only by exact request number, tgkill only
 * to skiff's own pid, mmap/mprotect never executable, no path lookups (no
 * open, stat, unlink...; the controller alone opens existing files, never
 * creating one), no sockets but the API's accept and what a device kind
 * adds for its own thread (vsock's Unix streams), no exec, no new
 * threads or processes. Anything else is trapped: a SIGSYS handler writes
 * one line naming the role and the call ("skiff: seccomp: io thread made
 * forbidden system call openat (257)") and the process dies by SIGSYS. */
#ifndef SKIFF_SANDBOX_H
#define SKIFF_SANDBOX_H

#include <stdbool.h>

enum sandbox_role {
	SANDBOX_VCPU,
	SANDBOX_IO,
	SANDBOX_BLK,
	SANDBOX_CONSOLE,
	SANDBOX_API,
	SANDBOX_MAIN,
	/* The main thread serving an API: main's calls, and opening an
	 * existing file (a disk's new image: PATCH /drives). */
	SANDBOX_CONTROLLER,
	/* A device kind's own thread (virtio-vsock's): the common calls,
	 * interrupts, and only what the VM's kinds add for it. */
	SANDBOX_DEVICE,
	SANDBOX_NR_ROLES,
};

/* Turns the filters on or off (--no-seccomp; off until called). Called by
 * the main thread before it creates any thread: turning them on sets the
 * process's SIGSYS handler, once (a thread's install must not re-arm it
 * while another thread is dying of its re-raised SIGSYS). It also reads
 * the test-only SKIFF_SECCOMP_TEST=ROLE:SYSCALL: right after installing
 * its filter, a thread of role ROLE makes system call SYSCALL (all
 * arguments 0), which must kill skiff. Its only effect is that skiff kills
 * itself; tests use it to show each role's filter is in place. */
void sandbox_enable(bool on);
/* Installs role's filter in the calling thread only; 0, or -errno. No-op
 * if off. */
int sandbox_enter(enum sandbox_role role);
/* The same for a thread that has no way to report an error: on failure it
 * writes one line and ends the process (a thread must not go on
 * unfiltered). */
void sandbox_enter_or_die(enum sandbox_role role);
struct sandbox_rules;
/* Adds a device kind's rules to role's allowlist, for the filters
 * installed from now on (the controller takes main's too, as its table
 * holds main's). The main thread calls it while it builds the VM, before
 * it creates the threads, which read the sets when they filter
 * themselves (thread creation orders the two). A set added twice counts
 * once. 0, or -ENOSPC (more than SANDBOX_EXTRA_MAX sets for the role). */
#define SANDBOX_EXTRA_MAX 16
int sandbox_add_rules(enum sandbox_role role, const struct sandbox_rules *rules);
/* Compiles every role's filter now, from its table and the sets added so
 * far, for the threads created later: a thread whose role still has
 * exactly those sets installs the program instead of compiling its own
 * (a migration target compiles while the pages stream, not in its
 * downtime). Sets added or cleared since are no harm: that role's thread
 * compiles as without it. Called by the main thread while no thread is
 * entering its filter. 0 (also when off), or -errno. */
int sandbox_prepare(void);
/* Forgets every added set: a new VM is about to be built. */
void sandbox_clear_rules(void);
/* Whether rules was added for role (a thread of role made now has it). */
bool sandbox_has_rules(enum sandbox_role role, const struct sandbox_rules *rules);
/* Whether the calling thread runs under a filter. */
bool sandbox_active(void);
/* "vcpu", "io", "blk", "console", "api", "main", "controller", "device";
 * NULL if out of range. */
const char *sandbox_role_name(enum sandbox_role role);

#endif
