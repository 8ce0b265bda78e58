// SPDX-License-Identifier: Apache-2.0
#include "cli/opts.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/console_filter.h"
#include "core/cpulist.h"
#include "core/log.h"
#include "iothread/iothread.h"

static const char *const unpack_names[] = {"host", "guest", NULL};
/* In level order: index + LOG_ERROR is the core/log.h level. */
static const char *const log_level_names[] = {"error", "warn", "info", "debug", NULL};

/* --disk SPEC, --net SPEC, ...: kept in order for the device manager,
 * which parses SPEC with the kind's own table. */
static int run_opt_device(const struct opt *o, const char *val, void *target, char *err,
			  size_t errlen)
{
	struct vmm_config *c = &((struct run_opts *)target)->vm;
	if (c->nr_devs == VMM_MAX_DEVICES) {
		snprintf(err, errlen, "too many devices (at most %d)", VMM_MAX_DEVICES);
		return -1;
	}
	c->devs[c->nr_devs++] = (struct vmm_dev_arg){.option = o->name, .spec = val};
	return 0;
}

/* "N" or "N,pin=LIST": a thread count in [o->min, o->max] and, if given,
 * one host CPU per thread, in order, that this process may run on. */
static int run_opt_threads(const struct opt *o, const char *val, int *count, int *pin, int *nr_pin,
			   char *err, size_t errlen)
{
	char why[160];
	long n;
	const char *comma = strchr(val, ',');
	size_t nlen = comma ? (size_t)(comma - val) : strlen(val);
	char num[16];
	snprintf(num, sizeof(num), "%.*s", (int)(nlen < sizeof(num) - 1 ? nlen : sizeof(num) - 1),
		 val);
	if (nlen >= sizeof(num) || !isdigit((unsigned char)num[0]) ||
	    parse_int(num, (long)o->min, (long)o->max, &n) < 0) {
		snprintf(err, errlen, "invalid --%s '%s': %s", o->name, val, o->hint);
		return -1;
	}
	*count = (int)n;
	*nr_pin = 0;
	if (!comma)
		return 0;
	if (strncmp(comma + 1, "pin=", 4)) {
		snprintf(err, errlen, "invalid --%s '%s': the only key is pin=LIST", o->name, val);
		return -1;
	}
	int got = cpulist_parse(comma + 5, pin, (int)n, why, sizeof(why));
	if (got >= 0 && got < n)
		snprintf(why, sizeof(why), "%ld %s but %d host CPU%s in pin= (one each, in order)",
			 n, strcmp(o->name, "cpus") ? "I/O threads" : "vCPUs", got,
			 got == 1 ? "" : "s");
	if (got < n || cpulist_check_host(pin, got, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "invalid --%s '%s': %s", o->name, val, why);
		return -1;
	}
	*nr_pin = got;
	return 0;
}

static int run_opt_cpus(const struct opt *o, const char *val, void *target, char *err,
			size_t errlen)
{
	struct vmm_config *c = &((struct run_opts *)target)->vm;
	return run_opt_threads(o, val, &c->cpus, c->vcpu_pin, &c->nr_vcpu_pin, err, errlen);
}

static int run_opt_iothreads(const struct opt *o, const char *val, void *target, char *err,
			     size_t errlen)
{
	struct vmm_config *c = &((struct run_opts *)target)->vm;
	return run_opt_threads(o, val, &c->iothreads, c->io_pin, &c->nr_io_pin, err, errlen);
}

/* --halt-poll USEC: given at all is what counts (0 turns polling off). */
static int run_opt_halt_poll(const struct opt *o, const char *val, void *target, char *err,
			     size_t errlen)
{
	struct vmm_config *c = &((struct run_opts *)target)->vm;
	long us;
	if (!isdigit((unsigned char)val[0]) ||
	    parse_int(val, (long)o->min, (long)o->max, &us) < 0) {
		snprintf(err, errlen, "invalid --%s '%s': %s", o->name, val, o->hint);
		return -1;
	}
	c->halt_poll_set = true;
	c->halt_poll_ns = (uint64_t)us * 1000;
	return 0;
}

#define RUN_OFF(f) offsetof(struct run_opts, f)

static const struct opt run_opts_fixed[] = {
    {.name = "kernel",
     .type = OPT_STR,
     .off = RUN_OFF(vm.kernel),
     .metavar = "BZIMAGE",
     .help = "Linux x86-64 bzImage to boot (or --api-sock, --config-file)"},
    {.name = "initrd",
     .type = OPT_STR,
     .off = RUN_OFF(vm.initrd),
     .metavar = "INITRAMFS",
     .help = "initramfs"},
    {.name = "cmdline",
     .type = OPT_STR,
     .off = RUN_OFF(vm.cmdline),
     .metavar = "STR",
     .help = "kernel command line (default \"" OPTS_DEFAULT_CMDLINE "\")"},
    {.name = "mem",
     .type = OPT_SIZE,
     .off = RUN_OFF(vm.mem),
     .min = VM_MEM_MIN,
     .max = VM_MEM_MAX,
     .hint = "use a size from 16M to 1T, e.g. 256M or 2G",
     .metavar = "SIZE",
     .help = "guest RAM, e.g. 256M, 2G (default 256M)"},
    {.name = "cpus",
     .type = OPT_CUSTOM,
     .parse = run_opt_cpus,
     .min = 1,
     .max = OPTS_CPUS_MAX,
     .hint = "use 1 to 64, optionally with ,pin=LIST",
     .metavar = "N[,pin=LIST]",
     .help = "vCPUs, 1-64 (default 1); pin=0-3,6: vCPU i on the list's i-th host CPU"},
    {.name = "iothreads",
     .type = OPT_CUSTOM,
     .parse = run_opt_iothreads,
     .min = 1,
     .max = IOTHREAD_MAX,
     .hint = "use 1 to 8, optionally with ,pin=LIST",
     .metavar = "N[,pin=LIST]",
     .help = "I/O threads, 1-8 (default 1); devices go round-robin; pin= as --cpus"},
    {.name = "cpu-pm",
     .type = OPT_ONOFF,
     .off = RUN_OFF(vm.cpu_pm),
     .hint = "use on or off",
     .metavar = "on|off",
     .help = "on: the guest idles on its own CPU (no HLT/MWAIT/PAUSE exits); default off"},
    {.name = "halt-poll",
     .type = OPT_CUSTOM,
     .parse = run_opt_halt_poll,
     .min = 0,
     .max = OPTS_HALT_POLL_MAX_US,
     .hint = "use 0 to 1000000 (microseconds)",
     .metavar = "USEC",
     .help = "KVM's halt polling for this VM, in us (0: none; default: the host's)"},
    {.name = "no-ioeventfd",
     .type = OPT_FLAG,
     .off = RUN_OFF(vm.no_ioeventfd),
     .help = "trap queue kicks to the vCPU thread (for comparison)"},
    {.name = "unpack",
     .type = OPT_ENUM,
     .off = RUN_OFF(vm.unpack),
     .choices = unpack_names,
     .hint = "use host or guest",
     .metavar = "host|guest",
     .help = "decompress the kernel on the host, cached (default), or in the guest"},
    {.name = "console-filter",
     .type = OPT_ENUM,
     .off = RUN_OFF(vm.console_filter),
     .choices = console_filter_names,
     .hint = "use safe, off or caret",
     .metavar = "safe|off|caret",
     .help = "guest output: safe keeps colours, drops OSC/DCS (default), off, caret"},
    {.name = "no-seccomp",
     .type = OPT_FLAG,
     .off = RUN_OFF(vm.no_seccomp),
     .help = "do not filter system calls once the VM runs"},
    {.name = "stats",
     .type = OPT_FLAG,
     .off = RUN_OFF(stats),
     .help = "print exit accounting when the guest stops"},
    {.name = "stats-json",
     .type = OPT_STR,
     .off = RUN_OFF(stats_json),
     .metavar = "FILE",
     .help = "write the same as JSON"},
    {.name = "api-sock",
     .type = OPT_STR,
     .off = RUN_OFF(api_sock),
     .metavar = "PATH",
     .help = "Firecracker's HTTP API (and 'skiff stat PATH'); no --kernel: wait for it"},
    {.name = "config-file",
     .type = OPT_STR,
     .off = RUN_OFF(config_file),
     .metavar = "FILE",
     .help = "boot from Firecracker's JSON configuration"},
    {.name = "no-api",
     .type = OPT_FLAG,
     .off = RUN_OFF(no_api),
     .help = "no API socket (with --config-file), as Firecracker's --no-api"},
    {.name = "timing",
     .type = OPT_FLAG,
     .off = RUN_OFF(timing),
     .help = "print the time to the first KVM_RUN"},
    {.name = "log-level",
     .type = OPT_ENUM,
     .off = RUN_OFF(log_level),
     .choices = log_level_names,
     .hint = "use error, warn, info or debug",
     .metavar = "error|warn|info|debug",
     .help = "what skiff logs on stderr (default info)"},
    {.name = "help", .type = OPT_FLAG, .help = NULL},
};

#define RUN_NR_FIXED (sizeof(run_opts_fixed) / sizeof(run_opts_fixed[0]))

/* The fixed rows, with the device options after --cpus: one row per
 * command-line option of the device kinds. */
const struct opt_table *run_opts_table(void)
{
	static struct opt rows[RUN_NR_FIXED + 16];
	static struct opt_table t = {
	    .opts = rows, .what = "option", .see = "see 'skiff run --help'"};
	if (t.n)
		return &t;
	for (size_t i = 0; i < RUN_NR_FIXED; i++) {
		rows[t.n++] = run_opts_fixed[i];
		if (strcmp(run_opts_fixed[i].name, "cpus"))
			continue;
		for (size_t k = 0; k < dm_nr_kinds; k++) {
			bool dup = false;
			for (size_t j = 0; j < k; j++)
				dup |= !strcmp(dm_kinds[j]->option, dm_kinds[k]->option);
			if (dup || t.n == sizeof(rows) / sizeof(rows[0]))
				continue;
			rows[t.n++] = (struct opt){.name = dm_kinds[k]->option,
						   .type = OPT_CUSTOM,
						   .flags = OPT_REPEAT | dm_kinds[k]->cli_flags,
						   .parse = run_opt_device,
						   .metavar = dm_kinds[k]->metavar,
						   .help = dm_kinds[k]->help};
		}
	}
	return &t;
}

int run_opts_parse(int argc, char **argv, struct run_opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->vm.cmdline = OPTS_DEFAULT_CMDLINE;
	o->vm.mem = 256ULL << 20;
	o->vm.cpus = 1;
	o->vm.iothreads = 1;
	o->log_level = LOG_DEFAULT_LEVEL - LOG_ERROR;
	int r = opt_parse_argv(run_opts_table(), argc, argv, o, err, errlen);
	if (r)
		return r;
	/* What to boot: a kernel, a configuration file, or the API's word. */
	if (o->no_api && !o->config_file)
		snprintf(err, errlen, "--no-api needs --config-file FILE");
	else if (o->no_api && o->api_sock)
		snprintf(err, errlen, "--no-api and --api-sock exclude each other");
	else if (o->config_file && o->vm.kernel)
		snprintf(err, errlen, "--config-file and --kernel exclude each other");
	else if (!o->vm.kernel && !o->config_file && !o->api_sock)
		snprintf(err, errlen,
			 "no kernel given: use --kernel PATH (or --api-sock, "
			 "--config-file)");
	else
		return 0;
	return -1;
}

void run_opts_synopsis(FILE *out)
{
	fprintf(out, "skiff run ");
	opt_print_synopsis(out, run_opts_table(), false, 10, 10, 78);
	fprintf(out, "\n");
	for (size_t k = 0; k < dm_nr_kinds; k++) {
		if (k && dm_kinds[k]->spec == dm_kinds[k - 1]->spec)
			continue;
		int col = fprintf(out, "  --%s ", dm_kinds[k]->option);
		opt_print_synopsis(out, dm_kinds[k]->spec, true, col, 6, 78);
		fprintf(out, "\n");
	}
}

void run_opts_usage(FILE *out)
{
	fprintf(out, "usage:\n");
	run_opts_synopsis(out);
	fprintf(out, "Options:\n");
	opt_print_help(out, run_opts_table(), false);
	for (size_t k = 0; k < dm_nr_kinds; k++) {
		if (k && dm_kinds[k]->spec == dm_kinds[k - 1]->spec)
			continue;
		fprintf(out, "--%s options (key=value, comma-separated):\n", dm_kinds[k]->option);
		opt_print_help(out, dm_kinds[k]->spec, true);
	}
	fprintf(out, "Console: Ctrl-A x quits, Ctrl-A Ctrl-A sends Ctrl-A.\n");
}
