// SPDX-License-Identifier: Apache-2.0
/* `skiff stat PATH`: a live view of a running skiff's exit accounting (GET
 * /stats on its API socket), like
 * kvm_stat: every second, each counter's total and rate, the busiest first.
 * --once prints one snapshot of totals (for scripts). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "core/log.h"

#define STAT_MAX 1024
#define STAT_TOP 30

struct stat_row {
	char name[112];
	double value, rate;
};

struct snapshot {
	struct stat_row rows[STAT_MAX];
	unsigned int n;
	double wall;
};

static int snapshot_read(const char *path, struct snapshot *s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* skiff's own endpoint of the HTTP API: one request, then the server
	 * closes the connection after its answer. */
	static const char req[] = "GET /stats HTTP/1.1\r\nHost: localhost\r\n"
				  "Connection: close\r\n\r\n";
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -1;
	}
	char line[256];
	if (write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1 ||
	    !fgets(line, sizeof(line), f) || strncmp(line, "HTTP/1.1 200", 12)) {
		fclose(f);
		errno = EPROTO;
		return -1;
	}
	while (fgets(line, sizeof(line), f) && strcmp(line, "\r\n")) {
		/* headers: the body ends with the connection */
	}
	s->n = 0;
	s->wall = 0;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = 0;
		double v = strtod(tab + 1, NULL);
		if (!strcmp(line, "wall_s")) {
			s->wall = v;
		} else if (s->n < STAT_MAX) {
			snprintf(s->rows[s->n].name, sizeof(s->rows[0].name), "%.111s", line);
			s->rows[s->n].value = v;
			s->rows[s->n++].rate = 0;
		}
	}
	fclose(f);
	return 0;
}

static int by_rate(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;
	if (x->rate != y->rate)
		return x->rate < y->rate ? 1 : -1;
	return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

static void rates(struct snapshot *cur, const struct snapshot *prev)
{
	double dt = cur->wall - prev->wall;
	for (unsigned int i = 0; i < cur->n; i++) {
		for (unsigned int j = 0; j < prev->n && dt > 0; j++) {
			if (!strcmp(cur->rows[i].name, prev->rows[j].name)) {
				cur->rows[i].rate = (cur->rows[i].value - prev->rows[j].value) / dt;
				break;
			}
		}
	}
}

static void show(struct snapshot *s, int live)
{
	qsort(s->rows, s->n, sizeof(s->rows[0]), by_rate);
	if (live)
		printf("\033[H\033[2J");
	printf("skiff stat: %.1f s since start%s\n", s->wall, live ? " (Ctrl-C quits)" : "");
	printf("%-64s %16s %12s\n", "counter", "total", live ? "per s" : "");
	unsigned int shown = 0;
	for (unsigned int i = 0; i < s->n && shown < (live ? STAT_TOP : STAT_MAX); i++) {
		struct stat_row *r = &s->rows[i];
		if (r->value == 0 && r->rate == 0)
			continue;
		/* nanosecond sums are not events: leave them to --once/JSON */
		if (live && strstr(r->name, "_ns"))
			continue;
		if (live)
			printf("%-64s %16.0f %12.1f\n", r->name, r->value, r->rate);
		else
			printf("%-64s %16.6g\n", r->name, r->value);
		shown++;
	}
	fflush(stdout);
}

int cmd_stat(int argc, char **argv)
{
	const char *path = NULL;
	int once = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--once"))
			once = 1;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "skiff: usage: skiff stat API-SOCKET [--once]\n");
			return EXIT_USAGE;
		}
	}
	if (!path) {
		fprintf(stderr, "skiff: usage: skiff stat API-SOCKET [--once]\n");
		return EXIT_USAGE;
	}
	static struct snapshot a, b;
	struct snapshot *cur = &a, *prev = &b;
	if (snapshot_read(path, prev) < 0) {
		log_err("cannot read %s: %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (once) {
		show(prev, 0);
		return 0;
	}
	for (;;) {
		sleep(1);
		if (snapshot_read(path, cur) < 0)
			return 0; /* the VM is gone */
		rates(cur, prev);
		show(cur, 1);
		struct snapshot *t = prev;
		prev = cur;
		cur = t;
	}
}
