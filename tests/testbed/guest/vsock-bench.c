// SPDX-License-Identifier: Apache-2.0
/* vsock-io's benchmark modes (bench/bench-vsock.sh): L2 serves, L1
 * measures. Part of the vsock-io binary (vsock-io.c has the rest).
 *
 *   vsock-io serve PORT sink|source|echo      accept on PORT for ever, one
 *                                             connection at a time: read to EOF,
 *                                             write until the peer goes, or echo
 *   vsock-io serve-uds PATH sink|source|echo  the same on a Unix socket that
 *                                             answers CONNECT as skiff does (a
 *                                             local check of the clients)
 *   vsock-io send TARGET PORT SECS            write for SECS s, shut down, wait for
 *                                             the sink's close: "sent N bytes in U us"
 *   vsock-io recv TARGET PORT SECS            read a source for SECS s: "received ..."
 *   vsock-io rr TARGET PORT COUNT SIZE        COUNT round trips of SIZE bytes to an
 *                                             echo (after RR_WARMUP unmeasured ones):
 *                                             "vsock-io: rr COUNT x SIZE bytes", one
 *                                             "rtt_ns N" line each, then "vsock-io: rr
 *                                             COUNT round trips in U us", on stdout
 *
 * TARGET is a CID (AF_VSOCK) or a Unix socket's path (hybrid: CONNECT). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "vsock-io.h"

#define RR_WARMUP 10
#define RR_MAX	  1000000u

enum serve_mode { SINK, SOURCE, ECHO };

/* A decimal argument in [1, max], or exit 2 naming it. */
static unsigned long arg_num(const char *s, unsigned long max, const char *what)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max) {
		fprintf(stderr, "vsock-io: bad %s '%s' (1 to %lu)\n", what, s, max);
		exit(2);
	}
	return v;
}

/* A connected stream to TARGET's PORT: AF_VSOCK to a CID (all digits),
 * else the hybrid Unix socket at the path TARGET, through CONNECT. */
static int dial(const char *target, const char *port)
{
	unsigned long p = arg_num(port, UINT32_MAX, "port");
	int fd;
	if (target[strspn(target, "0123456789")] == 0) {
		struct sockaddr_vm vm = {.svm_family = AF_VSOCK,
					 .svm_cid =
					     (unsigned int)arg_num(target, UINT32_MAX, "CID"),
					 .svm_port = (unsigned int)p};
		fd = socket(AF_VSOCK, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&vm, sizeof(vm)) < 0)
			die("connect");
		return fd;
	}
	struct sockaddr_un un;
	uds_addr(&un, target);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0)
		die("connect");
	handshake(fd, port);
	return fd;
}

/* One connection of a server; its errors end it, not the server. */
static void serve_one(int c, enum serve_mode mode)
{
	ssize_t r;
	for (;;) {
		if (mode == SOURCE) {
			if (write_all(c, io_buf, sizeof(io_buf)) < 0)
				break;
			continue;
		}
		r = read(c, io_buf, sizeof(io_buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (mode == ECHO && write_all(c, io_buf, (size_t)r) < 0))
			break;
	}
	close(c);
}

/* Accepts for ever, one connection at a time; hybrid: answers CONNECT as
 * skiff's muxer does. A source's peer going away is its normal end. */
static void serve_loop(int fd, const struct sockaddr *a, socklen_t len, const char *mode,
		       int hybrid)
{
	static const char *const modes[] = {"sink", "source", "echo"};
	unsigned int m = 0;
	while (m < 3 && strcmp(mode, modes[m]))
		m++;
	if (m == 3) {
		fprintf(stderr, "vsock-io: no server mode '%s' (sink, source, echo)\n", mode);
		exit(2);
	}
	signal(SIGPIPE, SIG_IGN);
	memset(io_buf, 0x5a, sizeof(io_buf));
	if (fd < 0 || bind(fd, a, len) < 0 || listen(fd, 4) < 0)
		die("listen");
	for (;;) {
		char line[64];
		int c = accept(fd, NULL, NULL);
		if (c < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (c < 0)
			die("accept");
		if (hybrid && (!read_line(c, line, sizeof(line)) || strncmp(line, "CONNECT ", 8) ||
			       write_all(c, "OK 1\n", 5) < 0)) {
			close(c);
			continue;
		}
		serve_one(c, (enum serve_mode)m);
	}
}

/* Writes for secs, shuts its side, reads until the sink closes. */
static void bench_send(int fd, unsigned long secs)
{
	uint64_t t0 = now_us(), end = t0 + secs * 1000000u, n = 0;
	memset(io_buf, 0x5a, sizeof(io_buf));
	while (now_us() < end) {
		if (write_all(fd, io_buf, sizeof(io_buf)) < 0)
			die("sending");
		n += sizeof(io_buf);
	}
	if (shutdown(fd, SHUT_WR) < 0)
		die("shutdown");
	for (;;) {
		ssize_t r = read(fd, io_buf, sizeof(io_buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("waiting for the close");
		if (!r)
			break;
	}
	report("sent", n, t0);
}

/* Reads a source for secs; it closing first is a failure. */
static void bench_recv(int fd, unsigned long secs)
{
	uint64_t t0 = now_us(), end = t0 + secs * 1000000u, n = 0;
	while (now_us() < end) {
		ssize_t r = read(fd, io_buf, sizeof(io_buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("receiving");
		if (!r) {
			errno = 0;
			die("the source closed early");
		}
		n += (uint64_t)r;
	}
	report("received", n, t0);
}

/* Reads exactly n bytes into io_buf. */
static void read_full(int fd, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, io_buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r ? errno : 0;
			die("waiting for the echo");
		}
		got += (size_t)r;
	}
}

static void bench_rr(int fd, unsigned long count, unsigned long size)
{
	uint64_t *rtt = calloc(count, sizeof(*rtt)), t0 = 0;
	if (!rtt)
		die("calloc");
	memset(io_buf, 'r', size);
	for (unsigned long i = 0; i < RR_WARMUP + count; i++) {
		if (i == RR_WARMUP)
			t0 = now_us();
		uint64_t a = now_ns();
		if (write_all(fd, io_buf, size) < 0)
			die("sending");
		read_full(fd, size);
		if (i >= RR_WARMUP)
			rtt[i - RR_WARMUP] = now_ns() - a;
	}
	uint64_t us = now_us() - t0;
	printf("vsock-io: rr %lu x %lu bytes\n", count, size);
	for (unsigned long i = 0; i < count; i++)
		printf("rtt_ns %llu\n", (unsigned long long)rtt[i]);
	printf("vsock-io: rr %lu round trips in %llu us\n", count, (unsigned long long)us);
	free(rtt);
}

/* The benchmark's modes; 0 if argv names none of them. */
int bench_main(int argc, char **argv)
{
	const char *mode = argv[1];
	if (!strcmp(mode, "serve") && argc == 4) {
		struct sockaddr_vm vm = {.svm_family = AF_VSOCK,
					 .svm_cid = VMADDR_CID_ANY,
					 .svm_port =
					     (unsigned int)arg_num(argv[2], UINT32_MAX, "port")};
		serve_loop(socket(AF_VSOCK, SOCK_STREAM, 0), (struct sockaddr *)&vm, sizeof(vm),
			   argv[3], 0);
	} else if (!strcmp(mode, "serve-uds") && argc == 4) {
		struct sockaddr_un un;
		uds_addr(&un, argv[2]);
		unlink(argv[2]);
		serve_loop(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&un, sizeof(un),
			   argv[3], 1);
	} else if (!strcmp(mode, "send") && argc == 5) {
		bench_send(dial(argv[2], argv[3]), arg_num(argv[4], 3600, "seconds"));
	} else if (!strcmp(mode, "recv") && argc == 5) {
		bench_recv(dial(argv[2], argv[3]), arg_num(argv[4], 3600, "seconds"));
	} else if (!strcmp(mode, "rr") && argc == 6) {
		unsigned long count = arg_num(argv[4], RR_MAX, "count");
		bench_rr(dial(argv[2], argv[3]), count, arg_num(argv[5], sizeof(io_buf), "size"));
	} else {
		return 0;
	}
	return 1;
}
