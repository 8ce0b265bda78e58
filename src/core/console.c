// SPDX-License-Identifier: Apache-2.0
#include "core/console.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "core/sandbox.h"
#include "core/thread.h"
#include "core/vm.h"

static struct termios saved_tio;
static atomic_int tio_saved;
/* Guest output on its way to stdout. console_tx runs under the UART's
 * lock, and console_start sets the mode before any vCPU runs. */
static struct console_filter out_filter;

enum console_action console_escape_feed(int *state, uint8_t c, uint8_t *out, size_t *out_len)
{
	*out_len = 0;
	if (!*state) {
		if (c == CONSOLE_ESCAPE) {
			*state = 1;
			return CONSOLE_PASS;
		}
		out[(*out_len)++] = c;
		return CONSOLE_PASS;
	}
	*state = 0;
	if (c == 'x' || c == 'X')
		return CONSOLE_QUIT;
	if (c == CONSOLE_ESCAPE) {
		out[(*out_len)++] = CONSOLE_ESCAPE;
		return CONSOLE_PASS;
	}
	/* Unknown escape: pass both bytes, nothing is lost. */
	out[(*out_len)++] = CONSOLE_ESCAPE;
	out[(*out_len)++] = c;
	return CONSOLE_PASS;
}

void console_restore(void)
{
	if (atomic_exchange(&tio_saved, 0))
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void console_write(const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(STDOUT_FILENO, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* stdout gone: drop output rather than stall the guest */
		buf += n;
		len -= (size_t)n;
	}
}

void console_tx(void *opaque, const uint8_t *buf, size_t len)
{
	(void)opaque;
	uint8_t out[CONSOLE_FILTER_OUT(64)];
	while (len) {
		size_t chunk = len < 64 ? len : 64;
		console_write(out, console_filter_feed(&out_filter, buf, chunk, out));
		buf += chunk;
		len -= chunk;
	}
}

struct console_ctx {
	struct vm *vm;
	console_receive_fn receive;
	void *opaque;
};

/* Delivers bytes, waiting for the guest to drain its FIFO if it is full
 * (a paste larger than the FIFO is slowed down, not truncated). */
static void console_deliver(struct console_ctx *c, const uint8_t *buf, size_t len)
{
	while (len && atomic_load(&c->vm->exit_kind) == VM_EXIT_NONE) {
		size_t n = c->receive(c->opaque, buf, len);
		buf += n;
		len -= n;
		if (len)
			usleep(1000);
	}
}

static void *console_thread(void *arg)
{
	struct console_ctx *c = arg;
	int state = 0;
	thread_name_self("console");
	sandbox_enter_or_die(SANDBOX_CONSOLE);
	uint8_t in[256];
	for (;;) {
		struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
				      {.fd = c->vm->exit_pipe[0], .events = POLLIN}};
		int r = poll(p, 2, -1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (p[1].revents & POLLIN))
			break;
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL) && !(p[0].revents & POLLIN))
			break; /* stdin closed: the guest keeps running without input */
		ssize_t n = read(STDIN_FILENO, in, sizeof(in));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			uint8_t out[2];
			size_t out_len;
			if (console_escape_feed(&state, in[i], out, &out_len) == CONSOLE_QUIT) {
				vm_request_exit(c->vm, VM_EXIT_QUIT,
						"quit from the console (Ctrl-A x)");
				free(c);
				return NULL;
			}
			console_deliver(c, out, out_len);
		}
	}
	free(c);
	return NULL;
}

int console_start(struct vm *vm, enum console_filter_mode filter, console_receive_fn receive,
		  void *opaque, pthread_t *thread)
{
	console_filter_init(&out_filter, filter);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
		struct termios raw = saved_tio;
		cfmakeraw(&raw);
		/* Keep output post-processing so guest "\n" stays readable when
		 * it arrives without "\r"; Linux sends "\r\n" anyway. */
		raw.c_oflag |= OPOST;
		atomic_store(&tio_saved, 1);
		atexit(console_restore);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	struct console_ctx *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->vm = vm;
	c->receive = receive;
	c->opaque = opaque;
	int r = pthread_create(thread, NULL, console_thread, c);
	if (r) {
		free(c);
		return -r;
	}
	return 0;
}
