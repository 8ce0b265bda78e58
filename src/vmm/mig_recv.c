// SPDX-License-Identifier: Apache-2.0
#include "vmm/mig_recv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/guest_mem.h"
#include "vmm/mig_proto.h"

static int rx_hello(struct mig_rx *rx, int fd, uint64_t max_ram, const struct mig_rx_hook *hook,
		    char *err, size_t errlen)
{
	struct mig_hello h;
	if (mig_expect(fd, MIG_HELLO, &h, sizeof(h), NULL, err, errlen) < 0 ||
	    mig_hello_check(&h, max_ram, err, errlen) < 0)
		return -1;
	/* The guest's RAM as a boot makes it (private, anonymous, aligned
	 * for huge pages): the target's VM takes this mapping as its own (the
	 * hook), so nothing is copied or mapped again, the balloon frees it
	 * as on any VM, and a page the guest writes later is not a second
	 * copy of a file's. Zero until a page comes. */
	struct guest_mem gm;
	int r = guest_mem_alloc(&gm, h.ram);
	if (r < 0) {
		snprintf(err, errlen, "cannot allocate %llu MiB of guest RAM: %s",
			 (unsigned long long)(h.ram >> 20), strerror(-r));
		return -1;
	}
	rx->ram = gm.host;
	rx->ram_size = h.ram;
	if (!hook)
		return 0;
	rx->ram_given = true;
	if (hook->ram(hook->opaque, rx->ram, rx->ram_size, err, errlen) == 0)
		return 0;
	rx->ram = NULL; /* (freed with the VM that failed) */
	return -1;
}

/* A source sends at most MIG_ROUNDS_MAX + 1 rounds (the switch's last),
 * each of at most all of RAM: a stream beyond that would hold this side
 * for ever, so it ends here. */
static int rx_too_long(struct mig_rx *rx, uint32_t pages, uint32_t rounds, char *err, size_t errlen)
{
	uint64_t max = (MIG_ROUNDS_MAX + 1) * (rx->ram_size / MIG_PAGE);
	rx->pages_in += pages;
	rx->rounds_in += rounds;
	if (rx->pages_in > max) {
		snprintf(err, errlen, "migration stream: more pages than %u rounds of RAM",
			 MIG_ROUNDS_MAX + 1);
		return -1;
	}
	if (rx->rounds_in > MIG_ROUNDS_MAX + 1) {
		snprintf(err, errlen, "migration stream: more rounds than %u", MIG_ROUNDS_MAX + 1);
		return -1;
	}
	return 0;
}

/* A PAGES frame: its list checked whole before a byte of a page is read,
 * then the pages in one readv (neighbours merged). */
static int rx_pages(struct mig_rx *rx, int fd, uint32_t len, char *err, size_t errlen)
{
	struct mig_pages p;
	uint64_t page[MIG_PAGES_MAX];
	struct iovec iov[MIG_PAGES_MAX];
	int n = 0;
	if (mig_read_all(fd, &p, sizeof(p), MIG_IO_MS) < 0)
		goto cut;
	if (mig_pages_check(&p, len, err, errlen) < 0)
		return -1;
	if (mig_read_all(fd, page, p.count * sizeof(page[0]), MIG_IO_MS) < 0)
		goto cut;
	if (mig_pages_list_check(page, p.count, rx->ram_size, err, errlen) < 0 ||
	    rx_too_long(rx, p.count, 0, err, errlen) < 0)
		return -1;
	for (uint32_t i = 0; i < p.count; i++) {
		uint8_t *at = rx->ram + page[i] * MIG_PAGE;
		if (n && (uint8_t *)iov[n - 1].iov_base + iov[n - 1].iov_len == at)
			iov[n - 1].iov_len += MIG_PAGE;
		else
			iov[n++] = (struct iovec){at, MIG_PAGE};
	}
	if (mig_readv_all(fd, iov, n, MIG_IO_MS) < 0)
		goto cut;
	return 0;
cut:
	snprintf(err, errlen, "migration stream: PAGES frame cut short");
	return -1;
}

static int rx_state(struct mig_rx *rx, int fd, uint32_t len, char *err, size_t errlen)
{
	if (!(rx->state = malloc(len))) {
		snprintf(err, errlen, "out of memory for a %u-byte state", len);
		return -1;
	}
	if (mig_read_all(fd, rx->state, len, MIG_IO_MS) < 0) {
		snprintf(err, errlen, "migration stream: STATE frame cut short");
		return -1;
	}
	if (snap_parse(&rx->img, rx->state, len, err, errlen) < 0)
		return -1;
	/* The VM's RAM (VM_CONFIG's first field, vmm_snap.c) must be HELLO's
	 * before READY: found only at the build, the source would have let
	 * go of its disks for nothing. Its absence is vmm_snap_check's. */
	const struct snap_section *c = snap_find(&rx->img, SNAP_ID_VM_CONFIG, 0);
	uint64_t vm_ram = rx->ram_size;
	if (c && c->len >= sizeof(vm_ram))
		memcpy(&vm_ram, c->data, sizeof(vm_ram));
	if (vm_ram != rx->ram_size) {
		snprintf(err, errlen,
			 "migration stream: the state's VM has %llu bytes of RAM, HELLO %llu",
			 (unsigned long long)vm_ram, (unsigned long long)rx->ram_size);
		return -1;
	}
	return 0;
}

/* CONFIG: the device list the STATE will name, for the hook to prepare
 * with. Its image is checked whole, as a state file's; what it lists is
 * the hook's to check (a list the STATE then contradicts only wastes
 * that preparation: the STATE's is what is built). */
static int rx_config(int fd, uint32_t len, const struct mig_rx_hook *hook, char *err, size_t errlen)
{
	uint8_t *buf = malloc(len);
	struct snap_image img;
	int r = -1;
	if (!buf)
		snprintf(err, errlen, "out of memory for a %u-byte CONFIG", len);
	else if (mig_read_all(fd, buf, len, MIG_IO_MS) < 0)
		snprintf(err, errlen, "migration stream: CONFIG frame cut short");
	else if (snap_parse(&img, buf, len, err, errlen) == 0) {
		r = hook && hook->config ? hook->config(hook->opaque, &img, err, errlen) : 0;
		snap_image_free(&img);
	}
	free(buf);
	return r;
}

/* The source gave up: its line (one line, whatever it sent). */
static int rx_error(int fd, uint32_t len, char *err, size_t errlen)
{
	char line[MIG_ERR_MAX + 1];
	if (mig_read_all(fd, line, len, MIG_IO_MS) < 0)
		len = 0;
	line[len] = '\0';
	line[strcspn(line, "\n\r")] = '\0';
	snprintf(err, errlen, "the migration's peer gave up: %s", line);
	return -1;
}

int mig_rx_run(struct mig_rx *rx, int fd, uint64_t max_ram, const struct mig_rx_hook *hook,
	       char *err, size_t errlen)
{
	memset(rx, 0, sizeof(*rx));
	err[0] = '\0';
	if (rx_hello(rx, fd, max_ram, hook, err, errlen) < 0)
		return -1;
	for (bool first = true;; first = false) {
		uint32_t type, len;
		uint64_t round[2];
		if (mig_recv_hdr(fd, &type, &len, err, errlen) < 0)
			return -1;
		if (first && type != MIG_CONFIG && type != MIG_ERROR) {
			snprintf(err, errlen, "migration stream: %s frame where CONFIG was due",
				 mig_type_name(type));
			return -1;
		}
		if (type == MIG_CONFIG && !first) {
			snprintf(err, errlen, "migration stream: a second CONFIG frame");
			return -1;
		}
		if (type == MIG_CONFIG && rx_config(fd, len, hook, err, errlen) < 0)
			return -1;
		else if (type == MIG_PAGES && rx_pages(rx, fd, len, err, errlen) < 0)
			return -1;
		else if (type == MIG_ROUND && mig_read_all(fd, round, sizeof(round), MIG_IO_MS) < 0)
			return snprintf(err, errlen, "migration stream: ROUND frame cut short"), -1;
		else if (type == MIG_ROUND && rx_too_long(rx, 0, 1, err, errlen) < 0)
			return -1;
		else if (type == MIG_STATE)
			return rx_state(rx, fd, len, err, errlen);
		else if (type == MIG_ERROR)
			return rx_error(fd, len, err, errlen);
		else if (type != MIG_PAGES && type != MIG_ROUND && type != MIG_CONFIG) {
			snprintf(err, errlen, "migration stream: %s frame before the state",
				 mig_type_name(type));
			return -1;
		}
	}
}

void mig_rx_free(struct mig_rx *rx)
{
	if (rx->ram && !rx->ram_given)
		munmap(rx->ram, rx->ram_size);
	snap_image_free(&rx->img);
	free(rx->state);
	memset(rx, 0, sizeof(*rx));
}
