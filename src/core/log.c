// SPDX-License-Identifier: Apache-2.0
/* The logger (log.h): a global level, one write(2) per line, once-only
 * flags and lock-free rate limits for what a guest can trigger. */
#include "core/log.h"

#include <stdio.h>
#include <strings.h>
#include <unistd.h>

#include "core/clock.h"

static _Atomic int level = LOG_DEFAULT_LEVEL;
static _Atomic int out_fd = STDERR_FILENO;

void log_set_level(enum log_level l)
{
	atomic_store(&level, (unsigned int)l < LOG_NR_LEVELS ? (int)l : LOG_DEFAULT_LEVEL);
}

enum log_level log_get_level(void)
{
	return (enum log_level)atomic_load_explicit(&level, memory_order_relaxed);
}

void log_set_fd(int fd)
{
	atomic_store(&out_fd, fd);
}

/* Ours first (what --log-level offers and --help names), then
 * Firecracker's spellings. */
static const struct {
	const char *name;
	enum log_level level;
} level_names[] = {
    {"error", LOG_ERROR},  {"warn", LOG_WARN},	 {"info", LOG_INFO}, {"debug", LOG_DEBUG},
    {"warning", LOG_WARN}, {"trace", LOG_DEBUG}, {"off", LOG_OFF},
};

int log_level_parse(const char *name, enum log_level *out)
{
	for (size_t i = 0; name && i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcasecmp(name, level_names[i].name)) {
			*out = level_names[i].level;
			return 0;
		}
	return -1;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			return; /* nowhere else to say it */
		buf += n;
		len -= (size_t)n;
	}
}

/* "skiff: " MESSAGE SUFFIX "\n", cut to LOG_LINE_MAX, in one write. */
static void emit(const char *suffix, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	size_t max = sizeof(line) - 1; /* room for the newline */
	size_t n = (size_t)snprintf(line, max, "skiff: ");
	int r = vsnprintf(line + n, max - n, fmt, ap);
	n = r < 0 ? n : n + (size_t)r < max ? n + (size_t)r : max - 1;
	if (suffix[0]) {
		r = snprintf(line + n, max - n, "%s", suffix);
		n = r < 0 ? n : n + (size_t)r < max ? n + (size_t)r : max - 1;
	}
	line[n++] = '\n';
	write_all(atomic_load(&out_fd), line, n);
}

void log_vmsg(enum log_level l, const char *fmt, va_list ap)
{
	if (log_enabled(l))
		emit("", fmt, ap);
}

void log_msg(enum log_level l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(l, fmt, ap);
	va_end(ap);
}

void log_once_at(atomic_bool *flag, enum log_level l, const char *fmt, ...)
{
	/* A filtered call leaves the flag: a later, lower level still logs. */
	if (!log_enabled(l) || atomic_exchange(flag, true))
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

bool log_rl_allow(struct log_rl *rl, uint64_t now, uint64_t *suppressed)
{
	const uint64_t tau = (LOG_RL_BURST - 1) * LOG_RL_INTERVAL_NS;
	uint64_t tat = atomic_load(&rl->tat);
	for (;;) {
		uint64_t from = tat > now ? tat : now;
		if (from - now > tau) {
			atomic_fetch_add(&rl->suppressed, 1);
			return false;
		}
		if (atomic_compare_exchange_weak(&rl->tat, &tat, from + LOG_RL_INTERVAL_NS))
			break;
	}
	*suppressed = atomic_exchange(&rl->suppressed, 0);
	return true;
}

void log_rl_at(struct log_rl *rl, enum log_level l, const char *fmt, ...)
{
	uint64_t dropped;
	if (!log_enabled(l) || !log_rl_allow(rl, monotonic_ns(), &dropped))
		return;
	char suffix[48] = "";
	if (dropped)
		snprintf(suffix, sizeof(suffix), " (%llu messages suppressed)",
			 (unsigned long long)dropped);
	va_list ap;
	va_start(ap, fmt);
	emit(suffix, fmt, ap);
	va_end(ap);
}
