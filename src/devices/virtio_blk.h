/* virtio-blk (stub until the device lands). */
#ifndef SKIFF_VIRTIO_BLK_H
#define SKIFF_VIRTIO_BLK_H

#include "core/machine.h"

/* --disk SPEC */
int virtio_blk_add(struct machine *m, const char *spec, char *err, size_t errlen);

#endif
