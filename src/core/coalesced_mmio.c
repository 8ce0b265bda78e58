// SPDX-License-Identifier: Apache-2.0
#include "core/coalesced_mmio.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/vm.h"

void cmmio_init(struct cmmio *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
}

void cmmio_probe(struct cmmio *c, int vm_fd)
{
	c->supported = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_MMIO) > 0;
}

void cmmio_attach(struct cmmio *c, void *run, size_t mmap_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t off = (size_t)KVM_COALESCED_MMIO_PAGE_OFFSET * page;
	if (!c->supported || c->ring || mmap_size < off + page)
		return;
	/* Every vCPU maps the same VM-wide ring; the first mapping serves. */
	c->max = (uint32_t)((page - sizeof(struct kvm_coalesced_mmio_ring)) /
			    sizeof(struct kvm_coalesced_mmio));
	__atomic_store_n(&c->ring, (struct kvm_coalesced_mmio_ring *)((char *)run + off),
			 __ATOMIC_RELEASE);
}

void cmmio_detach(struct cmmio *c, void *run)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *ring = (char *)c->ring;
	if (!ring || ring != (char *)run + (size_t)KVM_COALESCED_MMIO_PAGE_OFFSET * page)
		return;
	pthread_mutex_lock(&c->lock);
	__atomic_store_n(&c->ring, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->lock);
}

void cmmio_destroy(struct cmmio *c)
{
	c->ring = NULL;
	pthread_mutex_destroy(&c->lock);
}

static int zone_ioctl(struct vm *vm, unsigned long req, uint64_t addr, uint32_t len)
{
	if (!vm->cmmio.supported)
		return -ENOTSUP;
	struct kvm_coalesced_mmio_zone z = {.addr = addr, .size = len};
	return ioctl(vm->vm_fd, req, &z) < 0 ? -errno : 0;
}

int cmmio_zone_add(struct vm *vm, uint64_t addr, uint32_t len)
{
	return zone_ioctl(vm, KVM_REGISTER_COALESCED_MMIO, addr, len);
}

int cmmio_zone_del(struct vm *vm, uint64_t addr, uint32_t len)
{
	return zone_ioctl(vm, KVM_UNREGISTER_COALESCED_MMIO, addr, len);
}

void cmmio_flush(struct vm *vm)
{
	struct cmmio *c = &vm->cmmio;
	struct kvm_coalesced_mmio_ring *ring = __atomic_load_n(&c->ring, __ATOMIC_ACQUIRE);
	if (!ring)
		return;
	/* Unlocked peek: KVM publishes `last` after the entry (its own
	 * barrier), and an entry missed here was written after this
	 * caller's decision point anyway. */
	if (__atomic_load_n(&ring->first, __ATOMIC_ACQUIRE) ==
	    __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&c->lock);
	if (!c->ring) { /* detached meanwhile */
		pthread_mutex_unlock(&c->lock);
		return;
	}
	uint32_t first = ring->first;
	/* Bounded: at most one ring's worth per call; KVM cannot add more
	 * than max - 1 before it exits to us with the ring full. */
	for (uint32_t n = 0; n < c->max; n++) {
		uint32_t last = __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE);
		if (first == last || first >= c->max)
			break;
		struct kvm_coalesced_mmio e = ring->coalesced_mmio[first];
		uint32_t len = e.len <= sizeof(e.data) ? e.len : sizeof(e.data);
		if (!e.pio)
			bus_dispatch(&vm->bus, BUS_MMIO_BATCHED, e.phys_addr, e.data, len, true,
				     -1);
		first = (first + 1) % c->max;
		/* Release: the entry was copied before KVM may reuse it. */
		__atomic_store_n(&ring->first, first, __ATOMIC_RELEASE);
		c->replayed++;
	}
	pthread_mutex_unlock(&c->lock);
}

void cmmio_flush_cb(void *opaque)
{
	cmmio_flush(opaque);
}
