/* virtio-net (virtio 1.2 §5.1) on an existing Linux tap: rx/tx queues,
 * checksum and TSO offloads both ways, mergeable rx buffers.
 *
 * --net tap=NAME[,mac=MAC]
 *   tap  an existing tap interface (ip tuntap add NAME mode tap); skiff
 *        never creates one.
 *   mac  a unicast MAC; default 02:73:6b:69:66:NN, NN the device index
 *        (virtio-net0 gets ...:00). Two devices may not share a MAC. */
#ifndef SKIFF_VIRTIO_NET_H
#define SKIFF_VIRTIO_NET_H

#include "core/machine.h"

/* --net SPEC: validates SPEC, opens the tap, attaches the device to the PCI
 * transport and the I/O thread. Returns 0, or -1 with a one-line reason. */
int virtio_net_add(struct machine *m, const char *spec, char *err, size_t errlen);

#endif
