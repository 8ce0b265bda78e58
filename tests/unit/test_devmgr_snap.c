// SPDX-License-Identifier: Apache-2.0
/* The device manager's snapshot part (vmm/devmgr_snap.c): each device's
 * state in a section of its own and back; a VFIO device, or a kind that
 * saves nothing yet, refuses the snapshot in one line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/snap.h"
#include "pci/pci.h"
#include "vmm/devmgr.h"

struct counter_dev {
	uint32_t value;
};

static int cd_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t inst, char *err,
		   size_t errlen)
{
	(void)err, (void)errlen;
	return snap_put(w, id, inst, &((struct counter_dev *)dev)->value, 4);
}

static int cd_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	if (len != 4) {
		snprintf(err, errlen, "counter: bad length");
		return -1;
	}
	memcpy(&((struct counter_dev *)dev)->value, data, 4);
	return 0;
}

static void nop(void *dev)
{
	(void)dev;
}

static const struct dev_ops saving_ops = {
    .stop = nop, .destroy = nop, .save = cd_save, .restore = cd_restore};
static const struct dev_ops plain_ops = {.stop = nop, .destroy = nop};
static const struct dm_kind counter_kind = {.option = "counter", .prefix = "counter"};

static void add(struct devmgr *dm, const struct dm_kind *k, const struct dev_ops *ops, void *dev)
{
	struct dm_entry *e = &dm->devs[dm->nr];
	e->kind = k;
	snprintf(e->name, sizeof(e->name), "%s%u", k->prefix, dm->nr);
	e->d = (struct device){.dev = dev, .ops = ops};
	dm->nr++;
}

static const struct dm_kind *real_kind(const char *option)
{
	for (size_t i = 0; i < dm_nr_kinds; i++)
		if (!strcmp(dm_kinds[i]->option, option))
			return dm_kinds[i];
	fail();
	return NULL;
}

static void test_round_trip(void **state)
{
	(void)state;
	struct devmgr a = {0}, b = {0};
	struct counter_dev a0 = {11}, a1 = {22}, b0 = {0}, b1 = {0};
	add(&a, &counter_kind, &saving_ops, &a0);
	add(&a, &counter_kind, &saving_ops, &a1);
	add(&b, &counter_kind, &saving_ops, &b0);
	add(&b, &counter_kind, &saving_ops, &b1);
	struct snap_writer w;
	snap_writer_init(&w);
	char err[200];
	assert_int_equal(devmgr_save(&a, &w, err, sizeof(err)), 0);
	size_t n;
	const uint8_t *img_b = snap_writer_image(&w, &n);
	struct snap_image img;
	assert_int_equal(snap_parse(&img, img_b, n, err, sizeof(err)), 0);
	assert_int_equal(devmgr_restore(&b, &img, err, sizeof(err)), 0);
	assert_int_equal(b0.value, 11);
	assert_int_equal(b1.value, 22);
	/* A VM with one device more than the snapshot: refused before any
	 * device is touched. */
	struct devmgr c = {0};
	struct counter_dev c0 = {0}, c1 = {0}, c2 = {0};
	add(&c, &counter_kind, &saving_ops, &c0);
	add(&c, &counter_kind, &saving_ops, &c1);
	add(&c, &counter_kind, &saving_ops, &c2);
	assert_int_equal(devmgr_restore(&c, &img, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot has 2 devices, the VM 3");
	assert_int_equal(c0.value, 0);
	snap_image_free(&img);
	snap_writer_free(&w);
}

static void test_vfio_refuses(void **state)
{
	(void)state;
	struct devmgr dm = {0};
	struct counter_dev d = {1};
	add(&dm, &counter_kind, &saving_ops, &d);
	add(&dm, real_kind("vfio-pci"), &plain_ops, NULL);
	struct snap_writer w;
	snap_writer_init(&w);
	char err[200];
	assert_int_equal(devmgr_save(&dm, &w, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot snapshot a VM with vfio1: a VFIO passthrough device's "
				 "state is in the host's hardware");
	assert_null(strchr(err, '\n'));
	snap_writer_free(&w);
}

static void test_kind_without_state_refuses(void **state)
{
	(void)state;
	struct devmgr dm = {0};
	add(&dm, real_kind("disk"), &plain_ops, NULL);
	char err[200];
	assert_int_equal(devmgr_can_save(&dm, "snapshot", err, sizeof(err)), -1);
	assert_string_equal(err,
			    "cannot snapshot a VM with virtio-blk0: its kind saves no state yet");
	struct devmgr none = {0};
	assert_int_equal(devmgr_can_save(&none, "snapshot", err, sizeof(err)), 0);
}

/* A device of a kind that saves may still refuse, for itself
 * (dev_ops.no_snapshot: vsock's backend=vhost), even with save and
 * restore; the line names what was asked. */
static void test_device_refuses(void **state)
{
	(void)state;
	static const struct dev_ops own_ops = {.stop = nop,
					       .destroy = nop,
					       .save = cd_save,
					       .restore = cd_restore,
					       .no_snapshot = "its state is in the host kernel"};
	struct devmgr dm = {0};
	struct counter_dev d0 = {1}, d1 = {2};
	add(&dm, &counter_kind, &saving_ops, &d0);
	add(&dm, &counter_kind, &own_ops, &d1);
	char err[200];
	assert_int_equal(devmgr_can_save(&dm, "migrate", err, sizeof(err)), -1);
	assert_string_equal(err,
			    "cannot migrate a VM with counter1: its state is in the host kernel");
	struct snap_writer w;
	snap_writer_init(&w);
	assert_int_equal(devmgr_save(&dm, &w, err, sizeof(err)), -1);
	assert_string_equal(err,
			    "cannot snapshot a VM with counter1: its state is in the host kernel");
	snap_writer_free(&w);
}

/* The image of img with section (id, 0)'s payload cut to n bytes and byte
 * flip (if < n) xored with 0x20. */
static uint8_t *reimage(const struct snap_image *img, uint32_t id, size_t n, size_t flip,
			size_t *len)
{
	struct snap_writer w;
	snap_writer_init(&w);
	for (uint32_t i = 0; i < img->nr; i++) {
		const struct snap_section *s = &img->sec[i];
		uint8_t *p = malloc(s->len + 1);
		memcpy(p, s->data, s->len);
		size_t l = s->len;
		if (s->id == id && s->instance == 0) {
			l = n;
			if (flip < n)
				p[flip] ^= 0x20;
		}
		assert_int_equal(snap_put(&w, s->id, s->instance, p, l), 0);
		free(p);
	}
	const uint8_t *b = snap_writer_image(&w, len);
	uint8_t *copy = malloc(*len);
	memcpy(copy, b, *len);
	snap_writer_free(&w);
	return copy;
}

/* The device list: what asked for each device comes back as it was, and a
 * list cut anywhere, or naming other devices, is refused before any device
 * changes. */
static void test_device_list(void **state)
{
	(void)state;
	struct devmgr a = {0}, b = {0};
	struct counter_dev a0 = {11}, a1 = {22}, b0 = {0}, b1 = {0};
	add(&a, &counter_kind, &saving_ops, &a0);
	add(&a, &counter_kind, &saving_ops, &a1);
	a.devs[0].arg_spec = strdup("x=1,y=2");
	a.devs[1].arg_spec = strdup("");
	a.devs[1].arg_key = strdup("path");
	a.devs[1].arg_value = strdup("/a,b");
	add(&b, &counter_kind, &saving_ops, &b0);
	add(&b, &counter_kind, &saving_ops, &b1);
	struct snap_writer w;
	snap_writer_init(&w);
	char err[200];
	assert_int_equal(devmgr_save(&a, &w, err, sizeof(err)), 0);
	size_t n;
	const uint8_t *ib = snap_writer_image(&w, &n);
	struct snap_image img;
	assert_int_equal(snap_parse(&img, ib, n, err, sizeof(err)), 0);
	struct devmgr_snap_list l;
	assert_int_equal(devmgr_snap_list(&img, &l, err, sizeof(err)), 0);
	assert_int_equal(l.nr, 2);
	assert_string_equal(l.name[1], "counter1");
	assert_string_equal(l.arg[0].option, "counter");
	assert_string_equal(l.arg[0].spec, "x=1,y=2");
	assert_null(l.arg[0].key);
	assert_string_equal(l.arg[1].key, "path");
	assert_string_equal(l.arg[1].value, "/a,b");
	free(l.buf);
	const struct snap_section *ls = snap_find(&img, SNAP_ID_DEV_LIST, 0);
	size_t full = ls->len;
	for (size_t cut = 0; cut < full; cut++) {
		size_t len;
		uint8_t *bad = reimage(&img, SNAP_ID_DEV_LIST, cut, SIZE_MAX, &len);
		struct snap_image bi;
		assert_int_equal(snap_parse(&bi, bad, len, err, sizeof(err)), 0);
		assert_int_equal(devmgr_restore(&b, &bi, err, sizeof(err)), -1);
		assert_int_equal(b0.value, 0);
		snap_image_free(&bi);
		free(bad);
	}
	/* A name changed: "counter0" becomes "cOunter0". */
	size_t len;
	uint8_t *bad = reimage(&img, SNAP_ID_DEV_LIST, full, 4 + 2 + 1, &len);
	struct snap_image bi;
	assert_int_equal(snap_parse(&bi, bad, len, err, sizeof(err)), 0);
	assert_int_equal(devmgr_restore(&b, &bi, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot device 0 is cOunter0, not counter0");
	assert_int_equal(b0.value, 0);
	snap_image_free(&bi);
	free(bad);
	snap_image_free(&img);
	snap_writer_free(&w);
	for (int i = 0; i < 2; i++) {
		free(a.devs[i].arg_spec);
		free(a.devs[i].arg_key);
		free(a.devs[i].arg_value);
	}
}

/* A PCI-native device (the e1000): its PCI function is saved with its
 * own section, and a snapshot without it is refused before the device
 * changes; it has no transport section to ask for. */
static void test_pci_native(void **state)
{
	(void)state;
	struct devmgr a = {0}, b = {0};
	struct counter_dev a0 = {7}, b0 = {0};
	struct pci_device pa, pb;
	pci_device_init(&pa, "counter0", 0x1af4, 0x1000, 0x020000, 0);
	pci_device_init(&pb, "counter0", 0x1af4, 0x1000, 0x020000, 0);
	pa.cfg[PCI_INTERRUPT_LINE] = 9; /* the guest's write */
	add(&a, &counter_kind, &saving_ops, &a0);
	add(&b, &counter_kind, &saving_ops, &b0);
	a.devs[0].d.pci = &pa;
	b.devs[0].d.pci = &pb;
	struct snap_writer w;
	snap_writer_init(&w);
	char err[200];
	assert_int_equal(devmgr_save(&a, &w, err, sizeof(err)), 0);
	size_t n;
	const uint8_t *ib = snap_writer_image(&w, &n);
	struct snap_image img;
	assert_int_equal(snap_parse(&img, ib, n, err, sizeof(err)), 0);
	assert_non_null(snap_find(&img, SNAP_ID_PCI_FN, 0));
	assert_null(snap_find(&img, SNAP_ID_VIRTIO_PCI, 0));
	/* Without its PCI function: refused, the device untouched. */
	struct snap_writer w2;
	snap_writer_init(&w2);
	for (uint32_t i = 0; i < img.nr; i++)
		if (img.sec[i].id != SNAP_ID_PCI_FN)
			assert_int_equal(snap_put(&w2, img.sec[i].id, img.sec[i].instance,
						  img.sec[i].data, img.sec[i].len),
					 0);
	size_t n2;
	const uint8_t *ib2 = snap_writer_image(&w2, &n2);
	struct snap_image img2;
	assert_int_equal(snap_parse(&img2, ib2, n2, err, sizeof(err)), 0);
	assert_int_equal(devmgr_restore(&b, &img2, err, sizeof(err)), -1);
	assert_string_equal(err, "snapshot has no pci-function state for counter0");
	assert_int_equal(b0.value, 0);
	assert_int_equal(devmgr_restore(&b, &img, err, sizeof(err)), 0);
	assert_int_equal(b0.value, 7);
	assert_int_equal(pb.cfg[PCI_INTERRUPT_LINE], 9);
	snap_image_free(&img2);
	snap_writer_free(&w2);
	snap_image_free(&img);
	snap_writer_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_device_list),
	    cmocka_unit_test(test_vfio_refuses),
	    cmocka_unit_test(test_kind_without_state_refuses),
	    cmocka_unit_test(test_device_refuses),
	    cmocka_unit_test(test_pci_native),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
