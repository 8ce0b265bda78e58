// SPDX-License-Identifier: Apache-2.0
/* The control socket's file (--api-sock PATH): a unix stream socket only
 * its owner can open, and accepted connections only from its owner's uid
 * and root. The HTTP API (src/api/) serves it. */
#ifndef SKIFF_API_SOCK_H
#define SKIFF_API_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct api_sock {
	int fd;
	const char *path;
	uid_t owner; /* skiff's effective uid: it and root may connect */
};

/* Creates and binds the socket (before the seccomp filter), mode 0600
 * whatever the umask; replaces a stale socket at path, refuses any other
 * file there. -1 with a reason. */
int api_sock_open(struct api_sock *a, const char *path, char *err, size_t errlen);
/* Whether a client of uid peer may use the socket: the owner and root. */
bool api_sock_peer_ok(uid_t peer, uid_t owner);
/* Accepts one connection (non-blocking, close-on-exec) whose peer's uid
 * passes (SO_PEERCRED): its fd; -2 if there was none or it was refused
 * (closed); -1 once the socket is shut down or gone. */
int api_sock_accept(struct api_sock *a);
/* Closes the socket and removes its file. */
void api_sock_close(struct api_sock *a);

#endif
