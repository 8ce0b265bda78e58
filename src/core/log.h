// SPDX-License-Identifier: Apache-2.0
/* One logger for the whole VMM, as kvmtool's pr_err/pr_warning/pr_info/
 * pr_debug and Firecracker's logger: four levels, error < warn < info <
 * debug, and one global level, set once from --log-level (or by
 * Firecracker's PUT /logger). Every line reads "skiff: MESSAGE", where
 * MESSAGE starts with what speaks (a device's name, "seccomp: ", ...).
 *
 * A line is formatted into a buffer and written with one write(2), so
 * lines from threads never interleave, and nothing here takes a lock:
 * a vCPU thread never waits on the log.
 *
 * What a guest can trigger over and over (a broken ring, a bad register
 * write) goes through log_once or a rate limit, so a guest cannot flood
 * the host's log: log_ratelimited allows LOG_RL_BURST lines at once and
 * then one per LOG_RL_INTERVAL_NS (10 per 5 s); the next line let through
 * after a refusal says how many were suppressed. */
#ifndef SKIFF_LOG_H
#define SKIFF_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Ranked as Firecracker's levels: Off 0 ... Debug 4 (Trace is Debug). */
enum log_level { LOG_OFF, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_NR_LEVELS };

#define LOG_DEFAULT_LEVEL  LOG_INFO
#define LOG_RL_BURST	   10
#define LOG_RL_INTERVAL_NS 500000000ull /* 10 lines per 5 s once the burst is spent */
#define LOG_LINE_MAX	   1024		/* longer lines are cut (and still end in \n) */

void log_set_level(enum log_level l);
enum log_level log_get_level(void);
static inline bool log_enabled(enum log_level l)
{
	return l != LOG_OFF && l <= log_get_level();
}
/* A level's name, case-insensitive: ours (error, warn, info, debug) or
 * Firecracker's (Error, Warning, Info, Debug, Trace, Off). 0, or -1. */
int log_level_parse(const char *name, enum log_level *out);
/* Where lines go (STDERR_FILENO unless a test captures them). */
void log_set_fd(int fd);

void log_msg(enum log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level l, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define log_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Once per flag: the first call at an enabled level logs, later ones do
 * nothing. The flag is per call site (log_once) or per object (a device
 * that says each kind of guest error once). */
void log_once_at(atomic_bool *flag, enum log_level l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define log_once(l, ...)                                                                           \
	do {                                                                                       \
		static atomic_bool log_once_flag_;                                                 \
		log_once_at(&log_once_flag_, (l), __VA_ARGS__);                                    \
	} while (0)

/* A token bucket kept as the time it is next full (GCRA): lock-free,
 * zero-initialized is full. Per call site (log_ratelimited) or per object
 * (one virtqueue's errors, one device's). */
struct log_rl {
	_Atomic uint64_t tat;	     /* "theoretical arrival time", ns */
	_Atomic uint64_t suppressed; /* refused since the last line let through */
};

/* Takes one token at now (ns): true if the line may go, with how many were
 * refused before it in *suppressed (and that count reset). */
bool log_rl_allow(struct log_rl *rl, uint64_t now, uint64_t *suppressed);
void log_rl_at(struct log_rl *rl, enum log_level l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define log_ratelimited(l, ...)                                                                    \
	do {                                                                                       \
		static struct log_rl log_rl_site_;                                                 \
		log_rl_at(&log_rl_site_, (l), __VA_ARGS__);                                        \
	} while (0)

#endif
