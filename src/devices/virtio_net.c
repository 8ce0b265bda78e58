#include "devices/virtio_net.h"

#include <stdio.h>

int virtio_net_add(struct machine *m, const char *spec, char *err, size_t errlen)
{
	(void)m;
	(void)spec;
	snprintf(err, errlen, "--net is not implemented yet");
	return -1;
}
