// SPDX-License-Identifier: Apache-2.0
/* Shared pieces of the libFuzzer targets (tests/fuzz/README.md).
 *
 * The input: byte 0 says how many 4-byte mutation records sit at the END of
 * the input; everything between is the op stream the target reads with
 * fz_u8() and friends (zeroes once it runs out, so every input is valid).
 *
 * Guest RAM: FZ_LOW bytes at GPA 0 and FZ_HIGH bytes at 4 GiB, in one
 * malloc'd buffer laid out like guest_mem's (low, then high), so ASan
 * flags any access past either end.
 *
 * Memory that changes between reads: the link wraps guest_mem_ptr and the
 * dma_read/dma_sg_read family (-Wl,--wrap). Before each call the code under
 * test makes, the next mutation record (if any) rewrites guest RAM: a byte
 * anywhere (rings, descriptor tables, headers), or a byte inside the range
 * being translated. The device thus sees guest memory change between any
 * two of its own accesses, deterministically (same input, same run). */
#ifndef SKIFF_FUZZ_COMMON_H
#define SKIFF_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/guest_mem.h"

#define FZ_LOW	0x10000u /* 64 KiB at GPA 0 */
#define FZ_HIGH 0x8000u	 /* 32 KiB at GUEST_MEM_HIGH_BASE */

struct fz {
	const uint8_t *p; /* op stream */
	size_t n, pos;
	const uint8_t *mut; /* mutation records, 4 bytes each */
	size_t mn, mpos;
	bool mutate; /* the wrappers apply records only while true */
	uint64_t mutations;
};

extern struct fz fz;
extern struct guest_mem fz_gm;
extern uint8_t *fz_ram; /* FZ_LOW + FZ_HIGH bytes */

/* Splits the input (see above), zeroes guest RAM, turns mutation on. */
void fz_begin(const uint8_t *data, size_t size);
/* The same without zeroing guest RAM, for targets that do not use it. */
void fz_begin_noram(const uint8_t *data, size_t size);
bool fz_more(void);
uint8_t fz_u8(void);
uint16_t fz_u16(void);
uint32_t fz_u32(void);
uint64_t fz_u64(void);
/* Copies up to len op bytes into buf (zero-fills the rest); returns len. */
size_t fz_bytes(void *buf, size_t len);
/* A guest address: mostly low RAM, sometimes high RAM, its edges, or any
 * 64-bit value. */
uint64_t fz_gpa(void);
/* Host pointer of a GPA in low RAM (test-side setup only). */
static inline uint8_t *fz_at(uint64_t gpa)
{
	return fz_ram + (gpa % FZ_LOW);
}
/* True if [p, p + len) lies inside fake guest RAM. */
bool fz_in_ram(const void *p, size_t len);

/* An invariant the target checks failed: report and abort (a finding).
 * The sanitizers' report channel survives -close_fd_mask=2. */
void fz_fail(const char *file, int line, const char *what);
#define FZ_CHECK(cond)                                                                             \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fz_fail(__FILE__, __LINE__, #cond);                                        \
	} while (0)

#endif

/* ---- the guest driver's side of a split virtqueue ---- */
#include "virtio/virtq.h"

/* Queue q's rings in low RAM (0x4000 apart, for q < 2); chains' buffers
 * go to FZ_BUF_BASE and up, and to high RAM. */
#define FZ_QUEUE_STRIDE 0x4000u
#define FZ_BUF_BASE	0x8000u

struct fz_q {
	uint64_t desc, avail, used, ind; /* ind: an indirect table's place */
	uint16_t size, avail_idx;
};

/* Places queue q's rings and sets the guest's view to empty. */
void fzq_layout(struct fz_q *g, unsigned int q, uint16_t size);
/* Sets size, ring addresses and features on vq as a driver would. */
void fzq_configure(struct virtq *vq, const struct fz_q *g, uint64_t features);
/* One driver step chosen by op (any value): writes a descriptor, publishes
 * a head, writes raw bytes, or builds and publishes a whole chain (direct
 * or indirect) from the op stream. */
void fzq_driver_op(struct fz_q *g, uint8_t op);
/* The pieces of a driver step: descriptor i of a table (i % 256), and a
 * head published in g's avail ring. */
void fzq_put_desc(uint64_t table, uint32_t i, uint64_t addr, uint32_t len, uint16_t flags,
		  uint16_t next);
void fzq_publish(struct fz_q *g, uint16_t head);

/* Observers of the virtqueue layer: the link wraps virtq_pop and
 * virtq_push_batch too (calls inside virtq.c, such as virtq_push's, go
 * unwrapped). A target may set these; they run after every successful pop
 * and batch push, with the queue's indices already moved. */
extern void (*fz_on_pop)(const struct virtq *vq, const struct virtq_elem *e);
extern void (*fz_on_push)(const struct virtq *vq, const struct virtq_used_elem *e, unsigned int n);
