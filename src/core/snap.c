// SPDX-License-Identifier: Apache-2.0
#include "core/snap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define SNAP_SEED 0x736b696666ull /* "skiff": a plain xxh64 of zeros is no checksum */

static const struct {
	uint32_t id;
	const char *name;
} snap_names[] = {
    {SNAP_ID_VM_CONFIG, "vm-config"},
    {SNAP_ID_VM_CLOCK, "vm-clock"},
    {SNAP_ID_IRQCHIP, "irqchip"},
    {SNAP_ID_PIT, "pit"},
    {SNAP_ID_DEV_LIST, "device-list"},
    {SNAP_ID_DEV_IDS, "device-ids"},
    {SNAP_ID_VCPU_REGS, "vcpu-regs"},
    {SNAP_ID_VCPU_SREGS, "vcpu-sregs"},
    {SNAP_ID_VCPU_XSAVE, "vcpu-xsave"},
    {SNAP_ID_VCPU_FPU, "vcpu-fpu"},
    {SNAP_ID_VCPU_XCRS, "vcpu-xcrs"},
    {SNAP_ID_VCPU_MSRS, "vcpu-msrs"},
    {SNAP_ID_VCPU_LAPIC, "vcpu-lapic"},
    {SNAP_ID_VCPU_EVENTS, "vcpu-events"},
    {SNAP_ID_VCPU_DEBUGREGS, "vcpu-debugregs"},
    {SNAP_ID_VCPU_TSC_KHZ, "vcpu-tsc-khz"},
    {SNAP_ID_VCPU_MP_STATE, "vcpu-mp-state"},
    {SNAP_ID_UART, "uart"},
    {SNAP_ID_I8042, "i8042"},
    {SNAP_ID_DEVICE, "device"},
    {SNAP_ID_PCI_FN, "pci-function"},
    {SNAP_ID_VIRTIO_PCI, "virtio-pci"},
};

const char *snap_id_name(uint32_t id)
{
	for (size_t i = 0; i < sizeof(snap_names) / sizeof(snap_names[0]); i++)
		if (snap_names[i].id == id)
			return snap_names[i].name;
	return "unknown";
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A section's checksum covers its id, instance and length too: a flipped
 * id is as wrong as a flipped payload byte. */
static uint64_t sec_hash(const uint8_t *hdr16, const uint8_t *payload, size_t n)
{
	XXH64_state_t *s = XXH64_createState();
	if (!s)
		return 0;
	XXH64_reset(s, SNAP_SEED);
	XXH64_update(s, hdr16, 16);
	XXH64_update(s, payload, n);
	uint64_t h = XXH64_digest(s);
	XXH64_freeState(s);
	return h;
}

void snap_writer_init(struct snap_writer *w)
{
	*w = (struct snap_writer){0};
}

void snap_writer_free(struct snap_writer *w)
{
	free(w->buf);
	*w = (struct snap_writer){0};
}

static int snap_reserve(struct snap_writer *w, size_t more)
{
	if (w->failed || more > SNAP_MAX_FILE || w->len + more > SNAP_MAX_FILE)
		return -1;
	if (w->len + more <= w->cap)
		return 0;
	size_t cap = w->cap ? w->cap : 4096;
	while (cap < w->len + more)
		cap *= 2;
	uint8_t *b = realloc(w->buf, cap);
	if (!b)
		return -1;
	w->buf = b;
	w->cap = cap;
	return 0;
}

int snap_put(struct snap_writer *w, uint32_t id, uint32_t instance, const void *p, size_t n)
{
	if (!w->len && snap_reserve(w, SNAP_HDR_SIZE) == 0) {
		memset(w->buf, 0, SNAP_HDR_SIZE);
		w->len = SNAP_HDR_SIZE;
	}
	if (!w->len || n > UINT32_MAX || w->nr >= SNAP_MAX_SECTIONS ||
	    snap_reserve(w, SNAP_SEC_HDR_SIZE + n) < 0) {
		w->failed = true;
		return -1;
	}
	uint8_t *h = w->buf + w->len;
	put32(h, id);
	put32(h + 4, instance);
	put64(h + 8, n);
	if (n)
		memcpy(h + SNAP_SEC_HDR_SIZE, p, n);
	put64(h + 16, sec_hash(h, h + SNAP_SEC_HDR_SIZE, n));
	w->len += SNAP_SEC_HDR_SIZE + n;
	w->nr++;
	return 0;
}

const uint8_t *snap_writer_image(struct snap_writer *w, size_t *len)
{
	if (!w->len && snap_reserve(w, SNAP_HDR_SIZE) == 0) {
		memset(w->buf, 0, SNAP_HDR_SIZE);
		w->len = SNAP_HDR_SIZE;
	}
	if (w->failed || !w->len)
		return NULL;
	memcpy(w->buf, SNAP_MAGIC, 8);
	put32(w->buf + 8, SNAP_VERSION);
	put32(w->buf + 12, SNAP_ARCH_X86_64);
	put64(w->buf + 16, w->len);
	put32(w->buf + 24, w->nr);
	put32(w->buf + 28, 0);
	put64(w->buf + 32, XXH64(w->buf, 32, SNAP_SEED));
	*len = w->len;
	return w->buf;
}

int snap_write_file(struct snap_writer *w, const char *path, char *err, size_t errlen)
{
	size_t len;
	const uint8_t *b = snap_writer_image(w, &len);
	if (!b) {
		snprintf(err, errlen, "snapshot state is too large or out of memory");
		return -1;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, b + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "cannot write %s: %s", path,
				 n < 0 ? strerror(errno) : "short write");
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int snap_check_header(const uint8_t *b, size_t len, uint32_t *nr, char *err, size_t errlen)
{
	if (len < SNAP_HDR_SIZE) {
		snprintf(err, errlen, "snapshot is truncated: %zu bytes, shorter than its header",
			 len);
		return -1;
	}
	if (memcmp(b, SNAP_MAGIC, 8)) {
		snprintf(err, errlen, "not a skiff snapshot (no SKIFFSNP magic)");
		return -1;
	}
	/* Version and arch before the checksum: another version's header
	 * may be laid out otherwise, and the user wants to hear which. */
	if (get32(b + 8) != SNAP_VERSION) {
		snprintf(err, errlen, "snapshot format version %u, this skiff reads version %u",
			 get32(b + 8), SNAP_VERSION);
		return -1;
	}
	if (get32(b + 12) != SNAP_ARCH_X86_64) {
		snprintf(err, errlen, "snapshot of another architecture (%u), this host is x86_64",
			 get32(b + 12));
		return -1;
	}
	if (get64(b + 32) != XXH64(b, 32, SNAP_SEED)) {
		snprintf(err, errlen, "snapshot header is corrupted (checksum mismatch)");
		return -1;
	}
	if (get64(b + 16) != len) {
		snprintf(err, errlen,
			 "snapshot is %s: its header says %llu bytes, the file has %zu",
			 get64(b + 16) > len ? "truncated" : "too long",
			 (unsigned long long)get64(b + 16), len);
		return -1;
	}
	*nr = get32(b + 24);
	if (*nr > SNAP_MAX_SECTIONS || get32(b + 28)) {
		snprintf(err, errlen, "snapshot header is invalid (%u sections)", *nr);
		return -1;
	}
	return 0;
}

static int snap_check_section(struct snap_section *s, const uint8_t *b, size_t len, size_t *off,
			      uint32_t i, char *err, size_t errlen)
{
	if (len - *off < SNAP_SEC_HDR_SIZE) {
		snprintf(err, errlen, "snapshot is truncated: section %u's header is cut short", i);
		return -1;
	}
	const uint8_t *h = b + *off;
	uint64_t n = get64(h + 8);
	if (n > len - *off - SNAP_SEC_HDR_SIZE) {
		snprintf(err, errlen,
			 "snapshot is truncated: section %u (%s) says %llu bytes, %zu are left", i,
			 snap_id_name(get32(h)), (unsigned long long)n,
			 len - *off - SNAP_SEC_HDR_SIZE);
		return -1;
	}
	if (get64(h + 16) != sec_hash(h, h + SNAP_SEC_HDR_SIZE, (size_t)n)) {
		snprintf(err, errlen, "snapshot section %u (%s) is corrupted (checksum mismatch)",
			 i, snap_id_name(get32(h)));
		return -1;
	}
	*s = (struct snap_section){get32(h), get32(h + 4), (uint32_t)n, h + SNAP_SEC_HDR_SIZE};
	*off += SNAP_SEC_HDR_SIZE + (size_t)n;
	return 0;
}

int snap_parse(struct snap_image *img, const uint8_t *b, size_t len, char *err, size_t errlen)
{
	*img = (struct snap_image){0};
	uint32_t nr;
	if (snap_check_header(b, len, &nr, err, errlen) < 0)
		return -1;
	struct snap_section *sec = calloc(nr ? nr : 1, sizeof(*sec));
	if (!sec) {
		snprintf(err, errlen, "out of memory reading the snapshot");
		return -1;
	}
	size_t off = SNAP_HDR_SIZE;
	for (uint32_t i = 0; i < nr; i++) {
		if (snap_check_section(&sec[i], b, len, &off, i, err, errlen) < 0)
			goto fail;
		if (snap_find(&(struct snap_image){.sec = sec, .nr = i}, sec[i].id,
			      sec[i].instance)) {
			snprintf(err, errlen, "snapshot has section %s/%u twice",
				 snap_id_name(sec[i].id), sec[i].instance);
			goto fail;
		}
	}
	if (off != len) {
		snprintf(err, errlen, "snapshot has %zu bytes after its last section", len - off);
		goto fail;
	}
	*img = (struct snap_image){.len = len, .sec = sec, .nr = nr};
	return 0;
fail:
	free(sec);
	return -1;
}

int snap_read_file(struct snap_image *img, const char *path, char *err, size_t errlen)
{
	*img = (struct snap_image){0};
	/* O_NONBLOCK: a FIFO's open would wait for a writer, with the API's
	 * controller inside it; it is refused below instead. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot open snapshot %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)SNAP_MAX_FILE) {
		if (S_ISREG(st.st_mode))
			snprintf(err, errlen, "snapshot %s is larger than %u MiB", path,
				 SNAP_MAX_FILE >> 20);
		else
			snprintf(err, errlen, "snapshot %s is not a regular file", path);
		close(fd);
		return -1;
	}
	size_t len = (size_t)st.st_size, got = 0;
	uint8_t *b = malloc(len ? len : 1);
	while (b && got < len) {
		ssize_t n = read(fd, b + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!b || got != len) {
		snprintf(err, errlen, "cannot read snapshot %s", path);
		free(b);
		return -1;
	}
	if (snap_parse(img, b, len, err, errlen) < 0) {
		free(b);
		return -1;
	}
	img->buf = b;
	return 0;
}

void snap_image_free(struct snap_image *img)
{
	free(img->sec);
	free(img->buf);
	*img = (struct snap_image){0};
}

const struct snap_section *snap_find(const struct snap_image *img, uint32_t id, uint32_t instance)
{
	for (uint32_t i = 0; i < img->nr; i++)
		if (img->sec[i].id == id && img->sec[i].instance == instance)
			return &img->sec[i];
	return NULL;
}

int snap_get(const struct snap_image *img, uint32_t id, uint32_t instance, void *dst, size_t n,
	     char *err, size_t errlen)
{
	const struct snap_section *s = snap_find(img, id, instance);
	if (!s) {
		snprintf(err, errlen, "snapshot has no %s/%u section", snap_id_name(id), instance);
		return -1;
	}
	if (s->len != n) {
		snprintf(err, errlen, "snapshot section %s/%u is %u bytes, expected %zu",
			 snap_id_name(id), instance, s->len, n);
		return -1;
	}
	if (n)
		memcpy(dst, s->data, n);
	return 0;
}
