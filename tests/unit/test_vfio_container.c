// SPDX-License-Identifier: Apache-2.0
/* Issue 37.2: the VM's one VFIO container, over a made-up sysfs and
 * /dev/vfio and a fake of the kernel calls (struct vfio_io): devices share
 * it (guest RAM mapped once), two functions of one group share the group's
 * fd, a group with a device on a host driver is refused naming it, and
 * the last device closes the container; and (37.6) a group given in part
 * is refused naming the function left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/guest_mem.h"
#include "devices/vfio/vfio.h"
#include "devices/vfio/vfio_dev.h"
#include "devices/vfio/vfio_sys.h"
#include "vmm/devmgr.h"

#define FD_BASE 100
#define NR_FDS	32

enum fd_kind { FD_NONE, FD_CONTAINER, FD_GROUP, FD_DEVICE };

/* The fake kernel: what each fd is, and what was asked of it. */
static struct {
	enum fd_kind kind[NR_FDS];
	bool open[NR_FDS];
	char path[NR_FDS][256];
	int nr_fds;
	int container_opens, group_opens, set_container, set_iommu, dma_maps;
	int attached_to;    /* the container fd groups were attached to */
	int closed[NR_FDS]; /* in order */
	int nr_closed;
	/* Failures to make (issue 36.2): a negative errno, 0 for none. */
	int container_err, group_err, map_err;
} k;

static int fk_open(const char *path, int flags)
{
	(void)flags;
	bool container = strlen(path) >= 5 && !strcmp(path + strlen(path) - 5, "/vfio");
	/* A group node opens once at a time, as the kernel's. */
	for (int i = 0; !container && i < k.nr_fds; i++)
		if (k.open[i] && !strcmp(k.path[i], path))
			return -EBUSY;
	if (container ? k.container_err : k.group_err)
		return container ? k.container_err : k.group_err;
	if (k.nr_fds == NR_FDS)
		return -EMFILE;
	int i = k.nr_fds++;
	k.kind[i] = container ? FD_CONTAINER : FD_GROUP;
	k.open[i] = true;
	snprintf(k.path[i], sizeof(k.path[i]), "%s", path);
	k.container_opens += container;
	k.group_opens += !container;
	return FD_BASE + i;
}

static enum fd_kind kind_of(int fd)
{
	int i = fd - FD_BASE;
	assert_true(i >= 0 && i < k.nr_fds && k.open[i]);
	return k.kind[i];
}

static int fk_ioctl(int fd, unsigned long req, uintptr_t arg)
{
	enum fd_kind kd = kind_of(fd);
	switch (req) {
	case VFIO_GET_API_VERSION:
		return VFIO_API_VERSION;
	case VFIO_CHECK_EXTENSION:
		return 1;
	case VFIO_GROUP_GET_STATUS:
		assert_int_equal(kd, FD_GROUP);
		((struct vfio_group_status *)arg)->flags = VFIO_GROUP_FLAGS_VIABLE;
		return 0;
	case VFIO_GROUP_SET_CONTAINER:
		assert_int_equal(kind_of(*(int *)arg), FD_CONTAINER);
		k.attached_to = *(int *)arg;
		k.set_container++;
		return 0;
	case VFIO_SET_IOMMU:
		assert_int_equal(kd, FD_CONTAINER);
		k.set_iommu++;
		return 0;
	case VFIO_IOMMU_MAP_DMA:
		assert_int_equal(kd, FD_CONTAINER);
		k.dma_maps++;
		return k.map_err;
	case VFIO_GROUP_GET_DEVICE_FD: {
		assert_int_equal(kd, FD_GROUP);
		int i = k.nr_fds++;
		k.kind[i] = FD_DEVICE;
		k.open[i] = true;
		snprintf(k.path[i], sizeof(k.path[i]), "%s", (const char *)arg);
		return FD_BASE + i;
	}
	case VFIO_DEVICE_GET_INFO: {
		struct vfio_device_info *di = (void *)arg;
		di->flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
		di->num_regions = VFIO_PCI_NUM_REGIONS;
		return 0;
	}
	default:
		return -ENOTTY;
	}
}

static void fk_close(int fd)
{
	kind_of(fd);
	k.open[fd - FD_BASE] = false;
	k.closed[k.nr_closed++] = fd;
}

static const struct vfio_io fake_io = {fk_open, fk_ioctl, fk_close};

static char root[64];

static void mk(const char *fmt, const char *a)
{
	char p[512];
	snprintf(p, sizeof(p), fmt, root, a);
	assert_int_equal(mkdir(p, 0700), 0);
}

/* Device addr in IOMMU group `group` on driver drv: its sysfs directory,
 * links and its entry in the group's devices. */
static void mk_dev(const char *addr, int group, const char *drv)
{
	char p[512], t[512], g[16];
	snprintf(g, sizeof(g), "%d", group);
	mk("%s/sys/%s", addr);
	snprintf(p, sizeof(p), "%s/kernel/%d", root, group);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/kernel/%d/devices", root, group);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/sys/%s/iommu_group", root, addr);
	snprintf(t, sizeof(t), "%s/kernel/%d", root, group);
	assert_int_equal(symlink(t, p), 0);
	snprintf(p, sizeof(p), "%s/sys/%s/driver", root, addr);
	snprintf(t, sizeof(t), "../../../bus/pci/drivers/%s", drv);
	assert_int_equal(symlink(t, p), 0);
	snprintf(p, sizeof(p), "%s/kernel/%d/devices/%s", root, group, addr);
	snprintf(t, sizeof(t), "%s/sys/%s", root, addr);
	assert_int_equal(symlink(t, p), 0);
	snprintf(p, sizeof(p), "%s/dev/%d", root, group);
	fclose(fopen(p, "w"));
}

static int setup(void **state)
{
	(void)state;
	memset(&k, 0, sizeof(k));
	snprintf(root, sizeof(root), "/tmp/skiff-vfioc-XXXXXX");
	assert_non_null(mkdtemp(root));
	mk("%s/sys%s", "");
	mk("%s/dev%s", "");
	mk("%s/kernel%s", "");
	static char sys[300], dev[300];
	char p[512];
	snprintf(p, sizeof(p), "%s/dev/vfio", root);
	fclose(fopen(p, "w"));
	mk_dev("0000:03:00.0", 17, "vfio-pci");
	mk_dev("0000:03:00.1", 17, "vfio-pci");
	mk_dev("0000:04:00.0", 18, "vfio-pci");
	mk_dev("0000:05:00.0", 19, "vfio-pci");
	mk_dev("0000:05:00.1", 19, "e1000e");
	snprintf(sys, sizeof(sys), "%s/sys/", root);
	snprintf(dev, sizeof(dev), "%s/dev/", root);
	vfio_sys_set_roots(sys, dev);
	vfio_sys_set_io(&fake_io);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	vfio_sys_set_roots("/sys/bus/pci/devices/", "/dev/vfio/");
	vfio_sys_set_io(NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static uint8_t ram[4096];
static struct guest_mem mem = {.host = ram, .size = sizeof(ram), .low_size = sizeof(ram)};

struct dev {
	const struct vfio_dev_ops *ops;
	void *h;
};

static struct dev open_dev(struct vfio_container *c, const char *addr)
{
	struct dev d;
	char canon[16], err[300] = "";
	if (vfio_sys_open(addr, c, &mem, &d.ops, &d.h, canon, err, sizeof(err)) < 0)
		fail_msg("%s: %s", addr, err);
	return d;
}

static int nr_open(enum fd_kind kind)
{
	int n = 0;
	for (int i = 0; i < k.nr_fds; i++)
		n += k.open[i] && k.kind[i] == kind;
	return n;
}

/* Two devices of two groups: one container, RAM mapped once, the IOMMU
 * set once, both groups attached to it. */
static void test_two_devices_one_container(void **state)
{
	(void)state;
	struct vfio_container *c = vfio_container_new();
	struct dev a = open_dev(c, "03:00.0");
	int first = k.attached_to;
	struct dev b = open_dev(c, "04:00.0");
	assert_int_equal(k.container_opens, 1);
	assert_int_equal(k.dma_maps, 1);
	assert_int_equal(k.set_iommu, 1);
	assert_int_equal(k.set_container, 2);
	assert_int_equal(k.attached_to, first);
	assert_int_not_equal(a.ops->group_fd(a.h), b.ops->group_fd(b.h));
	a.ops->close(a.h);
	b.ops->close(b.h);
	assert_int_equal(nr_open(FD_CONTAINER) + nr_open(FD_GROUP) + nr_open(FD_DEVICE), 0);
	vfio_container_free(c);
}

/* Two functions of one group: the group opens once, both devices use its
 * fd, it is attached once. */
static void test_one_group_two_devices(void **state)
{
	(void)state;
	struct vfio_container *c = vfio_container_new();
	struct dev a = open_dev(c, "0000:03:00.0");
	struct dev b = open_dev(c, "0000:03:00.1");
	assert_int_equal(k.group_opens, 1);
	assert_int_equal(k.set_container, 1);
	assert_int_equal(a.ops->group_fd(a.h), b.ops->group_fd(b.h));
	assert_int_equal(nr_open(FD_DEVICE), 2);
	a.ops->close(a.h);
	assert_int_equal(nr_open(FD_GROUP), 1); /* b still uses it */
	b.ops->close(b.h);
	assert_int_equal(nr_open(FD_GROUP), 0);
	vfio_container_free(c);
}

/* A group with a device left on a host driver: one line naming it, before
 * anything is opened (vfio_sys_check runs before the VM exists). */
static void test_group_host_driver(void **state)
{
	(void)state;
	char err[300] = "";
	assert_int_equal(vfio_sys_check("05:00.0", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0000:05:00.1 is bound to e1000e"));
	assert_null(strchr(err, '\n'));
	struct vfio_container *c = vfio_container_new();
	const struct vfio_dev_ops *ops;
	void *h;
	char canon[16];
	err[0] = 0;
	assert_int_equal(vfio_sys_open("05:00.0", c, &mem, &ops, &h, canon, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0000:05:00.1 is bound to e1000e"));
	assert_int_equal(k.nr_fds, 0);
	/* The same group with its other function on a VFIO driver: fine. */
	char p[512];
	snprintf(p, sizeof(p), "%s/sys/0000:05:00.1/driver", root);
	unlink(p);
	assert_int_equal(symlink("../../../bus/pci/drivers/vfio-pci", p), 0);
	assert_int_equal(vfio_sys_check("05:00.0", err, sizeof(err)), 0);
	vfio_container_free(c);
}

/* Writes sysfs's class file of addr. */
static void mk_class(const char *addr, const char *cls)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/sys/%s/class", root, addr);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", cls);
	fclose(f);
}

/* Issue 37.6: a group given in part is one line naming the function left
 * out, about the device whose group it is, before the VM exists; given
 * whole it passes, and neither a bridge in the group (the requester ID the
 * functions behind it alias to) nor a function parked off VFIO need be
 * given. */
static void test_group_given_whole(void **state)
{
	(void)state;
	char err[300] = "";
	unsigned int bad = 9;
	const char *part[] = {"04:00.0", "0000:03:00.0"};
	assert_int_equal(vfio_groups_whole(part, 2, &bad, err, sizeof(err)), -1);
	assert_int_equal(bad, 1);
	assert_non_null(strstr(err, "IOMMU group 17 also holds 0000:03:00.1"));
	assert_null(strchr(err, '\n'));
	const char *whole[] = {"03:00.1", "04:00.0", "0000:03:00.0"};
	assert_int_equal(vfio_groups_whole(whole, 3, &bad, err, sizeof(err)), 0);
	/* Two NVMe behind a PCIe-to-PCI bridge: the bridge shares the group. */
	mk_dev("0000:07:01.0", 20, "vfio-pci");
	mk_dev("0000:07:02.0", 20, "vfio-pci");
	mk_dev("0000:06:00.0", 20, "pcieport");
	mk_class("0000:07:01.0", "0x010802");
	mk_class("0000:06:00.0", "0x060400");
	/* A bridge on vfio-pci too; functions parked without a driver or on
	 * pci-stub, which the kernel's viability rule lets stay out. */
	mk_dev("0000:07:03.0", 20, "vfio-pci");
	mk_class("0000:07:03.0", "0x060400");
	mk_dev("0000:07:04.0", 20, "pci-stub");
	mk_dev("0000:07:05.0", 20, "vfio-pci");
	char p[512];
	snprintf(p, sizeof(p), "%s/sys/0000:07:05.0/driver", root);
	assert_int_equal(unlink(p), 0);
	const char *nvme[] = {"07:01.0", "07:02.0"};
	assert_int_equal(vfio_groups_whole(nvme, 2, &bad, err, sizeof(err)), 0);
	assert_int_equal(vfio_groups_whole(nvme, 1, &bad, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0000:07:02.0, which is not given"));
	/* Through the device manager, as skiff run checks its command line:
	 * the same line, about the --vfio-pci that was given. */
	struct devmgr_arg args[] = {{.option = "vfio-pci", .spec = "04:00.0"},
				    {.option = "vfio-pci", .spec = "0000:07:02.0,mmap=off"}};
	assert_int_equal(devmgr_check_args(args, 2, true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--vfio-pci 0000:07:02.0,mmap=off: its IOMMU group 20"));
	assert_non_null(strstr(err, "add --vfio-pci 0000:07:01.0"));
	args[0].spec = "07:01.0";
	assert_int_equal(devmgr_check_args(args, 2, true, err, sizeof(err)), 0);
}

/* Teardown: a device's close leaves what others use; the group closes with
 * its last device, the container with the VM's last device, last. */
static void test_teardown_order(void **state)
{
	(void)state;
	struct vfio_container *c = vfio_container_new();
	struct dev a = open_dev(c, "03:00.0");
	struct dev b = open_dev(c, "03:00.1");
	struct dev x = open_dev(c, "04:00.0");
	int container = k.attached_to, g17 = a.ops->group_fd(a.h), g18 = x.ops->group_fd(x.h);
	a.ops->close(a.h);
	assert_int_equal(nr_open(FD_CONTAINER), 1);
	assert_int_equal(nr_open(FD_GROUP), 2);
	x.ops->close(x.h);
	assert_int_equal(k.closed[k.nr_closed - 1], g18);
	assert_int_equal(nr_open(FD_CONTAINER), 1);
	b.ops->close(b.h);
	assert_int_equal(k.closed[k.nr_closed - 2], g17);
	assert_int_equal(k.closed[k.nr_closed - 1], container);
	assert_int_equal(nr_open(FD_CONTAINER) + nr_open(FD_GROUP) + nr_open(FD_DEVICE), 0);
	/* The VM's next device opens a new one. */
	struct dev y = open_dev(c, "04:00.0");
	assert_int_equal(k.container_opens, 2);
	assert_int_equal(k.dma_maps, 2);
	y.ops->close(y.h);
	vfio_container_free(c);
	assert_int_equal(nr_open(FD_CONTAINER), 0);
}

/* Issue 36.2: where a privilege is missing, the error names it in one
 * line: access to the container's node, the group's node being this
 * user's, and the pinned RAM of DMA (RLIMIT_MEMLOCK or CAP_IPC_LOCK). */
static void privilege_hint(int *which, int e, const char *want)
{
	char canon[16], err[300] = "";
	const struct vfio_dev_ops *ops;
	void *h;
	struct vfio_container *c = vfio_container_new();
	*which = e;
	assert_int_equal(vfio_sys_open("03:00.0", c, &mem, &ops, &h, canon, err, sizeof(err)), -1);
	*which = 0;
	if (!strstr(err, want))
		fail_msg("want '%s' in: %s", want, err);
	assert_null(strchr(err, '\n'));
	vfio_container_free(c);
}

static void test_privilege_hints(void **state)
{
	(void)state;
	privilege_hint(&k.container_err, -EACCES,
		       "vfio: Permission denied (read and write access to it)");
	privilege_hint(&k.group_err, -EACCES, "(the group's node must be this user's: chown it)");
	privilege_hint(&k.map_err, -ENOMEM,
		       "raise RLIMIT_MEMLOCK (ulimit -l) to the guest's size, or CAP_IPC_LOCK");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_two_devices_one_container, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_one_group_two_devices, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_group_host_driver, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_teardown_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_group_given_whole, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_privilege_hints, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
