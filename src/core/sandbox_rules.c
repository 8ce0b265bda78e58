// SPDX-License-Identifier: Apache-2.0
/* What each thread role may do once its filter is in (see sandbox.h and
 * SECURITY.md). A rule is a system call, optionally with conditions on its
 * arguments; ioctls are listed by exact request number (the kernel reads
 * the request as 32 bits, so only those are compared). Anything not listed
 * kills skiff. Calls that need a path (open, stat, unlink...) are in no
 * table: files, disks, taps and sockets are all opened during setup. No
 * device kind's own ioctls or thread calls are here: each kind keeps them
 * in its folder and the VM's builder adds them (sandbox_add_rules). */
#include "core/sandbox_rules.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

/* One rule a line, kept so by hand (clang-format would pack them). */
/* clang-format off */
#define ALLOW(name)		{SCMP_SYS(name), 0, {{0, 0, 0, 0}}}
/* (argument i & mask) == val */
#define ARG(name, i, mask, val)	{SCMP_SYS(name), 1, {{i, 0, mask, val}}}
#define ARG_IS(name, i, val)	ARG(name, i, ~0ull, val)
#define IOCTL(req)		ARG(ioctl, 1, 0xffffffffull, (uint32_t)(req))
#define GROUP(g)		{g, sizeof(g) / sizeof(g[0])}

/* Every thread: locks, signals (the vCPU kick, the SIGSYS report),
 * memory (malloc; never executable), time, its exit, log lines on
 * stderr. tgkill reaches only skiff's own threads. */
static const struct sandbox_rule common[] = {
    ALLOW(futex),
    ALLOW(rt_sigreturn),
    ALLOW(rt_sigprocmask),
    ALLOW(restart_syscall),
    {SCMP_SYS(tgkill), 1, {{0, 1, 0xffffffffull, 0}}},
    ALLOW(getpid),
    ALLOW(gettid),
    ALLOW(exit),
    ALLOW(exit_group),
    ALLOW(clock_gettime),
    ALLOW(write),
    ALLOW(brk),
    ARG(mmap, 2, PROT_EXEC, 0),
    ARG(mprotect, 2, PROT_EXEC, 0),
    ALLOW(munmap),
    ALLOW(mremap),
    ALLOW(madvise),
    /* The C library's and sanitizers' own: malloc sizing its arenas,
     * restartable sequences, a thread's signal stack going at its exit. */
    ALLOW(sched_getaffinity),
    ALLOW(sched_yield),
    ALLOW(rseq),
    ALLOW(getrandom),
    ALLOW(sigaltstack),
};

/* Raising an interrupt: the legacy line and a direct MSI (an eventfd
 * bound to a vector is a plain write). */
static const struct sandbox_rule irq[] = {
    IOCTL(KVM_IRQ_LINE),
    IOCTL(KVM_SIGNAL_MSI),
};

/* A vCPU runs the guest and every register access: device set-up when the
 * driver starts it (MSI routes, irqfds, ioeventfds, memory slots for
 * moved BARs, batched MMIO zones; a kind's own ioctls, such as vhost's,
 * the tap's and VFIO's, come from the kind), queue work done on a trapped
 * kick, the console's output. */
static const struct sandbox_rule vcpu[] = {
    IOCTL(KVM_RUN),
    IOCTL(KVM_GET_REGS), /* rip for an error message */
    IOCTL(KVM_SET_GSI_ROUTING),
    IOCTL(KVM_IRQFD),
    IOCTL(KVM_IOEVENTFD),
    IOCTL(KVM_SET_USER_MEMORY_REGION),
    IOCTL(KVM_REGISTER_COALESCED_MMIO),
    IOCTL(KVM_UNREGISTER_COALESCED_MMIO),
    ALLOW(read),
    ALLOW(readv),
    ALLOW(writev),
    ALLOW(epoll_ctl),
    ALLOW(timerfd_settime), /* e1000 throttling, virtio-net coalescing */
    ALLOW(poll), /* a full tap arms its write-space wakeup; an MSI-X PBA read */
    ALLOW(ppoll),
};

/* An I/O thread waits for fds and moves packets between taps and rings. */
static const struct sandbox_rule io[] = {
    ALLOW(epoll_wait),
    ALLOW(epoll_pwait),
    ALLOW(epoll_ctl),
    ALLOW(read),
    ALLOW(readv),
    ALLOW(writev),
    ALLOW(timerfd_settime),
    ALLOW(poll), /* a full tap arms its write-space wakeup */
    ALLOW(ppoll),
};

/* The console reads the user's terminal and hands bytes to the UART,
 * whose interrupt is a legacy line. No terminal ioctl: the main thread
 * set the terminal up and restores it. */
static const struct sandbox_rule console[] = {
    ALLOW(poll),
    ALLOW(ppoll),
    ALLOW(read),
    ALLOW(clock_nanosleep),
    ALLOW(nanosleep),
    IOCTL(KVM_IRQ_LINE),
};

/* The API thread serves clients on a socket it was given: accept, the
 * peer's credentials and nothing else of socket options, requests in,
 * responses out, eventfds to hand work to the main thread, KVM's counters
 * for a stats request. */
static const struct sandbox_rule api[] = {
    ALLOW(accept4),
    {SCMP_SYS(getsockopt), 2, {{1, 0, ~0ull, SOL_SOCKET}, {2, 0, ~0ull, SO_PEERCRED}}},
    ALLOW(read),
    ALLOW(recvfrom),
    ALLOW(recvmsg),
    ALLOW(writev),
    ALLOW(sendto),
    ALLOW(sendmsg),
    ALLOW(shutdown),
    ALLOW(poll),
    ALLOW(ppoll),
    ALLOW(close),
    ALLOW(eventfd2),
    ARG_IS(fcntl, 1, F_GETFL),
    ARG_IS(fcntl, 1, F_SETFL),
    IOCTL(KVM_GET_STATS_FD),
    ALLOW(pread64), /* the stats fd */
    ALLOW(sysinfo), /* glibc's qsort sizing its buffer (exit sites) */
};

/* The main thread waits for the VM to end (or serves the API's requests
 * once the guest runs), then stops the others and tears down: the
 * terminal restored, KVM's counters read, the irqfds, ioeventfds, memory
 * slots taken apart (a kind's own, vhost rings or a passed-through
 * device's reset, come from the kind), fds closed. */
static const struct sandbox_rule main_thread[] = {
    ALLOW(poll),
    ALLOW(ppoll),
    ALLOW(read),
    ALLOW(close),
    ALLOW(lseek),
    ALLOW(pread64), /* the stats fd */
    ALLOW(sysinfo), /* glibc's qsort sizing its buffer (exit sites) */
    ALLOW(clock_nanosleep),
    ALLOW(nanosleep),
    ALLOW(shutdown), /* ends the API thread's accept */
    ALLOW(epoll_ctl),
    IOCTL(TCGETS),
    IOCTL(TCSETS),
    IOCTL(KVM_GET_STATS_FD),
    IOCTL(KVM_SET_GSI_ROUTING),
    IOCTL(KVM_IRQFD),
    IOCTL(KVM_IOEVENTFD),
    IOCTL(KVM_SET_USER_MEMORY_REGION),
    IOCTL(KVM_UNREGISTER_COALESCED_MMIO),
    IOCTL(KVM_GET_CLOCK), /* vmm_pause, for the API's PATCH /vm */
    IOCTL(KVM_SET_CLOCK),     /* vmm_resume */
    IOCTL(KVM_KVMCLOCK_CTRL), /* vmm_resume: the guest told of the pause */
};

/* The main thread serving an API also opens a disk's new image (PATCH
 * /drives path_on_host: blk_backend_open). An existing file only, as the
 * process may: no flag that creates, truncates or follows anything odd
 * (O_ACCMODE, O_CLOEXEC, O_NONBLOCK, so that a FIFO cannot hold the open,
 * O_DIRECT for a disk with direct, and the kernel's O_LARGEFILE, 0100000,
 * alone); then F_SETFL takes O_NONBLOCK off again. Firecracker's VMM
 * thread allows open outright, for the same request. */
#define OPEN_FLAGS_OK ((uint32_t)(O_ACCMODE | O_CLOEXEC | O_NONBLOCK | O_DIRECT | 0100000))
static const struct sandbox_rule controller[] = {
    ARG(openat, 2, (uint32_t)~OPEN_FLAGS_OK, 0),
    ARG_IS(fcntl, 1, F_SETFL),
    ALLOW(fstat),
    ARG(newfstatat, 3, AT_EMPTY_PATH, AT_EMPTY_PATH), /* glibc's fstat */
    ALLOW(flock),
    ALLOW(timerfd_settime), /* PATCH of a rate limiter ends its wait at once */
};

/* The main thread serving an API takes snapshots (PUT /snapshot/create,
 * vmm_snap.c) of a paused VM: every vCPU's and the VM's state read
 * (KVM_GET_*), then written into files that already exist (the open above
 * creates none), cut to length. */
static const struct sandbox_rule snapshot[] = {
    IOCTL(KVM_CHECK_EXTENSION),
    IOCTL(KVM_GET_MSR_INDEX_LIST),
    IOCTL(KVM_GET_REGS),
    IOCTL(KVM_GET_SREGS),
    IOCTL(KVM_GET_XSAVE),
    IOCTL(KVM_GET_XSAVE2),
    IOCTL(KVM_GET_FPU),
    IOCTL(KVM_GET_XCRS),
    IOCTL(KVM_GET_MSRS),
    IOCTL(KVM_GET_LAPIC),
    IOCTL(KVM_GET_VCPU_EVENTS),
    IOCTL(KVM_GET_DEBUGREGS),
    IOCTL(KVM_GET_TSC_KHZ),
    IOCTL(KVM_GET_MP_STATE),
    IOCTL(KVM_GET_IRQCHIP),
    IOCTL(KVM_GET_PIT2),
    IOCTL(KVM_GET_DIRTY_LOG),	/* a Diff snapshot (core/vm_dirty.c) */
    IOCTL(KVM_CLEAR_DIRTY_LOG), /* with KVM's manual protect */
    ALLOW(pwrite64),		/* a Diff's pages at their offsets */
    ALLOW(ftruncate),
    ALLOW(fsync),
};

/* The main thread serving an API sends a live migration (PUT
 * /migration/send, vmm/vmm_mig_send.c): one stream socket (the type
 * mig_connect asks for, exactly) of a Unix or IP family, connected to a
 * numeric address or one of /etc/hosts (read with the open above: no DNS,
 * vmm/mig_hosts.h); the rest
 * is write, read and poll, as above, and writev: a PAGES frame (its
 * header, its list, its pages) goes in one call. */
#define MIG_SOCKET(family) \
	{SCMP_SYS(socket), 2, {{0, 0, ~0ull, family}, {1, 0, ~0ull, SOCK_STREAM | SOCK_CLOEXEC}}}
static const struct sandbox_rule migration[] = {
    MIG_SOCKET(AF_UNIX), /* the type too: no datagram or raw socket */
    MIG_SOCKET(AF_INET),
    MIG_SOCKET(AF_INET6),
    ALLOW(connect),
    ALLOW(writev),
};

static const struct sandbox_rules vcpu_groups[] = {GROUP(common), GROUP(irq), GROUP(vcpu)};
static const struct sandbox_rules io_groups[] = {GROUP(common), GROUP(irq), GROUP(io)};
/* A disk thread's own calls are its kind's (virtio-blk's). */
static const struct sandbox_rules blk_groups[] = {GROUP(common), GROUP(irq)};
static const struct sandbox_rules console_groups[] = {GROUP(common), GROUP(console)};
static const struct sandbox_rules api_groups[] = {GROUP(common), GROUP(api)};
static const struct sandbox_rules main_groups[] = {GROUP(common), GROUP(irq), GROUP(main_thread)};
static const struct sandbox_rules controller_groups[] = {GROUP(common), GROUP(irq),
							 GROUP(main_thread), GROUP(controller),
							 GROUP(snapshot), GROUP(migration)};
static const struct sandbox_rules device_groups[] = {GROUP(common), GROUP(irq)};

const struct sandbox_table sandbox_tables[SANDBOX_NR_ROLES] = {
    [SANDBOX_VCPU] = GROUP(vcpu_groups),
    [SANDBOX_IO] = GROUP(io_groups),
    [SANDBOX_BLK] = GROUP(blk_groups),
    [SANDBOX_CONSOLE] = GROUP(console_groups),
    [SANDBOX_API] = GROUP(api_groups),
    [SANDBOX_MAIN] = GROUP(main_groups),
    [SANDBOX_CONTROLLER] = GROUP(controller_groups),
    [SANDBOX_DEVICE] = GROUP(device_groups),
};
/* clang-format on */
