// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock (virtio 1.2 §5.10) with Firecracker's hybrid host side:
 * the host end of every guest stream is a Unix socket.
 *
 *  - host -> guest: a host process connects to uds_path, writes
 *    "CONNECT <port>\n"; the device sends the guest a REQUEST to that port
 *    from a host port it assigns (from 1 << 30 up), and on the guest's
 *    RESPONSE writes "OK <assigned port>\n" back; then a byte stream.
 *  - guest -> host: a guest REQUEST to CID 2 port P is connected to
 *    "<uds_path>_<P>"; no listener there is a RST.
 *
 * Flow control is the spec's credit: the device advertises VSOCK_CONN_BUF
 * per connection (what it will hold for a host peer that does not read),
 * and never sends the guest more than the guest advertised. A guest that
 * sends past its credit gets its connection reset, never a bigger buffer.
 * 256 KiB, Linux's own default (VIRTIO_VSOCK_DEFAULT_BUF_SIZE, what
 * vhost-vsock grants): room for four packets of VSOCK_PKT_MAX in flight.
 * With Firecracker's 64 KiB, Linux's driver sent one 64 KiB packet and
 * waited a round trip for credit (guest->host at half QEMU's vhost-vsock,
 * docs/bench/2026-12-07-vsockbuf). The cost: a host peer that stops
 * reading leaves up to 256 KiB per stream in skiff, 256 MiB at
 * VSOCK_MAX_CONNS, allocated only while it waits and counted to the VM.
 *
 * Which thread: the device's own ("vsock", sandbox role SANDBOX_DEVICE with its
 * kind's rules, virtio_vsock_sandbox.c,
 * the one role that may make Unix streams). Kicks that come to an I/O
 * thread or a vCPU wake it through an eventfd; it waits in one epoll fd
 * for them and for its sockets. One mutex holds everything. Nothing
 * blocks: every socket is non-blocking. */
#ifndef SKIFF_VIRTIO_VSOCK_H
#define SKIFF_VIRTIO_VSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/opt.h"
#include "devices/dev_api.h"
#include "devices/dev_metrics.h"
#include "devices/dev_sandbox.h"
#include "devices/device.h"

#define VSOCK_HOST_CID	 2
#define VSOCK_MAX_CONNS	 1024	      /* beyond: RST */
#define VSOCK_CONN_BUF	 (256u << 10) /* per connection, advertised as buf_alloc */
#define VSOCK_PKT_MAX	 (64u << 10)  /* payload of one packet, either way */
#define VSOCK_LOCAL_PORT (1u << 30)   /* host ports assigned from here (Firecracker's) */
#define VSOCK_UDS_MAX	 96	      /* uds_path plus "_<port>" fits sun_path */

#define VSOCK_CID_MIN 3		       /* 0-2: the hypervisor, local, the host */
#define VSOCK_CID_MAX (UINT32_MAX - 1) /* UINT32_MAX: VMADDR_CID_ANY */

enum vsock_backend { VSOCK_BACKEND_HYBRID, VSOCK_BACKEND_VHOST };

/* `--vsock cid=N[,uds=PATH][,backend=hybrid|vhost]` (virtio_vsock_spec.c):
 * uds is required by the hybrid backend and refused by vhost. */
struct vsock_spec {
	uint64_t cid;
	char uds[VSOCK_UDS_MAX + 1];
	int backend; /* enum vsock_backend */
};
extern const struct opt_table vsock_spec_table;
void vsock_spec_init(void *spec);
/* The kind's check (dm_kind.check): uds= against backend=. */
int vsock_spec_check(const void *spec, char *err, size_t errlen);
/* dm_kind.needs_ioeventfd: backend=vhost hands the kicks to the kernel. */
const char *vsock_spec_needs_ioeventfd(const void *spec);
/* PUT /vsock, --config-file's and /vm/config's section (virtio_vsock_api.c). */
extern const struct dev_api vsock_api;
/* Its calls (virtio_vsock_sandbox.c): every backend's, and (dm_kind's
 * sandbox_of) the ones a spec's backend needs. */
extern const struct dev_sandbox vsock_sandbox;
const struct dev_sandbox *vsock_sandbox_of(const void *spec);
/* Its "vsock" group in the metrics line (virtio_vsock_metrics.c). */
extern const struct dev_metrics virtio_vsock_metrics;

/* The device kind behind --vsock (one per VM, as Firecracker's): the
 * hybrid device, or with backend=vhost virtio_vsock_vhost.c's. */
int virtio_vsock_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			    char *err, size_t errlen);

/* backend=vhost (virtio_vsock_vhost.c): the device on the vhost-vsock
 * device node at path ("/dev/vhost-vsock"; tests give another), the
 * guest's CID set there at once: NULL with one line (path missing, the
 * CID in use by another VM) and nothing left open. Its dev_ops in *ops. */
struct virtio_dev *virtio_vsock_vhost_create(const char *name, const struct vsock_spec *s,
					     const char *path, const struct dev_ops **ops,
					     char *err, size_t errlen);
/* The device config space, struct virtio_vsock_config, for both. */
void virtio_vsock_config_cid(uint64_t cid, uint32_t offset, void *buf, uint32_t len);

/* For tests: the device without a transport (the caller fills in
 * vdev->transport, gm and the queues). It listens on s->uds at once.
 * NULL with a reason on error. */
struct virtio_dev *virtio_vsock_create(const char *name, const struct vsock_spec *s, char *err,
				       size_t errlen);
void virtio_vsock_destroy(struct virtio_dev *vdev);
/* Serves whatever the host sockets have ready (the device's thread calls
 * it when its epoll fd fires; tests call it directly). */
void virtio_vsock_poll(struct virtio_dev *vdev);
/* The epoll fd the I/O thread watches. */
int virtio_vsock_epoll_fd(struct virtio_dev *vdev);
void virtio_vsock_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx);
/* Snapshots (virtio_vsock_snap.c), as struct dev_ops' save and restore
 * (dev: the struct virtio_dev): its guest CID; streams are not saved, and
 * a restored device sends the guest a TRANSPORT_RESET event once active.
 * 0, or -1 with one line, the device unchanged. */
struct snap_writer;
int virtio_vsock_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		      size_t errlen);
int virtio_vsock_restore(void *dev, const void *data, size_t len, char *err, size_t errlen);
/* A live migration's switch (dev_ops.handover, virtio_vsock_mig.c):
 * release closes the host streams and the listener and unlinks the
 * socket file bind made, so that the target (which builds its devices
 * only after the source's RELEASED) can listen on the same uds; !release
 * listens again (a failed switch) and owes the guest a TRANSPORT_RESET.
 * 0, or -1 with one line. */
int virtio_vsock_handover(void *dev, bool release, char *err, size_t errlen);
/* dev_ops.hold: the device's thread leaves guest memory alone while on. */
void virtio_vsock_hold(void *dev, bool on);

/* Its row in the device manager's table of kinds (virtio_vsock_kind.c). */
struct dm_kind;
extern const struct dm_kind virtio_vsock_kind;

#endif
