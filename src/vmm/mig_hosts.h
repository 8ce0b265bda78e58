// SPDX-License-Identifier: Apache-2.0
/* The host name of a tcp: migration URL (Cloud Hypervisor's tcp:HOST:PORT),
 * looked up in the hosts file alone (hosts(5), /etc/hosts), by this
 * parser: the source sends from the API's controller, under seccomp, which
 * may open an existing file and read it, and nothing else a lookup of
 * glibc's makes (NSS's configuration and modules, a DNS query's datagram
 * socket, its answers parsed in this process; a filtered call kills the
 * VMM). So a name costs no system call the filter did not already allow,
 * reads no byte from the network, and is bounded: one regular file of at
 * most MIG_HOSTS_MAX bytes, no wait. docs/MIGRATION.md. */
#ifndef SKIFF_MIG_HOSTS_H
#define SKIFF_MIG_HOSTS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#define MIG_HOSTS_MAX	    (1u << 20)
#define MIG_HOSTS_ADDRS_MAX 8

/* The file names are looked up in: "/etc/hosts" (a test points it
 * elsewhere). */
extern const char *mig_hosts_path;

struct mig_host_addr {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} a;
};

/* Whether s is a host name (RFC 1123, 952): labels of 1 to 63 letters,
 * digits and hyphens, neither first nor last a hyphen, joined by single
 * dots, 253 bytes at most, the last label not all digits (1.2.3 is a bad
 * address, never a name). */
bool mig_host_name_ok(const char *s);
/* The addresses of name (compared without case) in the hosts file's text
 * (len bytes, no terminator needed), in the file's order, at most max,
 * into out: their count, 0 if none. A line is an address, then names and
 * aliases, '#' to its end a comment; a line that does not parse (an
 * address inet_pton refuses, a scoped fe80::1%eth0) is skipped. */
int mig_hosts_find(const char *text, size_t len, const char *name, struct mig_host_addr *out,
		   int max);
/* The same, the file at path read: the count, 0 if none, or -1 with one
 * line in err (unreadable, a directory, over MIG_HOSTS_MAX bytes: a
 * device that never ends is read that far, no further). */
int mig_hosts_lookup(const char *path, const char *name, struct mig_host_addr *out, int max,
		     char *err, size_t errlen);

#endif
