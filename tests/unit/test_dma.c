// SPDX-License-Identifier: Apache-2.0
/* DMA accessors (src/core/dma.c): guest-physical copies, scatter-gather
 * copies over a chain's buffers, and slices handed to system calls. Only
 * the bytes are tested: ordering cannot be observed from one thread. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/dma.h"
#include "fake_mem.h"

#define RAM (1u << 20)

static void test_gpa_read_write(void **state)
{
	(void)state;
	struct fake_mem fm;
	uint32_t v = 0xdeadbeef, r = 0;

	assert_int_equal(fake_mem_init(&fm, RAM), 0);
	assert_int_equal(dma_write(&fm.gm, 100, &v, 4), 0);
	assert_memory_equal(fm.ram + 100, &v, 4);
	assert_int_equal(dma_read_relaxed(&fm.gm, 100, &r, 4), 0);
	assert_int_equal(r, v);
	r = 0;
	assert_int_equal(dma_read(&fm.gm, 100, &r, 4), 0);
	assert_int_equal(r, v);
	v = 0x01020304;
	assert_int_equal(dma_write_relaxed(&fm.gm, RAM - 4, &v, 4), 0); /* last bytes */
	assert_memory_equal(fm.ram + RAM - 4, &v, 4);
	/* Not RAM: nothing copied, either way. */
	r = 0x55555555;
	assert_int_equal(dma_read(&fm.gm, RAM - 2, &r, 4), -1);
	assert_int_equal(dma_read_relaxed(&fm.gm, RAM, &r, 1), -1);
	assert_int_equal(r, 0x55555555);
	assert_int_equal(dma_write(&fm.gm, UINT64_MAX - 1, &v, 4), -1); /* wraps */
	assert_int_equal(dma_write_relaxed(&fm.gm, RAM - 2, &v, 4), -1);
	assert_memory_equal(fm.ram + RAM - 4, &v, 4); /* untouched */
	/* Zero length at the end of RAM is in range. */
	assert_int_equal(dma_read(&fm.gm, RAM, &r, 0), 0);
	fake_mem_free(&fm);
}

/* Buffers of 3, 0, 5 and 4 bytes: 12 in all, an empty one in between. */
struct chain {
	uint8_t a[3], b[5], c[4];
	struct iovec sg[4];
};

static void chain_init(struct chain *ch)
{
	memset(ch, 0xee, sizeof(*ch));
	ch->sg[0] = (struct iovec){ch->a, 3};
	ch->sg[1] = (struct iovec){NULL, 0};
	ch->sg[2] = (struct iovec){ch->b, 5};
	ch->sg[3] = (struct iovec){ch->c, 4};
}

static const uint8_t src[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void test_sg_across_segments(void **state)
{
	(void)state;
	struct chain ch;
	uint8_t out[12];

	chain_init(&ch);
	/* Byte 2 of the chain is a[2]; 10 of 12 bytes fit from there. */
	assert_int_equal(dma_sg_write(ch.sg, 4, 2, src, 12), 10);
	assert_int_equal(ch.a[1], 0xee);
	assert_int_equal(ch.a[2], 0);
	assert_int_equal(ch.b[0], 1);
	assert_int_equal(ch.b[4], 5);
	assert_int_equal(ch.c[0], 6);
	assert_int_equal(ch.c[3], 9);
	assert_int_equal(dma_sg_read(ch.sg, 4, 3, out, 12), 9);
	assert_memory_equal(out, src + 1, 9);
	/* Exactly one segment boundary inside a short copy. */
	memset(out, 0, sizeof(out));
	assert_int_equal(dma_sg_read(ch.sg, 4, 7, out, 2), 2);
	assert_int_equal(out[0], 5);
	assert_int_equal(out[1], 6);
}

static void test_sg_bounds(void **state)
{
	(void)state;
	struct chain ch;
	uint8_t out[4] = {0x55, 0x55, 0x55, 0x55};

	chain_init(&ch);
	/* At and past the end: nothing is copied. */
	assert_int_equal(dma_sg_read(ch.sg, 4, 12, out, 4), 0);
	assert_int_equal(dma_sg_write(ch.sg, 4, 13, src, 4), 0);
	assert_int_equal(dma_sg_read_relaxed(ch.sg, 4, SIZE_MAX, out, 4), 0);
	assert_int_equal(dma_sg_write_relaxed(ch.sg, 4, 100, src, 4), 0);
	assert_int_equal(out[0], 0x55);
	/* Zero length, or no buffers at all. */
	assert_int_equal(dma_sg_write(ch.sg, 4, 0, src, 0), 0);
	assert_int_equal(dma_sg_read_relaxed(ch.sg, 4, 5, out, 0), 0);
	assert_int_equal(dma_sg_read(NULL, 0, 0, out, 4), 0);
	assert_int_equal(out[0], 0x55);
	for (size_t i = 0; i < sizeof(ch.a); i++)
		assert_int_equal(ch.a[i], 0xee);
	/* The last byte only (the virtio-blk status byte). */
	assert_int_equal(dma_sg_write(ch.sg, 4, 11, src + 7, 4), 1);
	assert_int_equal(ch.c[3], 7);
	assert_int_equal(ch.c[2], 0xee);
}

static void test_sg_relaxed_same_bytes(void **state)
{
	(void)state;
	struct chain x, y;
	uint8_t rx[12], ry[12];

	for (size_t off = 0; off <= 12; off++) {
		for (size_t len = 0; len <= 12; len++) {
			chain_init(&x);
			chain_init(&y);
			size_t wx = dma_sg_write(x.sg, 4, off, src, len);
			assert_int_equal(dma_sg_write_relaxed(y.sg, 4, off, src, len), wx);
			assert_memory_equal(x.a, y.a, sizeof(x.a));
			assert_memory_equal(x.b, y.b, sizeof(x.b));
			assert_memory_equal(x.c, y.c, sizeof(x.c));
			memset(rx, 0, sizeof(rx));
			memset(ry, 0, sizeof(ry));
			size_t r = dma_sg_read(x.sg, 4, off, rx, len);
			assert_int_equal(dma_sg_read_relaxed(x.sg, 4, off, ry, len), r);
			assert_int_equal(r, wx);
			assert_memory_equal(rx, ry, sizeof(rx));
			assert_memory_equal(rx, src, r); /* reads back what was written */
		}
	}
}

static void test_sg_slice(void **state)
{
	(void)state;
	struct chain ch;
	struct iovec out[4];

	chain_init(&ch);
	/* The rest after 4 bytes: b from its second byte, then c. */
	assert_int_equal(dma_sg_slice(ch.sg, 4, 4, SIZE_MAX, out, 4), 2);
	assert_ptr_equal(out[0].iov_base, ch.b + 1);
	assert_int_equal(out[0].iov_len, 4);
	assert_ptr_equal(out[1].iov_base, ch.c);
	assert_int_equal(out[1].iov_len, 4);
	/* A bounded range across the empty buffer; no empty entries out. */
	assert_int_equal(dma_sg_slice(ch.sg, 4, 1, 4, out, 4), 2);
	assert_ptr_equal(out[0].iov_base, ch.a + 1);
	assert_int_equal(out[0].iov_len, 2);
	assert_ptr_equal(out[1].iov_base, ch.b);
	assert_int_equal(out[1].iov_len, 2);
	/* One byte, as virtio-blk takes its status byte. */
	assert_int_equal(dma_sg_slice(ch.sg, 4, 11, 1, out, 1), 1);
	assert_ptr_equal(out[0].iov_base, ch.c + 3);
	assert_int_equal(out[0].iov_len, 1);
	assert_int_equal(dma_sg_slice(ch.sg, 4, 0, SIZE_MAX, out, 2), -1); /* 3 pieces */
	assert_int_equal(dma_sg_slice(ch.sg, 4, 12, SIZE_MAX, out, 4), 0);
	assert_int_equal(dma_sg_slice(ch.sg, 4, 0, 0, out, 0), 0);
	/* Writes through a slice land where the chain's offsets say. */
	assert_int_equal(dma_sg_slice(ch.sg, 4, 2, 8, out, 4), 3);
	assert_int_equal(dma_sg_write(out, 3, 0, src, 12), 8);
	assert_int_equal(ch.a[2], 0);
	assert_int_equal(ch.c[1], 7);
	assert_int_equal(ch.c[2], 0xee);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpa_read_write), cmocka_unit_test(test_sg_across_segments),
	    cmocka_unit_test(test_sg_bounds),	   cmocka_unit_test(test_sg_relaxed_same_bytes),
	    cmocka_unit_test(test_sg_slice),
	};
	return cmocka_run_group_tests_name("dma", tests, NULL, NULL);
}
