// SPDX-License-Identifier: Apache-2.0
#include "iothread/iothread.h"

#include "core/cpulist.h"
#include "core/sandbox.h"
#include "core/clock.h"
#include "core/thread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* epoll data points at one of these; they live until iothread_destroy
 * (an event for a removed fd may still be in the loop's current batch).
 * A removed one is reused when the same (fd, fn, opaque) is added again,
 * so a guest cycling a device through vhost and back costs no memory:
 * fn and opaque never change once the loop may see them. */
struct iothread_handler {
	iothread_fd_fn fn;
	void *opaque;
	int fd;
	bool live;		       /* in the epoll set; under handlers_lock */
	struct iothread_handler *next; /* io->handlers */
};

#define IOTHREAD_MAX_EVENTS 32

int iothread_init(struct iothread *io, const char *name)
{
	memset(io, 0, sizeof(*io));
	pthread_mutex_init(&io->handlers_lock, NULL);
	pthread_mutex_init(&io->hold_lock, NULL);
	pthread_cond_init(&io->hold_cv, NULL);
	snprintf(io->name, sizeof(io->name), "%s", name);
	io->pin_cpu = -1;
	io->cpu_clock = thread_cpu_ns;
	io->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (io->epfd < 0)
		return -errno;
	io->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (io->stop_fd < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	return epoll_ctl(io->epfd, EPOLL_CTL_ADD, io->stop_fd, &ev) < 0 ? -errno : 0;
}

/* A removed handler for exactly this registration, or a new one. */
static struct iothread_handler *handler_get(struct iothread *io, int fd, iothread_fd_fn fn,
					    void *opaque)
{
	for (struct iothread_handler *h = io->handlers; h; h = h->next)
		if (!h->live && h->fd == fd && h->fn == fn && h->opaque == opaque)
			return h;
	struct iothread_handler *h = malloc(sizeof(*h));
	if (!h)
		return NULL;
	*h = (struct iothread_handler){.fn = fn, .opaque = opaque, .fd = fd, .next = io->handlers};
	io->handlers = h;
	io->nr_handlers++;
	return h;
}

int iothread_add_fd(struct iothread *io, int fd, uint32_t events, iothread_fd_fn fn, void *opaque)
{
	int ret = 0;
	/* Callers may add while the loop runs (vhost gives a tap back from a
	 * vCPU thread); the loop itself never walks the list. */
	pthread_mutex_lock(&io->handlers_lock);
	struct iothread_handler *h = handler_get(io, fd, fn, opaque);
	struct epoll_event ev = {.events = events, .data.ptr = h};
	if (!h)
		ret = -ENOMEM;
	else if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		ret = -errno; /* h stays, not live, for a later add */
	else
		h->live = true;
	pthread_mutex_unlock(&io->handlers_lock);
	return ret;
}

int iothread_del_fd(struct iothread *io, int fd)
{
	pthread_mutex_lock(&io->handlers_lock);
	int ret = epoll_ctl(io->epfd, EPOLL_CTL_DEL, fd, NULL) < 0 ? -errno : 0;
	/* The handler stays allocated until iothread_destroy: an event for
	 * it may still be in the loop's current batch. */
	for (struct iothread_handler *h = io->handlers; h && ret == 0; h = h->next)
		if (h->live && h->fd == fd)
			h->live = false;
	pthread_mutex_unlock(&io->handlers_lock);
	return ret;
}

int iothread_add_poller(struct iothread *io, struct iothread_poller *p)
{
	if (io->nr_pollers == IOTHREAD_MAX_POLLERS)
		return -ENOSPC;
	memset(&p->st, 0, sizeof(p->st));
	io->pollers[io->nr_pollers++] = p;
	return 0;
}

void iothread_poller_kick(struct iothread *io, struct iothread_poller *p)
{
	uint64_t now = monotonic_ns();
	if (!poll_on_kick(&p->st, &p->policy, now))
		return;
	p->set_notify(p->opaque, false);
	poll_start(&p->st, now);
	io->nr_polling++;
}

void iothread_poll_once(struct iothread *io, uint64_t now)
{
	uint64_t cpu_ns = 0; /* read once a round, and only when a sample is due */
	for (unsigned int i = 0; i < io->nr_pollers; i++) {
		struct iothread_poller *p = io->pollers[i];
		if (!p->st.polling)
			continue;
		if (p->parked && p->parked(p->opaque)) {
			p->st.polling = false;
			io->nr_polling--;
			continue;
		}
		if (io->cpu_clock && poll_share_due(&p->st, &p->policy, now)) {
			if (!cpu_ns)
				cpu_ns = io->cpu_clock();
			if (poll_share_check(&p->st, now, cpu_ns)) {
				/* Kicks back on, and what came meanwhile served
				 * once: the CPU goes back to whoever needs it. */
				if (p->set_notify(p->opaque, true))
					p->poll(p->opaque);
				io->nr_polling--;
				continue;
			}
		}
		bool work = p->poll(p->opaque);
		if (!poll_after_iteration(&p->st, &p->policy, now, work))
			continue;
		/* Stopping: re-enable kicks, then look once more. Work the guest
		 * queued while kicks were off would otherwise wait forever. */
		if (p->set_notify(p->opaque, true)) {
			p->set_notify(p->opaque, false);
			poll_resume(&p->st, now);
			p->poll(p->opaque);
			continue;
		}
		io->nr_polling--;
	}
}

/* stop_fd fired without a stop: iothread_hold wants the loop parked. */
static void iothread_park(struct iothread *io)
{
	uint64_t n;
	if (read(io->stop_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a second hold's write was read with the first */
	}
	pthread_mutex_lock(&io->hold_lock);
	while (io->hold) {
		io->held = true;
		pthread_cond_broadcast(&io->hold_cv);
		pthread_cond_wait(&io->hold_cv, &io->hold_lock);
	}
	io->held = false;
	pthread_mutex_unlock(&io->hold_lock);
}

void iothread_hold(struct iothread *io)
{
	if (!io->running)
		return;
	pthread_mutex_lock(&io->hold_lock);
	io->hold = true;
	pthread_mutex_unlock(&io->hold_lock);
	uint64_t one = 1;
	if (write(io->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write of 1 cannot fail short of a bug */
	}
	pthread_mutex_lock(&io->hold_lock);
	while (!io->held)
		pthread_cond_wait(&io->hold_cv, &io->hold_lock);
	pthread_mutex_unlock(&io->hold_lock);
}

void iothread_release(struct iothread *io)
{
	if (!io->running)
		return;
	pthread_mutex_lock(&io->hold_lock);
	io->hold = false;
	pthread_cond_broadcast(&io->hold_cv);
	pthread_mutex_unlock(&io->hold_lock);
}

static void *iothread_loop(void *arg)
{
	struct iothread *io = arg;
	struct epoll_event evs[IOTHREAD_MAX_EVENTS];
	thread_name_self("%s", io->name);
	sandbox_enter_or_die(SANDBOX_IO);
	for (;;) {
		/* While a queue is polled, only peek at the other fds. */
		int n = epoll_wait(io->epfd, evs, IOTHREAD_MAX_EVENTS, io->nr_polling ? 0 : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (n > 0 || !io->nr_polling)
			counter_add(&io->wakeups, 1);
		for (int i = 0; i < n; i++) {
			struct iothread_handler *h = evs[i].data.ptr;
			if (!h && atomic_load(&io->stopping))
				goto out; /* stop_fd */
			if (!h) {
				iothread_park(io);
				continue;
			}
			counter_add(&io->events, 1);
			h->fn(h->opaque, evs[i].events);
		}
		if (io->nr_polling)
			iothread_poll_once(io, monotonic_ns());
	}
out:;
	io->cpu_ns = thread_cpu_ns();
	return NULL;
}

int iothread_start(struct iothread *io)
{
	int r = thread_create_on(&io->thread, io->pin_cpu, iothread_loop, io);
	if (r)
		return -r;
	io->running = 1;
	return 0;
}

void iothread_stop(struct iothread *io)
{
	if (!io->running)
		return;
	atomic_store(&io->stopping, true);
	uint64_t one = 1;
	if (write(io->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write of 1 cannot fail short of a bug */
	}
	pthread_join(io->thread, NULL);
	io->running = 0;
}

void iothread_destroy(struct iothread *io)
{
	iothread_stop(io);
	if (io->stop_fd > 0)
		close(io->stop_fd);
	if (io->epfd > 0)
		close(io->epfd);
	io->stop_fd = io->epfd = -1;
	while (io->handlers) { /* the loop has stopped */
		struct iothread_handler *h = io->handlers;
		io->handlers = h->next;
		free(h);
	}
	io->nr_handlers = 0;
	pthread_mutex_destroy(&io->hold_lock);
	pthread_cond_destroy(&io->hold_cv);
}
