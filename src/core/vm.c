// SPDX-License-Identifier: Apache-2.0
#include "core/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/vcpu.h"
#include "core/vm_dirty.h"

/* Below 4 GiB, out of the way of RAM and the PCI window: KVM needs these
 * three pages on Intel for real-mode emulation. */
#define VM_TSS_ADDR	     0xfffbd000
#define VM_IDENTITY_MAP_ADDR 0xfffbc000

static int vm_set_memslot(struct vm *vm, uint32_t slot, uint64_t gpa, uint64_t size, void *host)
{
	struct kvm_userspace_memory_region r = {
	    .slot = slot,
	    .guest_phys_addr = gpa,
	    .memory_size = size,
	    .userspace_addr = (uint64_t)(uintptr_t)host,
	};
	return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r);
}

/* Installs the identity routes for the 24 IOAPIC pins and 16 PIC lines,
 * the same ones KVM sets by default, so MSI routes can be added beside
 * them with one KVM_SET_GSI_ROUTING. */
static int vm_routing_init(struct vm *vm)
{
	struct kvm_irq_routing *r =
	    calloc(1, sizeof(*r) + VM_MAX_GSI * sizeof(struct kvm_irq_routing_entry));
	if (!r)
		return -ENOMEM;
	for (uint32_t pin = 0; pin < VM_IOAPIC_PINS; pin++) {
		struct kvm_irq_routing_entry *e = &r->entries[r->nr++];
		e->gsi = pin;
		e->type = KVM_IRQ_ROUTING_IRQCHIP;
		e->u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
		e->u.irqchip.pin = pin;
		if (pin < 16 && pin != 2) {
			e = &r->entries[r->nr++];
			e->gsi = pin;
			e->type = KVM_IRQ_ROUTING_IRQCHIP;
			e->u.irqchip.irqchip =
			    pin < 8 ? KVM_IRQCHIP_PIC_MASTER : KVM_IRQCHIP_PIC_SLAVE;
			e->u.irqchip.pin = pin % 8;
		}
	}
	vm->routing = r;
	vm->next_msi_gsi = VM_IOAPIC_PINS;
	return ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, r) < 0 ? -errno : 0;
}

int vm_create(struct vm *vm, uint64_t mem_size, int nr_cpus, char *err, size_t errlen)
{
	return vm_create_mem(vm, mem_size, -1, NULL, nr_cpus, err, errlen);
}

int vm_open_kvm(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		snprintf(err, errlen, "cannot open %s: %s%s", path, strerror(errno),
			 errno == EACCES ? " (read and write access to it: the kvm group, or a "
					   "node of this user's, as skiff-jailer makes)"
					 : "");
	return fd;
}

int vm_create_mem(struct vm *vm, uint64_t mem_size, int mem_fd, uint8_t *mem_host, int nr_cpus,
		  char *err, size_t errlen)
{
	memset(vm, 0, sizeof(*vm));
	if (mem_host) /* first: vm_destroy frees it whatever fails below */
		guest_mem_init(&vm->mem, mem_host, mem_size);
	vm->kvm_fd = vm->vm_fd = -1;
	vm->exit_pipe[0] = vm->exit_pipe[1] = -1;
	vm->nr_cpus = nr_cpus;
	bus_init(&vm->bus);
	cmmio_init(&vm->cmmio);
	pthread_mutex_init(&vm->gsi_lock, NULL);
	vcpu_gate_init(&vm->gate);

	vm->kvm_fd = vm_open_kvm("/dev/kvm", err, errlen);
	if (vm->kvm_fd < 0)
		return -1;
	int api = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (api != KVM_API_VERSION) {
		snprintf(err, errlen, "unsupported KVM API version %d", api);
		return -1;
	}
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		snprintf(err, errlen, "KVM_CREATE_VM: %s", strerror(errno));
		return -1;
	}
	vm->vcpu_mmap_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->vcpu_mmap_size <= 0) {
		snprintf(err, errlen, "KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
		return -1;
	}
	cmmio_probe(&vm->cmmio, vm->vm_fd);
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, VM_TSS_ADDR) < 0) {
		snprintf(err, errlen, "KVM_SET_TSS_ADDR: %s", strerror(errno));
		return -1;
	}
	uint64_t idmap = VM_IDENTITY_MAP_ADDR;
	ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap); /* Intel only; optional */
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		snprintf(err, errlen, "KVM_CREATE_IRQCHIP: %s", strerror(errno));
		return -1;
	}
	struct kvm_pit_config pit = {.flags = KVM_PIT_SPEAKER_DUMMY};
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0) {
		snprintf(err, errlen, "KVM_CREATE_PIT2: %s", strerror(errno));
		return -1;
	}
	int r = vm_routing_init(vm);
	if (r < 0) {
		snprintf(err, errlen, "KVM_SET_GSI_ROUTING: %s", strerror(-r));
		return -1;
	}
	r = mem_host	  ? 0
	    : mem_fd >= 0 ? guest_mem_map_file(&vm->mem, mem_size, mem_fd)
			  : guest_mem_alloc(&vm->mem, mem_size);
	if (r < 0) {
		snprintf(err, errlen, "cannot allocate %llu MiB of guest RAM: %s",
			 (unsigned long long)(mem_size >> 20), strerror(-r));
		return -1;
	}
	if (vm_set_memslot(vm, 0, 0, vm->mem.low_size, vm->mem.host) < 0 ||
	    (vm->mem.size > vm->mem.low_size &&
	     vm_set_memslot(vm, 1, GUEST_MEM_HIGH_BASE, vm->mem.size - vm->mem.low_size,
			    vm->mem.host + vm->mem.low_size) < 0)) {
		snprintf(err, errlen, "KVM_SET_USER_MEMORY_REGION: %s", strerror(errno));
		return -1;
	}
	if (pipe2(vm->exit_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void vm_destroy(struct vm *vm)
{
	vm_dirty_disable(vm);
	guest_mem_free(&vm->mem);
	free(vm->routing);
	vm->routing = NULL;
	for (int i = 0; i < 2; i++)
		if (vm->exit_pipe[i] >= 0)
			close(vm->exit_pipe[i]);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->vm_fd = vm->kvm_fd = -1;
	bus_destroy(&vm->bus);
	cmmio_destroy(&vm->cmmio);
	vcpu_gate_destroy(&vm->gate);
}

int vm_clock_get(struct vm *vm, uint64_t *ns)
{
	struct kvm_clock_data d;
	memset(&d, 0, sizeof(d));
	if (ioctl(vm->vm_fd, KVM_GET_CLOCK, &d) < 0)
		return -errno;
	*ns = d.clock;
	return 0;
}

int vm_clock_set(struct vm *vm, uint64_t ns)
{
	struct kvm_clock_data d;
	memset(&d, 0, sizeof(d));
	d.clock = ns;
	return ioctl(vm->vm_fd, KVM_SET_CLOCK, &d) < 0 ? -errno : 0;
}

int vm_clock_paused(struct vm *vm)
{
	int told = 0;
	for (int i = 0; i < vm->nr_cpus; i++) {
		if (!vm->vcpus[i])
			continue;
		if (ioctl(vm->vcpus[i]->fd, KVM_KVMCLOCK_CTRL, 0) == 0)
			told++;
		else if (errno != EINVAL && errno != ENOTTY)
			return -errno;
	}
	return told;
}

void vm_request_exit(struct vm *vm, enum vm_exit_kind kind, const char *fmt, ...)
{
	int expected = VM_EXIT_NONE;
	if (!atomic_compare_exchange_strong(&vm->exit_kind, &expected, (int)kind))
		return;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(vm->exit_reason, sizeof(vm->exit_reason), fmt, ap);
		va_end(ap);
	}
	/* Wake the main thread; the pipe is non-blocking and written once. */
	char c = 1;
	if (write(vm->exit_pipe[1], &c, 1) < 0) {
		/* nothing to do: the main loop also polls exit_kind */
	}
}

int vm_irq_line(struct vm *vm, uint32_t gsi, int level)
{
	struct kvm_irq_level irq = {.irq = gsi, .level = (uint32_t)level};
	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0 ? -errno : 0;
}

static int vm_routing_commit(struct vm *vm)
{
	return ioctl(vm->vm_fd, KVM_SET_GSI_ROUTING, vm->routing) < 0 ? -errno : 0;
}

static void msi_entry_fill(struct kvm_irq_routing_entry *e, uint32_t gsi, uint64_t addr,
			   uint32_t data)
{
	memset(e, 0, sizeof(*e));
	e->gsi = gsi;
	e->type = KVM_IRQ_ROUTING_MSI;
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
}

int vm_msi_route_add(struct vm *vm, uint64_t addr, uint32_t data)
{
	struct kvm_irq_routing *r = vm->routing;
	pthread_mutex_lock(&vm->gsi_lock);
	if (r->nr >= VM_MAX_GSI || vm->next_msi_gsi >= VM_MAX_GSI) {
		pthread_mutex_unlock(&vm->gsi_lock);
		return -ENOSPC;
	}
	uint32_t gsi = vm->next_msi_gsi++;
	msi_entry_fill(&r->entries[r->nr++], gsi, addr, data);
	int ret = vm_routing_commit(vm);
	pthread_mutex_unlock(&vm->gsi_lock);
	return ret < 0 ? ret : (int)gsi;
}

int vm_msi_route_update(struct vm *vm, uint32_t gsi, uint64_t addr, uint32_t data)
{
	struct kvm_irq_routing *r = vm->routing;
	int ret = -ENOENT;
	pthread_mutex_lock(&vm->gsi_lock);
	for (uint32_t i = 0; i < r->nr; i++) {
		struct kvm_irq_routing_entry *e = &r->entries[i];
		if (e->gsi == gsi && e->type == KVM_IRQ_ROUTING_MSI) {
			if (e->u.msi.address_lo == (uint32_t)addr &&
			    e->u.msi.address_hi == (uint32_t)(addr >> 32) &&
			    e->u.msi.data == data) {
				ret = 0; /* unchanged: skip the costly table rewrite */
				break;
			}
			msi_entry_fill(e, gsi, addr, data);
			ret = vm_routing_commit(vm);
			break;
		}
	}
	pthread_mutex_unlock(&vm->gsi_lock);
	return ret;
}

int vm_signal_msi(struct vm *vm, uint64_t addr, uint32_t data)
{
	struct kvm_msi msi = {
	    .address_lo = (uint32_t)addr,
	    .address_hi = (uint32_t)(addr >> 32),
	    .data = data,
	};
	return ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? -errno : 0;
}

int vm_irqfd(struct vm *vm, int efd, uint32_t gsi, bool assign)
{
	struct kvm_irqfd irqfd = {
	    .fd = (uint32_t)efd,
	    .gsi = gsi,
	    .flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN,
	};
	return ioctl(vm->vm_fd, KVM_IRQFD, &irqfd) < 0 ? -errno : 0;
}

int vm_irqfd_resample(struct vm *vm, int efd, int resample_efd, uint32_t gsi, bool assign)
{
	struct kvm_irqfd irqfd = {
	    .fd = (uint32_t)efd,
	    .gsi = gsi,
	    .flags = assign ? KVM_IRQFD_FLAG_RESAMPLE : KVM_IRQFD_FLAG_DEASSIGN,
	    .resamplefd = assign ? (uint32_t)resample_efd : 0,
	};
	return ioctl(vm->vm_fd, KVM_IRQFD, &irqfd) < 0 ? -errno : 0;
}

/* Slots 0 and 1 are RAM; the rest (up to 63) are handed out here. */
int vm_memslot_add(struct vm *vm, uint64_t gpa, uint64_t size, void *host)
{
	for (uint32_t slot = 2; slot < 64; slot++) {
		uint64_t bit = 1ull << slot;
		if (atomic_fetch_or(&vm->memslots_used, bit) & bit)
			continue;
		if (vm_set_memslot(vm, slot, gpa, size, host) < 0) {
			int e = errno;
			atomic_fetch_and(&vm->memslots_used, ~bit);
			return -e;
		}
		return (int)slot;
	}
	return -ENOSPC;
}

int vm_memslot_del(struct vm *vm, int slot)
{
	if (slot < 2 || slot >= 64)
		return -EINVAL;
	if (vm_set_memslot(vm, (uint32_t)slot, 0, 0, NULL) < 0)
		return -errno;
	atomic_fetch_and(&vm->memslots_used, ~(1ull << slot));
	return 0;
}

int vm_ioeventfd(struct vm *vm, int efd, enum bus_space sp, uint64_t addr, uint32_t len,
		 bool assign)
{
	struct kvm_ioeventfd io = {
	    .addr = addr,
	    .len = len,
	    .fd = efd,
	    .flags = (sp == BUS_PIO ? KVM_IOEVENTFD_FLAG_PIO : 0) |
		     (assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN),
	};
	return ioctl(vm->vm_fd, KVM_IOEVENTFD, &io) < 0 ? -errno : 0;
}

static int caps_check(void *ctx, unsigned int cap)
{
	return ioctl(((struct vm *)ctx)->vm_fd, KVM_CHECK_EXTENSION, cap);
}

static int caps_enable(void *ctx, unsigned int cap, uint64_t arg0)
{
	struct kvm_enable_cap c = {.cap = cap, .args = {arg0}};
	return ioctl(((struct vm *)ctx)->vm_fd, KVM_ENABLE_CAP, &c) < 0 ? -errno : 0;
}

struct vm_caps vm_caps_of(struct vm *vm)
{
	return (struct vm_caps){.check = caps_check, .enable = caps_enable, .ctx = vm};
}

unsigned int vm_idle_setup(const struct vm_caps *k, bool cpu_pm, bool set_poll, uint64_t poll_ns,
			   char *note, size_t notelen)
{
	note[0] = '\0';
	unsigned int off = cpu_pm ? arch_idle_exits_off(k, note, notelen) : 0;
	if (!set_poll)
		return off;
	/* KVM_CAP_HALT_POLL (Linux 5.15): the VM's own max_halt_poll_ns,
	 * instead of the kvm module's halt_poll_ns for every VM. */
	int r = k->check(k->ctx, KVM_CAP_HALT_POLL) > 0
		    ? k->enable(k->ctx, KVM_CAP_HALT_POLL, poll_ns)
		    : -EOPNOTSUPP;
	if (r < 0) {
		size_t n = strlen(note);
		snprintf(
		    note + n, notelen - n,
		    "%s--halt-poll: the host keeps its own halt polling (KVM_CAP_HALT_POLL: %s)",
		    n ? "; " : "", strerror(-r));
	}
	return off;
}
