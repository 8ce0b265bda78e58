// SPDX-License-Identifier: Apache-2.0
/* Input cursor, fake guest RAM and the memory mutator: see fuzz_common.h. */
#include "fuzz_common.h"

#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#include <string.h>
#include <sys/uio.h>

struct fz fz;
struct guest_mem fz_gm;
uint8_t *fz_ram;
static pthread_t fz_thread;

static void fz_split(const uint8_t *data, size_t size);

void fz_begin(const uint8_t *data, size_t size)
{
	fz_begin_noram(data, size);
	memset(fz_ram, 0, FZ_LOW + FZ_HIGH);
}

void fz_begin_noram(const uint8_t *data, size_t size)
{

	if (!fz_ram) {
		fz_ram = malloc(FZ_LOW + FZ_HIGH);
		if (!fz_ram)
			abort();
		fz_gm.host = fz_ram;
		fz_gm.size = FZ_LOW + FZ_HIGH;
		fz_gm.low_size = FZ_LOW;
	}
	fz_split(data, size);
}

static void fz_split(const uint8_t *data, size_t size)
{
	size_t mlen = 0;

	memset(&fz, 0, sizeof(fz));
	if (size) {
		mlen = (size_t)data[0] * 4;
		if (mlen > size - 1)
			mlen = (size - 1) & ~(size_t)3;
		fz.p = data + 1;
		fz.n = size - 1 - mlen;
		fz.mut = data + size - mlen;
		fz.mn = mlen / 4;
	}
	fz.mutate = true;
	fz_thread = pthread_self();
}

void fz_fail(const char *file, int line, const char *what)
{
	char msg[300];
	snprintf(msg, sizeof(msg), "fuzz invariant failed: %s:%d: %s", file, line, what);
	__sanitizer_report_error_summary(msg);
	abort();
}

bool fz_more(void)
{
	return fz.pos < fz.n;
}

size_t fz_bytes(void *buf, size_t len)
{
	size_t c = fz.n - fz.pos < len ? fz.n - fz.pos : len;
	if (c) {
		memcpy(buf, fz.p + fz.pos, c);
		fz.pos += c;
	}
	memset((uint8_t *)buf + c, 0, len - c);
	return len;
}

uint8_t fz_u8(void)
{
	uint8_t v;
	fz_bytes(&v, 1);
	return v;
}

uint16_t fz_u16(void)
{
	uint16_t v;
	fz_bytes(&v, 2);
	return v;
}

uint32_t fz_u32(void)
{
	uint32_t v;
	fz_bytes(&v, 4);
	return v;
}

uint64_t fz_u64(void)
{
	uint64_t v;
	fz_bytes(&v, 8);
	return v;
}

uint64_t fz_gpa(void)
{
	uint8_t sel = fz_u8();
	switch (sel & 7) {
	case 5: /* high RAM and a bit past it */
		return GUEST_MEM_HIGH_BASE + fz_u16();
	case 6: /* around the ends of each region */
		return (sel & 8 ? GUEST_MEM_HIGH_BASE + FZ_HIGH : FZ_LOW) - (fz_u8() & 0x3f);
	case 7:
		return fz_u64();
	default:
		return fz_u16();
	}
}

bool fz_in_ram(const void *p, size_t len)
{
	const uint8_t *b = p;
	return b >= fz_ram && len <= FZ_LOW + FZ_HIGH &&
	       b - fz_ram <= (ptrdiff_t)(FZ_LOW + FZ_HIGH - len);
}

/* Applies the next mutation record to guest RAM. [p, p + len) is the range
 * the code under test is about to use (len 0: none). */
static void fz_mutate(void *p, size_t len)
{
	if (!fz.mutate || fz.mpos >= fz.mn || !pthread_equal(pthread_self(), fz_thread))
		return;
	const uint8_t *r = fz.mut + 4 * fz.mpos++;
	uint32_t off = (uint32_t)r[0] | (uint32_t)r[1] << 8;
	switch (r[3] & 3) {
	case 0: /* this access goes by unchanged */
		return;
	case 1: /* a byte anywhere: rings, tables, other buffers */
		fz_ram[off % (FZ_LOW + FZ_HIGH)] = r[2];
		break;
	case 2: /* a byte of the range being used */
		if (!len || !fz_in_ram(p, len))
			return;
		((uint8_t *)p)[off % len] = r[2];
		break;
	case 3: /* a 16-bit field (an index) anywhere in low RAM */
		fz_ram[off % FZ_LOW & ~1u] = r[2];
		fz_ram[(off % FZ_LOW & ~1u) + 1] = r[3] >> 2;
		break;
	}
	fz.mutations++;
}

/* The --wrap'd entry points: mutate, then do the real thing. */
void *__real_guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);
void *__wrap_guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	void *p = __real_guest_mem_ptr(gm, gpa, len);
	fz_mutate(p, p ? len : 0);
	return p;
}

int __real_dma_read(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len);
int __wrap_dma_read(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len)
{
	fz_mutate(NULL, 0);
	return __real_dma_read(gm, gpa, buf, len);
}

int __real_dma_read_relaxed(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len);
int __wrap_dma_read_relaxed(const struct guest_mem *gm, uint64_t gpa, void *buf, size_t len)
{
	fz_mutate(NULL, 0);
	return __real_dma_read_relaxed(gm, gpa, buf, len);
}

static void fz_mutate_sg(const struct iovec *sg, unsigned int n)
{
	fz_mutate(n ? sg[0].iov_base : NULL, n ? sg[0].iov_len : 0);
}

size_t __real_dma_sg_read(const struct iovec *sg, unsigned int n, size_t off, void *buf,
			  size_t len);
size_t __wrap_dma_sg_read(const struct iovec *sg, unsigned int n, size_t off, void *buf, size_t len)
{
	fz_mutate_sg(sg, n);
	return __real_dma_sg_read(sg, n, off, buf, len);
}

size_t __real_dma_sg_read_relaxed(const struct iovec *sg, unsigned int n, size_t off, void *buf,
				  size_t len);
size_t __wrap_dma_sg_read_relaxed(const struct iovec *sg, unsigned int n, size_t off, void *buf,
				  size_t len)
{
	fz_mutate_sg(sg, n);
	return __real_dma_sg_read_relaxed(sg, n, off, buf, len);
}

void (*fz_on_pop)(const struct virtq *vq, const struct virtq_elem *e);
void (*fz_on_push)(const struct virtq *vq, const struct virtq_used_elem *e, unsigned int n);

int __real_virtq_pop(struct virtq *vq, const struct guest_mem *gm, struct virtq_elem *elem);
int __wrap_virtq_pop(struct virtq *vq, const struct guest_mem *gm, struct virtq_elem *elem)
{
	int r = __real_virtq_pop(vq, gm, elem);
	if (r > 0 && fz_on_pop)
		fz_on_pop(vq, elem);
	return r;
}

int __real_virtq_push_batch(struct virtq *vq, const struct guest_mem *gm,
			    const struct virtq_used_elem *elems, unsigned int n);
int __wrap_virtq_push_batch(struct virtq *vq, const struct guest_mem *gm,
			    const struct virtq_used_elem *elems, unsigned int n)
{
	int r = __real_virtq_push_batch(vq, gm, elems, n);
	if (r == 0 && fz_on_push)
		fz_on_push(vq, elems, n);
	return r;
}

/* ---- the guest driver ---- */

void fzq_layout(struct fz_q *g, unsigned int q, uint16_t size)
{
	uint64_t base = (uint64_t)q * FZ_QUEUE_STRIDE;
	g->desc = base;
	g->avail = base + 0x1000;
	g->used = base + 0x2000;
	g->ind = base + 0x3000;
	g->size = size;
	g->avail_idx = 0;
}

void fzq_configure(struct virtq *vq, const struct fz_q *g, uint64_t features)
{
	virtq_set_size(vq, g->size);
	virtq_set_addr(vq, VIRTQ_RING_DESC, g->desc);
	virtq_set_addr(vq, VIRTQ_RING_AVAIL, g->avail);
	virtq_set_addr(vq, VIRTQ_RING_USED, g->used);
	virtq_set_features(vq, features);
}

void fzq_put_desc(uint64_t table, uint32_t i, uint64_t addr, uint32_t len, uint16_t flags,
		  uint16_t next)
{
	struct virtq_desc d = {.addr = addr, .len = len, .flags = flags, .next = next};
	memcpy(fz_at(table + 16 * (uint64_t)(i % 256)), &d, sizeof(d));
}

void fzq_publish(struct fz_q *g, uint16_t head)
{
	uint16_t sz = g->size ? g->size : 1;
	memcpy(fz_at(g->avail + 4 + 2 * (uint64_t)(g->avail_idx % sz)), &head, 2);
	g->avail_idx++;
	__atomic_store_n((uint16_t *)fz_at(g->avail + 2), g->avail_idx, __ATOMIC_RELEASE);
}

/* A buffer address: mostly the buffer area, sometimes anything. */
static uint64_t fzq_buf_addr(uint8_t sel)
{
	if (sel & 0x40)
		return fz_gpa();
	return FZ_BUF_BASE + fz_u16() % (FZ_LOW - FZ_BUF_BASE);
}

/* Builds a chain of 1..8 segments at index start (or in the indirect
 * table) and publishes it. Per segment, one byte: bit 0 writable, bit 1
 * its length from the stream (else small), bit 7 fill it from the stream
 * (at most 64 bytes), bit 6 any address. */
static void fzq_chain(struct fz_q *g)
{
	uint8_t hdr = fz_u8();
	unsigned int n = 1 + (hdr & 7), sz = g->size ? g->size : 1;
	bool indirect = hdr & 8;
	uint16_t start = fz_u8() % sz;

	for (unsigned int i = 0; i < n; i++) {
		uint8_t s = fz_u8();
		uint64_t addr = fzq_buf_addr(s);
		uint32_t len = s & 2 ? fz_u32() : (uint32_t)(fz_u8() + 1);
		uint16_t flags =
		    (s & 1 ? VIRTQ_DESC_F_WRITE : 0) | (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0);
		if (s & 0x80 && addr < FZ_LOW) {
			size_t c = len < 64 ? len : 64;
			if (addr + c <= FZ_LOW)
				fz_bytes(fz_at(addr), c);
		}
		if (indirect)
			fzq_put_desc(g->ind, i, addr, len, flags, (uint16_t)(i + 1));
		else
			fzq_put_desc(g->desc, (start + i) % sz, addr, len, flags,
				     (uint16_t)((start + i + 1) % sz));
	}
	if (indirect)
		fzq_put_desc(g->desc, start, g->ind, 16 * n, VIRTQ_DESC_F_INDIRECT, 0);
	fzq_publish(g, start);
}

void fzq_driver_op(struct fz_q *g, uint8_t op)
{
	switch (op % 5) {
	case 0: { /* one raw descriptor, main or indirect table */
		uint8_t sel = fz_u8();
		uint64_t table = sel & 1 ? g->ind : g->desc;
		uint32_t i = fz_u8();
		uint64_t addr = fzq_buf_addr(sel);
		uint32_t len = fz_u32();
		uint16_t flags = fz_u16(), next = fz_u16();
		fzq_put_desc(table, i, addr, len, flags, next);
		break;
	}
	case 1: /* publish a head */
		fzq_publish(g, fz_u16());
		break;
	case 2: { /* raw bytes anywhere in low RAM (rings included) */
		uint16_t gpa = fz_u16();
		size_t len = fz_u8() % 32;
		if ((size_t)gpa + len <= FZ_LOW)
			fz_bytes(fz_at(gpa), len);
		break;
	}
	default: /* a whole chain, the common case */
		fzq_chain(g);
		break;
	}
}
