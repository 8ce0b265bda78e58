/* Temporary wiring of the e1000 to the command line (--net ...,model=e1000)
 * until the device manager takes device kinds from a table. */
#ifndef SKIFF_E1000_ADD_H
#define SKIFF_E1000_ADD_H

#include <stddef.h>

#include "core/machine.h"
#include "devices/virtio_net_spec.h"

int e1000_add(struct machine *m, const struct net_spec *s, char *err, size_t errlen);

#endif
