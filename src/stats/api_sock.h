/* The control socket (--api-sock PATH): a unix stream socket; each
 * connection gets one snapshot of the exit accounting as "name<TAB>value"
 * lines and is closed. `skiff stat PATH` polls it. */
#ifndef SKIFF_API_SOCK_H
#define SKIFF_API_SOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "stats/exit_stats.h"

struct api_sock {
	int fd;
	pthread_t thread;
	bool running;
	const char *path;
	uid_t owner; /* skiff's effective uid: it and root may connect */
	struct exit_stats_src src;
	uint64_t start_ns;
};

/* Creates and binds the socket (before the seccomp filter), mode 0600
 * whatever the umask; replaces a stale socket at path, refuses any other
 * file there. -1 with a reason. */
int api_sock_open(struct api_sock *a, const char *path, char *err, size_t errlen);
/* Whether a client of uid peer may read the stats: the owner and root. */
bool api_sock_peer_ok(uid_t peer, uid_t owner);
/* Accepts one connection and answers it if the peer's uid passes
 * (SO_PEERCRED), else just closes it. 0, or -1 once the socket is shut
 * down or gone. */
int api_sock_accept_one(struct api_sock *a);
/* Serves snapshots from a thread, until api_sock_stop. */
int api_sock_start(struct api_sock *a);
/* Ends the thread and waits for it: afterwards nothing reads the VM. */
void api_sock_stop(struct api_sock *a);
/* Closes the socket and removes its file. */
void api_sock_close(struct api_sock *a);

#endif
