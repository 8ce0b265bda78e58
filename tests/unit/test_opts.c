// SPDX-License-Identifier: Apache-2.0
/* The option tables: the command line of `skiff run`, device specs, and
 * the help and synopsis printed from the same rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "core/opt.h"
#include "iothread/iothread.h"

static void test_parse_size(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(parse_size("256M", &v), 0);
	assert_int_equal(v, 256ULL << 20);
	assert_int_equal(parse_size("2G", &v), 0);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(parse_size("2g", &v), 0);
	assert_int_equal(parse_size("512", &v), 0); /* bare number: MiB */
	assert_int_equal(v, 512ULL << 20);
	assert_int_equal(parse_size("64K", &v), 0);
	assert_int_equal(v, 64ULL << 10);
	assert_int_equal(parse_size("1GiB", &v), 0);
	assert_int_equal(v, 1ULL << 30);
	assert_int_equal(parse_size("12Q", &v), -1);
	assert_int_equal(parse_size("", &v), -1);
	assert_int_equal(parse_size("-1G", &v), -1);
	assert_int_equal(parse_size("G", &v), -1);
	assert_int_equal(parse_size("1GG", &v), -1);
	assert_int_equal(parse_size("99999999999999999999", &v), -1);
	assert_int_equal(parse_size("17179869184T", &v), -1); /* overflows 64 bits */
	assert_int_equal(parse_size(NULL, &v), -1);
}

static int parse(const char *const *args, int n, struct run_opts *o, char *err)
{
	char *argv[16];
	for (int i = 0; i < n; i++)
		argv[i] = (char *)args[i];
	return run_opts_parse(n, argv, o, err, 256);
}

static void test_run_opts(void **state)
{
	(void)state;
	struct run_opts o;
	char err[256];
	const char *ok[] = {"run", "--kernel", "k", "--mem", "1G", "--cpus", "4", "--initrd", "i"};
	assert_int_equal(parse(ok, 9, &o, err), 0);
	assert_string_equal(o.vm.kernel, "k");
	assert_int_equal(o.vm.mem, 1ULL << 30);
	assert_int_equal(o.vm.cpus, 4);
	assert_string_equal(o.vm.cmdline, OPTS_DEFAULT_CMDLINE);

	const char *mem0[] = {"run", "--kernel", "k", "--mem", "0"};
	assert_int_equal(parse(mem0, 5, &o, err), -1);
	assert_non_null(strstr(err, "--mem"));
	const char *memq[] = {"run", "--kernel", "k", "--mem", "12Q"};
	assert_int_equal(parse(memq, 5, &o, err), -1);
	const char *cpus0[] = {"run", "--kernel", "k", "--cpus", "0"};
	assert_int_equal(parse(cpus0, 5, &o, err), -1);
	assert_non_null(strstr(err, "--cpus"));
	const char *cpusx[] = {"run", "--kernel", "k", "--cpus", "2x"};
	assert_int_equal(parse(cpusx, 5, &o, err), -1);
	const char *unknown[] = {"run", "--kernel", "k", "--frobnicate"};
	assert_int_equal(parse(unknown, 4, &o, err), -1);
	assert_non_null(strstr(err, "--frobnicate"));
	const char *nokernel[] = {"run", "--mem", "1G"};
	assert_int_equal(parse(nokernel, 3, &o, err), -1);
	assert_non_null(strstr(err, "kernel"));
	const char *noval[] = {"run", "--kernel"};
	assert_int_equal(parse(noval, 2, &o, err), -1);
	assert_non_null(strstr(err, "needs a value"));
	const char *extra[] = {"run", "--kernel", "k", "stray"};
	assert_int_equal(parse(extra, 4, &o, err), -1);
}

static void test_run_opts_iothreads(void **state)
{
	(void)state;
	struct run_opts o;
	char err[256];
	const char *dflt[] = {"run", "--kernel", "k"};
	assert_int_equal(parse(dflt, 3, &o, err), 0);
	assert_int_equal(o.vm.iothreads, 1);
	const char *four[] = {"run", "--kernel", "k", "--iothreads", "4"};
	assert_int_equal(parse(four, 5, &o, err), 0);
	assert_int_equal(o.vm.iothreads, 4);
	const char *max[] = {"run", "--kernel", "k", "--iothreads", "8"};
	assert_int_equal(parse(max, 5, &o, err), 0);
	assert_int_equal(o.vm.iothreads, IOTHREAD_MAX);
	static const char *const bad[] = {"0", "9", "abc", "", "-1", "2x", "99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = {"run", "--kernel", "k", "--iothreads", bad[i]};
		err[0] = '\0';
		assert_int_equal(parse(args, 5, &o, err), -1);
		assert_non_null(strstr(err, "invalid --iothreads"));
		assert_non_null(strstr(err, "use 1 to 8"));
		assert_null(strchr(err, '\n'));
	}
}

/* The CPUs this process may run on: the first two (-1 if none), and the
 * first it may not. */
static void host_cpus(int *a, int *b, int *outside)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	*a = *b = *outside = -1;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set) && *outside < 0)
			*outside = c;
		else if (CPU_ISSET(c, &set) && *a < 0)
			*a = c;
		else if (CPU_ISSET(c, &set) && *b < 0)
			*b = c;
	}
	assert_true(*a >= 0 && *outside >= 0);
}

static void test_run_opts_pin(void **state)
{
	(void)state;
	struct run_opts o;
	char err[256], v1[32], v2[64];
	int a, b, outside;
	host_cpus(&a, &b, &outside);
	const char *dflt[] = {"run", "--kernel", "k", "--cpus", "2"};
	assert_int_equal(parse(dflt, 5, &o, err), 0);
	assert_int_equal(o.vm.cpus, 2);
	assert_int_equal(o.vm.nr_vcpu_pin, 0);
	assert_int_equal(o.vm.nr_io_pin, 0);
	snprintf(v1, sizeof(v1), "1,pin=%d", a);
	const char *one[] = {"run", "--kernel", "k", "--cpus", v1, "--iothreads", v1};
	assert_int_equal(parse(one, 7, &o, err), 0);
	assert_int_equal(o.vm.cpus, 1);
	assert_int_equal(o.vm.nr_vcpu_pin, 1);
	assert_int_equal(o.vm.vcpu_pin[0], a);
	assert_int_equal(o.vm.iothreads, 1);
	assert_int_equal(o.vm.nr_io_pin, 1);
	assert_int_equal(o.vm.io_pin[0], a);
	if (b >= 0) { /* in the list's order, not the CPUs' */
		snprintf(v2, sizeof(v2), "2,pin=%d,%d", b, a);
		const char *two[] = {"run", "--kernel", "k", "--cpus", v2};
		assert_int_equal(parse(two, 5, &o, err), 0);
		assert_int_equal(o.vm.nr_vcpu_pin, 2);
		assert_int_equal(o.vm.vcpu_pin[0], b);
		assert_int_equal(o.vm.vcpu_pin[1], a);
	}
	/* Each bad list: one line naming the option, and what is wrong. */
	char dup[32], beyond[32], few[32], many[32];
	snprintf(dup, sizeof(dup), "2,pin=%d,%d", a, a);
	snprintf(beyond, sizeof(beyond), "1,pin=%d", outside);
	snprintf(few, sizeof(few), "2,pin=%d", a);
	snprintf(many, sizeof(many), "1,pin=%d-%d", a, a + 1);
	const struct {
		const char *opt, *val, *why;
	} bad[] = {
	    {"--cpus", "2,pin=", "empty CPU list"},
	    {"--cpus", "2,pin=a", "bad CPU list 'a'"},
	    {"--cpus", "2,pin=0-", "bad CPU list '0-'"},
	    {"--cpus", "2,pin=1-0", "bad CPU list '1-0'"},
	    {"--cpus", "2,pin=0,,1", "bad CPU list"},
	    {"--cpus", "2,pin=0,", "bad CPU list"},
	    {"--cpus", "2,pin=-1", "bad CPU list"},
	    {"--cpus", "2,pin=99999", "bad CPU list"},
	    {"--cpus", dup, "listed twice"},
	    {"--cpus", beyond, "not one this process may run on"},
	    {"--cpus", few, "2 vCPUs but 1 host CPU in pin="},
	    {"--cpus", many, "lists more than 1 CPU"},
	    {"--cpus", "2,foo=1", "the only key is pin=LIST"},
	    {"--cpus", "0,pin=0", "use 1 to 64"},
	    {"--cpus", ",pin=0", "use 1 to 64"},
	    {"--iothreads", few, "2 I/O threads but 1 host CPU in pin="},
	    {"--iothreads", "9", "use 1 to 8"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = {"run", "--kernel", "k", bad[i].opt, bad[i].val};
		err[0] = '\0';
		assert_int_equal(parse(args, 5, &o, err), -1);
		if (!strstr(err, bad[i].why) || !strstr(err, bad[i].opt))
			fail_msg("%s %s: '%s'", bad[i].opt, bad[i].val, err);
		assert_null(strchr(err, '\n'));
	}
}

static void test_run_opts_cpu_pm(void **state)
{
	(void)state;
	struct run_opts o;
	char err[256];
	const char *dflt[] = {"run", "--kernel", "k"};
	assert_int_equal(parse(dflt, 3, &o, err), 0);
	assert_false(o.vm.cpu_pm);
	assert_false(o.vm.halt_poll_set);
	const char *on[] = {"run", "--kernel", "k", "--cpu-pm", "on", "--halt-poll", "50"};
	assert_int_equal(parse(on, 7, &o, err), 0);
	assert_true(o.vm.cpu_pm);
	assert_true(o.vm.halt_poll_set);
	assert_int_equal(o.vm.halt_poll_ns, 50000);
	const char *zero[] = {"run", "--kernel", "k", "--cpu-pm", "off", "--halt-poll", "0"};
	assert_int_equal(parse(zero, 7, &o, err), 0);
	assert_false(o.vm.cpu_pm);
	assert_true(o.vm.halt_poll_set);
	assert_int_equal(o.vm.halt_poll_ns, 0);
	static const char *const bad_poll[] = {"-1", "abc", "", "1000001", " 5", "+5", "5us"};
	for (size_t i = 0; i < sizeof(bad_poll) / sizeof(bad_poll[0]); i++) {
		const char *args[] = {"run", "--kernel", "k", "--halt-poll", bad_poll[i]};
		assert_int_equal(parse(args, 5, &o, err), -1);
		assert_non_null(strstr(err, "invalid --halt-poll"));
		assert_non_null(strstr(err, "use 0 to 1000000"));
	}
	const char *bad_pm[] = {"run", "--kernel", "k", "--cpu-pm", "yes"};
	assert_int_equal(parse(bad_pm, 5, &o, err), -1);
	assert_non_null(strstr(err, "invalid --cpu-pm 'yes': use on or off"));
}

/* A table with every kind of row, parsed as a spec. */
struct tspec {
	char path[16];
	bool ro, sw;
	int n, mode;
	unsigned int u;
	uint64_t us, size;
};

static int tspec_path(const struct opt *o, const char *val, void *target, char *err, size_t errlen)
{
	(void)o;
	struct tspec *t = target;
	if (!*val || strlen(val) >= sizeof(t->path)) {
		snprintf(err, errlen, "bad path '%s'", val);
		return -1;
	}
	strcpy(t->path, val);
	return 0;
}

static const char *const modes[] = {"off", "on", "all", NULL};
static const struct opt topts[] = {
    {.name = "path",
     .type = OPT_CUSTOM,
     .flags = OPT_POSITIONAL | OPT_REQUIRED,
     .parse = tspec_path,
     .metavar = "PATH",
     .help = "the path"},
    {.name = "ro", .type = OPT_FLAG, .off = offsetof(struct tspec, ro), .help = "read-only"},
    {.name = "sw",
     .type = OPT_ONOFF,
     .off = offsetof(struct tspec, sw),
     .hint = "use on or off",
     .metavar = "on|off",
     .help = "a switch"},
    {.name = "n",
     .type = OPT_INT,
     .off = offsetof(struct tspec, n),
     .flags = OPT_ONCE,
     .min = 1,
     .max = 9,
     .hint = "1-9",
     .metavar = "N",
     .help = "a number"},
    {.name = "mode",
     .type = OPT_ENUM,
     .off = offsetof(struct tspec, mode),
     .choices = modes,
     .hint = "use off, on or all",
     .metavar = "MODE",
     .help = "a mode"},
    {.name = "u",
     .type = OPT_UINT,
     .off = offsetof(struct tspec, u),
     .max = 5,
     .hint = "0-5",
     .metavar = "U",
     .help = "unsigned"},
    {.name = "us",
     .type = OPT_U64,
     .off = offsetof(struct tspec, us),
     .min = 1,
     .max = 100,
     .scale = 1000,
     .hint = "microseconds",
     .metavar = "USEC",
     .help = "a time"},
    {.name = "size",
     .type = OPT_SIZE,
     .off = offsetof(struct tspec, size),
     .min = 1024,
     .max = 1ULL << 30,
     .hint = "1K-1G",
     .metavar = "SIZE",
     .help = "a size"},
    {.name = "secret", .type = OPT_FLAG, .off = offsetof(struct tspec, sw)},
};
static const struct opt_table ttable = OPT_TABLE(topts, "test option", NULL);

static int tparse(const char *spec, struct tspec *t, char *err)
{
	memset(t, 0, sizeof(*t));
	err[0] = '\0';
	return opt_parse_spec(&ttable, spec, t, err, 256);
}

static void test_spec_values(void **state)
{
	(void)state;
	struct tspec t;
	char err[256];
	assert_int_equal(tparse("p,ro,sw=on,n=3,mode=all,u=0,us=7,size=4K", &t, err), 0);
	assert_string_equal(t.path, "p");
	assert_true(t.ro);
	assert_true(t.sw);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.mode, 2);
	assert_int_equal(t.u, 0);
	assert_int_equal(t.us, 7000); /* scaled */
	assert_int_equal(t.size, 4096);
	assert_int_equal(tparse("p=x,mode=on,mode=off", &t, err), 0); /* the last wins */
	assert_string_equal(t.path, "p=x"); /* the positional item is taken whole */
	assert_int_equal(t.mode, 0);
}

static void expect_spec_error(const char *spec, const char *want)
{
	struct tspec t;
	char err[256];
	if (tparse(spec, &t, err) != -1)
		fail_msg("spec '%s' was taken", spec);
	if (!strstr(err, want))
		fail_msg("spec '%s': got '%s', want '%s'", spec, err, want);
	assert_null(strchr(err, '\n'));
}

static void test_spec_errors(void **state)
{
	(void)state;
	expect_spec_error("", "bad path ''");
	expect_spec_error("p,n=0", "invalid n=0 (1-9)");
	expect_spec_error("p,n=10", "invalid n=10 (1-9)");
	expect_spec_error("p,n=-1", "invalid n=-1");
	expect_spec_error("p,n= 1", "invalid n= 1");
	expect_spec_error("p,n=2,n=3", "n= given twice");
	expect_spec_error("p,n", "invalid n= (needs a value)");
	expect_spec_error("p,ro=1", "ro takes no value");
	expect_spec_error("p,sw=yes", "invalid sw=yes (use on or off)");
	expect_spec_error("p,mode=some", "invalid mode=some (use off, on or all)");
	expect_spec_error("p,u=6", "invalid u=6 (0-5)");
	expect_spec_error("p,us=0", "invalid us=0");
	expect_spec_error("p,size=0", "invalid size=0 (1K-1G)");
	expect_spec_error("p,size=2G", "invalid size=2G");
	/* Unknown keys list the known ones; hidden rows stay hidden. */
	expect_spec_error("p,colour=blue", "unknown test option 'colour' (known: ro, sw, n, mode");
	expect_spec_error("p,", "unknown test option ''");
	expect_spec_error("p,path=q", "unknown test option 'path'");
	struct tspec t;
	char err[256];
	assert_int_equal(tparse("p,colour=blue", &t, err), -1);
	assert_null(strstr(err, "secret"));
}

/* Issue 32.3: a value given apart (the API's path or tap) is taken whole,
 * commas and all; the rest of the spec is options only. */
static void test_spec_with(void **state)
{
	(void)state;
	struct tspec t;
	char err[256];
	memset(&t, 0, sizeof(t));
	assert_int_equal(opt_parse_spec_with(&ttable, "path", "/a,ro,n=9", "", &t, err, 256), 0);
	assert_string_equal(t.path, "/a,ro,n=9");
	assert_false(t.ro);
	assert_int_equal(t.n, 0);
	memset(&t, 0, sizeof(t));
	assert_int_equal(opt_parse_spec_with(&ttable, "path", "/b,x", "ro,n=2", &t, err, 256), 0);
	assert_string_equal(t.path, "/b,x");
	assert_true(t.ro);
	assert_int_equal(t.n, 2);
	/* Once-only options given apart and again in the spec: twice. */
	memset(&t, 0, sizeof(t));
	assert_int_equal(opt_parse_spec_with(&ttable, "n", "3", "p,n=4", &t, err, 256), -1);
	assert_non_null(strstr(err, "n= given twice"));
	assert_int_equal(opt_parse_spec_with(&ttable, "n", "0", "p", &t, err, 256), -1);
	assert_non_null(strstr(err, "invalid n=0 (1-9)"));
}

/* Help and synopsis come from the rows: every visible option, nothing
 * hidden. */
static void test_help_from_table(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	opt_print_help(f, &ttable, true);
	opt_print_synopsis(f, &ttable, true, 2, 2, 60);
	fclose(f);
	for (size_t i = 0; i < ttable.n; i++) {
		char want[64];
		if (!topts[i].help)
			continue;
		snprintf(want, sizeof(want), "%s%s%s", topts[i].name, topts[i].metavar ? "=" : "",
			 topts[i].metavar ? topts[i].metavar : "");
		if (topts[i].flags & OPT_POSITIONAL)
			snprintf(want, sizeof(want), "%s", topts[i].metavar);
		if (!strstr(buf, want))
			fail_msg("help lacks '%s':\n%s", want, buf);
		if (!strstr(buf, topts[i].help))
			fail_msg("help lacks '%s'", topts[i].help);
	}
	assert_null(strstr(buf, "secret"));
	free(buf);
	/* skiff run --help names every device option and the run options. */
	f = open_memstream(&buf, &len);
	run_opts_usage(f);
	fclose(f);
	static const char *const must[] = {"--kernel BZIMAGE", "--disk",	 "--net",
					   "tap=NAME",	       "vhost=on|off",	 "poll-idle=USEC",
					   "--iothreads N",    "--api-sock PATH"};
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (!strstr(buf, must[i]))
			fail_msg("run --help lacks '%s'", must[i]);
	free(buf);
}

static void test_run_opts_devices(void **state)
{
	(void)state;
	struct run_opts o;
	char err[256];
	const char *args[] = {"run",   "--kernel", "k",	     "--disk",
			      "a.img", "--net",	   "tap=t0", "--disk=b.img,ro"};
	assert_int_equal(parse(args, 8, &o, err), 0);
	assert_int_equal(o.vm.nr_devs, 3);
	assert_string_equal(o.vm.devs[0].option, "disk");
	assert_string_equal(o.vm.devs[1].option, "net");
	assert_string_equal(o.vm.devs[1].spec, "tap=t0");
	assert_string_equal(o.vm.devs[2].spec, "b.img,ro");
	const char *help[] = {"run", "--help"};
	assert_int_equal(parse(help, 2, &o, err), 1);
	const char *flagval[] = {"run", "--kernel", "k", "--stats=1"};
	assert_int_equal(parse(flagval, 4, &o, err), -1);
	assert_non_null(strstr(err, "takes no value"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_size),	       cmocka_unit_test(test_run_opts),
	    cmocka_unit_test(test_run_opts_iothreads), cmocka_unit_test(test_run_opts_pin),
	    cmocka_unit_test(test_run_opts_cpu_pm),    cmocka_unit_test(test_run_opts_devices),
	    cmocka_unit_test(test_spec_values),	       cmocka_unit_test(test_spec_errors),
	    cmocka_unit_test(test_spec_with),	       cmocka_unit_test(test_help_from_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
