// SPDX-License-Identifier: Apache-2.0
#include "stats/api_sock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/sandbox.h"

/* A stale socket from an earlier run goes; a live one (a skiff that still
 * listens: connect succeeds) and any other file stay (the path is the
 * user's to give, and it might be a typo for something precious). */
static int api_sock_unlink_stale(const struct sockaddr_un *sa, char *err, size_t errlen)
{
	const char *path = sa->sun_path;
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "--api-sock %s exists and is not a socket", path);
		return -1;
	}
	/* Non-blocking: a listener that does not accept (stopped, its backlog
	 * full) makes a blocking connect wait for ever; EAGAIN is "in use". */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int r = fd < 0 ? -1 : connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (r < 0 && e == EAGAIN)
		r = 0;
	if (r == 0 || (e != ECONNREFUSED && e != ENOENT)) {
		snprintf(err, errlen, "--api-sock %s %s", path,
			 r == 0 ? "is in use by a running process" : strerror(e));
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
	if (api_sock_unlink_stale(&sa, err, errlen) < 0)
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
	if (r < 0 || listen(a->fd, 16) < 0) {
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

int api_sock_accept(struct api_sock *a)
{
	int c = accept4(a->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		return errno == EINTR || errno == ECONNABORTED || errno == EAGAIN ? -2 : -1;
	/* The file's mode keeps others out; this holds even if someone
	 * loosened it, or connected through a descriptor passed on. */
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	    api_sock_peer_ok(cred.uid, a->owner))
		return c;
	close(c);
	return -2;
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
