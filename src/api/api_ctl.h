// SPDX-License-Identifier: Apache-2.0
/* The controller channel: the API thread hands one parsed request at a
 * time to the main thread (eventfd wake-up) and waits for its reply, as
 * Firecracker's API thread hands VmmActions to its VMM thread. The API
 * thread never touches the VM. */
#ifndef SKIFF_API_CTL_H
#define SKIFF_API_CTL_H

#include <pthread.h>
#include <stdbool.h>

#include "api/api_req.h"

struct api_ctl {
	int efd; /* readable while a request waits */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const struct api_req *req;
	struct api_reply *rep;
	bool done, closed;
};

typedef void (*api_handler)(void *opaque, const struct api_req *req, struct api_reply *rep);

int api_ctl_init(struct api_ctl *c);
void api_ctl_destroy(struct api_ctl *c);
/* API thread: the reply to req; after api_ctl_close, a 500 reply. */
void api_ctl_call(struct api_ctl *c, const struct api_req *req, struct api_reply *rep);
/* Main thread: answers the waiting request, if any, with handle. */
void api_ctl_serve(struct api_ctl *c, api_handler handle, void *opaque);
/* Main thread, when skiff stops: the waiting request and later ones get
 * a 500 reply, so the API thread can be joined. */
void api_ctl_close(struct api_ctl *c);

#endif
