// SPDX-License-Identifier: Apache-2.0
/* `--vsock cid=N[,uds=PATH][,backend=hybrid|vhost]`: the option table and
 * the checks that need more than one key. */
#include <stdio.h>
#include <string.h>

#include "devices/virtio-vsock/virtio_vsock.h"

static int vsock_spec_uds(const struct opt *o, const char *val, void *target, char *err,
			  size_t errlen)
{
	(void)o;
	struct vsock_spec *s = target;
	size_t n = strlen(val);
	if (!n) {
		snprintf(err, errlen, "empty uds path");
		return -1;
	}
	if (n > VSOCK_UDS_MAX) {
		/* "<uds>_<port>" must fit a Unix socket's 108 bytes too. */
		snprintf(err, errlen, "uds path longer than %d bytes", VSOCK_UDS_MAX);
		return -1;
	}
	memcpy(s->uds, val, n + 1);
	return 0;
}

static const char *const vsock_backend_names[] = {"hybrid", "vhost", NULL};

static const struct opt vsock_opts[] = {
    {.name = "cid",
     .type = OPT_U64,
     .off = offsetof(struct vsock_spec, cid),
     .flags = OPT_ONCE | OPT_REQUIRED,
     /* 0-2 are the hypervisor's, the local and the host's; 2^32 - 1 is
      * VMADDR_CID_ANY (virtio 1.2 5.10.4: all four reserved). */
     .min = VSOCK_CID_MIN,
     .max = VSOCK_CID_MAX,
     .scale = 1,
     .hint = "the guest's CID: 3 to 4294967294; 0-2 and 4294967295 are reserved",
     .metavar = "N",
     .help = "the guest's context ID (3 to 4294967294)"},
    {.name = "uds",
     .type = OPT_CUSTOM,
     .off = offsetof(struct vsock_spec, uds),
     .flags = OPT_ONCE | OPT_HOST_PATH,
     .parse = vsock_spec_uds,
     .metavar = "PATH",
     .help = "backend=hybrid: the Unix socket skiff listens on; a guest's connection to port "
	     "P goes to PATH_P"},
    {.name = "backend",
     .type = OPT_ENUM,
     .off = offsetof(struct vsock_spec, backend),
     .flags = OPT_ONCE,
     .choices = vsock_backend_names,
     .hint = "use hybrid or vhost",
     .metavar = "hybrid|vhost",
     .help = "hybrid (default): host ends are Unix sockets, as Firecracker's; vhost: the host "
	     "kernel's /dev/vhost-vsock, host programs use AF_VSOCK"},
};
const struct opt_table vsock_spec_table = OPT_TABLE(vsock_opts, "vsock option", NULL);

void vsock_spec_init(void *spec)
{
	memset(spec, 0, sizeof(struct vsock_spec));
}

int vsock_spec_check(const void *spec, char *err, size_t errlen)
{
	const struct vsock_spec *s = spec;
	if (s->backend == VSOCK_BACKEND_HYBRID && !s->uds[0]) {
		snprintf(err, errlen,
			 "uds=PATH is required: the host's Unix socket path (or backend=vhost)");
		return -1;
	}
	if (s->backend == VSOCK_BACKEND_VHOST && s->uds[0]) {
		snprintf(err, errlen,
			 "uds= is for backend=hybrid: with backend=vhost host programs use "
			 "AF_VSOCK");
		return -1;
	}
	return 0;
}

const char *vsock_spec_needs_ioeventfd(const void *spec)
{
	const struct vsock_spec *s = spec;
	return s->backend == VSOCK_BACKEND_VHOST ? "backend=vhost" : NULL;
}
