/* Everything a device needs to attach itself: the VM, the PCI bus, the I/O
 * threads, and the VM-wide I/O-path choices from the command line. */
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
	struct iothread *io; /* an array of nr_io I/O threads (--iothreads N) */
	unsigned int nr_io;
	bool use_ioeventfd;		/* false with --no-ioeventfd: kicks trap to the vCPU */
	unsigned int nr_disks, nr_nets; /* for naming: virtio-blk0, virtio-net0 */
};

/* The I/O thread for the device being added: whole devices go round-robin
 * over the I/O threads in command-line order (the i-th --disk/--net is
 * served by io[i % nr_io]). Whole devices, not queues: a device's queues
 * and its other event sources share state (virtio-net's tap handler runs
 * both its RX and TX paths; virtio-blk's queue and its worker share one
 * lock), and one thread per device keeps each queue's work on a single
 * thread without new locking. NULL without I/O threads (tests). */
struct iothread *machine_iothread(const struct machine *m);

/* A device kind given on the command line (--disk SPEC, --net SPEC):
 * validates SPEC and attaches the device. Returns 0, or -1 with a one-line
 * reason in err; the caller exits with status 2 (bad input). */
typedef int (*machine_add_fn)(struct machine *m, const char *spec, char *err, size_t errlen);

#endif
