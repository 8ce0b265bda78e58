/* Temporary: --vfio-pci until the device manager (issue 9) owns it. */
#ifndef SKIFF_CLI_VFIO_WIRE_H
#define SKIFF_CLI_VFIO_WIRE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/machine.h"

/* ADDR[,mmap=on|off]; 0 or -1 with a reason. */
int vfio_spec_parse(const char *spec, char addr[32], bool *mmap, char *err, size_t errlen);
/* The spec and what the host can tell before a VM exists. */
int vfio_spec_check(const char *spec, char *err, size_t errlen);
/* A machine_add_fn. */
int vfio_pci_add(struct machine *m, const char *spec, char *err, size_t errlen);

#endif
