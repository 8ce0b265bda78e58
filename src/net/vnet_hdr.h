// SPDX-License-Identifier: Apache-2.0
/* The virtio-net header both NIC models exchange with the tap (virtio 1.2
 * 5.1.6; TUNSETVNETHDRSZ 12): struct virtio_net_hdr_v1 and its flags come
 * from the kernel's uapi header, not a copy. With VERSION_1 the header
 * always carries num_buffers: 12 bytes, little-endian fields. What is
 * skiff's own here is shared policy: where a TCP checksum sits and the
 * smallest MSS a guest may ask the host to segment at. */
#ifndef SKIFF_NET_VNET_HDR_H
#define SKIFF_NET_VNET_HDR_H

#include <linux/virtio_net.h>

#define VIRTIO_NET_HDR_LEN 12
_Static_assert(sizeof(struct virtio_net_hdr_v1) == VIRTIO_NET_HDR_LEN, "virtio_net_hdr_v1 layout");
#define VIRTIO_NET_TCP_CSUM_OFF 16 /* offsetof(struct tcphdr, check) */
/* The smallest segment size a guest may ask the host to cut TCP into
 * (virtio-net GSO, e1000 TSO): Linux's TCP_MIN_MSS (include/net/tcp.h,
 * "(60+60+8) - (20+20)"), below which Linux's own TCP never sends. Without
 * a floor a 64 KiB frame of MSS 1 becomes some 65,000 host segments, each
 * an skb, for one descriptor of guest work; at 88 at most 745. A smaller
 * MSS is dropped and counted. */
#define NET_GSO_MIN_MSS 88

#endif
