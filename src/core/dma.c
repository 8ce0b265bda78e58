// SPDX-License-Identifier: Apache-2.0
#include "core/dma.h"

#include "core/dirty.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* Built with -DSKIFF_DMA_ALWAYS_FENCE, the relaxed accessors fence as
 * the plain ones do: only the benchmark's skiff-dma-fenced build, which
 * measures what the ordering rule saves (docs/bench/METHODS.md, and the
 * runs docs/bench/2026-12-02-e1000-vfio and 2026-12-02-smoke-kvmtool). */
#ifdef SKIFF_DMA_ALWAYS_FENCE
#define RELAXED_FENCE() atomic_thread_fence(memory_order_seq_cst)
#else
#define RELAXED_FENCE() ((void)0)
#endif

int dma_read_relaxed(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len)
{
	RELAXED_FENCE();
	const void *p = guest_mem_ptr(gm, gpa, len);
	if (!p)
		return -1;
	memcpy(buf, p, len);
	return 0;
}

int dma_write_relaxed(const struct guest_mem *gm, uint64_t gpa, const void *buf, size_t len)
{
	RELAXED_FENCE();
	void *p = guest_mem_ptr(gm, gpa, len);
	if (!p)
		return -1;
	memcpy(p, buf, len);
	dirty_mark(p, len); /* after the write: core/dirty.h */
	return 0;
}

int dma_read(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len)
{
	/* After every earlier access of this thread, e.g. the load of an index
	 * that says the data is ready. */
	atomic_thread_fence(memory_order_seq_cst);
	return dma_read_relaxed(gm, gpa, buf, len);
}

int dma_write(const struct guest_mem *gm, uint64_t gpa, const void *buf, size_t len)
{
	/* After every earlier access, so the guest cannot see this write before
	 * data written earlier. */
	atomic_thread_fence(memory_order_seq_cst);
	return dma_write_relaxed(gm, gpa, buf, len);
}

/* Copies between buf and bytes [off, off + len) of the buffers, in the
 * direction to_sg says; stops where the buffers end. */
static size_t sg_copy(const struct iovec *sg, unsigned int n, size_t off, void *buf, size_t len,
		      bool to_sg)
{
	char *p = buf;
	size_t done = 0;

	for (unsigned int i = 0; i < n && done < len; i++) {
		if (off >= sg[i].iov_len) {
			off -= sg[i].iov_len;
			continue;
		}
		size_t c = sg[i].iov_len - off;
		if (c > len - done)
			c = len - done;
		char *g = (char *)sg[i].iov_base + off;
		if (to_sg) {
			memcpy(g, p + done, c);
			dirty_mark(g, c);
		} else
			memcpy(p + done, g, c);
		done += c;
		off = 0;
	}
	return done;
}

size_t dma_sg_read_relaxed(const struct iovec *sg, unsigned int n, size_t off, void *buf,
			   size_t len)
{
	RELAXED_FENCE();
	return sg_copy(sg, n, off, buf, len, false);
}

size_t dma_sg_write_relaxed(const struct iovec *sg, unsigned int n, size_t off, const void *buf,
			    size_t len)
{
	RELAXED_FENCE();
	return sg_copy(sg, n, off, (void *)buf, len, true);
}

size_t dma_sg_read(const struct iovec *sg, unsigned int n, size_t off, void *buf, size_t len)
{
	atomic_thread_fence(memory_order_seq_cst); /* as in dma_read */
	return sg_copy(sg, n, off, buf, len, false);
}

size_t dma_sg_write(const struct iovec *sg, unsigned int n, size_t off, const void *buf, size_t len)
{
	atomic_thread_fence(memory_order_seq_cst); /* as in dma_write */
	return sg_copy(sg, n, off, (void *)buf, len, true);
}

int dma_sg_slice(const struct iovec *sg, unsigned int n, size_t off, size_t len, struct iovec *out,
		 unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n && len; i++) {
		if (off >= sg[i].iov_len) {
			off -= sg[i].iov_len;
			continue;
		}
		size_t c = sg[i].iov_len - off;
		if (c > len)
			c = len;
		if (k == max)
			return -1;
		out[k].iov_base = (char *)sg[i].iov_base + off;
		out[k].iov_len = c;
		k++;
		len -= c;
		off = 0;
	}
	return (int)k;
}
