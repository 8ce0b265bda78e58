// SPDX-License-Identifier: Apache-2.0
#include "x86/boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arch.h"
#include "x86/acpi.h"
#include "x86/cpu.h"
#include "x86/kcache.h"
#include "x86/layout.h"
#include "x86/mptable.h"
#include "x86/vmlinux.h"
#include "x86/zeropage.h"

#define KERNEL_MAX_FILE (512ULL << 20)

static int read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int open_regular(const char *what, const char *path, struct stat *st, char *err,
			size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s %s: %s", what, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s %s is not a regular file", what, path);
		close(fd);
		return -1;
	}
	return fd;
}

int boot_image_unpack(struct boot_image *img, char *err, size_t errlen)
{
	uint64_t key = kcache_hash(img->kernel_file, img->kernel_file_len);
	size_t len;
	const uint8_t *p = kcache_lookup(key, &len);
	if (p) {
		img->vmlinux_mapped = 1;
	} else {
		uint8_t *buf;
		if (vmlinux_extract(&img->bz, &buf, &len, err, errlen) < 0)
			return -1;
		kcache_store(key, buf, len);
		p = buf;
		img->vmlinux_mapped = 0;
	}
	img->vmlinux = p;
	img->vmlinux_len = len;
	return 0;
}

static void boot_image_drop_vmlinux(struct boot_image *img)
{
	if (img->vmlinux_mapped)
		kcache_release(img->vmlinux, img->vmlinux_len);
	else
		free((void *)img->vmlinux);
	img->vmlinux = NULL;
}

int boot_image_open(struct boot_image *img, const char *kernel, const char *initrd,
		    const char *cmdline, uint64_t mem_size, enum boot_unpack unpack, char *err,
		    size_t errlen)
{
	struct stat st;
	memset(img, 0, sizeof(*img));
	img->initrd_fd = -1;
	img->cmdline = cmdline;
	img->initrd_path = initrd;

	int fd = open_regular("kernel", kernel, &st, err, errlen);
	if (fd < 0)
		return -1;
	if ((uint64_t)st.st_size > KERNEL_MAX_FILE) {
		snprintf(err, errlen, "kernel %s is too large to be a bzImage", kernel);
		close(fd);
		return -1;
	}
	img->kernel_file_len = (size_t)st.st_size;
	img->kernel_file = malloc(img->kernel_file_len ? img->kernel_file_len : 1);
	if (!img->kernel_file || read_full(fd, img->kernel_file, img->kernel_file_len) < 0) {
		snprintf(err, errlen, "cannot read kernel %s", kernel);
		close(fd);
		return -1;
	}
	close(fd);
	char why[200];
	if (bzimage_parse(img->kernel_file, img->kernel_file_len, &img->bz, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "kernel %s: %s", kernel, why);
		return -1;
	}
	if (cmdline_check(&img->bz, cmdline, err, errlen) < 0)
		return -1;

	struct guest_mem layout;
	guest_mem_init(&layout, NULL, mem_size);
	uint64_t kernel_end = img->bz.load_addr + img->bz.init_size;
	char why2[200];
	if (unpack == BOOT_UNPACK_HOST && kernel_end <= layout.low_size &&
	    boot_image_unpack(img, why2, sizeof(why2)) == 0) {
		uint64_t end;
		if (vmlinux_check(img->vmlinux, img->vmlinux_len, layout.low_size,
				  &img->vmlinux_entry, &end, why2, sizeof(why2)) < 0) {
			/* A bad cache entry or payload: boot the bzImage as is. */
			boot_image_drop_vmlinux(img);
		} else if (end > kernel_end) {
			kernel_end = end;
		}
	}
	if (kernel_end > layout.low_size) {
		snprintf(err, errlen,
			 "guest RAM (%llu MiB) too small for the kernel (needs %llu MiB)",
			 (unsigned long long)(mem_size >> 20),
			 (unsigned long long)((kernel_end + (1 << 20) - 1) >> 20));
		return -1;
	}
	if (initrd) {
		img->initrd_fd = open_regular("initrd", initrd, &st, err, errlen);
		if (img->initrd_fd < 0)
			return -1;
		img->initrd_size = (uint64_t)st.st_size;
		uint64_t addr;
		if (initrd_place(&layout, kernel_end, img->bz.hdr.initrd_addr_max, img->initrd_size,
				 &addr) < 0) {
			snprintf(err, errlen,
				 "initrd %s (%llu MiB) does not fit in guest RAM (%llu MiB) beside "
				 "the kernel",
				 initrd, (unsigned long long)(img->initrd_size >> 20),
				 (unsigned long long)(mem_size >> 20));
			return -1;
		}
	}
	return 0;
}

void boot_image_close(struct boot_image *img)
{
	if (img->vmlinux)
		boot_image_drop_vmlinux(img);
	free(img->kernel_file);
	img->kernel_file = NULL;
	if (img->initrd_fd >= 0)
		close(img->initrd_fd);
	img->initrd_fd = -1;
}

int boot_image_load(const struct boot_image *img, const struct guest_mem *gm, int nr_cpus,
		    uint64_t *entry, char *err, size_t errlen)
{
	const struct bzimage *bz = &img->bz;
	uint8_t *low = guest_mem_ptr(gm, 0, LAYOUT_BIOS_END);
	uint8_t *kdst = guest_mem_ptr(gm, bz->load_addr, bz->init_size);
	if (!low || !kdst) {
		snprintf(err, errlen, "guest RAM too small for the kernel");
		return -1;
	}
	if (img->vmlinux) {
		if (vmlinux_load(img->vmlinux, img->vmlinux_len, gm) < 0) {
			snprintf(err, errlen, "cannot load the unpacked kernel");
			return -1;
		}
	} else {
		memcpy(kdst, bz->kernel, bz->kernel_len);
	}

	uint64_t initrd_addr = 0;
	if (img->initrd_fd >= 0) {
		if (initrd_place(gm, bz->load_addr + bz->init_size, bz->hdr.initrd_addr_max,
				 img->initrd_size, &initrd_addr) < 0) {
			snprintf(err, errlen, "initrd does not fit in guest RAM");
			return -1;
		}
		uint8_t *idst = guest_mem_ptr(gm, initrd_addr, img->initrd_size);
		if (!idst ||
		    pread(img->initrd_fd, idst, img->initrd_size, 0) != (ssize_t)img->initrd_size) {
			snprintf(err, errlen, "cannot read initrd %s", img->initrd_path);
			return -1;
		}
	}

	size_t cl = strlen(img->cmdline);
	memcpy(low + LAYOUT_CMDLINE, img->cmdline, cl + 1);

	uint64_t rsdp = acpi_build(low + LAYOUT_ACPI, LAYOUT_ACPI, LAYOUT_MPTABLE - LAYOUT_ACPI,
				   nr_cpus, layout_pci_mmio64_start(guest_mem_end(gm)),
				   layout_pci_mmio64_end(arch_phys_bits()));
	if (!rsdp) {
		snprintf(err, errlen, "cannot build ACPI tables for %d vCPUs", nr_cpus);
		return -1;
	}
	/* Linux uses the ACPI tables; the MP table ends its search for one. */
	if (mptable_build(low, nr_cpus) < 0) {
		snprintf(err, errlen, "cannot build the MP table for %d vCPUs", nr_cpus);
		return -1;
	}
	struct boot_params *bp = (struct boot_params *)(low + LAYOUT_ZERO_PAGE);
	zeropage_build(bp, bz, gm, LAYOUT_CMDLINE, initrd_addr, img->initrd_size, rsdp);
	x86_boot_tables_write(low, 0);
	/* The bzImage's 64-bit entry is 0x200 bytes into its protected-mode
	 * code; an unpacked vmlinux is entered at its ELF entry (startup_64). */
	*entry = img->vmlinux ? img->vmlinux_entry : bz->load_addr + BZIMAGE_ENTRY64;
	return 0;
}
