// SPDX-License-Identifier: Apache-2.0
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

#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"
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
	const struct dm_kind *kind_list[2]; /* struct devmgr's: &kinds[i] */
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
	m->kind_list[0] = &m->kinds[0];
	m->kind_list[1] = &m->kinds[1];
	m->dm = (struct devmgr){.pci = pci_bus_create_with(&m->trap, &fake_host_ops, &m->host),
				.gm = &m->fm.gm,
				.kinds = m->kind_list,
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

/* ---- the device alone, its transport without ioeventfd ---- */

#define QSZ	 64
#define RING_GPA 0x10000 /* inflate queue's rings */
#define PFN_GPA	 0x40000
#define PAGE_GPA 0x200000

struct gx {
	struct fake_mem fm;
	struct virtio_dev *vdev;
	uint16_t avail_idx;
	int refills; /* chains the guest's other vCPU still posts */
};

static struct gx *gcur;

static void gx_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void gx_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

/* --no-ioeventfd: the transport has no kick eventfd to come back by. */
static int gx_resched_none(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
	return -1;
}

static const struct virtio_transport_ops gx_transport = {
    .notify_queue = gx_notify,
    .notify_config = gx_config,
    .queue_resched = gx_resched_none,
};

/* The guest makes descriptor 0 (one PFN) available once more: two stores
 * a vCPU of its own repeats without a kick. */
static void gx_post(struct gx *g)
{
	uint16_t *avail = fake_mem_at(&g->fm, RING_GPA + 0x1000);
	avail[2 + (g->avail_idx % QSZ)] = 0;
	__atomic_store_n(&avail[1], ++g->avail_idx, __ATOMIC_RELEASE);
}

/* madvise's stand-in: while the device gives one page back, the guest's
 * other vCPU posts the next chain. */
static int reposting_discard(void *host, size_t len)
{
	(void)host, (void)len;
	if (gcur->refills > 0) {
		gcur->refills--;
		gx_post(gcur);
	}
	return 0;
}

/* Finding 2 (medium with --no-ioeventfd, a guest): an inflate run on the
 * kicking vCPU went on past its budget for as long as the guest's other
 * vCPU re-posted chains, holding the device's mutex all the while: the
 * stats timer on the shared I/O thread (and every device behind it), the
 * API's PATCH /balloon and the VM's stop all waited on it. Fix: a run
 * ends at its budget; the transport calls again when it can, else the
 * guest's next kick does (Linux's driver keeps one chain in flight per
 * queue, and kicks it). */
static void test_run_bounded_without_ioeventfd(void **state)
{
	(void)state;
	struct gx *g = calloc(1, sizeof(*g));
	assert_non_null(g);
	assert_int_equal(fake_mem_init(&g->fm, 8 << 20), 0);
	struct balloon_spec s;
	balloon_spec_init(&s);
	char err[200] = "";
	g->vdev = virtio_balloon_create("virtio-balloon0", &s, &g->fm.gm, err, sizeof(err));
	assert_non_null(g->vdev);
	struct virtio_dev *v = g->vdev;
	v->transport = &gx_transport;
	v->transport_data = g;
	for (unsigned int q = 0; q < v->num_queues; q++) {
		struct virtq *vq = &v->vqs[q];
		uint64_t r = RING_GPA + q * 0x4000;
		assert_int_equal(virtq_init(vq, "balloon q", v->queue_max_size, NULL, NULL), 0);
		assert_int_equal(virtq_set_size(vq, QSZ), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, r), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, r + 0x1000), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, r + 0x2000), 0);
		assert_int_equal(virtq_activate(vq, &g->fm.gm), 0);
	}
	assert_int_equal(v->ops->activate(v), 0);
	((struct virtio_balloon *)v->priv)->discard = reposting_discard;
	uint32_t pfn = PAGE_GPA / 4096;
	memcpy(fake_mem_at(&g->fm, PFN_GPA), &pfn, sizeof(pfn));
	struct virtq_desc d = {.addr = PFN_GPA, .len = sizeof(pfn)};
	memcpy(fake_mem_at(&g->fm, RING_GPA), &d, sizeof(d));
	gcur = g;
	g->refills = 10000;
	gx_post(g);
	v->ops->queue_notify(v, 0);
	uint16_t used =
	    __atomic_load_n((uint16_t *)fake_mem_at(&g->fm, RING_GPA + 0x2002), __ATOMIC_ACQUIRE);
	assert_true(used <= BALLOON_POP_BUDGET); /* the run ended; chains wait */
	assert_true(g->refills > 0);
	/* The next kick goes on where it stopped. */
	v->ops->queue_notify(v, 0);
	assert_true(__atomic_load_n((uint16_t *)fake_mem_at(&g->fm, RING_GPA + 0x2002),
				    __ATOMIC_ACQUIRE) > used);
	virtio_balloon_destroy(v);
	fake_mem_free(&g->fm);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_balloon_with_passthrough),
	    cmocka_unit_test(test_run_bounded_without_ioeventfd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
