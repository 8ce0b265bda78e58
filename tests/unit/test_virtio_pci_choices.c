// SPDX-License-Identifier: Apache-2.0
/* What a device chooses of its virtio-pci transport. The MSI-X table size
 * (virtio_dev.msix_vectors): one vector per queue plus config by default;
 * a device may offer fewer, so that the driver shares one among its
 * queues (virtio-vsock: 2, test_virtio_vsock.c, test_vsock_vhost.c): what
 * the driver sees (the table size, vectors beyond it refused), that
 * queues sharing a vector interrupt on it and hand vhost its one eventfd.
 * Kicks on the vCPU (virtio_dev.kicks_on_vcpu, virtio-balloon's,
 * test_virtio_balloon.c): no ioeventfd, the kick runs the device at once.
 * A fake device on the real transport, as in test_virtio_pci.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ids.h>
#include "vp_fx.h"

#define NQ   3
#define FEAT ((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTQ_F_EVENT_IDX))

static void t_config(struct virtio_dev *vdev, uint32_t off, void *buf, uint32_t len)
{
	(void)vdev, (void)off;
	memset(buf, 0, len);
}

static void t_config_write(struct virtio_dev *vdev, uint32_t off, const void *buf, uint32_t len)
{
	(void)vdev, (void)off, (void)buf, (void)len;
}

static int t_activate(struct virtio_dev *vdev)
{
	(void)vdev;
	return 0;
}

static void t_reset(struct virtio_dev *vdev)
{
	for (unsigned int q = 0; q < NQ; q++)
		vdev->transport->queue_takeback(vdev, q);
}

static int notified[NQ];

static void t_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	assert_true(q < NQ);
	notified[q]++;
}

static const struct virtio_dev_ops t_ops = {
    .config_read = t_config,
    .config_write = t_config_write,
    .activate = t_activate,
    .reset = t_reset,
    .queue_notify = t_notify,
};

static struct fx *vvfx_new_with(unsigned int msix_vectors, bool kicks_on_vcpu)
{
	struct virtio_dev dev = {.name = "virtio-test0",
				 .device_id = VIRTIO_ID_VSOCK,
				 .config_len = 8,
				 .num_queues = NQ,
				 .msix_vectors = msix_vectors,
				 .kicks_on_vcpu = kicks_on_vcpu,
				 .queue_max_size = 64,
				 .ops = &t_ops};
	struct fx *f = fx_attach(&dev, true);
	fx_decode(f);
	return f;
}

static struct fx *vvfx_new(unsigned int msix_vectors)
{
	return vvfx_new_with(msix_vectors, false);
}

static int vector_efd(struct fx *f, uint32_t data)
{
	for (int i = 0; i < f->host.nr_routes; i++)
		if (f->host.routes[i].data == data)
			return f->host.irqfd_efd[i];
	fail();
	return -1;
}

/* What Linux's vp_find_vqs does when the table is too small for one
 * vector per queue: config on vector 0, every queue on vector 1. */
static void bring_up_shared(struct fx *f)
{
	fx_msix_on(f);
	fx_msix_entry(f, 0, 0x40);
	fx_msix_entry(f, 1, 0x41);
	fx_features(f, FEAT);
	cw(f, VP_MSIX_CONFIG, 2, 0);
	for (unsigned int q = 0; q < NQ; q++)
		fx_queue(f, q, 1);
	cw(f, VP_STATUS, 1, cr(f, VP_STATUS, 1) | VIRTIO_STATUS_DRIVER_OK);
	assert_int_equal(cr(f, VP_STATUS, 1), 0x0f);
}

/* By default: num_queues + 1 vectors, each one a queue may take. */
static void test_default_one_per_queue(void **state)
{
	(void)state;
	struct fx *f = vvfx_new(0);
	assert_int_equal(cfg_rd(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2) &
			     PCI_MSIX_FLAGS_QSIZE,
			 NQ); /* the table size less one */
	cw(f, VP_Q_SELECT, 2, 2);
	cw(f, VP_Q_MSIX, 2, NQ);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), NQ);
	cw(f, VP_Q_MSIX, 2, NQ + 1);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	fx_free(f);
}

/* Two vectors: the table says 2, a vector past it reads back NO_VECTOR
 * for a queue and for config alike. */
static void test_fewer_vectors_table(void **state)
{
	(void)state;
	struct fx *f = vvfx_new(2);
	assert_int_equal(
	    cfg_rd(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2) & PCI_MSIX_FLAGS_QSIZE, 1);
	cw(f, VP_Q_SELECT, 2, 2);
	cw(f, VP_Q_MSIX, 2, 2);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), VIRTIO_MSI_NO_VECTOR);
	cw(f, VP_Q_MSIX, 2, 1);
	assert_int_equal(cr(f, VP_Q_MSIX, 2), 1);
	cw(f, VP_MSIX_CONFIG, 2, 2);
	assert_int_equal(cr(f, VP_MSIX_CONFIG, 2), VIRTIO_MSI_NO_VECTOR);
	fx_free(f);
}

/* Queues on one vector: each queue's interrupt lands on that vector's
 * irqfd (the eventfd adds them up: one injection if the guest has not
 * taken the first), config on its own; vhost is handed the one eventfd
 * for every queue. */
static void test_shared_vector_delivery(void **state)
{
	(void)state;
	struct fx *f = vvfx_new(2);
	struct virtio_dev *vdev = &f->vdev;
	bring_up_shared(f);
	int cfg_efd = vector_efd(f, 0x40), q_efd = vector_efd(f, 0x41);
	for (unsigned int q = 0; q < NQ; q++)
		vdev->transport->notify_queue(vdev, q);
	assert_int_equal(efd_take(q_efd), NQ);
	assert_int_equal(efd_take(cfg_efd), 0);
	int kick0, call0, kick1, call1;
	assert_int_equal(vdev->transport->queue_handoff(vdev, 0, &kick0, &call0), 0);
	assert_int_equal(vdev->transport->queue_handoff(vdev, 1, &kick1, &call1), 0);
	assert_int_equal(call0, q_efd);
	assert_int_equal(call1, q_efd);
	assert_int_not_equal(kick0, kick1);
	cw(f, VP_STATUS, 1, 0); /* takes the queues back */
	fx_free(f);
}

/* Kicks on the vCPU: the transport has ioeventfds, the device none; a
 * notify write runs the device's queue before it returns, and so does a
 * write to the port notify BAR. */
static void test_kicks_on_vcpu(void **state)
{
	(void)state;
	struct fx *f = vvfx_new_with(0, true);
	bring_up_shared(f);
	assert_int_equal(f->host.nr_io, 0);
	memset(notified, 0, sizeof(notified));
	mmio_wr(&f->trap, f->bar + VP_NOTIFY_OFF + VP_NOTIFY_MULT * 1, 2, 1);
	assert_int_equal(notified[1], 1);
	uint16_t port = (uint16_t)(cfg_rd(&f->trap, 1, PCI_BAR0 + 4 * VP_PIO_BAR, 4) & ~3u);
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2,
	       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_IO);
	uint32_t v = 2;
	bus_dispatch(&f->trap, BUS_PIO, port + VP_PIO_MULT * 2, &v, 2, true, 0);
	assert_int_equal(notified[2], 1);
	assert_int_equal(notified[0], 0);
	cw(f, VP_STATUS, 1, 0);
	fx_free(f);
}

/* The default on the same transport: kicks go to ioeventfds. */
static void test_kicks_by_ioeventfd(void **state)
{
	(void)state;
	struct fx *f = vvfx_new(0);
	bring_up_shared(f);
	assert_true(f->host.nr_io > 0);
	memset(notified, 0, sizeof(notified));
	mmio_wr(&f->trap, f->bar + VP_NOTIFY_OFF + VP_NOTIFY_MULT * 1, 2, 1);
	assert_int_equal(notified[1], 0); /* the I/O thread's, not started here */
	cw(f, VP_STATUS, 1, 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_one_per_queue),
	    cmocka_unit_test(test_fewer_vectors_table),
	    cmocka_unit_test(test_shared_vector_delivery),
	    cmocka_unit_test(test_kicks_on_vcpu),
	    cmocka_unit_test(test_kicks_by_ioeventfd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
