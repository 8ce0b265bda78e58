// SPDX-License-Identifier: Apache-2.0
/* `skiff unpack KERNEL`: decompress a bzImage's kernel into the cache ahead
 * of time (e.g. when building an image that will boot many VMs), so even
 * the first boot skips the decompression. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "core/log.h"
#include "x86/boot.h"

int cmd_unpack(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "skiff: usage: skiff unpack BZIMAGE\n");
		return EXIT_USAGE;
	}
	struct boot_image img;
	char err[512];
	/* 1 TiB of pretend RAM: only the kernel file is checked here. */
	if (boot_image_open(&img, argv[1], NULL, "", 1ULL << 40, BOOT_UNPACK_GUEST, err,
			    sizeof(err)) < 0) {
		log_err("%s", err);
		boot_image_close(&img);
		return EXIT_USAGE;
	}
	int r = boot_image_unpack(&img, err, sizeof(err));
	boot_image_close(&img);
	if (r < 0) {
		log_err("cannot unpack %s: %s", argv[1], err);
		return EXIT_RUNTIME;
	}
	return 0;
}
