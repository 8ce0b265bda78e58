// SPDX-License-Identifier: Apache-2.0
/* virtio-pci snapshots (virtio_pci_state.c, pci_state.c): a driven device
 * saved, restored onto a fresh one, reads back the same to the driver (status,
 * features, queue configuration, MSI-X) with the same queue positions; and
 * every truncated or corrupted payload is refused with the fresh device
 * untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "vp_fx.h"

#define NQ 2

static void t_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	(void)q;
}

/* The device's activation: fails while activate_rc is -1 (a vhost
 * device the driver started without a ring it needs). */
static int activate_rc;
static int t_activate(struct virtio_dev *vdev)
{
	(void)vdev;
	return activate_rc;
}

static const struct virtio_dev_ops t_ops = {.queue_notify = t_notify, .activate = t_activate};

static struct fx *fx_new(void)
{
	static const struct virtio_dev dev = {.name = "virtio-test0",
					      .device_id = VIRTIO_ID_BLOCK,
					      .host_features = 1ULL << 6,
					      .num_queues = NQ,
					      .queue_max_size = 256,
					      .ops = &t_ops};
	return fx_attach(&dev, false);
}

#define FEAT ((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTQ_F_EVENT_IDX) | (1ULL << 6))

/* What a driver does up to DRIVER_OK: BARs on, MSI-X on, features,
 * queue 0 enabled with vector 1. */
static void drive_to_ok(struct fx *f)
{
	fx_decode(f);
	fx_msix_on(f);
	fx_msix_entry(f, 1, 0x41);
	fx_features(f, FEAT);
	fx_queue(f, 0, 1);
	cw(f, VP_STATUS, 1, 0x0f);
}

/* drive_to_ok, queue 0 live, a request taken and completed. */
static void drive(struct fx *f)
{
	drive_to_ok(f);
	assert_int_equal(cr(f, VP_STATUS, 1), 0x0f);
	/* One chain made available and used: the positions move to 1. */
	uint8_t *ram = f->mem.ram;
	uint16_t one = 1, zero = 0;
	memcpy(ram + 0x10000 + 8, &(uint32_t){16}, 4);
	memcpy(ram + 0x10000, &(uint64_t){0x20000}, 8);
	memcpy(ram + 0x14000 + 4, &zero, 2);
	memcpy(ram + 0x14000 + 2, &one, 2);
	struct virtq_elem e;
	assert_int_equal(virtq_pop(&f->vdev.vqs[0], f->vdev.gm, &e), 1);
	virtq_push(&f->vdev.vqs[0], f->vdev.gm, e.head, 0);
	cw(f, VP_Q_SELECT, 2, 1); /* the driver left queue 1 selected */
}

static struct fx *fresh_with_ram(struct fx *src)
{
	struct fx *g = fx_new();
	memcpy(g->mem.ram, src->mem.ram, src->mem.size);
	return g;
}

static void test_round_trip(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	drive(f);
	struct img m;
	img_save(f, 3, &m);
	struct fx *g = fresh_with_ram(f);
	char err[200] = "";
	assert_int_equal(virtio_pci_restore(&g->vdev, m.pci->data, m.pci->len, m.vp->data,
					    m.vp->len, err, sizeof(err)),
			 0);
	/* The BARs decode where the guest left them. */
	g->bar = cfg_bar64(&g->trap, 1, VP_BAR);
	g->tab = f->tab;
	assert_int_equal(g->bar, f->bar);
	assert_int_equal(cr(g, VP_STATUS, 1), 0x0f);
	assert_int_equal(cr(g, VP_Q_SELECT, 2), 1);
	cw(g, VP_Q_SELECT, 2, 0);
	assert_int_equal(cr(g, VP_Q_SIZE, 2), 16);
	assert_int_equal(cr(g, VP_Q_DESC, 8), 0x10000);
	assert_int_equal(cr(g, VP_Q_DEVICE, 8), 0x18000);
	assert_int_equal(cr(g, VP_Q_MSIX, 2), 1);
	assert_int_equal(cr(g, VP_Q_ENABLE, 2), 1);
	cw(g, VP_GFSELECT, 4, 0);
	assert_int_equal(cr(g, VP_GF, 4), (uint32_t)FEAT);
	assert_int_equal(g->vdev.driver_features, FEAT);
	assert_int_equal(cfg_rd(&g->trap, 1, g->msix_cap + PCI_MSIX_FLAGS, 2),
			 cfg_rd(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2));
	assert_int_equal(mmio_rd(&g->trap, g->tab + 16 + 8, 4), 0x41);
	/* The vector is routed again: an interrupt goes through its irqfd. */
	assert_int_equal(g->host.nr_routes, 1);
	assert_int_equal(g->host.routes[0].data, 0x41);
	/* The queue's positions, live. */
	assert_true(g->vdev.vqs[0].enabled);
	assert_int_equal(g->vdev.vqs[0].last_avail_idx, 1);
	assert_int_equal(g->vdev.vqs[0].used_idx, 1);
	img_free(&m);
	fx_free(g);
	fx_free(f);
}

/* A payload with byte i of field changed refuses, and the fresh device
 * reads as fresh. */
static void refused(struct fx *f, struct img *m, bool in_pci, size_t i, uint8_t x)
{
	const struct snap_section *s = in_pci ? m->pci : m->vp;
	uint8_t *bad = malloc(s->len);
	memcpy(bad, s->data, s->len);
	bad[i] ^= x;
	struct fx *g = fresh_with_ram(f);
	char err[200] = "";
	int r = in_pci ? virtio_pci_restore(&g->vdev, bad, s->len, m->vp->data, m->vp->len, err,
					    sizeof(err))
		       : virtio_pci_restore(&g->vdev, m->pci->data, m->pci->len, bad, s->len, err,
					    sizeof(err));
	assert_int_equal(r, -1);
	assert_non_null(strstr(err, "refused"));
	assert_int_equal(atomic_load(&g->vdev.status), 0);
	assert_false(g->vdev.vqs[0].enabled);
	/* Nothing applied: the PCI function is as built (no decoding, no
	 * MSI-X route). */
	assert_int_equal(cfg_rd(&g->trap, 1, PCI_COMMAND, 2), 0);
	assert_int_equal(g->host.nr_routes, 0);
	free(bad);
	fx_free(g);
}

static void test_corrupted_refused(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	drive(f);
	struct img m;
	img_save(f, 3, &m);
	refused(f, &m, false, 36, 0x10);      /* status: an unknown bit */
	refused(f, &m, false, 36, 0x08);      /* status: DRIVER_OK without FEATURES_OK */
	refused(f, &m, false, 28, 1);	      /* queue count */
	refused(f, &m, false, 5, 0x80);	      /* a feature never offered */
	refused(f, &m, false, 34, 0x20);      /* config vector out of range */
	refused(f, &m, false, 38, 1);	      /* inactive, yet no NEEDS_RESET */
	refused(f, &m, false, 39, 1);	      /* the byte after it */
	refused(f, &m, false, 40 + 48, 0x40); /* queue 0's vector */
	refused(f, &m, false, 40 + 50, 2);    /* queue 0's enable */
	refused(f, &m, false, 40 + 24, 0xff); /* queue 0's size: not a power of 2 */
	refused(f, &m, false, 40 + 26, 0x40); /* queue 0: more in flight than its size */
	refused(f, &m, false, 40 + 34, 1);    /* queue 0: enabled but not active */
	refused(f, &m, true, PCI_VENDOR_ID, 1);
	refused(f, &m, true, 0x100, 1);	  /* its slot */
	refused(f, &m, true, 0x10c, 0x2); /* a vector control's read-only bit */
	/* Every truncation of either payload. */
	char err[200];
	for (size_t n = 0; n < m.vp->len; n++) {
		struct fx *g = fresh_with_ram(f);
		assert_int_equal(virtio_pci_restore(&g->vdev, m.pci->data, m.pci->len, m.vp->data,
						    n, err, sizeof(err)),
				 -1);
		fx_free(g);
	}
	struct fx *g = fresh_with_ram(f);
	for (size_t n = 0; n < m.pci->len; n += 7)
		assert_int_equal(virtio_pci_restore(&g->vdev, m.pci->data, n, m.vp->data, m.vp->len,
						    err, sizeof(err)),
				 -1);
	assert_int_equal(atomic_load(&g->vdev.status), 0);
	fx_free(g);
	img_free(&m);
	fx_free(f);
}

/* Review finding (vsock backend=vhost snapshots): a device whose
 * activation failed at DRIVER_OK is left for NEEDS_RESET, its queues not
 * live, and the guest chooses that (vhost-vsock's fails when the driver
 * sets up no rx queue). Its snapshot restored the same way, activating
 * again, and the second failure refused the whole restore: a guest could
 * make its VM impossible to restore or migrate. The restore now leaves
 * such a device as it was: needing a reset, nothing live. */
static void test_failed_activation_restored(void **state)
{
	(void)state;
	activate_rc = -1;
	struct fx *f = fx_new();
	drive_to_ok(f);
	assert_int_equal(cr(f, VP_STATUS, 1), 0x0f | VIRTIO_STATUS_NEEDS_RESET);
	struct img m;
	img_save(f, 3, &m);
	struct fx *g = fresh_with_ram(f);
	char err[200] = "";
	assert_int_equal(virtio_pci_restore(&g->vdev, m.pci->data, m.pci->len, m.vp->data,
					    m.vp->len, err, sizeof(err)),
			 0);
	g->bar = cfg_bar64(&g->trap, 1, VP_BAR);
	assert_int_equal(cr(g, VP_STATUS, 1), 0x0f | VIRTIO_STATUS_NEEDS_RESET);
	struct virtio_pci *vp = g->vdev.transport_data;
	assert_false(atomic_load(&vp->live));
	assert_false(atomic_load(&vp->q[0].live));
	/* A device that activated, then needed a reset, and now cannot
	 * activate is still refused: it was live. */
	activate_rc = 0;
	struct fx *h = fx_new();
	drive(h);
	virtio_dev_needs_reset(&h->vdev);
	struct img n;
	img_save(h, 3, &n);
	activate_rc = -1;
	struct fx *k = fresh_with_ram(h);
	assert_int_equal(virtio_pci_restore(&k->vdev, n.pci->data, n.pci->len, n.vp->data,
					    n.vp->len, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "virtio-test0: the restored device does not activate");
	activate_rc = 0;
	img_free(&n);
	img_free(&m);
	fx_free(k);
	fx_free(h);
	fx_free(g);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_corrupted_refused),
	    cmocka_unit_test(test_failed_activation_restored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
