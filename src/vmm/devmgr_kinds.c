// SPDX-License-Identifier: Apache-2.0
/* The device kinds: each kind's folder defines its row (its *_kind.c,
 * declared in its public header), and this list names them, one line and
 * one include per kind (docs/ARCHITECTURE.md, "Where a new device goes").
 * The order is the command line's: --help lists the options in it, and
 * the first kind of an option (--net) is its default model. */
#include "devices/e1000/e1000_kind.h"
#include "devices/vfio/vfio_kind.h"
#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-net/virtio_net.h"
#include "devices/virtio-rng/virtio_rng.h"
#include "devices/virtio-vsock/virtio_vsock.h"
#include "vmm/devmgr.h"

/* One line per kind, so adding or removing one is a one-line change
 * (clang-format would fill the lines). */
/* clang-format off */
const struct dm_kind *const dm_kinds[] = {
    &virtio_blk_kind,
    &virtio_net_kind,
    &e1000_kind,
    &vfio_kind,
    &virtio_rng_kind,
    &virtio_balloon_kind,
    &virtio_vsock_kind,
};
/* clang-format on */
const size_t dm_nr_kinds = sizeof(dm_kinds) / sizeof(dm_kinds[0]);
