/* An I/O thread: an epoll loop that runs device work (queue kicks from
 * ioeventfds, tap and disk completions) off the vCPU threads. An idle
 * I/O thread sleeps in epoll_wait. */
#ifndef SKIFF_IOTHREAD_H
#define SKIFF_IOTHREAD_H

#include <pthread.h>
#include <stdint.h>

typedef void (*iothread_fd_fn)(void *opaque, uint32_t events);

struct iothread {
	const char *name;
	int epfd;
	int stop_fd; /* eventfd: wakes the loop to stop */
	pthread_t thread;
	int running;
	uint64_t wakeups, events;
	uint64_t cpu_ns; /* thread CPU time, set when the thread ends */
};

int iothread_init(struct iothread *io, const char *name);
/* Calls fn(opaque, events) on the I/O thread when fd is ready (EPOLLIN
 * etc.). Safe while the thread runs. */
int iothread_add_fd(struct iothread *io, int fd, uint32_t events, iothread_fd_fn fn, void *opaque);
int iothread_del_fd(struct iothread *io, int fd);
int iothread_start(struct iothread *io);
void iothread_stop(struct iothread *io);
void iothread_destroy(struct iothread *io);

#endif
