/* Everything a device needs to attach itself: the VM, the PCI bus, the I/O
 * thread, and the VM-wide I/O-path choices from the command line. */
#ifndef SKIFF_MACHINE_H
#define SKIFF_MACHINE_H

#include <stdbool.h>
#include <stddef.h>

struct vm;
struct pci_bus;
struct iothread;

struct machine {
	struct vm *vm;
	struct pci_bus *pci;
	struct iothread *io;
	bool use_ioeventfd;		/* false with --no-ioeventfd: kicks trap to the vCPU */
	unsigned int nr_disks, nr_nets; /* for naming: virtio-blk0, virtio-net0 */
};

/* A device kind given on the command line (--disk SPEC, --net SPEC):
 * validates SPEC and attaches the device. Returns 0, or -1 with a one-line
 * reason in err; the caller exits with status 2 (bad input). */
typedef int (*machine_add_fn)(struct machine *m, const char *spec, char *err, size_t errlen);

#endif
