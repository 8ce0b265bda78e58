// SPDX-License-Identifier: Apache-2.0
/* vsock-io: the testbed's vsock stream ends, in L2 (AF_VSOCK) and in L1
 * (Firecracker's hybrid Unix-socket protocol, as skiff's --vsock speaks it).
 *
 *   vsock-io vsock-listen PORT [READY]  accept one guest stream, copy it to stdout
 *   vsock-io vsock-connect CID PORT     stdin to the stream, then the stream to stdout
 *   vsock-io vsock-hold CID PORT [READY] connect, send nothing, read until the stream
 *                                       ends: exit 0 at the peer's close, 1 (its
 *                                       errno said) if it is reset
 *   vsock-io uds-listen PATH [READY]    the same as vsock-listen on a Unix socket
 *   vsock-io uds-connect PATH PORT      "CONNECT PORT\n", wait for "OK N\n", then as
 *                                       vsock-connect
 *
 * READY is printed on stderr once the socket listens (a marker the other
 * side waits for). A connecting end writes all of stdin, shuts its sending
 * side, and reads until the peer closes: its time is the whole round, so
 * bytes / time is the throughput the receiver saw. On stderr at the end:
 * "vsock-io: sent|received N bytes in U us". Exit status 1, with one line
 * saying why, on any failure: a refused connection, no OK line, a short
 * write. No timeouts of its own: the scenario bounds it with `timeout`.
 *
 * Built with vsock-bench.c: the benchmark's modes (serve, send, recv, rr). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include "vsock-io.h"

char io_buf[VSOCK_IO_BUF];

void die(const char *what)
{
	fprintf(stderr, "vsock-io: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t now_us(void)
{
	return now_ns() / 1000u;
}

int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copies from until EOF into to; the byte count. */
static uint64_t pump(int from, int to, const char *what)
{
	uint64_t total = 0;
	for (;;) {
		ssize_t r = read(from, io_buf, sizeof(io_buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die(what);
		if (!r)
			return total;
		if (write_all(to, io_buf, (size_t)r) < 0)
			die(what);
		total += (uint64_t)r;
	}
}

void report(const char *verb, uint64_t n, uint64_t t0)
{
	fprintf(stderr, "vsock-io: %s %llu bytes in %llu us\n", verb, (unsigned long long)n,
		(unsigned long long)(now_us() - t0));
}

/* Listens (ready printed), accepts one stream, copies it to stdout. */
static void serve(int fd, const struct sockaddr *a, socklen_t len, const char *ready)
{
	if (fd < 0 || bind(fd, a, len) < 0 || listen(fd, 4) < 0)
		die("listen");
	if (ready)
		fprintf(stderr, "%s\n", ready);
	int c = accept(fd, NULL, NULL);
	if (c < 0)
		die("accept");
	uint64_t t0 = now_us();
	uint64_t n = pump(c, 1, "receiving");
	report("received", n, t0);
	close(c);
}

/* stdin to the stream, then the stream to stdout until the peer closes. */
static void stream(int fd)
{
	uint64_t t0 = now_us();
	uint64_t n = pump(0, fd, "sending");
	if (shutdown(fd, SHUT_WR) < 0)
		die("shutdown");
	pump(fd, 1, "receiving");
	report("sent", n, t0);
}

/* A stream held open and idle: only the peer's close or a reset (a
 * TRANSPORT_RESET in the guest, the host's node closed) ends the read. */
static void hold(int fd, const char *ready)
{
	if (ready)
		fprintf(stderr, "%s\n", ready);
	for (;;) {
		ssize_t r = read(fd, io_buf, sizeof(io_buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("holding");
		if (!r) {
			fprintf(stderr, "vsock-io: holding: the peer closed\n");
			return;
		}
	}
}

/* One line (with its newline) into line; its length, 0 at EOF or error. */
size_t read_line(int fd, char *line, size_t size)
{
	size_t n = 0;
	while (n < size - 1) {
		ssize_t r = read(fd, line + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (line[n++] == '\n')
			break;
	}
	line[n] = 0;
	return n;
}

/* The hybrid handshake: "OK <port>\n" or a failure naming what came. */
void handshake(int fd, const char *port)
{
	char line[64];
	snprintf(line, sizeof(line), "CONNECT %s\n", port);
	if (write_all(fd, line, strlen(line)) < 0)
		die("writing CONNECT");
	size_t n = read_line(fd, line, sizeof(line));
	if (strncmp(line, "OK ", 3) || line[n - 1] != '\n') {
		errno = 0;
		fprintf(stderr, "vsock-io: port %s refused: %s\n", port,
			n ? "no OK line" : "closed before OK");
		exit(1);
	}
	fprintf(stderr, "vsock-io: %s", line);
}

void uds_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path)) {
		errno = ENAMETOOLONG;
		die(path);
	}
	strcpy(a->sun_path, path);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct sockaddr_vm vm = {.svm_family = AF_VSOCK};
	struct sockaddr_un un;
	if (argc > 1 && bench_main(argc, argv))
		return 0;
	if (!strcmp(mode, "vsock-listen") && argc >= 3) {
		vm.svm_cid = VMADDR_CID_ANY;
		vm.svm_port = (unsigned int)strtoul(argv[2], NULL, 10);
		serve(socket(AF_VSOCK, SOCK_STREAM, 0), (struct sockaddr *)&vm, sizeof(vm),
		      argc > 3 ? argv[3] : NULL);
	} else if (!strcmp(mode, "vsock-connect") && argc == 4) {
		int fd = socket(AF_VSOCK, SOCK_STREAM, 0);
		vm.svm_cid = (unsigned int)strtoul(argv[2], NULL, 10);
		vm.svm_port = (unsigned int)strtoul(argv[3], NULL, 10);
		if (fd < 0 || connect(fd, (struct sockaddr *)&vm, sizeof(vm)) < 0)
			die("connect");
		stream(fd);
	} else if (!strcmp(mode, "vsock-hold") && argc >= 4) {
		int fd = socket(AF_VSOCK, SOCK_STREAM, 0);
		vm.svm_cid = (unsigned int)strtoul(argv[2], NULL, 10);
		vm.svm_port = (unsigned int)strtoul(argv[3], NULL, 10);
		if (fd < 0 || connect(fd, (struct sockaddr *)&vm, sizeof(vm)) < 0)
			die("connect");
		hold(fd, argc > 4 ? argv[4] : NULL);
	} else if (!strcmp(mode, "uds-listen") && argc >= 3) {
		uds_addr(&un, argv[2]);
		unlink(argv[2]);
		serve(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&un, sizeof(un),
		      argc > 3 ? argv[3] : NULL);
	} else if (!strcmp(mode, "uds-connect") && argc == 4) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		uds_addr(&un, argv[2]);
		if (fd < 0 || connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0)
			die("connect");
		handshake(fd, argv[3]);
		stream(fd);
	} else {
		fprintf(stderr, "usage: vsock-io vsock-listen PORT [READY] | vsock-connect CID PORT"
				" | vsock-hold CID PORT [READY]"
				" | uds-listen PATH [READY] | uds-connect PATH PORT"
				" | serve PORT MODE | serve-uds PATH MODE | send TARGET PORT SECS"
				" | recv TARGET PORT SECS | rr TARGET PORT COUNT SIZE\n");
		return 2;
	}
	return 0;
}
