// SPDX-License-Identifier: Apache-2.0
/* A virtio-balloon driven by a unit test on a fake guest RAM: built from
 * the boot options BOOT with the driver's features, its queues' rings at
 * RING_GPA (QSZ entries each), activated as DRIVER_OK activates it.
 * Queue notifications are counted in notified[]. The includer defines
 * QSZ, RING_GPA and BOOT, and includes cmocka, fake_mem.h and the
 * balloon's headers first. */
#ifndef SKIFF_TEST_BALLOON_FX_H
#define SKIFF_TEST_BALLOON_FX_H

#define FEATURES                                                                                   \
	((1ull << VIRTIO_BALLOON_F_STATS_VQ) | (1ull << VIRTIO_BALLOON_F_DEFLATE_ON_OOM) |         \
	 (1ull << 32))

static int notified[4];

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	notified[q]++;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
};

static uint64_t ring(unsigned int q, unsigned int which)
{
	return RING_GPA + q * 0x4000 + which * 0x1000;
}

static struct virtio_dev *make(struct fake_mem *fm)
{
	struct balloon_spec s;
	char err[200] = "";
	balloon_spec_init(&s);
	assert_int_equal(opt_parse_spec(&balloon_spec_table, BOOT, &s, err, sizeof(err)), 0);
	struct virtio_dev *v =
	    virtio_balloon_create("virtio-balloon0", &s, &fm->gm, err, sizeof(err));
	assert_non_null(v);
	v->transport = &fake_transport;
	v->driver_features = FEATURES & (v->host_features | 1ull << 32);
	for (unsigned int q = 0; q < v->num_queues; q++)
		assert_int_equal(virtq_init(&v->vqs[q], "balloon q", v->queue_max_size, NULL, NULL),
				 0);
	return v;
}

/* The driver's setup of every queue, then DRIVER_OK. */
static void driver_ok(struct virtio_dev *v, struct fake_mem *fm)
{
	for (unsigned int q = 0; q < v->num_queues; q++) {
		struct virtq *vq = &v->vqs[q];
		assert_int_equal(virtq_set_size(vq, QSZ), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, ring(q, 0)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, ring(q, 1)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, ring(q, 2)), 0);
		assert_int_equal(virtq_activate(vq, &fm->gm), 0);
	}
	assert_int_equal(v->ops->activate(v), 0);
}

#endif
