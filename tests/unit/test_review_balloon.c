/* Review of virtio-balloon (src/devices/virtio-balloon/) as a hostile
 * guest driver, and of what it shares a VM with. Each test is a finding's
 * proof: it failed before the fix named in its comment. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/virtio_ids.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_mem.h"
#include "fake_pci_host.h"
#include "virtio/virtio_dev.h"
#include "vmm/devmgr.h"

/* ---- a VM's device manager with the real balloon row ---- */

static void bare_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void bare_stop(void *dev)
{
	(void)dev;
}

static void bare_destroy(void *dev)
{
	free(dev);
}

static const struct virtio_dev_ops bare_vops = {.queue_notify = bare_notify};
static const struct dev_ops bare_ops = {.stop = bare_stop, .destroy = bare_destroy};

/* The passthrough function's stand-in: a bare virtio device (no host
 * device to open); its row is the real vfio-pci row otherwise. */
static int bare_create(const struct dev_ctx *ctx, const void *spec, struct device *out, char *err,
		       size_t errlen)
{
	(void)spec, (void)err, (void)errlen;
	struct virtio_dev *v = calloc(1, sizeof(*v));
	assert_non_null(v);
	v->name = ctx->name;
	v->device_id = VIRTIO_ID_NET;
	v->num_queues = 1;
	v->queue_max_size = 16;
	v->ops = &bare_vops;
	pthread_mutex_init(&v->lock, NULL);
	*out = (struct device){.dev = v, .ops = &bare_ops, .vdev = v};
	return 0;
}

struct vm {
	struct bus trap;
	struct fake_host host;
	struct fake_mem fm;
	struct dm_kind kinds[2];
	struct devmgr dm;
};

static struct vm *vm_new(void)
{
	struct vm *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	bus_init(&m->trap);
	assert_int_equal(fake_mem_init(&m->fm, 64 << 20), 0);
	char err[200];
	const struct dm_kind *b = devmgr_kind("balloon", "", err, sizeof(err));
	const struct dm_kind *p = devmgr_kind("vfio-pci", "", err, sizeof(err));
	assert_non_null(b);
	assert_non_null(p);
	m->kinds[0] = *b;
	m->kinds[1] = *p;
	m->kinds[1].transport = DM_VIRTIO_PCI;
	m->kinds[1].create = bare_create;
	m->kinds[1].check = NULL; /* no sysfs here */
	m->dm = (struct devmgr){.pci = pci_bus_create_with(&m->trap, &fake_host_ops, &m->host),
				.gm = &m->fm.gm,
				.kinds = m->kinds,
				.nr_kinds = 2};
	return m;
}

static void vm_free(struct vm *m)
{
	devmgr_stop(&m->dm);
	pci_bus_destroy(m->dm.pci);
	devmgr_destroy(&m->dm);
	fake_mem_free(&m->fm);
	bus_destroy(&m->trap);
	free(m);
}

/* Finding 1 (medium, correctness of guest memory): a VM could have both
 * --balloon and --vfio-pci. Passthrough maps all guest RAM into the IOMMU
 * (VFIO_IOMMU_MAP_DMA pins the pages); an inflated page was then
 * madvise(MADV_DONTNEED)d out of skiff's mapping while the IOMMU kept the
 * old page: the device's DMA went on to a page the guest no longer saw
 * (after a deflate the guest faults in a fresh zero page), nothing went
 * back to the host (the pin holds it), and the device could read stale
 * data. QEMU disables discards while VFIO holds RAM
 * (ram_block_discard_disable). Fix: the device manager refuses the second
 * of the two, in either order, with one line. */
static void test_balloon_with_passthrough(void **state)
{
	(void)state;
	char err[400] = "";
	struct vm *m = vm_new();
	assert_int_equal(devmgr_add(&m->dm, "balloon", "amount=0", err, sizeof(err)), 0);
	assert_int_equal(devmgr_add(&m->dm, "vfio-pci", "0000:01:00.0", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "pins guest RAM"));
	assert_null(strchr(err, '\n'));
	vm_free(m);

	m = vm_new();
	err[0] = '\0';
	assert_int_equal(devmgr_add(&m->dm, "vfio-pci", "0000:01:00.0", err, sizeof(err)), 0);
	assert_int_equal(devmgr_add(&m->dm, "balloon", "amount=0", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "pins guest RAM"));
	vm_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_balloon_with_passthrough),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
