// SPDX-License-Identifier: Apache-2.0
/* Live migration, the target's reading of the stream up to the state
 * (mig_proto.h): HELLO, CONFIG, then PAGES and ROUND frames into guest RAM (an
 * anonymous mapping the VM takes as its own once built), then STATE, parsed and checked as a
 * snapshot file is. Every frame checked before its payload is read. */
#ifndef SKIFF_MIG_RECV_H
#define SKIFF_MIG_RECV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snap.h"

struct mig_rx {
	uint8_t *ram; /* guest RAM, NULL until HELLO */
	uint64_t ram_size;
	bool ram_given; /* to the hook's VM, which frees it */
	uint8_t *state; /* STATE's bytes; img points into them */
	struct snap_image img;
	uint64_t pages_in; /* pages received, for the log and the bound */
	uint64_t rounds_in;
};

/* ram: called at HELLO with the RAM just made (zero), before any page
 * comes: the target makes its VM over it while the pages stream in. It
 * takes the RAM whatever it returns (0, or -1 with one line in err).
 * config (may be NULL): called with CONFIG's image, checked as a state
 * file is, before any page (0, or -1 with one line in err). */
struct mig_rx_hook {
	int (*ram)(void *opaque, uint8_t *ram, uint64_t size, char *err, size_t errlen);
	int (*config)(void *opaque, const struct snap_image *img, char *err, size_t errlen);
	void *opaque;
};

/* Reads from fd until STATE (RAM at most max_ram bytes; hook may be
 * NULL). 0, or -1 with one line in err; mig_rx_free either way. */
int mig_rx_run(struct mig_rx *rx, int fd, uint64_t max_ram, const struct mig_rx_hook *hook,
	       char *err, size_t errlen);
void mig_rx_free(struct mig_rx *rx);

#endif
