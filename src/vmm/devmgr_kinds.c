// SPDX-License-Identifier: Apache-2.0
/* The device kinds: one row each. Adding a kind is a row here plus the
 * device's own files (docs/ARCHITECTURE.md, "Where a new device goes").
 * The command line's --OPTION, its --help lines and its key=value options
 * all come from these rows and the option tables they name. */
#include "devices/e1000/e1000_kind.h"
#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "devices/virtio-net/virtio_net.h"
#include "devices/virtio-net/virtio_net_spec.h"
#include "devices/virtio-rng/virtio_rng.h"
#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/vfio/vfio_kind.h"
#include "vmm/devmgr.h"

const struct dm_kind dm_kinds[] = {
    {.option = "disk",
     .prefix = "virtio-blk",
     .metavar = "PATH[,ro][,poll=...]",
     .help = "virtio-blk disk from a raw image (repeatable)",
     .spec = &blk_spec_table,
     .spec_size = sizeof(struct blk_spec),
     .spec_init = blk_spec_init,
     .transport = DM_VIRTIO_PCI,
     .create = virtio_blk_new_device,
     .metrics = &virtio_blk_metrics,
     .needs_ioeventfd = virtio_blk_needs_ioeventfd},
    {.option = "net",
     .model = "virtio",
     .prefix = "virtio-net",
     .metavar = "tap=NAME[,mac=MAC][,model=...][,...]",
     .help = "network card on an existing tap (repeatable)",
     .spec = &net_spec_table,
     .spec_size = sizeof(struct net_spec),
     .spec_init = net_spec_init,
     .is_net = true,
     .transport = DM_VIRTIO_PCI,
     .check = virtio_net_spec_check,
     .create = virtio_net_new_device,
     .sandbox = &virtio_net_sandbox,
     .metrics = &virtio_net_metrics,
     .needs_ioeventfd = virtio_net_needs_ioeventfd},
    {.option = "net",
     .model = "e1000",
     .prefix = "e1000-",
     .spec = &net_spec_table,
     .spec_size = sizeof(struct net_spec),
     .spec_init = net_spec_init,
     .check = e1000_spec_check,
     .is_net = true,
     .transport = DM_PCI,
     .create = e1000_new_device,
     .sandbox = &e1000_sandbox},
    {.option = "vfio-pci",
     .prefix = "vfio",
     .metavar = "ADDR[,mmap=on|off][,rom=on|off]",
     .help = "pass a host PCI device through (bound to vfio-pci; repeatable)",
     .spec = &vfio_spec_table,
     .spec_size = sizeof(struct vfio_spec),
     .spec_init = vfio_spec_init,
     .check = vfio_spec_check,
     .pins_ram = true,
     .check_set = vfio_spec_check_set,
     .transport = DM_PCI,
     .create = vfio_new_device,
     .sandbox = &vfio_sandbox,
     .no_snapshot = "a VFIO passthrough device's state is in the host's hardware"},

    {.option = "rng",
     .prefix = "virtio-rng",
     .metavar = "[bw=SIZE:MS[:BURST]][,ops=...]",
     .help = "virtio-rng entropy from the host's getrandom (Firecracker's /entropy)",
     .cli_flags = OPT_OPTVAL,
     .spec = &rng_spec_table,
     .spec_size = sizeof(struct rng_spec),
     .spec_init = rng_spec_init,
     .transport = DM_VIRTIO_PCI,
     .create = virtio_rng_new_device,
     .api = &rng_api,
     .metrics = &virtio_rng_metrics},
    {.option = "balloon",
     .prefix = "virtio-balloon",
     .metavar = "amount=MIB[,stats=SECS][,...]",
     .help = "virtio-balloon: take guest memory back (Firecracker's /balloon)",
     .spec = &balloon_spec_table,
     .spec_size = sizeof(struct balloon_spec),
     .spec_init = balloon_spec_init,
     .discards_ram = true,
     .transport = DM_VIRTIO_PCI,
     .create = virtio_balloon_new_device,
     .api = &balloon_api},
    {.option = "vsock",
     .prefix = "virtio-vsock",
     .metavar = "cid=N[,uds=PATH][,backend=...]",
     .help = "virtio-vsock to host Unix sockets (Firecracker's hybrid /vsock), or to "
	     "AF_VSOCK through /dev/vhost-vsock (backend=vhost)",
     .spec = &vsock_spec_table,
     .spec_size = sizeof(struct vsock_spec),
     .spec_init = vsock_spec_init,
     .check = vsock_spec_check,
     .needs_ioeventfd = vsock_spec_needs_ioeventfd,
     .transport = DM_VIRTIO_PCI,
     .create = virtio_vsock_new_device,
     .api = &vsock_api,
     .sandbox = &vsock_sandbox},
};
const size_t dm_nr_kinds = sizeof(dm_kinds) / sizeof(dm_kinds[0]);
