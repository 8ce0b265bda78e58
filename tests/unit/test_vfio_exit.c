// SPDX-License-Identifier: Apache-2.0
/* Issue 37.6: `skiff run --vfio-pci ADDR` with a BAR the guest's PCI
 * windows cannot hold is bad input: one line naming the BAR, exit status 2
 * (vmm_build's status around vmm_devices), not a run-time failure's 1.
 * Through cmd_run, as the command line runs it. This machine has neither
 * /dev/kvm nor a VFIO device, so both are faked: /dev/kvm and the VM's
 * ioctls by /dev/null (as test_start_fail), sysfs and /dev/vfio by a
 * made-up tree, the container's and group's calls by struct vfio_io, and
 * the device's own by a memfd holding its configuration space whose
 * region ioctls are answered here. Each case runs in a child (cmd_run's
 * stderr captured). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/commands.h"
#include "devices/vfio/vfio_sys.h"
#include "fake_bzimage.h"
#include "fake_kvm_open.h"
#include "sandbox_child.h"

#define ADDR  "0000:00:04.0"
#define GROUP "7"

static int vm_fd = -1, kvm_dev_fd = -1, dev_fd = -1;
static uint64_t bar0_size; /* the case's BAR0, 64-bit or not */
static uint32_t bar0_cfg;

/* The device fd's VFIO calls: the configuration space (region 7, at
 * offset 0 of the memfd) and BAR0; no other region, no interrupts. */
static int dev_ioctl(unsigned long req, void *arg)
{
	switch (req) {
	case VFIO_DEVICE_GET_REGION_INFO: {
		struct vfio_region_info *ri = arg;
		ri->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
		ri->cap_offset = 0;
		ri->offset = (uint64_t)ri->index << 40;
		ri->size = ri->index == VFIO_PCI_CONFIG_REGION_INDEX ? PCI_CFG_SPACE_SIZE
			   : ri->index == VFIO_PCI_BAR0_REGION_INDEX ? bar0_size
								     : 0;
		if (ri->index == VFIO_PCI_CONFIG_REGION_INDEX)
			ri->offset = 0;
		return 0;
	}
	case VFIO_DEVICE_GET_IRQ_INFO:
		((struct vfio_irq_info *)arg)->count = 0;
		return 0;
	default:
		return 0; /* reset, SET_IRQS */
	}
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == kvm_fd) {
		switch (req) {
		case KVM_GET_API_VERSION:
			return KVM_API_VERSION;
		case KVM_CREATE_VM:
			return vm_fd = real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
		case KVM_GET_VCPU_MMAP_SIZE:
			return 4096;
		default:
			return 0; /* CHECK_EXTENSION: no */
		}
	}
	if (fd >= 0 && fd == vm_fd) {
		/* KVM's VFIO device, for the group: another /dev/null. */
		if (req == KVM_CREATE_DEVICE)
			((struct kvm_create_device *)arg)->fd =
			    (uint32_t)(kvm_dev_fd = real_open("/dev/null", O_RDWR | O_CLOEXEC, 0));
		return 0; /* TSS, irqchip, PIT, routing, memory slots */
	}
	if (fd >= 0 && fd == kvm_dev_fd)
		return 0; /* the group added */
	if (fd >= 0 && fd == dev_fd)
		return dev_ioctl(req, arg);
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/* The container and the group: /dev/null fds that say yes. */
static int fk_open(const char *path, int flags)
{
	(void)path;
	(void)flags;
	return real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
}

static int fk_ioctl(int fd, unsigned long req, uintptr_t arg)
{
	(void)fd;
	switch (req) {
	case VFIO_GET_API_VERSION:
		return VFIO_API_VERSION;
	case VFIO_CHECK_EXTENSION:
		return 1;
	case VFIO_GROUP_GET_STATUS:
		((struct vfio_group_status *)arg)->flags = VFIO_GROUP_FLAGS_VIABLE;
		return 0;
	case VFIO_GROUP_GET_DEVICE_FD: {
		/* Its configuration space: a type-0 header, BAR0 as the case
		 * has it, no capabilities, no interrupt pin. */
		uint8_t cfg[PCI_CFG_SPACE_SIZE] = {0xf4, 0x1a, 0x10, 0x11};
		memcpy(cfg + PCI_BASE_ADDRESS_0, &bar0_cfg, 4);
		dev_fd = memfd_create("vfio-dev", MFD_CLOEXEC);
		if (dev_fd < 0 || pwrite(dev_fd, cfg, sizeof(cfg), 0) != (ssize_t)sizeof(cfg))
			return -EIO;
		return dev_fd;
	}
	case VFIO_DEVICE_GET_INFO: {
		struct vfio_device_info *di = (void *)arg;
		di->flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
		di->num_regions = VFIO_PCI_NUM_REGIONS;
		di->num_irqs = VFIO_PCI_NUM_IRQS;
		return 0;
	}
	default:
		return 0; /* SET_CONTAINER, SET_IOMMU, MAP_DMA */
	}
}

static void fk_close(int fd)
{
	close(fd);
}

static const struct vfio_io fake_io = {fk_open, fk_ioctl, fk_close};

static char root[64], sysfs[96], devroot[96];

static void mk(const char *sub)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, sub);
	assert_int_equal(mkdir(p, 0700), 0);
}

static void ln(const char *target, const char *sub)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, sub);
	assert_int_equal(symlink(target, p), 0);
}

static void touch(const char *sub)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, sub);
	int fd = real_open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

/* sysfs: the device on vfio-pci, alone in IOMMU group 7; /dev/vfio with
 * the container and the group's node. */
static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/skiff-vfio-exit-XXXXXX");
	assert_non_null(mkdtemp(root));
	mk("sys");
	mk("sys/" ADDR);
	mk("drivers");
	mk("drivers/vfio-pci");
	mk("groups");
	mk("groups/" GROUP);
	mk("groups/" GROUP "/devices");
	mk("dev");
	mk("dev/vfio");
	ln("../../groups/" GROUP, "sys/" ADDR "/iommu_group");
	ln("../../drivers/vfio-pci", "sys/" ADDR "/driver");
	ln("../../../sys/" ADDR, "groups/" GROUP "/devices/" ADDR);
	touch("dev/vfio/vfio");
	touch("dev/vfio/" GROUP);
	snprintf(sysfs, sizeof(sysfs), "%s/sys/", root);
	snprintf(devroot, sizeof(devroot), "%s/dev/vfio/", root);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

/* In the child: skiff run with the device, its status. */
static int run_child(void *arg)
{
	(void)arg;
	char kernel[128];
	snprintf(kernel, sizeof(kernel), "%s/bzImage", root);
	uint8_t *b = fake_bzimage();
	FILE *f = fopen(kernel, "wb");
	if (!b || !f || fwrite(b, 1, FAKE_LEN, f) != FAKE_LEN)
		return 99;
	fclose(f);
	free(b);
	vfio_sys_set_roots(sysfs, devroot);
	vfio_sys_set_io(&fake_io);
	char *args[] = {"run",	      "--kernel",	kernel,		"--mem", "256M",
			"--vfio-pci", ADDR ",mmap=off", "--no-seccomp", NULL};
	alarm(30); /* a hang is a failure, not a stuck suite */
	return cmd_run(8, args, 0);
}

/* The child's status and its stderr, which must be one line holding
 * want. */
static void expect_usage_error(uint64_t size, uint32_t cfg, const char *want)
{
	bar0_size = size;
	bar0_cfg = cfg;
	struct child_result res;
	child_run(run_child, NULL, &res);
	print_message("skiff said: %s", res.err);
	assert_true(WIFEXITED(res.status));
	assert_int_equal(WEXITSTATUS(res.status), 2);
	assert_non_null(strstr(res.err, want));
	char *nl = strchr(res.err, '\n');
	assert_non_null(nl);
	assert_int_equal(nl[1], '\0');
}

/* A 64-bit BAR of 1 TiB: declared, but no 64-bit window holds it (it
 * ends below 1012 GiB on every host); the bus names it as the device is
 * placed (bars_place). */
static void test_bar64_too_large(void **state)
{
	(void)state;
	expect_usage_error(1ull << 40, PCI_BASE_ADDRESS_MEM_TYPE_64 | PCI_BASE_ADDRESS_MEM_PREFETCH,
			   "BAR0 (1048576 MiB) does not fit what is left of the PCI 64-bit MMIO "
			   "window");
}

/* A 32-bit BAR of 2 GiB: larger than the whole 32-bit window, refused as
 * the device is made (vfio_bars_init). */
static void test_bar32_too_large(void **state)
{
	(void)state;
	expect_usage_error(2ull << 30, 0, "BAR0 (2147483648 bytes) cannot fit the PCI 32-bit MMIO");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bar64_too_large),
	    cmocka_unit_test(test_bar32_too_large),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
