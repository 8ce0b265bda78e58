// SPDX-License-Identifier: Apache-2.0
/* skiff's snapshot file: a checked, versioned container of typed sections
 * (docs/SNAPSHOT.md). Core knows only the container; what a section holds
 * belongs to whoever wrote it (x86/ the vCPUs and the irqchip, each device
 * kind its own state, versioned by the kind: a layout number first,
 * bumped when the section changes; SNAP_VERSION is the container's).
 *
 *   header   magic "SKIFFSNP", format version, host arch, total length,
 *            section count, xxh64 of the header before it
 *   section  id, instance (a vCPU's index, a device's), payload length,
 *            xxh64 of those and the payload; then the payload
 *
 * All little-endian (the arch check keeps a file on its own host kind).
 * The reader checks everything before anyone reads a payload: every length
 * against the file, every checksum, the version and the arch; a file that
 * passes is whole, so a caller that validates its own payloads before it
 * applies any never half-restores. Not thread-safe: one owner each. */
#ifndef SKIFF_SNAP_H
#define SKIFF_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/must_check.h"

#define SNAP_MAGIC	  "SKIFFSNP"
#define SNAP_VERSION	  1u
#define SNAP_HDR_SIZE	  40u
#define SNAP_SEC_HDR_SIZE 24u
/* The state file only (guest RAM is a file of its own): far below this. */
#define SNAP_MAX_FILE	  (64u << 20)
#define SNAP_MAX_SECTIONS 4096u

enum snap_arch { SNAP_ARCH_X86_64 = 1 };

/* Section ids: one registry, so two owners never collide. */
enum snap_id {
	SNAP_ID_VM_CONFIG = 1, /* the VM's shape: RAM, vCPUs, devices */
	SNAP_ID_VM_CLOCK,      /* kvmclock */
	SNAP_ID_IRQCHIP,       /* instance: KVM_IRQCHIP_PIC_MASTER.. */
	SNAP_ID_PIT,
	SNAP_ID_DEV_LIST,	/* the devices configured: kind and spec each */
	SNAP_ID_DEV_IDS,	/* their API ids (iface_id, drive_id), if any */
	SNAP_ID_VCPU_REGS = 16, /* instance: the vCPU's index, for each below */
	SNAP_ID_VCPU_SREGS,
	SNAP_ID_VCPU_XSAVE,
	SNAP_ID_VCPU_FPU,
	SNAP_ID_VCPU_XCRS,
	SNAP_ID_VCPU_MSRS,
	SNAP_ID_VCPU_LAPIC,
	SNAP_ID_VCPU_EVENTS,
	SNAP_ID_VCPU_DEBUGREGS,
	SNAP_ID_VCPU_TSC_KHZ,
	SNAP_ID_VCPU_MP_STATE,
	SNAP_ID_UART = 48,
	SNAP_ID_I8042,
	SNAP_ID_DEVICE = 64, /* instance: the device's place in the manager */
	SNAP_ID_PCI_FN,	     /* its PCI function: config space, MSI-X */
	SNAP_ID_VIRTIO_PCI,  /* its virtio-pci transport and queues */
};

/* Sections in memory, written out at once. */
struct snap_writer {
	uint8_t *buf;
	size_t len, cap;
	uint32_t nr;
	bool failed; /* out of memory or too big: snap_write_file refuses */
};

void snap_writer_init(struct snap_writer *w);
void snap_writer_free(struct snap_writer *w);
/* Appends a section (payload copied). 0, or -1 (and w->failed). */
int snap_put(struct snap_writer *w, uint32_t id, uint32_t instance, const void *p, size_t n);
/* The header in front, the whole image to path (created 0600, or
 * truncated). 0, or -1 with one line in err. */
MUST_CHECK int snap_write_file(struct snap_writer *w, const char *path, char *err, size_t errlen);
/* The image as a buffer (header filled in): for tests and fuzzing. */
const uint8_t *snap_writer_image(struct snap_writer *w, size_t *len);

struct snap_section {
	uint32_t id, instance;
	uint32_t len;
	const uint8_t *data;
};

/* A parsed, fully checked image. */
struct snap_image {
	uint8_t *buf; /* owned when read from a file */
	size_t len;
	struct snap_section *sec;
	uint32_t nr;
};

/* Checks buf (not copied: it must outlive img). 0, or -1 with one line in
 * err naming what is wrong (truncated, corrupted, foreign version or
 * arch). */
MUST_CHECK int snap_parse(struct snap_image *img, const uint8_t *buf, size_t len, char *err,
			  size_t errlen);
MUST_CHECK int snap_read_file(struct snap_image *img, const char *path, char *err, size_t errlen);
void snap_image_free(struct snap_image *img);

/* The section (id, instance), or NULL. */
const struct snap_section *snap_find(const struct snap_image *img, uint32_t id, uint32_t instance);
/* Copies section (id, instance) into dst, which must be exactly n bytes
 * long in the file: 0, or -1 with one line in err. */
MUST_CHECK int snap_get(const struct snap_image *img, uint32_t id, uint32_t instance, void *dst,
			size_t n, char *err, size_t errlen);

/* "vcpu-regs", for messages. */
const char *snap_id_name(uint32_t id);

#endif
