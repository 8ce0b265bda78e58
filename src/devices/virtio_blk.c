#include "devices/virtio_blk.h"

#include <stdio.h>

int virtio_blk_add(struct machine *m, const char *spec, char *err, size_t errlen)
{
	(void)m;
	(void)spec;
	snprintf(err, errlen, "--disk is not implemented yet");
	return -1;
}
