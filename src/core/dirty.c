// SPDX-License-Identifier: Apache-2.0
#include "core/dirty.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dirty_log_init(struct dirty_log *d, void *host, uint64_t size, bool all)
{
	d->host = host;
	d->size = size;
	d->pages = (size + DIRTY_PAGE_SIZE - 1) >> DIRTY_PAGE_SHIFT;
	d->bits = calloc(dirty_words(d->pages) ? dirty_words(d->pages) : 1, sizeof(uint64_t));
	if (!d->bits)
		return -ENOMEM;
	for (uint64_t w = 0; all && w < dirty_words(d->pages); w++)
		d->bits[w] = d->pages - w * 64 >= 64 ? ~0ull : (1ull << (d->pages % 64)) - 1;
	return 0;
}

void dirty_log_free(struct dirty_log *d)
{
	free((void *)d->bits);
	d->bits = NULL;
	d->pages = 0;
}

void dirty_log_mark(struct dirty_log *d, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)d->host;
	if (!d->bits || !len || a < base || a - base >= d->size)
		return;
	uint64_t off = a - base;
	uint64_t end = len > d->size - off ? d->size : off + len;
	/* Release: the data written before this mark is seen by whoever
	 * takes the mark (acquire in dirty_log_take) and copies the page. */
	for (uint64_t pg = off >> DIRTY_PAGE_SHIFT; pg <= (end - 1) >> DIRTY_PAGE_SHIFT; pg++)
		atomic_fetch_or_explicit(&d->bits[pg / 64], 1ull << (pg % 64),
					 memory_order_release);
}

void dirty_log_take(struct dirty_log *d, uint64_t *out)
{
	for (uint64_t w = 0; w < dirty_words(d->pages); w++)
		out[w] |= atomic_exchange_explicit(&d->bits[w], 0, memory_order_acquire);
}

void dirty_log_put(struct dirty_log *d, const uint64_t *bits)
{
	for (uint64_t w = 0; w < dirty_words(d->pages); w++)
		if (bits[w])
			atomic_fetch_or_explicit(&d->bits[w], bits[w], memory_order_relaxed);
}

void dirty_bits_or(uint64_t *dst, uint64_t off, const uint64_t *src, uint64_t nbits)
{
	if (off % 64 == 0) {
		for (uint64_t w = 0; w < nbits / 64; w++)
			dst[off / 64 + w] |= src[w];
		for (uint64_t i = nbits / 64 * 64; i < nbits; i++)
			if (src[i / 64] >> (i % 64) & 1)
				dst[(off + i) / 64] |= 1ull << ((off + i) % 64);
		return;
	}
	for (uint64_t i = 0; i < nbits; i++)
		if (src[i / 64] >> (i % 64) & 1)
			dst[(off + i) / 64] |= 1ull << ((off + i) % 64);
}

void dirty_bits_take(_Atomic uint64_t *log, uint64_t from, uint64_t nbits, uint64_t *dst,
		     uint64_t off)
{
	for (uint64_t w = 0; w < dirty_words(nbits); w++) {
		if (!atomic_load_explicit(&log[from / 64 + w], memory_order_relaxed))
			continue; /* most words: no exchange, no dirtied cache line */
		/* Acquire: the data the kernel wrote before its OR is seen by
		 * whoever copies the page. */
		uint64_t v = atomic_exchange_explicit(&log[from / 64 + w], 0, memory_order_acquire);
		uint64_t n = nbits - w * 64 < 64 ? nbits - w * 64 : 64;
		dirty_bits_or(dst, off + w * 64, &v, n);
	}
}

uint64_t dirty_bits_count(const uint64_t *b, uint64_t nbits)
{
	uint64_t n = 0;
	for (uint64_t w = 0; w < nbits / 64; w++)
		n += (uint64_t)__builtin_popcountll(b[w]);
	if (nbits % 64)
		n += (uint64_t)__builtin_popcountll(b[nbits / 64] & ((1ull << (nbits % 64)) - 1));
	return n;
}

static bool bit_at(const uint64_t *b, uint64_t i)
{
	return b[i / 64] >> (i % 64) & 1;
}

uint64_t dirty_bits_next_run(const uint64_t *b, uint64_t nbits, uint64_t *pos)
{
	uint64_t i = *pos;
	while (i < nbits) {
		if (i % 64 == 0 && !b[i / 64]) { /* skip clean words whole */
			i += 64;
			continue;
		}
		if (bit_at(b, i))
			break;
		i++;
	}
	if (i >= nbits)
		return 0;
	uint64_t start = i;
	while (i < nbits && bit_at(b, i))
		i++;
	*pos = start;
	return i - start;
}

/* OR of the bytes, as words where it can: the loop vectorises, and a page
 * is read once whether it is zero or not. */
static bool bytes_zero(const uint8_t *p, size_t len)
{
	uint64_t acc = 0, w;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < len; i++)
		acc |= p[i];
	return acc == 0;
}

void dirty_bits_nonzero(const uint8_t *host, uint64_t size, uint64_t *out)
{
	uint64_t pages = (size + DIRTY_PAGE_SIZE - 1) >> DIRTY_PAGE_SHIFT;
	memset(out, 0, dirty_words(pages) * sizeof(*out));
	for (uint64_t i = 0; i < pages; i++) {
		uint64_t off = i << DIRTY_PAGE_SHIFT;
		size_t len = size - off < DIRTY_PAGE_SIZE ? (size_t)(size - off) : DIRTY_PAGE_SIZE;
		if (!bytes_zero(host + off, len))
			out[i / 64] |= 1ull << (i % 64);
	}
}

static _Atomic(struct dirty_log *) tracked;

void dirty_track_set(struct dirty_log *d)
{
	atomic_store(&tracked, d);
}

void dirty_mark(const void *p, size_t len)
{
	struct dirty_log *d = atomic_load_explicit(&tracked, memory_order_acquire);
	if (d)
		dirty_log_mark(d, p, len);
}

void dirty_mark_iov(const struct iovec *iov, unsigned int n, size_t len)
{
	struct dirty_log *d = atomic_load_explicit(&tracked, memory_order_acquire);
	for (unsigned int i = 0; d && i < n && len; i++) {
		size_t c = iov[i].iov_len < len ? iov[i].iov_len : len;
		dirty_log_mark(d, iov[i].iov_base, c);
		len -= c;
	}
}
