/* The control socket (--api-sock PATH): a unix stream socket; each
 * connection gets one snapshot of the exit accounting as "name<TAB>value"
 * lines and is closed. `skiff stat PATH` polls it. */
#ifndef SKIFF_API_SOCK_H
#define SKIFF_API_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "stats/exit_stats.h"

struct api_sock {
	int fd;
	const char *path;
	struct exit_stats_src src;
	uint64_t start_ns;
};

/* Creates and binds the socket (before the seccomp filter); -1 with a reason. */
int api_sock_open(struct api_sock *a, const char *path, char *err, size_t errlen);
/* Serves snapshots from a detached thread until the process exits. */
int api_sock_start(struct api_sock *a);
void api_sock_close(struct api_sock *a);

#endif
