#include "stats/api_sock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/thread.h"
#include "core/vcpu.h"

int api_sock_open(struct api_sock *a, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	a->fd = -1;
	a->path = path;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--api-sock path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	unlink(path); /* a stale socket from an earlier run */
	if (bind(a->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(a->fd, 4) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		close(a->fd);
		a->fd = -1;
		return -1;
	}
	return 0;
}

static void api_sock_serve(struct api_sock *a, int c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	struct exit_stats_src src = a->src;
	src.wall_s = (monotonic_ns() - a->start_ns) / 1e9;
	exit_stats_flat(m, &src);
	fclose(m);
	/* Never blocks: a client that does not read cannot hold up the
	 * thread, and so the VM's stop, which joins it. */
	for (size_t off = 0; off < len;) {
		ssize_t n = send(c, buf + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(buf);
}

static void *api_sock_thread(void *arg)
{
	struct api_sock *a = arg;
	thread_name_self("api");
	for (;;) {
		int c = accept4(a->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		api_sock_serve(a, c);
		close(c);
	}
}

int api_sock_start(struct api_sock *a)
{
	int r = pthread_create(&a->thread, NULL, api_sock_thread, a);
	if (r)
		return -r;
	a->running = true;
	return 0;
}

void api_sock_stop(struct api_sock *a)
{
	if (!a->running)
		return;
	/* Shutting a listening unix socket down makes accept fail with
	 * EINVAL, which ends the loop; a snapshot being served finishes. */
	shutdown(a->fd, SHUT_RDWR);
	pthread_join(a->thread, NULL);
	a->running = false;
}

void api_sock_close(struct api_sock *a)
{
	if (a->fd >= 0) {
		close(a->fd);
		unlink(a->path);
	}
	a->fd = -1;
}
