// SPDX-License-Identifier: Apache-2.0
/* What vsock-io.c and vsock-bench.c (one binary, vsock-io) share. */
#ifndef VSOCK_IO_H
#define VSOCK_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#define VSOCK_IO_BUF (1 << 16)

extern char io_buf[VSOCK_IO_BUF];

/* One line on stderr naming what failed (and errno's reason), exit 1. */
void die(const char *what);
uint64_t now_ns(void);
uint64_t now_us(void);
int write_all(int fd, const char *p, size_t n);
/* "vsock-io: VERB N bytes in U us" on stderr, U since t0 (now_us). */
void report(const char *verb, uint64_t n, uint64_t t0);
size_t read_line(int fd, char *line, size_t size);
/* Firecracker's hybrid "CONNECT port": returns on "OK N", else exit 1. */
void handshake(int fd, const char *port);
void uds_addr(struct sockaddr_un *a, const char *path);
/* The benchmark's modes: 1 when argv named one (and it ran), else 0. */
int bench_main(int argc, char **argv);

#endif
