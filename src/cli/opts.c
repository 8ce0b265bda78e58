#include "cli/opts.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iothread/iothread.h"

int parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned int shift;
	switch (toupper((unsigned char)*end)) {
	case '\0':
	case 'M':
		shift = 20;
		break;
	case 'K':
		shift = 10;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (*end && end[1] != '\0' && strcasecmp(end + 1, "iB") != 0 && strcasecmp(end + 1, "B"))
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_int(const char *s, long min, long max, long *out)
{
	if (!s || !*s)
		return -1;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

void run_opts_usage(void)
{
	printf("usage: skiff run --kernel BZIMAGE [options]\n"
	       "  --kernel PATH    Linux x86-64 bzImage to boot\n"
	       "  --initrd PATH    initramfs\n"
	       "  --cmdline STR    kernel command line (default \"" OPTS_DEFAULT_CMDLINE "\")\n"
	       "  --mem SIZE       guest RAM, e.g. 256M, 2G (default 256M)\n"
	       "  --cpus N         vCPUs, 1-%d (default 1)\n"
	       "  --disk PATH[,ro][,poll=...]  virtio-blk disk from a raw image (repeatable)\n"
	       "  --net tap=NAME[,mac=MAC][,poll=...][,vhost=on]  virtio-net on a tap device\n"
	       "                   (repeatable); both take poll=off|adaptive|always (default\n"
	       "                   off), poll-start=K, poll-window=, poll-idle=, poll-max=USEC\n"
	       "                   model=e1000: an emulated Intel 82540EM instead, with\n"
	       "                   coalesce=off|on|all (default on: batch only register\n"
	       "                   writes that may wait; all also batches the TX doorbell,\n"
	       "                   which only reproduces the latency trap for benchmarks)\n"
	       "  --iothreads N    I/O threads, 1-%d (default 1); devices are spread over\n"
	       "                   them round-robin in command-line order\n"
	       "  --no-ioeventfd   trap queue kicks to the vCPU thread (for comparison)\n"
	       "  --unpack host|guest  decompress the kernel on the host, cached (default),\n"
	       "                   or let the bzImage decompress itself in the guest\n"
	       "  --timing         print time to first KVM_RUN\n"
	       "  --stats          print exit accounting when the guest stops\n"
	       "  --stats-json FILE  write the same as JSON\n"
	       "  --no-seccomp     do not filter system calls once the VM runs\n"
	       "  --api-sock PATH  control socket for 'skiff stat PATH'\n"
	       "Console: Ctrl-A x quits, Ctrl-A Ctrl-A sends Ctrl-A.\n",
	       OPTS_CPUS_MAX, IOTHREAD_MAX);
}

enum {
	OPT_KERNEL = 256,
	OPT_INITRD,
	OPT_CMDLINE,
	OPT_MEM,
	OPT_CPUS,
	OPT_TIMING,
	OPT_STATS,
	OPT_HELP,
	OPT_DISK,
	OPT_NET,
	OPT_NO_IOEVENTFD,
	OPT_UNPACK,
	OPT_STATS_JSON,
	OPT_NO_SECCOMP,
	OPT_API_SOCK,
	OPT_IOTHREADS
};

int run_opts_parse(int argc, char **argv, struct run_opts *o, char *err, size_t errlen)
{
	static const struct option longopts[] = {
	    {"kernel", required_argument, NULL, OPT_KERNEL},
	    {"initrd", required_argument, NULL, OPT_INITRD},
	    {"cmdline", required_argument, NULL, OPT_CMDLINE},
	    {"mem", required_argument, NULL, OPT_MEM},
	    {"cpus", required_argument, NULL, OPT_CPUS},
	    {"timing", no_argument, NULL, OPT_TIMING},
	    {"stats", no_argument, NULL, OPT_STATS},
	    {"help", no_argument, NULL, OPT_HELP},
	    {"disk", required_argument, NULL, OPT_DISK},
	    {"net", required_argument, NULL, OPT_NET},
	    {"no-ioeventfd", no_argument, NULL, OPT_NO_IOEVENTFD},
	    {"unpack", required_argument, NULL, OPT_UNPACK},
	    {"stats-json", required_argument, NULL, OPT_STATS_JSON},
	    {"no-seccomp", no_argument, NULL, OPT_NO_SECCOMP},
	    {"api-sock", required_argument, NULL, OPT_API_SOCK},
	    {"iothreads", required_argument, NULL, OPT_IOTHREADS},
	    {NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof(*o));
	o->cmdline = OPTS_DEFAULT_CMDLINE;
	o->mem = 256ULL << 20;
	o->cpus = 1;
	o->iothreads = 1;
	opterr = 0;
	optind = 1;
	long v;
	int c;
	while ((c = getopt_long(argc, argv, "+:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_KERNEL:
			o->kernel = optarg;
			break;
		case OPT_INITRD:
			o->initrd = optarg;
			break;
		case OPT_CMDLINE:
			o->cmdline = optarg;
			break;
		case OPT_MEM:
			if (parse_size(optarg, &o->mem) < 0 || o->mem < OPTS_MEM_MIN ||
			    o->mem > OPTS_MEM_MAX) {
				snprintf(err, errlen,
					 "invalid --mem '%s': use a size from 16M to 1T, e.g. 256M "
					 "or 2G",
					 optarg);
				return -1;
			}
			break;
		case OPT_CPUS:
			if (parse_int(optarg, 1, OPTS_CPUS_MAX, &v) < 0) {
				snprintf(err, errlen, "invalid --cpus '%s': use 1 to %d", optarg,
					 OPTS_CPUS_MAX);
				return -1;
			}
			o->cpus = (int)v;
			break;
		case OPT_IOTHREADS:
			if (parse_int(optarg, 1, IOTHREAD_MAX, &v) < 0) {
				snprintf(err, errlen, "invalid --iothreads '%s': use 1 to %d",
					 optarg, IOTHREAD_MAX);
				return -1;
			}
			o->iothreads = (int)v;
			break;
		case OPT_TIMING:
			o->timing = true;
			break;
		case OPT_STATS:
			o->stats = true;
			break;
		case OPT_DISK:
		case OPT_NET:
			if (o->nr_devs == OPTS_MAX_DEVICES) {
				snprintf(err, errlen, "too many devices (at most %d)",
					 OPTS_MAX_DEVICES);
				return -1;
			}
			o->devs[o->nr_devs].kind = c == OPT_DISK ? "disk" : "net";
			o->devs[o->nr_devs++].spec = optarg;
			break;
		case OPT_API_SOCK:
			o->api_sock = optarg;
			break;
		case OPT_NO_SECCOMP:
			o->no_seccomp = true;
			break;
		case OPT_STATS_JSON:
			o->stats_json = optarg;
			break;
		case OPT_UNPACK:
			if (strcmp(optarg, "host") && strcmp(optarg, "guest")) {
				snprintf(err, errlen, "invalid --unpack '%s': use host or guest",
					 optarg);
				return -1;
			}
			o->guest_unpack = !strcmp(optarg, "guest");
			break;
		case OPT_NO_IOEVENTFD:
			o->no_ioeventfd = true;
			break;
		case OPT_HELP:
			run_opts_usage();
			exit(0);
		case ':':
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return -1;
		default:
			snprintf(err, errlen, "unknown option '%s' (see 'skiff run --help')",
				 argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!o->kernel) {
		snprintf(err, errlen, "no kernel given: use --kernel PATH");
		return -1;
	}
	return 0;
}
