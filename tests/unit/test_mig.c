// SPDX-License-Identifier: Apache-2.0
/* Live migration's stream (vmm/mig_proto.c, vmm/mig_recv.c) as the target
 * reads it: a good stream lands its pages in RAM and its state parsed;
 * each hostile one (truncated, out of order, a length beyond its bound, a
 * page outside RAM, a foreign magic or version, a corrupted state, the
 * source giving up) is one line naming what is wrong, and nothing is read
 * past a buffer (ASan). No KVM: the stream only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/snap.h"
#include "vmm/mig_proto.h"
#include "vmm/mig_recv.h"

#define RAM (16 * MIG_PAGE)

struct stream {
	uint8_t b[4 * RAM];
	size_t len;
};

static void put(struct stream *s, const void *p, size_t n)
{
	assert_true(s->len + n <= sizeof(s->b));
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

static void frame(struct stream *s, uint32_t type, const void *p, uint32_t n)
{
	uint32_t h[2] = {type, n};
	put(s, h, sizeof(h));
	put(s, p, n);
}

static void hello_only(struct stream *s, uint32_t version, uint64_t ram)
{
	struct mig_hello h = {.version = version, .ram = ram};
	memcpy(h.magic, MIG_MAGIC, 8);
	frame(s, MIG_HELLO, &h, sizeof(h));
}

/* CONFIG: an image with one section (the tag), or corrupted. */
static void config(struct stream *s, uint32_t tag, bool corrupt)
{
	struct snap_writer w;
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CLOCK, 0, &tag, sizeof(tag)), 0);
	uint8_t *img = (uint8_t *)snap_writer_image(&w, &len);
	assert_non_null(img);
	if (corrupt)
		img[len - 1] ^= 1;
	frame(s, MIG_CONFIG, img, (uint32_t)len);
	snap_writer_free(&w);
}

/* HELLO and the CONFIG a source sends right after it. */
static void hello(struct stream *s, uint32_t version, uint64_t ram)
{
	hello_only(s, version, ram);
	config(s, 1, false);
}

/* A PAGES frame of the pages list[0, count), page i filled with fill + i. */
static void pages_list(struct stream *s, const uint64_t *list, uint32_t count, uint8_t fill)
{
	static uint8_t buf[sizeof(struct mig_pages) + 4 * (8 + MIG_PAGE)];
	struct mig_pages p = {.count = count};
	assert_true(count <= 4);
	memcpy(buf, &p, sizeof(p));
	memcpy(buf + sizeof(p), list, count * sizeof(uint64_t));
	for (uint32_t i = 0; i < count; i++)
		memset(buf + sizeof(p) + count * 8 + i * MIG_PAGE, fill + i, MIG_PAGE);
	frame(s, MIG_PAGES, buf, (uint32_t)mig_pages_len(count));
}

/* A run: count pages from first, all filled with fill. */
static void pages(struct stream *s, uint64_t first, uint32_t count, uint8_t fill)
{
	static uint8_t buf[sizeof(struct mig_pages) + 4 * (8 + MIG_PAGE)];
	struct mig_pages p = {.count = count};
	assert_true(count <= 4);
	memcpy(buf, &p, sizeof(p));
	for (uint32_t i = 0; i < count; i++)
		((uint64_t *)(buf + sizeof(p)))[i] = first + i;
	memset(buf + sizeof(p) + count * 8, fill, (size_t)count * MIG_PAGE);
	frame(s, MIG_PAGES, buf, (uint32_t)mig_pages_len(count));
}

static void state(struct stream *s, bool corrupt)
{
	struct snap_writer w;
	size_t len;
	uint32_t v = 7;
	snap_writer_init(&w);
	assert_int_equal(snap_put(&w, SNAP_ID_VM_CLOCK, 0, &v, sizeof(v)), 0);
	uint8_t *img = (uint8_t *)snap_writer_image(&w, &len);
	assert_non_null(img);
	if (corrupt)
		img[len - 1] ^= 1;
	frame(s, MIG_STATE, img, (uint32_t)len);
	snap_writer_free(&w);
}

/* The target's reading of s (with hook, or none): 0 or -1, its line in
 * err. */
static int receive_hook(const struct stream *s, struct mig_rx *rx, const struct mig_rx_hook *hook,
			char *err, size_t errlen)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	int sz = (int)sizeof(s->b) * 2;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	assert_int_equal(mig_write_all(sv[0], s->b, s->len, 1000), 0);
	close(sv[0]); /* then end of stream: nothing waits */
	int r = mig_rx_run(rx, sv[1], RAM, hook, err, errlen);
	close(sv[1]);
	return r;
}

static int receive(const struct stream *s, struct mig_rx *rx, char *err, size_t errlen)
{
	return receive_hook(s, rx, NULL, err, errlen);
}

static void expect_refused(const struct stream *s, const char *words)
{
	struct mig_rx rx;
	char err[300];
	assert_int_equal(receive(s, &rx, err, sizeof(err)), -1);
	mig_rx_free(&rx);
	if (!strstr(err, words) || strchr(err, '\n'))
		fail_msg("wanted '%s', got '%s'", words, err);
}

static void test_good_stream(void **state_)
{
	(void)state_;
	static struct stream s;
	struct mig_rx rx;
	char err[300];
	uint64_t round[2] = {0, 3};
	s.len = 0;
	hello(&s, MIG_VERSION, RAM);
	pages(&s, 0, 2, 0xaa);
	frame(&s, MIG_ROUND, round, sizeof(round));
	pages(&s, 15, 1, 0x55); /* the last page */
	pages(&s, 1, 1, 0xbb);	/* a later round's copy wins */
	/* A list out of order, with neighbours (9, 10) and gaps: each page
	 * lands at its own number. */
	const uint64_t list[4] = {10, 4, 9, 12};
	pages_list(&s, list, 4, 0x10);
	state(&s, false);
	assert_int_equal(receive(&s, &rx, err, sizeof(err)), 0);
	assert_int_equal(rx.ram_size, RAM);
	assert_int_equal(rx.pages_in, 8);
	assert_int_equal(rx.ram[0], 0xaa);
	assert_int_equal(rx.ram[MIG_PAGE], 0xbb);
	assert_int_equal(rx.ram[2 * MIG_PAGE], 0);
	assert_int_equal(rx.ram[RAM - 1], 0x55);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rx.ram[list[i] * MIG_PAGE], 0x10 + i);
		assert_int_equal(rx.ram[list[i] * MIG_PAGE + MIG_PAGE - 1], 0x10 + i);
	}
	assert_int_equal(rx.ram[11 * MIG_PAGE], 0);
	assert_non_null(snap_find(&rx.img, SNAP_ID_VM_CLOCK, 0));
	mig_rx_free(&rx);
}

static void test_hello_refused(void **state_)
{
	(void)state_;
	static struct stream s;
	s.len = 0;
	expect_refused(&s, "the peer closed it");
	hello(&s, 1, RAM);
	expect_refused(&s, "migration stream version 1, this skiff speaks version 3");
	s.len = 0;
	hello(&s, MIG_VERSION, RAM + MIG_PAGE); /* beyond max_ram */
	expect_refused(&s, "HELLO asks for");
	s.len = 0;
	hello(&s, MIG_VERSION, RAM - 1); /* not whole pages */
	expect_refused(&s, "HELLO asks for");
	s.len = 0;
	state(&s, false); /* no HELLO first */
	expect_refused(&s, "STATE frame where HELLO was due");
	s.len = 0;
	frame(&s, MIG_HELLO, "SKIFFSNPxxxxxxxxxxxxxxxxxxxxxxxx", 32);
	expect_refused(&s, "not a skiff migration");
}

static void test_frames_refused(void **state_)
{
	(void)state_;
	static struct stream s;
	s.len = 0;
	hello(&s, MIG_VERSION, RAM);
	size_t base = s.len;
	expect_refused(&s, "the peer closed it"); /* HELLO, then nothing */
	/* A type nobody knows. */
	frame(&s, 99, "", 0);
	expect_refused(&s, "unknown frame type 99");
	/* A page beyond RAM, and a run that starts inside and ends outside. */
	s.len = base;
	pages(&s, 16, 1, 1);
	expect_refused(&s, "not inside 16 pages");
	s.len = base;
	pages(&s, 14, 3, 1);
	expect_refused(&s, "not inside 16 pages");
	/* A count that is not what the length carries. */
	s.len = base;
	pages(&s, 0, 2, 1);
	((struct mig_pages *)(s.b + base + 8))->count = 3;
	expect_refused(&s, "PAGES of 3 pages in");
	/* A length beyond the type's bound: refused before any of it is read. */
	s.len = base;
	uint32_t h[2] = {MIG_PAGES, 0xffffffffu};
	put(&s, h, sizeof(h));
	expect_refused(&s, "PAGES frame of 4294967295 bytes");
	s.len = base;
	h[0] = MIG_STATE;
	put(&s, h, sizeof(h));
	expect_refused(&s, "STATE frame of 4294967295 bytes");
	/* Cut short inside a PAGES payload. */
	s.len = base;
	pages(&s, 0, 2, 1);
	s.len -= 100;
	expect_refused(&s, "PAGES frame cut short");
	/* A frame of the other side's, a corrupted state, a state cut short. */
	s.len = base;
	frame(&s, MIG_READY, "", 0);
	expect_refused(&s, "READY frame before the state");
	s.len = base;
	state(&s, true);
	expect_refused(&s, "corrupted");
	s.len = base;
	state(&s, false);
	s.len -= 1;
	expect_refused(&s, "STATE frame cut short");
	/* CONFIG comes right after HELLO, once, whole. */
	s.len = 0;
	hello_only(&s, MIG_VERSION, RAM);
	pages(&s, 0, 1, 1);
	expect_refused(&s, "PAGES frame where CONFIG was due");
	s.len = 0;
	hello_only(&s, MIG_VERSION, RAM);
	state(&s, false);
	expect_refused(&s, "STATE frame where CONFIG was due");
	s.len = 0;
	hello_only(&s, MIG_VERSION, RAM);
	config(&s, 1, true);
	expect_refused(&s, "corrupted");
	s.len = 0;
	hello(&s, MIG_VERSION, RAM); /* the good prefix back */
	assert_int_equal(s.len, base);
	config(&s, 2, false);
	expect_refused(&s, "a second CONFIG frame");
	s.len = base;
	pages(&s, 0, 1, 1);
	config(&s, 2, false);
	expect_refused(&s, "a second CONFIG frame");
	s.len = base;
	h[0] = MIG_CONFIG;
	h[1] = MIG_CONFIG_MAX + 1;
	put(&s, h, sizeof(h));
	expect_refused(&s, "CONFIG frame of 1048577 bytes");
	/* The source gives up: its line, one line (also where CONFIG was
	 * due). */
	s.len = 0;
	hello_only(&s, MIG_VERSION, RAM);
	frame(&s, MIG_ERROR, "source: no list", 15);
	expect_refused(&s, "the migration's peer gave up: source: no list");
	s.len = 0;
	hello(&s, MIG_VERSION, RAM);
	frame(&s, MIG_ERROR, "source: no room\nsecond line", 27);
	expect_refused(&s, "the migration's peer gave up: source: no room");
}

static void test_urls(void **state_)
{
	(void)state_;
	char err[300];
	static const char *const bad[] = {"",
					  "unix:",
					  "tcp:",
					  "tcp:1.2.3.4",
					  "tcp:1.2.3.4:0",
					  "tcp:1.2.3.4:65536",
					  "tcp:host_example:80", /* a name, as hosts(5) has none */
					  "tcp:1.2.3:80",
					  "tcp:1.2.3.4: 80",
					  "tcp:[::1:80",
					  "udp:1.2.3.4:5"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mig_connect(bad[i], err, sizeof(err)), -1);
		if (!strstr(err, "invalid migration URL"))
			fail_msg("%s: got '%s'", bad[i], err);
	}
	/* Nobody listens: one line, no wait. */
	assert_int_equal(mig_connect("unix:/nonexistent/skiff-mig", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot connect to unix:/nonexistent/skiff-mig"));
	/* A listener nobody comes to gives up in its time. */
	char url[80];
	snprintf(url, sizeof(url), "unix:/tmp/skiff-mig-test-%d", getpid());
	assert_int_equal(mig_listen_accept(url, 10, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no migration came to"));
	assert_int_equal(access(url + 5, F_OK), -1); /* its socket file gone */
}

/* mig_writev_all / mig_readv_all across short transfers: a 1 MiB frame
 * through a socket whose buffers hold a few KiB, cut into entries
 * (some empty) that differ on each side, arrives whole and in order;
 * a peer gone mid-frame is -1 (EPIPE), not a hang. */
#define IOV_LEN (1u << 20)
struct iov_job {
	int fd;
	const uint8_t *src;
	int r;
};

static void *iov_writer(void *p)
{
	struct iov_job *j = p;
	size_t cut[] = {0, 1, 4095, 0, 4097, 65536, 3, IOV_LEN - 1 - 4095 - 4097 - 65536 - 3};
	struct iovec iov[8];
	size_t off = 0;
	for (int i = 0; i < 8; i++) {
		iov[i] = (struct iovec){(void *)(j->src + off), cut[i]};
		off += cut[i];
	}
	j->r = mig_writev_all(j->fd, iov, 8, 10000);
	return NULL;
}

static void test_iov_short_transfers(void **state_)
{
	(void)state_;
	int sv[2], small = 4096;
	uint8_t *src = malloc(IOV_LEN), *dst = calloc(1, IOV_LEN);
	assert_non_null(src);
	assert_non_null(dst);
	for (size_t i = 0; i < IOV_LEN; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	struct iov_job j = {sv[0], src, -2};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, iov_writer, &j), 0);
	struct iovec in[4] = {
	    {dst, 7}, {dst + 7, 0}, {dst + 7, 300000}, {dst + 300007, IOV_LEN - 300007}};
	assert_int_equal(mig_readv_all(sv[1], in, 4, 10000), 0);
	pthread_join(t, NULL);
	assert_int_equal(j.r, 0);
	assert_memory_equal(src, dst, IOV_LEN);
	/* The writer leaves after half: the reader's -1 says EPIPE. */
	assert_int_equal(write(sv[0], src, 1000), 1000);
	close(sv[0]);
	struct iovec rest = {dst, 2000};
	assert_int_equal(mig_readv_all(sv[1], &rest, 1, 10000), -1);
	assert_int_equal(errno, EPIPE);
	close(sv[1]);
	free(src);
	free(dst);
}

/* The hook at HELLO gets the RAM before any page (the target makes its
 * VM over it then): the pages land in it, and it is the hook's to free
 * (mig_rx_free leaves it mapped). A hook that fails ends the stream
 * there, with its line, and the RAM is the hook's still. */
struct ram_seen {
	uint8_t *ram;
	uint64_t size;
	int calls, fail;
	int config_calls, config_fail; /* the config hook's */
	uint32_t config_tag;
};

/* CONFIG's hook: after HELLO's, before any page, with the image parsed. */
static int config_hook(void *opaque, const struct snap_image *img, char *err, size_t errlen)
{
	struct ram_seen *s = opaque;
	s->config_calls++;
	if (s->calls != 1)
		return snprintf(err, errlen, "CONFIG before HELLO's hook"), -1;
	for (uint64_t i = 0; i < s->size; i++)
		if (s->ram[i])
			return snprintf(err, errlen, "a page before CONFIG"), -1;
	if (snap_get(img, SNAP_ID_VM_CLOCK, 0, &s->config_tag, sizeof(s->config_tag), err, errlen) <
	    0)
		return -1;
	if (s->config_fail)
		return snprintf(err, errlen, "device list: no"), -1;
	return 0;
}

static int ram_hook(void *opaque, uint8_t *ram, uint64_t size, char *err, size_t errlen)
{
	struct ram_seen *s = opaque;
	s->ram = ram;
	s->size = size;
	s->calls++;
	for (uint64_t i = 0; i < size; i++)
		if (ram[i])
			return snprintf(err, errlen, "RAM not zero at HELLO"), -1;
	if (s->fail)
		return snprintf(err, errlen, "KVM_CREATE_VM: no"), -1;
	return 0;
}

static void test_hello_hook(void **state_)
{
	(void)state_;
	static struct stream s;
	struct mig_rx rx;
	char err[300];
	s.len = 0;
	hello(&s, MIG_VERSION, RAM);
	pages(&s, 3, 2, 0x77);
	state(&s, false);
	struct ram_seen seen = {0};
	struct mig_rx_hook hook = {.ram = ram_hook, .config = config_hook, .opaque = &seen};
	assert_int_equal(receive_hook(&s, &rx, &hook, err, sizeof(err)), 0);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.config_calls, 1);
	assert_int_equal(seen.config_tag, 1);
	assert_ptr_equal(seen.ram, rx.ram);
	assert_int_equal(seen.size, RAM);
	assert_int_equal(seen.ram[3 * MIG_PAGE], 0x77);
	mig_rx_free(&rx);
	/* still mapped: the hook's */
	assert_int_equal(seen.ram[4 * MIG_PAGE + MIG_PAGE - 1], 0x77);
	assert_int_equal(munmap(seen.ram, RAM), 0);

	struct ram_seen bad = {.fail = 1};
	hook.opaque = &bad;
	assert_int_equal(receive_hook(&s, &rx, &hook, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "KVM_CREATE_VM: no"));
	assert_null(rx.ram);
	assert_int_equal(rx.pages_in, 0);
	mig_rx_free(&rx);
	assert_int_equal(munmap(bad.ram, RAM), 0);

	/* A config hook that fails ends the stream before any page. */
	struct ram_seen nolist = {.config_fail = 1};
	hook.opaque = &nolist;
	assert_int_equal(receive_hook(&s, &rx, &hook, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "device list: no"));
	assert_int_equal(nolist.config_calls, 1);
	assert_int_equal(rx.pages_in, 0);
	assert_int_equal(nolist.ram[3 * MIG_PAGE], 0);
	mig_rx_free(&rx);
	assert_int_equal(munmap(nolist.ram, RAM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_stream),		cmocka_unit_test(test_hello_refused),
	    cmocka_unit_test(test_frames_refused),	cmocka_unit_test(test_urls),
	    cmocka_unit_test(test_iov_short_transfers), cmocka_unit_test(test_hello_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
