#include "stats/api_sock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/sandbox.h"
#include "core/thread.h"
#include "core/vcpu.h"

/* A stale socket from an earlier run goes; any other file stays (the path
 * is the user's to give, and it might be a typo for something precious). */
static int api_sock_unlink_stale(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--api-sock %s exists and is not a socket", path);
		return -1;
	}
	unlink(path);
	return 0;
}

int api_sock_open(struct api_sock *a, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	a->fd = -1;
	a->path = path;
	a->owner = geteuid();
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--api-sock path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	if (api_sock_unlink_stale(path, err, errlen) < 0)
		return -1;
	a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (a->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* The file is created 0600 whatever the user's umask: bind applies
	 * the umask, so set one that leaves only the owner (still one
	 * thread here). fchmod on a socket fd would not reach the file. */
	mode_t old = umask(0177);
	int r = bind(a->fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || listen(a->fd, 4) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
		close(a->fd);
		a->fd = -1;
		return -1;
	}
	return 0;
}

bool api_sock_peer_ok(uid_t peer, uid_t owner)
{
	return peer == owner || peer == 0;
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

int api_sock_accept_one(struct api_sock *a)
{
	int c = accept4(a->fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return errno == EINTR || errno == ECONNABORTED ? 0 : -1;
	/* The file's mode keeps others out; this holds even if someone
	 * loosened it, or connected through a descriptor passed on. */
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	    api_sock_peer_ok(cred.uid, a->owner))
		api_sock_serve(a, c);
	close(c);
	return 0;
}

static void *api_sock_thread(void *arg)
{
	struct api_sock *a = arg;
	thread_name_self("api");
	sandbox_enter_or_die(SANDBOX_API);
	while (api_sock_accept_one(a) == 0) {
	}
	return NULL;
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
		/* Under the sandbox no path is looked up after setup: the file
		 * stays, and the next run with this path replaces it. */
		if (!sandbox_active())
			unlink(a->path);
	}
	a->fd = -1;
}
