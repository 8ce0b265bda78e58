// SPDX-License-Identifier: Apache-2.0
/* For tests of direct I/O on a host that wants more than BLK_DIRECT_ALIGN:
 * a loop device of 16 KiB logical blocks over an image file (root and a
 * free loop device; the kernels of this machine kind have both). */
#ifndef SKIFF_TEST_LOOP_DEV_H
#define SKIFF_TEST_LOOP_DEV_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOOP_DEV_LBS 16384

/* Whether this machine can have a loop device: root and the loop driver.
 * Where it cannot, the test says so on stderr and is skipped; where it
 * can, a failed attach fails the test. */
static inline bool loop_dev_possible(void)
{
	if (geteuid() == 0 && access("/dev/loop-control", R_OK | W_OK) == 0)
		return true;
	fprintf(stderr, "skipped: a loop device needs root and /dev/loop-control\n");
	return false;
}

/* Attaches img; dev gets /dev/loopN. 0, or -1 if losetup could not. */
static inline int loop_dev_attach(const char *img, char *dev, size_t devlen)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "losetup -f --show -b %d '%s' 2>/dev/null", LOOP_DEV_LBS, img);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!fgets(dev, (int)devlen, p))
		dev[0] = 0;
	pclose(p);
	dev[strcspn(dev, "\n")] = 0;
	return dev[0] ? 0 : -1;
}

static inline void loop_dev_detach(const char *dev)
{
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "losetup -d '%s'", dev);
	if (system(cmd) != 0)
		fprintf(stderr, "could not detach %s\n", dev);
}

#endif
