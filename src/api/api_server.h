// SPDX-License-Identifier: Apache-2.0
/* The API thread: accepts connections on the control socket (its owner
 * and root only), reads HTTP requests with limits on size and time, parses
 * them, hands each to the controller and writes the reply. It only
 * parses and answers: it never touches the VM. */
#ifndef SKIFF_API_SERVER_H
#define SKIFF_API_SERVER_H

#include <pthread.h>
#include <stdbool.h>

#include "api/api_ctl.h"
#include "api/api_http.h"
#include "stats/api_sock.h"

#define API_CONNS_MAX 16
/* A request must arrive whole this long after its first byte. */
#define API_READ_TIMEOUT_MS 5000
/* A reply must be taken by the client within this, all of it. */
#define API_SEND_BUDGET_MS 20

struct api_server {
	struct api_sock sock;
	struct api_ctl *ctl;
	int stop_efd;
	pthread_t thread;
	bool running;
	struct api_conn *conns[API_CONNS_MAX];
	int fds[API_CONNS_MAX];
	uint64_t started_ns[API_CONNS_MAX]; /* first byte of the pending request, 0: none */
	uint64_t last_ns[API_CONNS_MAX];    /* last byte read, answer (or accept) */
	struct api_req req;		    /* the one in flight */
};

/* Binds the socket (before any filter): -1 with one line in err. */
int api_server_open(struct api_server *s, const char *path, struct api_ctl *ctl, char *err,
		    size_t errlen);
int api_server_start(struct api_server *s);
/* Ends and joins the thread (call api_ctl_close first), closes the
 * connections, the socket, and removes its file. */
void api_server_close(struct api_server *s);
/* Serves one connection's buffered bytes (the thread's step, for tests and
 * the fuzzer): 0 to keep the connection, -1 to close it. */
int api_server_conn_step(struct api_server *s, int i);

#endif
