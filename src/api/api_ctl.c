// SPDX-License-Identifier: Apache-2.0
#include "api/api_ctl.h"

#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

int api_ctl_init(struct api_ctl *c)
{
	c->req = NULL;
	c->rep = NULL;
	c->done = c->closed = false;
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0)
		return -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	return 0;
}

void api_ctl_destroy(struct api_ctl *c)
{
	if (c->efd < 0)
		return;
	close(c->efd);
	c->efd = -1;
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
}

void api_ctl_call(struct api_ctl *c, const struct api_req *req, struct api_reply *rep)
{
	pthread_mutex_lock(&c->lock);
	if (c->closed) {
		pthread_mutex_unlock(&c->lock);
		api_reply_fault(rep, 500, "skiff is shutting down.");
		return;
	}
	c->req = req;
	c->rep = rep;
	c->done = false;
	uint64_t one = 1;
	if (write(c->efd, &one, sizeof(one)) != sizeof(one)) {
		/* The counter cannot overflow with one request at a time. */
	}
	while (!c->done)
		pthread_cond_wait(&c->cond, &c->lock);
	c->req = NULL;
	c->rep = NULL;
	pthread_mutex_unlock(&c->lock);
}

void api_ctl_serve(struct api_ctl *c, api_handler handle, void *opaque)
{
	uint64_t n;
	if (read(c->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing pending; the check below decides. */
	}
	pthread_mutex_lock(&c->lock);
	const struct api_req *req = c->req && !c->done ? c->req : NULL;
	struct api_reply *rep = c->rep;
	pthread_mutex_unlock(&c->lock);
	if (!req)
		return;
	/* The API thread waits: req and rep are the main thread's now. */
	handle(opaque, req, rep);
	pthread_mutex_lock(&c->lock);
	c->done = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

void api_ctl_close(struct api_ctl *c)
{
	pthread_mutex_lock(&c->lock);
	c->closed = true;
	if (c->req && !c->done) {
		api_reply_fault(c->rep, 500, "skiff is shutting down.");
		c->done = true;
		pthread_cond_signal(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
}
