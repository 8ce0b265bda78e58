// SPDX-License-Identifier: Apache-2.0
/* The bzImage boot header parser (src/x86/bzimage.c) and the boot path
 * that trusts it (src/x86/boot.c: boot_image_open's size checks, initrd
 * placement, boot_image_load into guest RAM, the zero page): the input is
 * the kernel file, preceded by 2 bytes choosing the RAM size, initrd size
 * and command line length. The file is a memfd, read by the real code.
 *
 * Checked beyond ASan/UBSan: a parsed image's kernel lies inside the file
 * and after the setup code, and everything loaded lies inside guest RAM
 * (ASan: guest RAM is one malloc'd block). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/guest_mem.h"
#include "fuzz_common.h"
#include "x86/boot.h"
#include "x86/bzimage.h"

#define RAM_MAX (64u << 20) /* the largest size the selector byte picks */

static int kernel_fd = -1, initrd_fd = -1;
static uint8_t *ram;
static char kernel_path[64], initrd_path[64];
static char cmdline[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	kernel_fd = memfd_create("fuzz-kernel", 0);
	initrd_fd = memfd_create("fuzz-initrd", 0);
	ram = malloc(RAM_MAX);
	if (kernel_fd < 0 || initrd_fd < 0 || !ram)
		abort();
	snprintf(kernel_path, sizeof(kernel_path), "/proc/self/fd/%d", kernel_fd);
	snprintf(initrd_path, sizeof(initrd_path), "/proc/self/fd/%d", initrd_fd);
	memset(cmdline, 'x', sizeof(cmdline) - 1);
	return 0;
}

static void check_parse(const uint8_t *buf, size_t len)
{
	struct bzimage bz;
	char err[200];

	if (bzimage_parse(buf, len, &bz, err, sizeof(err)) < 0) {
		FZ_CHECK(strlen(err) > 0);
		return;
	}
	FZ_CHECK(bz.setup_len < len);
	FZ_CHECK(bz.kernel == buf + bz.setup_len && bz.kernel_len == len - bz.setup_len);
	FZ_CHECK(bz.init_size >= bz.kernel_len);
	FZ_CHECK(bz.kernel_len > BZIMAGE_ENTRY64); /* the entry is in what is loaded */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct boot_image img;
	struct guest_mem gm;
	char err[300];
	uint64_t entry;

	if (size < 2)
		return 0;
	uint8_t sel = data[0], cl = data[1];
	data += 2, size -= 2;
	check_parse(data, size);

	uint64_t mem = (16u << 20) + (uint64_t)(sel & 3) * (16u << 20) - (sel & 4 ? 4096 : 0);
	FZ_CHECK(mem <= RAM_MAX); /* else the harness, not skiff, overflows */
	size_t initrd = sel & 8 ? (size_t)(sel >> 4) * 65536 + 100 : 0;
	size_t cmdlen = (size_t)cl * 16 % sizeof(cmdline);
	if (ftruncate(kernel_fd, 0) < 0 || pwrite(kernel_fd, data, size, 0) != (ssize_t)size ||
	    ftruncate(initrd_fd, (off_t)initrd) < 0)
		abort();
	cmdline[cmdlen] = 0;
	int r = boot_image_open(&img, kernel_path, initrd ? initrd_path : NULL, cmdline, mem,
				BOOT_UNPACK_GUEST, err, sizeof(err));
	cmdline[cmdlen] = 'x';
	if (r == 0) {
		guest_mem_init(&gm, ram, mem);
		if (boot_image_load(&img, &gm, 1 + sel % 4, &entry, err, sizeof(err)) == 0)
			FZ_CHECK(entry >= img.bz.load_addr && entry < mem);
	}
	boot_image_close(&img);
	return 0;
}
