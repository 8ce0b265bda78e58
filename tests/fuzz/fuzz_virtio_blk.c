// SPDX-License-Identifier: Apache-2.0
/* virtio-blk (src/devices/virtio-blk/virtio_blk.c, blk_req.c) on a 64 KiB memfd
 * image: fuzz bytes build request chains (header, data, status; direct or
 * indirect), kick, reset and read the config space, on a read-write and a
 * read-only disk. The device's own worker thread does the I/O; each kick is
 * followed by virtio_blk_drain, so a run is deterministic. Guest RAM
 * changes under the parser (fuzz_common.h). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devices/virtio-blk/virtio_blk.h"
#include "fuzz_common.h"
#include "virtio/virtio_dev.h"

#define IMAGE_SIZE 0x10000

static struct virtio_dev *disks[2]; /* read-write, read-only */
static int image_fd[2] = {-1, -1};
static unsigned int notifies;

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
	notifies++;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char spec[64], err[200];
	(void)argc, (void)argv;
	for (int i = 0; i < 2; i++) {
		/* One image each: the read-write disk locks its file. */
		image_fd[i] = memfd_create("fuzz-disk", 0);
		if (image_fd[i] < 0 || ftruncate(image_fd[i], IMAGE_SIZE) < 0)
			abort();
		snprintf(spec, sizeof(spec), "/proc/self/fd/%d%s", image_fd[i], i ? ",ro" : "");
		disks[i] = virtio_blk_create(spec, (unsigned int)i, err, sizeof(err));
		if (!disks[i]) {
			fprintf(stderr, "fuzz_virtio_blk: %s\n", err);
			abort();
		}
		disks[i]->transport = &fake_transport;
		disks[i]->gm = &fz_gm;
	}
	return 0;
}

static void kick(struct virtio_dev *v, unsigned int q)
{
	v->ops->queue_notify(v, q);
	virtio_blk_drain(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int which = size && data[size - 1] & 1;
	struct virtio_dev *v = disks[which];
	struct virtq *vq = &v->vqs[0];
	struct fz_q g;
	bool active = false;

	fz_begin(data, size);
	/* A fresh, zeroed image each run. */
	if (ftruncate(image_fd[which], 0) < 0 || ftruncate(image_fd[which], IMAGE_SIZE) < 0)
		abort();
	v->driver_features = (v->host_features | 1ULL << VIRTIO_F_VERSION_1 |
			      1ULL << VIRTQ_F_INDIRECT_DESC | 1ULL << VIRTQ_F_EVENT_IDX) &
			     ~((uint64_t)fz_u8() << 28);
	if (virtio_dev_init_queues(v) < 0)
		abort();
	fzq_layout(&g, 0, (uint16_t)(1u << (fz_u8() % 8))); /* 1..128 */
	for (unsigned int steps = 0; fz_more() && steps < 1024; steps++) {
		uint8_t op = fz_u8();
		switch (op % 8) {
		case 0: /* DRIVER_OK, as the transport does it */
			if (active)
				break;
			fzq_configure(vq, &g, v->driver_features);
			if (virtq_activate(vq, &fz_gm) == 0 && v->ops->activate(v) == 0)
				active = true;
			virtio_blk_drain(v);
			break;
		case 1:
		case 2:
			kick(v, op & 0x80 ? fz_u8() : 0);
			break;
		case 3: /* reset, as the transport does it */
			v->ops->reset(v);
			virtq_reset(vq);
			g.avail_idx = 0;
			active = false;
			break;
		case 4: {
			uint8_t buf[8];
			uint32_t off = fz_u8() % 64, len = 1 + fz_u8() % 8;
			if (off + len <= v->config_len)
				v->ops->config_read(v, off, buf, len);
			break;
		}
		default:
			fzq_driver_op(&g, fz_u8());
		}
	}
	/* Leave the disk idle for the next input. */
	v->ops->reset(v);
	virtq_reset(vq);
	return 0;
}
