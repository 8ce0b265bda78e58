/* virtio-net (stub until the device lands). */
#ifndef SKIFF_VIRTIO_NET_H
#define SKIFF_VIRTIO_NET_H

#include "core/machine.h"

/* --net SPEC */
int virtio_net_add(struct machine *m, const char *spec, char *err, size_t errlen);

#endif
