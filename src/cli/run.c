/* `skiff run`: build the VM from the options, boot, wait, report. */
#include <errno.h>
#include <linux/kvm.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/devices.h"
#include "core/machine.h"
#include "iothread/iothread.h"
#include "pci/pci.h"
#include "cli/opts.h"
#include "core/console.h"
#include "core/sandbox.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "devices/power.h"
#include "devices/uart8250.h"
#include "stats/api_sock.h"
#include "stats/counters.h"
#include "stats/exit_sites.h"
#include "stats/exit_stats.h"
#include "x86/boot.h"
#include "x86/cpu.h"
#include "x86/layout.h"

static struct vm *signal_vm;

static void stop_signal_handler(int sig)
{
	if (signal_vm)
		vm_request_exit(signal_vm, VM_EXIT_QUIT, "stopped by signal %d", sig);
}

static void signals_init(struct vm *vm)
{
	signal_vm = vm;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stop_signal_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	vcpu_signals_init();
}

static void uart_set_irq(void *opaque, int level)
{
	vm_irq_line(opaque, LAYOUT_COM1_IRQ, level);
}

static int devices_register(struct vm *vm, struct uart8250 *uart)
{
	uart_init(uart, uart_set_irq, console_tx, vm);
	struct bus_region r = {.base = LAYOUT_COM1,
			       .len = 8,
			       .handler = uart_bus_handler,
			       .reg_name = uart_reg_name,
			       .opaque = uart,
			       .name = "uart0"};
	int ret = bus_register(&vm->bus, BUS_PIO, &r);
	if (ret < 0)
		return ret;
	return power_register(vm);
}

static int vcpus_create(struct vm *vm, uint64_t entry, char *err, size_t errlen)
{
	struct kvm_cpuid2 *cpuid = cpuid_get_supported(vm->kvm_fd);
	if (!cpuid) {
		snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < vm->nr_cpus; i++) {
		vm->vcpus[i] = vcpu_create(vm, i, cpuid);
		if (!vm->vcpus[i]) {
			snprintf(err, errlen, "cannot create vCPU %d: %s", i, strerror(errno));
			free(cpuid);
			return -1;
		}
	}
	free(cpuid);
	/* Only the boot CPU gets registers; the others wait for INIT/SIPI
	 * from the guest, which the in-kernel LAPIC handles. */
	int r = x86_vcpu_set_boot_regs(vm->vcpus[0]->fd, entry, LAYOUT_ZERO_PAGE);
	if (r < 0) {
		snprintf(err, errlen, "cannot set boot registers: %s", strerror(-r));
		return -1;
	}
	return 0;
}

/* Before the seccomp filter, which refuses epoll_create1; the threads
 * start after it. Each publishes its wakeups and handled events. */
static int iothreads_init(struct iothread *io, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "io%u", i);
		if (iothread_init(&io[i], name) < 0)
			return -1;
		snprintf(name, sizeof(name), "io%u wakeups", i);
		counters_register(name, &io[i].wakeups);
		snprintf(name, sizeof(name), "io%u events", i);
		counters_register(name, &io[i].events);
	}
	return 0;
}

static void wait_for_exit(struct vm *vm)
{
	while (atomic_load(&vm->exit_kind) == VM_EXIT_NONE) {
		struct pollfd p = {.fd = vm->exit_pipe[0], .events = POLLIN};
		poll(&p, 1, 1000);
	}
}

int cmd_run(int argc, char **argv, uint64_t start_ns)
{
	struct run_opts o;
	char err[512];
	if (run_opts_parse(argc, argv, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff: %s\n", err);
		return EXIT_USAGE;
	}
	struct boot_image img;
	/* Platform default, as kvmtool and Firecracker do: reboot through the
	 * i8042 reset line, which skiff catches. Linux's default (ACPI reset
	 * register first) was seen to spin in the guest's shutdown path
	 * before reaching either register. A user's own reboot= wins. */
	static char cmdline[LAYOUT_CMDLINE_MAX];
	snprintf(cmdline, sizeof(cmdline), "%s%s", o.cmdline,
		 strstr(o.cmdline, "reboot=") ? "" : " reboot=k");
	if (boot_image_open(&img, o.kernel, o.initrd, cmdline, o.mem,
			    o.guest_unpack ? BOOT_UNPACK_GUEST : BOOT_UNPACK_HOST, err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "skiff: %s\n", err);
		boot_image_close(&img);
		return EXIT_USAGE;
	}
	static struct vm vm;
	static struct uart8250 uart;
	static struct iothread io[IOTHREAD_MAX];
	unsigned int nr_io = (unsigned int)o.iothreads;
	struct machine m = {.vm = &vm, .io = io, .nr_io = nr_io, .use_ioeventfd = !o.no_ioeventfd};
	int status = EXIT_RUNTIME;
	FILE *stats_json = NULL;
	uint64_t entry;
	if (vm_create(&vm, o.mem, o.cpus, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff: %s\n", err);
		/* Not being able to use /dev/kvm is a setup problem, like bad input. */
		status = vm.vm_fd < 0 ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	signals_init(&vm);
	sandbox_enable(!o.no_seccomp);
	static struct exit_sites sites;
	exit_sites_init(&sites);
	vm.bus.account = exit_sites_bus_account;
	vm.bus.account_opaque = &sites;
	if (iothreads_init(io, nr_io) < 0 || !(m.pci = pci_bus_create(&vm))) {
		fprintf(stderr, "skiff: cannot set up the I/O threads or PCI bus\n");
		goto out;
	}
	if (devices_attach(&m, o.devs, o.nr_devs, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff: %s\n", err);
		status = EXIT_USAGE;
		goto out;
	}
	if (devices_register(&vm, &uart) < 0 ||
	    boot_image_load(&img, &vm.mem, o.cpus, &entry, err, sizeof(err)) < 0 ||
	    vcpus_create(&vm, entry, err, sizeof(err)) < 0) {
		fprintf(stderr, "skiff: %s\n", err[0] ? err : "cannot register devices");
		goto out;
	}
	boot_image_close(&img);
	/* Files the running VMM writes are opened before the filter. */
	if (o.stats_json && !(stats_json = fopen(o.stats_json, "w"))) {
		fprintf(stderr, "skiff: cannot write --stats-json %s: %s\n", o.stats_json,
			strerror(errno));
		status = EXIT_USAGE;
		goto out;
	}
	static struct api_sock api = {.fd = -1};
	if (o.api_sock) {
		if (api_sock_open(&api, o.api_sock, err, sizeof(err)) < 0) {
			fprintf(stderr, "skiff: %s\n", err);
			status = EXIT_USAGE;
			goto out;
		}
		api.src =
		    (struct exit_stats_src){.vm = &vm, .sites = &sites, .io = io, .nr_io = nr_io};
		api.start_ns = start_ns;
	}
	if (sandbox_enter() < 0) {
		fprintf(stderr, "skiff: cannot install the seccomp filter\n");
		goto out;
	}
	if (o.api_sock && api_sock_start(&api) < 0) {
		fprintf(stderr, "skiff: cannot start the control socket\n");
		goto out;
	}
	for (unsigned int i = 0; i < nr_io; i++) {
		if (iothread_start(&io[i]) < 0) {
			fprintf(stderr, "skiff: cannot start I/O thread %s\n", io[i].name);
			goto out;
		}
	}
	if (console_start(&vm, &uart) < 0) {
		fprintf(stderr, "skiff: cannot start the console\n");
		goto out;
	}
	for (int i = 0; i < vm.nr_cpus; i++) {
		if (vcpu_start(vm.vcpus[i]) < 0) {
			vm_request_exit(&vm, VM_EXIT_ERROR, "cannot start vCPU thread %d", i);
			break;
		}
	}
	if (o.timing) {
		/* vCPU 0 stamps its first KVM_RUN right before entering it. */
		while (!__atomic_load_n(&vm.vcpus[0]->first_run_ns, __ATOMIC_ACQUIRE) &&
		       atomic_load(&vm.exit_kind) == VM_EXIT_NONE)
			usleep(100);
		fprintf(stderr, "skiff: first KVM_RUN after %llu us\n",
			(unsigned long long)((vm.vcpus[0]->first_run_ns - start_ns) / 1000));
	}
	wait_for_exit(&vm);
	for (int i = 0; i < vm.nr_cpus; i++)
		vcpu_kick(vm.vcpus[i]);
	for (int i = 0; i < vm.nr_cpus; i++)
		vcpu_join(vm.vcpus[i]);
	console_restore();
	for (unsigned int i = 0; i < nr_io; i++)
		iothread_stop(&io[i]);

	switch (atomic_load(&vm.exit_kind)) {
	case VM_EXIT_POWEROFF:
	case VM_EXIT_QUIT:
		status = 0;
		break;
	case VM_EXIT_REBOOT:
		/* skiff does not restart guests: a reboot ends the VM, like
		 * QEMU's -no-reboot, so scripts see the guest stop. */
		fprintf(stderr, "skiff: %s; exiting (reboot is treated as shutdown)\n",
			vm.exit_reason);
		status = 0;
		break;
	default:
		fprintf(stderr, "skiff: %s\n", vm.exit_reason);
		status = EXIT_RUNTIME;
	}
	struct exit_stats_src src = {.vm = &vm,
				     .sites = &sites,
				     .io = io,
				     .nr_io = nr_io,
				     .wall_s = (monotonic_ns() - start_ns) / 1e9};
	if (o.stats)
		exit_stats_print(stderr, &src);
	if (stats_json) {
		exit_stats_json(stats_json, &src);
		fclose(stats_json);
	}
out:
	api_sock_close(&api);
	boot_image_close(&img);
	console_restore();
	/* vCPU threads are joined; free the rest and let the OS reclaim. */
	for (unsigned int i = 0; i < nr_io; i++)
		iothread_destroy(&io[i]);
	for (int i = 0; i < vm.nr_cpus; i++)
		vcpu_destroy(vm.vcpus[i]);
	if (m.pci)
		pci_bus_destroy(m.pci);
	vm_destroy(&vm);
	return status;
}
