// SPDX-License-Identifier: Apache-2.0
/* The device manager: kinds from a table, names, I/O threads round-robin,
 * the VM's rules (MACs, ioeventfd), transports, and the orderly stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "devices/virtio-net/virtio_net_spec.h"
#include "fake_mem.h"
#include "fake_pci_host.h"
#include "core/sandbox.h"
#include "iothread/iothread.h"
#include "virtio/virtio_dev.h"
#include "virtio/virtio_pci_impl.h"
#include "vmm/devmgr.h"

/* A network card kind that needs no tap: a bare virtio device. */
struct fake_nic {
	struct virtio_dev vdev;
	int *stops, *destroys;
};

static int stops, destroys;
static const struct dev_host *seen_host;
static bool seen_halt_in_guest;
/* The fake NIC's calls for its I/O thread, and whether they were in the
 * filters when its create ran (a disk's create starts threads that filter
 * themselves at once: 2026-12-06, a blk thread killed for io_uring_enter
 * when the rules came after). */
static const struct sandbox_rule fake_io_rule[] = {SANDBOX_ALLOW(getpid)};
static const struct dev_sandbox fake_sb = {.role[SANDBOX_IO] = SANDBOX_RULES(fake_io_rule)};
static bool rules_before_create;

static void fake_stop(void *dev)
{
	(void)dev;
	stops++;
}

static void fake_destroy(void *dev)
{
	destroys++;
	free(dev);
}

static void fake_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static const struct virtio_dev_ops fake_vops = {.queue_notify = fake_notify};
static const struct dev_ops fake_ops = {.stop = fake_stop, .destroy = fake_destroy};

static int fake_create(const struct dev_ctx *ctx, const void *spec, struct device *out, char *err,
		       size_t errlen)
{
	const struct net_spec *s = spec;
	if (!strcmp(s->tap, "nosuch0")) {
		snprintf(err, errlen, "no network interface 'nosuch0'");
		return -1;
	}
	seen_host = ctx->host;
	seen_halt_in_guest = ctx->halt_in_guest;
	rules_before_create = sandbox_has_rules(SANDBOX_IO, &fake_sb.role[SANDBOX_IO]);
	struct fake_nic *n = calloc(1, sizeof(*n));
	n->vdev.name = ctx->name;
	n->vdev.device_id = VIRTIO_ID_NET;
	n->vdev.num_queues = 2;
	n->vdev.queue_max_size = 16;
	n->vdev.ops = &fake_vops;
	pthread_mutex_init(&n->vdev.lock, NULL);
	*out = (struct device){.dev = n, .ops = &fake_ops, .vdev = &n->vdev};
	return 0;
}

static const struct dm_kind fake_kinds[] = {
    {.option = "disk",
     .prefix = "virtio-blk",
     .spec = &blk_spec_table,
     .spec_size = sizeof(struct blk_spec),
     .spec_init = blk_spec_init,
     .transport = DM_VIRTIO_PCI,
     .create = virtio_blk_new_device,
     .needs_ioeventfd = virtio_blk_needs_ioeventfd},
    {.option = "net",
     .model = "virtio",
     .prefix = "nic",
     .spec = &net_spec_table,
     .spec_size = sizeof(struct net_spec),
     .spec_init = net_spec_init,
     .is_net = true,
     .transport = DM_VIRTIO_PCI,
     .create = fake_create,
     .sandbox = &fake_sb},
};
/* struct devmgr's kinds: a list of rows, as dm_kinds. */
static const struct dm_kind *const fake_kind_list[] = {&fake_kinds[0], &fake_kinds[1]};

struct fx {
	struct bus trap;
	struct fake_host host;
	struct fake_mem fm;
	struct iothread io[3];
	struct devmgr dm;
	char dir[64], path[128];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	bus_init(&f->trap);
	assert_int_equal(fake_mem_init(&f->fm, 1 << 20), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(iothread_init(&f->io[i], "io"), 0);
	f->dm = (struct devmgr){.pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host),
				.gm = &f->fm.gm,
				.io = f->io,
				.nr_io = 3,
				.use_ioeventfd = true,
				.kinds = fake_kind_list,
				.nr_kinds = 2};
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/skiff-dm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/d.img", f->dir);
	int fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(ftruncate(fd, 1 << 16), 0);
	close(fd);
	stops = destroys = 0;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	devmgr_stop(&f->dm);
	pci_bus_destroy(f->dm.pci);
	devmgr_destroy(&f->dm);
	for (int i = 0; i < 3; i++)
		iothread_destroy(&f->io[i]);
	fake_mem_free(&f->fm);
	bus_destroy(&f->trap);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct iothread *io_of(struct fx *f, unsigned int i)
{
	return ((struct virtio_pci *)f->dm.devs[i].d.vdev->transport_data)->io;
}

/* Names count per kind; whole devices go round-robin over the I/O threads
 * in command-line order, disks and cards alike. */
static void test_names_and_iothreads(void **state)
{
	struct fx *f = *state;
	char err[512], spec[160];
	for (int i = 0; i < 4; i++) {
		if (i % 2)
			assert_int_equal(devmgr_add(&f->dm, "net", "tap=t0", err, sizeof(err)), 0);
		/* An image is locked by its device: each disk its own. */
		snprintf(spec, sizeof(spec), "%s.%d", f->path, i);
		int fd = open(spec, O_RDWR | O_CREAT | O_TRUNC, 0600);
		assert_int_equal(ftruncate(fd, 1 << 16), 0);
		close(fd);
		assert_int_equal(devmgr_add(&f->dm, "disk", spec, err, sizeof(err)), 0);
	}
	static const char *const names[] = {"virtio-blk0", "nic0", "virtio-blk1",
					    "virtio-blk2", "nic1", "virtio-blk3"};
	assert_int_equal(f->dm.nr, 6);
	for (unsigned int i = 0; i < 6; i++) {
		assert_string_equal(f->dm.devs[i].name, names[i]);
		assert_ptr_equal(io_of(f, i), &f->io[i % 3]);
	}
	/* Default MACs follow the card's index among cards. */
	assert_int_equal(f->dm.devs[1].mac[5], 0);
	assert_int_equal(f->dm.devs[4].mac[5], 1);
	for (int i = 0; i < 4; i++) {
		snprintf(spec, sizeof(spec), "%s.%d", f->path, i);
		unlink(spec);
	}
}

/* The VM's rules: a MAC is used once (explicit or default); bad specs and
 * refused resources leave nothing behind. */
static void test_refusals(void **state)
{
	struct fx *f = *state;
	char err[512];
	assert_int_equal(
	    devmgr_add(&f->dm, "net", "tap=t0,mac=02:00:00:00:00:42", err, sizeof(err)), 0);
	assert_int_equal(
	    devmgr_add(&f->dm, "net", "tap=t1,mac=02:00:00:00:00:42", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--net tap=t1,mac=02:00:00:00:00:42: mac 02:00:00:00:00:42 is "
				    "already used by nic0"));
	/* The third card's default MAC is ...:02; the second takes it first. */
	assert_int_equal(
	    devmgr_add(&f->dm, "net", "tap=t2,mac=02:73:6b:69:66:02", err, sizeof(err)), 0);
	assert_int_equal(devmgr_add(&f->dm, "net", "tap=t3", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "already used by nic1"));
	assert_int_equal(
	    devmgr_add(&f->dm, "net", "tap=nosuch0,mac=02:00:00:00:00:99", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no network interface 'nosuch0'"));
	assert_int_equal(devmgr_add(&f->dm, "net", "tap=t4,colour=blue", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown option 'colour'"));
	assert_int_equal(devmgr_add(&f->dm, "net", "tap=t4,model=rtl8139", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "invalid model=rtl8139"));
	assert_int_equal(devmgr_add(&f->dm, "floppy", "x", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown device kind 'floppy'"));
	assert_int_equal(f->dm.nr, 2);
	assert_int_equal(destroys, 0); /* refused before creation */

	f->dm.use_ioeventfd = false;
	char spec[160];
	snprintf(spec, sizeof(spec), "%s,poll=always", f->path);
	assert_int_equal(devmgr_add(&f->dm, "disk", spec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "poll= needs ioeventfd kicks (drop --no-ioeventfd)"));
	assert_int_equal(devmgr_check("disk", spec, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "poll= needs ioeventfd"));
	assert_int_equal(devmgr_check("disk", spec, true, err, sizeof(err)), 0);
	assert_int_equal(devmgr_check("net", "tap=x,vhost=on", false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "vhost=on needs ioeventfd"));
	assert_int_equal(f->dm.nr, 2);
}

/* A device gets the VM's services (memory slots, batched MMIO) in its
 * context: passthrough and the e1000 depend on them; and whether its
 * vCPUs halt in the guest: virtio-net's TX hold depends on that. */
static void test_ctx_carries_host(void **state)
{
	struct fx *f = *state;
	static int vm;
	static const struct dev_host host = {.opaque = &vm};
	char err[512];
	f->dm.host = &host;
	f->dm.halt_in_guest = true;
	seen_host = NULL;
	sandbox_clear_rules();
	rules_before_create = false;
	assert_int_equal(devmgr_add(&f->dm, "net", "tap=t0", err, sizeof(err)), 0);
	assert_ptr_equal(seen_host, &host);
	assert_true(seen_halt_in_guest);
	assert_true(rules_before_create); /* the kind's calls before its threads */
}

/* Stop runs once, in reverse order, before anything is freed. */
static void test_stop_once(void **state)
{
	struct fx *f = *state;
	char err[512];
	assert_int_equal(devmgr_add(&f->dm, "net", "tap=t0", err, sizeof(err)), 0);
	assert_int_equal(devmgr_add(&f->dm, "net", "tap=t1", err, sizeof(err)), 0);
	devmgr_stop(&f->dm);
	devmgr_stop(&f->dm);
	assert_int_equal(stops, 2);
	assert_int_equal(destroys, 0);
}

/* A live change (PATCH) finds the index-th device of its option, and
 * refuses one that has no such operation, is missing, or has stopped. */
static void test_live_change_refusals(void **state)
{
	struct fx *f = *state;
	char err[512];
	struct ratelimit_cfg rl = {0};
	assert_int_equal(devmgr_add(&f->dm, "net", "tap=t0", err, sizeof(err)), 0);
	assert_int_equal(devmgr_replace(&f->dm, "net", 0, "/x", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "its medium cannot change"));
	assert_int_equal(devmgr_limit(&f->dm, "net", 0, 0, &rl, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "it has no rate limiter"));
	assert_int_equal(devmgr_limit(&f->dm, "net", 1, 0, &rl, 1, err, sizeof(err)), -1);
	assert_string_equal(err, "no such device");
	assert_int_equal(devmgr_replace(&f->dm, "disk", 0, "/x", err, sizeof(err)), -1);
	assert_string_equal(err, "no such device");
	devmgr_stop(&f->dm);
	assert_int_equal(devmgr_limit(&f->dm, "net", 0, 0, &rl, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ": stopped"));
}

int main(void)
{
#define T(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_names_and_iothreads),
	    T(test_refusals),
	    T(test_stop_once),
	    T(test_ctx_carries_host),
	    T(test_live_change_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
