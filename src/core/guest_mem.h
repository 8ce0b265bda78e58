// SPDX-License-Identifier: Apache-2.0
/* Guest physical memory: the one checked translation from guest addresses to
 * host pointers. Device models do not use it directly: they go through the DMA
 * accessors in core/dma.h, which also state the memory-ordering rule.
 *
 * Layout: RAM below the 32-bit PCI hole starts at GPA 0 (at most
 * GUEST_MEM_LOW_MAX bytes); whatever does not fit continues at 4 GiB. Both
 * parts live in one host mapping: [host, host + low_size) is low RAM,
 * [host + low_size, host + size) is high RAM. */
#ifndef SKIFF_GUEST_MEM_H
#define SKIFF_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUEST_MEM_LOW_MAX   0xC0000000ULL /* PCI hole from 3 GiB to 4 GiB */
#define GUEST_MEM_HIGH_BASE 0x100000000ULL
#define GUEST_MEM_ALIGN	    0x200000ULL /* host RAM starts on a 2 MiB boundary */

struct guest_mem {
	uint8_t *host;	   /* base of the single host mapping */
	uint64_t size;	   /* total RAM bytes */
	uint64_t low_size; /* bytes mapped at GPA 0 */
};

/* Sets up the bookkeeping for an existing mapping of `size` bytes. */
void guest_mem_init(struct guest_mem *gm, void *host, uint64_t size);

/* Maps `size` bytes of anonymous memory; returns 0 or -errno. */
int guest_mem_alloc(struct guest_mem *gm, uint64_t size);
/* Maps `size` bytes of the file fd privately (a snapshot's memory file:
 * pages are read as the guest touches them, and its writes never reach
 * the file), aligned as guest_mem_alloc; returns 0 or -errno. If the file
 * is later cut short, the first touch of a page past its end ends the
 * process with one line and status 1 instead of a SIGBUS core (one such
 * mapping per process: the last one is the one guarded). */
int guest_mem_map_file(struct guest_mem *gm, uint64_t size, int fd);
void guest_mem_free(struct guest_mem *gm);

/* Host pointer for [gpa, gpa + len) if the whole range lies inside one RAM
 * region, else NULL. Overflow of gpa + len is rejected. len 0 is allowed
 * (returns a pointer if gpa is inside RAM or at its end). This is the only
 * function that turns a guest address into a host pointer. */
void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/* True if [gpa, gpa + len) is RAM. */
bool guest_mem_valid(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/* The first guest-physical address above all of guest RAM. */
static inline uint64_t guest_mem_end(const struct guest_mem *gm)
{
	return gm->size > gm->low_size ? GUEST_MEM_HIGH_BASE + (gm->size - gm->low_size) : gm->size;
}

#endif
