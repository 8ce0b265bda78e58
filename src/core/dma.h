// SPDX-License-Identifier: Apache-2.0
/* DMA accessors: the only way device models touch guest memory.
 *
 * Two kinds of address:
 *  - a guest physical address (dma_read, dma_write): checked and
 *    translated by guest_mem_ptr on each call;
 *  - a popped chain's buffers (dma_sg_*): the iovecs of a virtq_elem, which
 *    virtq_pop built through guest_mem_ptr, so each lies in guest RAM.
 *    Offsets count bytes across the buffers; a copy stops where they end.
 *
 * Ordering rule:
 *  - The plain accessors (dma_read, dma_write, dma_sg_read, dma_sg_write)
 *    issue a full fence (seq_cst) before the access. Use them by default:
 *    the access is then ordered against every earlier access of the thread
 *    (the avail-index load that said a chain is ready, an earlier write the
 *    guest must see first), whatever the caller forgot.
 *  - The _relaxed variants do no fencing. Use one only on a per-packet path
 *    whose order is already set by a fence in virtio/virtq.c, and name that
 *    fence in a comment at the call site: reading a chain after virtq_pop is
 *    ordered by the acquire fence after the avail-index load; writing it
 *    before virtq_push/virtq_push_batch by the release fence before the
 *    used-index store. Those fences only order accesses of the thread that
 *    runs them, or of a thread the chain was handed to through a lock.
 *  - A synchronous system call that moves data between a file and a chain
 *    (readv/writev on the tap, preadv/pwritev on a disk image) takes its
 *    iovecs from dma_sg_slice and needs no fence of ours: the kernel copies
 *    on the calling thread before the call returns, so the copy sits
 *    between virtq_pop's acquire and virtq_push's release like any other
 *    access of the thread, and the compiler cannot move accesses across the
 *    call. Asynchronous or zero-copy I/O (io_uring, AIO, MSG_ZEROCOPY) would
 *    break this: its completion must come before the push.
 * Cost: a field report measured a full barrier in every DMA accessor at
 * under 1% of a netperf stream (in the noise), so ordered is the default. */
#ifndef SKIFF_CORE_DMA_H
#define SKIFF_CORE_DMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/guest_mem.h"

/* Copies between guest RAM at gpa and buf. Returns 0, or -1 (nothing
 * copied) if [gpa, gpa + len) is not RAM. */
int dma_read(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len);
int dma_write(const struct guest_mem *gm, uint64_t gpa, const void *buf, size_t len);
int dma_read_relaxed(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len);
int dma_write_relaxed(const struct guest_mem *gm, uint64_t gpa, const void *buf, size_t len);

/* Copies between buf and bytes [off, off + len) of the buffers sg[0, n).
 * Returns the bytes copied: less than len if the buffers end first. */
size_t dma_sg_read(const struct iovec *sg, unsigned int n, size_t off, void *buf, size_t len);
size_t dma_sg_write(const struct iovec *sg, unsigned int n, size_t off, const void *buf,
		    size_t len);
size_t dma_sg_read_relaxed(const struct iovec *sg, unsigned int n, size_t off, void *buf,
			   size_t len);
size_t dma_sg_write_relaxed(const struct iovec *sg, unsigned int n, size_t off, const void *buf,
			    size_t len);

/* For a system call (see the rule) or a later dma_sg_* call: writes to out
 * the buffers covering bytes [off, off + len) of sg[0, n) (fewer if they
 * end first; len SIZE_MAX takes the rest), without empty entries. Touches
 * no guest memory. Returns the number written, or -1 if more than max would
 * be needed. */
int dma_sg_slice(const struct iovec *sg, unsigned int n, size_t off, size_t len, struct iovec *out,
		 unsigned int max);

#endif
