#include "core/sandbox.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>

static atomic_bool enabled;

void sandbox_enable(bool on)
{
	atomic_store(&enabled, on);
}

static const int allowed[] = {
    SCMP_SYS(read),
    SCMP_SYS(write),
    SCMP_SYS(readv),
    SCMP_SYS(writev),
    SCMP_SYS(pread64),
    SCMP_SYS(pwrite64),
    SCMP_SYS(preadv),
    SCMP_SYS(pwritev),
    SCMP_SYS(preadv2),
    SCMP_SYS(pwritev2),
    SCMP_SYS(close),
    SCMP_SYS(lseek),
    SCMP_SYS(fstat),
    SCMP_SYS(newfstatat),
    SCMP_SYS(fsync),
    SCMP_SYS(fdatasync),
    SCMP_SYS(fallocate),
    SCMP_SYS(io_uring_enter), /* aio=io_uring: the ring itself is restricted */
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(epoll_wait),
    SCMP_SYS(epoll_pwait),
    SCMP_SYS(epoll_ctl),
    SCMP_SYS(futex),
    SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(nanosleep),
    SCMP_SYS(gettid),
    SCMP_SYS(getpid),
    SCMP_SYS(tgkill),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(sched_yield),
    SCMP_SYS(madvise),
    SCMP_SYS(mmap),
    SCMP_SYS(munmap),
    SCMP_SYS(mprotect),
    SCMP_SYS(mremap),
    SCMP_SYS(brk),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(restart_syscall),
    SCMP_SYS(accept4),
    SCMP_SYS(recvfrom),
    SCMP_SYS(sendto),
    SCMP_SYS(recvmsg),
    SCMP_SYS(sendmsg),
    SCMP_SYS(shutdown),
    SCMP_SYS(getrandom),
    SCMP_SYS(rseq),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(eventfd2),
    SCMP_SYS(timerfd_settime), /* e1000 interrupt throttling */
};

/* ioctl request "types" (bits 8-15) skiff uses: KVM, vhost, tun/tty ('T'),
 * VFIO (';': interrupt set-up and reset while the guest runs). */
static const unsigned int ioctl_types[] = {0xae, 0xaf, 'T', ';'};

int sandbox_enter(void)
{
	if (!atomic_load(&enabled))
		return 0;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	for (size_t i = 0; i < sizeof(ioctl_types) / sizeof(ioctl_types[0]) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00, ioctl_types[i] << 8));
	/* Threads only: clone3 hides its flags from the filter, so answer
	 * ENOSYS (glibc then uses clone) and allow clone with CLONE_THREAD. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	/* The control socket asks who connected (SO_PEERCRED), nothing else. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(getsockopt), 2,
				     SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET),
				     SCMP_A2(SCMP_CMP_EQ, SO_PEERCRED));
	/* Threads name themselves when they start (core/thread.h); no other
	 * prctl. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}
