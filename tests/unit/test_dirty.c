// SPDX-License-Identifier: Apache-2.0
/* The VMM's dirty log (core/dirty.c): marks by host address, taken and
 * cleared at once, KVM's per-slot bitmaps merged at their place, runs of
 * dirty pages; and that the write helpers mark what they wrote (dma.c,
 * the virtqueue's used ring), after the write. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dirty.h"
#include "core/dma.h"
#include "fake_mem.h"
#include "virtio/virtq.h"
#include "vmm/vmm_snap_mem.h"

#define PG  DIRTY_PAGE_SIZE
#define RAM (64 * PG + 3 * PG) /* not a whole word of pages */

static bool bit(const uint64_t *b, uint64_t i)
{
	return b[i / 64] >> (i % 64) & 1;
}

static void test_mark_take(void **state)
{
	(void)state;
	static uint8_t buf[RAM + 2 * PG];
	uint8_t *ram = buf + PG; /* bytes either side exist but are not RAM */
	struct dirty_log d;
	uint64_t out[2] = {0, 0};
	assert_int_equal(dirty_log_init(&d, ram, RAM, false), 0);
	assert_int_equal(d.pages, 67);
	dirty_log_mark(&d, ram + PG - 1, 2);   /* straddles pages 0 and 1 */
	dirty_log_mark(&d, ram + 66 * PG, PG); /* the last page */
	dirty_log_mark(&d, ram + 5 * PG, 0);   /* nothing written */
	dirty_log_mark(&d, ram - 1, 1);	       /* not guest RAM */
	dirty_log_mark(&d, ram + RAM, 8);
	dirty_log_mark(&d, ram + 65 * PG, SIZE_MAX); /* clipped at the end */
	dirty_log_take(&d, out);
	assert_true(bit(out, 0) && bit(out, 1) && bit(out, 65) && bit(out, 66));
	assert_int_equal(dirty_bits_count(out, 67), 4);
	/* Taken means cleared: a second take adds nothing. */
	uint64_t again[2] = {0, 0};
	dirty_log_take(&d, again);
	assert_int_equal(dirty_bits_count(again, 67), 0);
	dirty_log_free(&d);
}

static void test_init_all(void **state)
{
	(void)state;
	static uint8_t ram[RAM];
	struct dirty_log d;
	uint64_t out[2] = {0, 0};
	assert_int_equal(dirty_log_init(&d, ram, RAM, true), 0);
	dirty_log_take(&d, out);
	/* Every page, and no bit past the last one (a Diff would write
	 * beyond the memory file). */
	assert_int_equal(dirty_bits_count(out, 128), 67);
	dirty_log_free(&d);
}

static void test_bits_or_at_offset(void **state)
{
	(void)state;
	uint64_t dst[4] = {0}, src[2] = {0x5, 1ull << 63 | 1};
	dirty_bits_or(dst, 128, src, 128); /* word-aligned: slot 1 at 3 GiB */
	assert_true(bit(dst, 128) && bit(dst, 130) && bit(dst, 192) && bit(dst, 255));
	assert_int_equal(dirty_bits_count(dst, 256), 4);
	memset(dst, 0, sizeof(dst));
	dirty_bits_or(dst, 3, src, 66); /* unaligned: bit by bit, 66 bits only */
	assert_true(bit(dst, 3) && bit(dst, 5) && bit(dst, 67));
	assert_false(bit(dst, 66)); /* src bit 63 is set: 3 + 63 = 66 */
}

static void test_next_run(void **state)
{
	(void)state;
	uint64_t b[3] = {0x6, 0, 1ull << 63 | 1ull << 62};
	uint64_t pos = 0;
	assert_int_equal(dirty_bits_next_run(b, 192, &pos), 2);
	assert_int_equal(pos, 1);
	pos = 3;
	assert_int_equal(dirty_bits_next_run(b, 192, &pos), 2);
	assert_int_equal(pos, 190);
	pos = 192;
	assert_int_equal(dirty_bits_next_run(b, 192, &pos), 0);
	pos = 3;
	assert_int_equal(dirty_bits_next_run(b, 191, &pos), 1); /* cut at nbits */
}

static void test_dma_marks(void **state)
{
	(void)state;
	struct fake_mem fm;
	struct dirty_log d;
	uint64_t out[2] = {0, 0};
	uint32_t v = 1;
	assert_int_equal(fake_mem_init(&fm, RAM), 0);
	assert_int_equal(dirty_log_init(&d, fm.ram, RAM, false), 0);
	dirty_track_set(&d);
	assert_int_equal(dma_write(&fm.gm, 3 * PG, &v, 4), 0);
	assert_int_equal(dma_read(&fm.gm, 4 * PG, &v, 4), 0); /* a read marks nothing */
	struct iovec sg[2] = {{fm.ram + 7 * PG, 8}, {fm.ram + 9 * PG, 8}};
	dma_sg_write(sg, 2, 4, "abcdefgh", 8); /* 4 bytes into each */
	dirty_mark_iov(sg, 2, 3);	       /* a readv of 3 bytes: the first only */
	dirty_track_set(NULL);
	assert_int_equal(dma_write(&fm.gm, 20 * PG, &v, 4), 0); /* not tracked */
	dirty_log_take(&d, out);
	assert_true(bit(out, 3) && bit(out, 7) && bit(out, 9));
	assert_int_equal(dirty_bits_count(out, 67), 3);
	dirty_log_free(&d);
	fake_mem_free(&fm);
}

static void test_used_ring_marked(void **state)
{
	(void)state;
	struct fake_mem fm;
	struct dirty_log d;
	struct virtq vq;
	uint64_t out[2] = {0, 0};
	assert_int_equal(fake_mem_init(&fm, RAM), 0);
	assert_int_equal(dirty_log_init(&d, fm.ram, RAM, false), 0);
	virtq_init(&vq, "t", 16, NULL, NULL);
	assert_int_equal(virtq_set_size(&vq, 16), 0);
	assert_int_equal(virtq_set_addr(&vq, VIRTQ_RING_DESC, 0), 0);
	assert_int_equal(virtq_set_addr(&vq, VIRTQ_RING_AVAIL, PG), 0);
	assert_int_equal(virtq_set_addr(&vq, VIRTQ_RING_USED, 10 * PG), 0);
	assert_int_equal(virtq_activate(&vq, &fm.gm), 0);
	/* One chain (descriptor 0, device-writable) made available. */
	struct virtq_desc *desc = fake_mem_at(&fm, 0);
	desc[0] = (struct virtq_desc){.addr = 30 * PG, .len = 64, .flags = VIRTQ_DESC_F_WRITE};
	uint16_t *avail = fake_mem_at(&fm, PG);
	avail[2] = 0;
	avail[1] = 1;
	static struct virtq_elem e;
	assert_int_equal(virtq_pop(&vq, &fm.gm, &e), 1);
	dirty_track_set(&d);
	assert_int_equal(virtq_push(&vq, &fm.gm, e.head, 0), 0);
	dirty_track_set(NULL);
	dirty_log_take(&d, out);
	assert_true(bit(out, 10));
	assert_int_equal(dirty_bits_count(out, 67), 1);
	dirty_log_free(&d);
	fake_mem_free(&fm);
}

/* A Diff's memory file: the VM's size, the dirty pages at their offsets,
 * zeros (holes) elsewhere, nothing left of what the file held before. */
static void test_diff_file(void **state)
{
	(void)state;
	static uint8_t ram[RAM];
	char path[] = "/tmp/skiff-diff-XXXXXX", err[200];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	memset(ram, 0xaa, sizeof(ram));
	static uint8_t old[RAM + 5 * PG];
	memset(old, 0x55, sizeof(old));
	assert_int_equal(write(fd, old, sizeof(old)), (ssize_t)sizeof(old));
	uint64_t bits[2] = {1ull << 2 | 1ull << 3, 1ull << 2}, n = 0; /* 2, 3, 66 */
	assert_int_equal(snap_mem_write_diff(fd, path, ram, RAM, bits, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3 * PG);
	assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)RAM);
	static uint8_t back[RAM];
	assert_int_equal(pread(fd, back, RAM, 0), (ssize_t)RAM);
	for (uint64_t pg = 0; pg < RAM / PG; pg++) {
		bool dirty = pg == 2 || pg == 3 || pg == 66;
		uint8_t want = dirty ? 0xaa : 0;
		for (uint64_t i = 0; i < PG; i += 512)
			if (back[pg * PG + i] != want)
				fail_msg("page %llu byte %llu: %#x", (unsigned long long)pg,
					 (unsigned long long)i, back[pg * PG + i]);
	}
	close(fd);
	unlink(path);
	/* A file that cannot be written is one line naming it. */
	fd = open("/dev/null", O_RDONLY);
	assert_int_equal(snap_mem_write_diff(fd, "/dev/null", ram, RAM, bits, &n, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "cannot write /dev/null"));
	close(fd);
}

/* Pages that are not zero, whatever byte of them it is; a partial last
 * page counts only its own bytes. */
static void test_nonzero_bits(void **state)
{
	(void)state;
	static uint8_t ram[RAM + 100];
	uint64_t bits[2] = {~0ull, ~0ull};
	memset(ram, 0, sizeof(ram));
	ram[1 * PG] = 1;	  /* first byte */
	ram[5 * PG + PG - 1] = 7; /* last byte */
	ram[64 * PG + 2049] = 9;  /* the second word */
	dirty_bits_nonzero(ram, sizeof(ram), bits);
	assert_int_equal(bits[0], 1ull << 1 | 1ull << 5);
	assert_int_equal(bits[1], 1ull << 0);
	ram[RAM + 99] = 1; /* the partial 68th page */
	dirty_bits_nonzero(ram, sizeof(ram), bits);
	assert_int_equal(bits[1], 1ull << 0 | 1ull << 3);
}

/* A Full memory file: every byte as in RAM, the zero pages holes (it takes
 * the disk of its non-zero pages only), nothing left of an older file. */
static void test_full_file_sparse(void **state)
{
	(void)state;
	static uint8_t ram[RAM];
	char path[] = "/tmp/skiff-full-XXXXXX", err[200];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static uint8_t old[RAM];
	memset(old, 0x55, sizeof(old));
	assert_int_equal(write(fd, old, sizeof(old)), (ssize_t)sizeof(old));
	memset(ram, 0, sizeof(ram));
	memset(ram + 3 * PG, 0xaa, PG);
	ram[66 * PG + 17] = 0xbb;
	uint64_t n = 0;
	assert_int_equal(snap_mem_write_full(fd, path, ram, RAM, -1, -1, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2 * PG);
	assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)RAM);
	static uint8_t back[RAM];
	assert_int_equal(pread(fd, back, RAM, 0), (ssize_t)RAM);
	assert_memory_equal(back, ram, RAM);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	if (st.st_blocks * 512 >= (off_t)RAM) /* (holes: the file system's choice) */
		fail_msg("%lld bytes on disk for 2 pages of data", (long long)st.st_blocks * 512);
	close(fd);
	unlink(path);
}

/* RAM mapped privately from a sparse memory file (a restored guest):
 * the file-aware scan finds what reading every page finds, and leaves
 * the holes nobody wrote untouched (not faulted in from the file). */
#define FPG 256u
static bool page_present(int pm, const uint8_t *p)
{
	uint64_t e = 0;
	assert_int_equal(pread(pm, &e, sizeof(e), (off_t)((uintptr_t)p / PG * sizeof(e))),
			 (ssize_t)sizeof(e));
	return e >> 63;
}

static void test_nonzero_file(void **state)
{
	(void)state;
	char path[] = "/tmp/skiff-memfile-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, (off_t)FPG * PG), 0);
	static uint8_t page[PG];
	memset(page, 0x5a, PG);
	for (int i = 10; i <= 12; i++) /* data */
		assert_int_equal(pwrite(fd, page, PG, (off_t)i * PG), (ssize_t)PG);
	memset(page, 0, PG);
	assert_int_equal(pwrite(fd, page, PG, 20 * PG), (ssize_t)PG); /* data, zero */
	page[PG - 1] = 1;
	assert_int_equal(pwrite(fd, page, PG, (off_t)(FPG - 1) * PG), (ssize_t)PG);
	uint8_t *ram = mmap(NULL, (size_t)FPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	assert_true(ram != MAP_FAILED);
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	assert_true(pm >= 0);
	ram[50 * PG + 7] = 3;		    /* a hole written */
	ram[60 * PG] = 0;		    /* a hole written with zero */
	memset(ram + 11 * PG, 0, PG);	    /* data written back to zero */
	assert_int_equal(ram[100 * PG], 0); /* a hole read */
	uint64_t bits[FPG / 64], all[FPG / 64];
	dirty_bits_nonzero_file(ram, (uint64_t)FPG * PG, fd, pm, bits);
	for (unsigned int i = 150; i < 200; i++)
		if (page_present(pm, ram + (size_t)i * PG))
			fail_msg("hole page %u faulted in by the scan", i);
	assert_int_equal(bits[0], 1ull << 10 | 1ull << 12 | 1ull << 50);
	assert_int_equal(bits[1] | bits[2], 0);
	assert_int_equal(bits[3], 1ull << 63);
	dirty_bits_nonzero(ram, (uint64_t)FPG * PG, all);
	assert_memory_equal(bits, all, sizeof(bits));
	/* Without pagemap (or a file): every page read, the same answer. */
	dirty_bits_nonzero_file(ram, (uint64_t)FPG * PG, fd, -1, bits);
	assert_memory_equal(bits, all, sizeof(bits));
	munmap(ram, (size_t)FPG * PG);
	close(pm);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mark_take),	      cmocka_unit_test(test_init_all),
	    cmocka_unit_test(test_bits_or_at_offset), cmocka_unit_test(test_next_run),
	    cmocka_unit_test(test_dma_marks),	      cmocka_unit_test(test_used_ring_marked),
	    cmocka_unit_test(test_diff_file),	      cmocka_unit_test(test_nonzero_bits),
	    cmocka_unit_test(test_full_file_sparse),  cmocka_unit_test(test_nonzero_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
