/* The system-call filter skiff runs under once the VM is set up
 * (libseccomp). The main thread loads it for every thread of the process at
 * once (TSYNC) right before the I/O threads, console and vCPUs start, so
 * all of them run filtered from their first instruction. What the filter
 * allows is what the running VMM needs: I/O on fds it already has,
 * KVM/tun/vhost/terminal ioctls, memory management, futexes, timers,
 * signals, new threads and a thread naming itself (prctl PR_SET_NAME).
 * Opening files, sockets, exec and fork are refused with EPERM rather than
 * killing the process: a missed path becomes an error message, not a
 * crash, while a compromised VMM still cannot use them. */
#ifndef SKIFF_SANDBOX_H
#define SKIFF_SANDBOX_H

#include <stdbool.h>

/* Turns the filter on (the default) or off (--no-seccomp). */
void sandbox_enable(bool on);
/* Loads the filter into every thread of the process; 0, or -errno. No-op
 * if off. */
int sandbox_enter(void);

#endif
