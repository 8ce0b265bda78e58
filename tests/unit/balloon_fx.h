// SPDX-License-Identifier: Apache-2.0
/* A virtio-balloon driven by a unit test on a fake guest RAM: built from
 * the boot options BOOT with the driver's features, its queues' rings at
 * RING_GPA (QSZ entries each), activated as DRIVER_OK activates it.
 * Queue notifications are counted in notified[]; save_section gives
 * back what the balloon saves. The includer defines QSZ, RING_GPA,
 * RAM_SIZE and BOOT, and includes cmocka, stdlib.h, string.h, core/snap.h, fake_mem.h
 * and the balloon's headers first. */
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

/* Two balloons on RAMs of their own (RAM_SIZE): A driven to DRIVER_OK,
 * where a save comes from, and B fresh, where its restore goes. */
static void pair_make(struct fake_mem *fa, struct fake_mem *fb, struct virtio_dev **a,
		      struct virtio_dev **b)
{
	assert_int_equal(fake_mem_init(fa, RAM_SIZE), 0);
	assert_int_equal(fake_mem_init(fb, RAM_SIZE), 0);
	*a = make(fa);
	*b = make(fb);
	driver_ok(*a, fa);
}

static void pair_free(struct fake_mem *fa, struct fake_mem *fb, struct virtio_dev *a,
		      struct virtio_dev *b)
{
	virtio_balloon_destroy(a);
	virtio_balloon_destroy(b);
	fake_mem_free(fa);
	fake_mem_free(fb);
}

/* V's section as virtio_balloon_save writes it for instance INST, in a
 * copy at *out the caller frees; returns its length. */
static size_t save_section(struct virtio_dev *v, unsigned int inst, uint8_t **out)
{
	struct snap_writer w;
	struct snap_image img;
	char err[200] = "";
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(virtio_balloon_save(v, &w, SNAP_ID_DEVICE, inst, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(&w, &len);
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	const struct snap_section *s = snap_find(&img, SNAP_ID_DEVICE, inst);
	*out = malloc(s->len);
	assert_non_null(*out);
	memcpy(*out, s->data, s->len);
	size_t n = s->len;
	snap_image_free(&img);
	snap_writer_free(&w);
	return n;
}

#endif
