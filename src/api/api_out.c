// SPDX-License-Identifier: Apache-2.0
/* What the API writes besides its replies: metrics (PUT /metrics,
 * FlushMetrics), the log (PUT /logger) and the statistics text (GET
 * /stats). Files are opened here, on the main thread, before the VM's
 * filter; writes never block (a FIFO nobody reads loses lines). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/api_fc.h"
#include "api/api_metrics.h"
#include "core/clock.h"
#include "core/log.h"
#include "stats/exit_stats.h"

static int out_open(const char *path, char *why, size_t len)
{
	/* O_NONBLOCK: a FIFO with no reader yet does not hang the VMM (as
	 * Firecracker, which needs the reader to exist first). */
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		snprintf(why, len, "%s (os error %d)", strerror(errno), errno);
	return fd;
}

int api_fc_metrics_open(struct api_fc *f, const struct fc_metrics *m, char *err, size_t errlen)
{
	char why[200];
	if (f->metrics_fd >= 0) {
		snprintf(err, errlen,
			 "Metrics error: Cannot initialize the metrics system due to "
			 "bad user input: Reinitialization of metrics not allowed.");
		return -1;
	}
	f->metrics_fd = out_open(m->metrics_path, why, sizeof(why));
	if (f->metrics_fd < 0) {
		snprintf(err, errlen,
			 "Metrics error: Cannot initialize the metrics system due to "
			 "bad user input: %s",
			 why);
		return -1;
	}
	f->cfg.metrics = *m;
	f->cfg.has_metrics = true;
	return 0;
}

int api_fc_logger_open(struct api_fc *f, const struct fc_logger *l, char *err, size_t errlen)
{
	char why[200];
	int fd = -1;
	if (l->log_path[0] && (fd = out_open(l->log_path, why, sizeof(why))) < 0) {
		snprintf(err, errlen, "Logger error: Failed to open target file: %s", why);
		return -1;
	}
	if (f->log_fd >= 0 && fd >= 0)
		close(f->log_fd);
	if (fd >= 0)
		f->log_fd = fd;
	f->cfg.logger = *l;
	f->cfg.has_logger = true;
	/* Firecracker's level is skiff's: stderr and the file alike. */
	enum log_level level;
	if (log_level_parse(l->level, &level) == 0)
		log_set_level(level);
	return 0;
}

static void out_write(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static const char *level_name(const char *level)
{
	return !strcmp(level, "Error") ? "ERROR" : !strcmp(level, "Warn") ? "WARN" : "INFO";
}

void api_fc_log(struct api_fc *f, const char *level, const char *fmt, ...)
{
	/* The file follows the one level (core/log.h) PUT /logger sets. */
	enum log_level l = LOG_INFO;
	if (f->log_fd < 0 || (log_level_parse(level, &l), !log_enabled(l)))
		return;
	char line[1024], msg[800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Messages carry what clients chose (a drive's path_on_host): a
	 * newline would forge a line of ours, an escape reach whoever tails
	 * the log on a terminal. */
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	int n = snprintf(line, sizeof(line),
			 "%04d-%02d-%02dT%02d:%02d:%02d.%09ld "
			 "[anonymous-instance:main%s%s] %s\n",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, ts.tv_nsec, f->cfg.logger.show_level ? ":" : "",
			 f->cfg.logger.show_level ? level_name(level) : "", msg);
	if (n > 0)
		out_write(f->log_fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

char *api_fc_stats_text(struct api_fc *f, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	if (!m)
		return NULL;
	if (f->state == FC_NOT_STARTED) {
		fprintf(m, "wall_s\t%.6f\n", (monotonic_ns() - f->start_ns) / 1e9);
	} else {
		struct exit_stats_src src = vmm_stats_src(f->vmm);
		exit_stats_flat(m, &src);
	}
	fclose(m);
	return buf;
}

/* One JSON object per line, as Firecracker's metrics (api_metrics.h). */
void api_fc_flush_metrics(struct api_fc *f)
{
	if (f->metrics_fd < 0)
		return;
	struct fc_metrics_dev devs[VMM_MAX_DEVICES];
	unsigned int n = api_fc_metrics_devs(f, devs, VMM_MAX_DEVICES);
	size_t len;
	char *text = api_fc_stats_text(f, &len);
	struct json_object *o = text ? fc_metrics_object(text, devs, n) : NULL;
	if (o) {
		const char *j = json_object_to_json_string_length(
		    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
		out_write(f->metrics_fd, j, len);
		out_write(f->metrics_fd, "\n", 1);
	}
	json_object_put(o);
	free(text);
}
