// SPDX-License-Identifier: Apache-2.0
#include "devices/block/blk_req.h"

#include <string.h>

#include "core/dirty.h"
#include "core/dma.h"

struct blk_hdr { /* guest layout, little-endian like the host */
	uint32_t type;
	uint32_t reserved; /* ioprio in old drivers: ignored */
	uint64_t sector;
};
_Static_assert(sizeof(struct blk_hdr) == VIRTIO_BLK_HDR_LEN, "virtio-blk header is 16 bytes");

struct blk_dwz_seg { /* one DISCARD / WRITE_ZEROES range, guest layout */
	uint64_t sector;
	uint32_t num_sectors;
	uint32_t flags;
};
_Static_assert(sizeof(struct blk_dwz_seg) == 16, "discard segment is 16 bytes");

/* ---- checks ---- */

/* [sector, sector + nsec) inside the disk, without overflow. */
static bool req_in_range(const struct blk_backend *b, uint64_t sector, uint64_t nsec)
{
	return sector <= b->capacity && nsec <= b->capacity - sector;
}

static enum blk_req_next req_done(struct blk_req *req, uint8_t status)
{
	req->status = status;
	return BLK_REQ_DONE;
}

/* IN / OUT: data_len bytes at offset data_off of the part in iov[0, n). */
static enum blk_req_next req_parse_rw(struct blk_req *req, const struct blk_backend *b,
				      uint64_t sector, const struct iovec *iov, unsigned int n,
				      size_t data_off, size_t data_len)
{
	if (data_len % BLK_SECTOR_SIZE || !req_in_range(b, sector, data_len / BLK_SECTOR_SIZE))
		return req_done(req, VIRTIO_BLK_S_IOERR);
	int k = dma_sg_slice(iov, n, data_off, data_len, req->iov, BLK_SEG_MAX);
	if (k < 0) /* more than BLK_SEG_MAX buffers */
		return req_done(req, VIRTIO_BLK_S_IOERR);
	req->niov = (unsigned int)k;
	req->off = sector * BLK_SECTOR_SIZE;
	req->len = data_len;
	return BLK_REQ_QUEUE;
}

static enum blk_req_next req_parse_ranges(struct blk_req *req, const struct blk_backend *b,
					  const struct virtq_elem *elem)
{
	bool discard = req->type == VIRTIO_BLK_T_DISCARD;
	uint32_t max_sectors = discard ? BLK_DISCARD_SECTORS_MAX : BLK_WRITE_ZEROES_SECTORS_MAX;
	size_t len = elem->out_len - VIRTIO_BLK_HDR_LEN;

	if (!len || len % sizeof(struct blk_dwz_seg))
		return req_done(req, VIRTIO_BLK_S_IOERR);
	if (len / sizeof(struct blk_dwz_seg) > BLK_DISCARD_SEG_MAX)
		return req_done(req, VIRTIO_BLK_S_UNSUPP);
	struct blk_dwz_seg segs[BLK_DISCARD_SEG_MAX];
	req->nranges = (unsigned int)(len / sizeof(struct blk_dwz_seg));
	dma_sg_read(elem->iov, elem->out_num, VIRTIO_BLK_HDR_LEN, segs, len);
	for (unsigned int i = 0; i < req->nranges; i++) {
		const struct blk_dwz_seg s = segs[i];
		/* Spec: unknown flags, or unmap on a discard, are unsupported. */
		if (s.flags & ~BLK_WRITE_ZEROES_FLAG_UNMAP || (discard && s.flags))
			return req_done(req, VIRTIO_BLK_S_UNSUPP);
		if (s.num_sectors > max_sectors || !req_in_range(b, s.sector, s.num_sectors))
			return req_done(req, VIRTIO_BLK_S_IOERR);
		req->ranges[i] =
		    (struct blk_range){.off = s.sector * BLK_SECTOR_SIZE,
				       .len = (uint64_t)s.num_sectors * BLK_SECTOR_SIZE,
				       .unmap = s.flags & BLK_WRITE_ZEROES_FLAG_UNMAP};
	}
	return BLK_REQ_QUEUE;
}

static enum blk_req_next req_get_id(struct blk_req *req, const struct blk_backend *b,
				    const struct iovec *in, unsigned int in_num, size_t room)
{
	size_t n = room < sizeof(b->serial) ? room : sizeof(b->serial);
	dma_sg_write(in, in_num, 0, b->serial, n);
	req->used_len = (uint32_t)n + 1;
	return req_done(req, VIRTIO_BLK_S_OK);
}

enum blk_req_next blk_req_parse(struct blk_req *req, const struct virtq_elem *elem,
				const struct blk_backend *b)
{
	const struct iovec *in = elem->iov + elem->out_num;
	struct blk_hdr h;

	req->head = elem->head;
	req->niov = req->nranges = 0;
	req->buffered = false;
	req->len = 0;
	req->used_len = 1;
	req->type = UINT32_MAX;
	if (!elem->in_len)
		return BLK_REQ_DROP;
	/* The last writable byte, wherever it is: trailing zero-length buffers
	 * are legal and skipped. */
	if (dma_sg_slice(in, elem->in_num, elem->in_len - 1, 1, &req->status_sg, 1) != 1)
		return BLK_REQ_DROP; /* cannot happen: in_len sums the buffers */
	if (elem->out_len < VIRTIO_BLK_HDR_LEN)
		return req_done(req, VIRTIO_BLK_S_IOERR);
	dma_sg_read(elem->iov, elem->out_num, 0, &h, sizeof(h));
	req->type = h.type;
	/* Bytes around the header and status that the type does not use (the
	 * writable part of an OUT, say) are ignored, as QEMU does. */
	size_t wdata = elem->in_len - 1, rdata = elem->out_len - VIRTIO_BLK_HDR_LEN;
	switch (h.type) {
	case VIRTIO_BLK_T_IN:
		if (req_parse_rw(req, b, h.sector, in, elem->in_num, 0, wdata) != BLK_REQ_QUEUE)
			return BLK_REQ_DONE;
		req->used_len = (uint32_t)wdata + 1;
		return BLK_REQ_QUEUE;
	case VIRTIO_BLK_T_OUT:
		if (b->ro)
			return req_done(req, VIRTIO_BLK_S_IOERR);
		return req_parse_rw(req, b, h.sector, elem->iov, elem->out_num, VIRTIO_BLK_HDR_LEN,
				    rdata);
	case VIRTIO_BLK_T_FLUSH:
		return BLK_REQ_QUEUE;
	case VIRTIO_BLK_T_GET_ID:
		return req_get_id(req, b, in, elem->in_num, wdata);
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		if (b->ro)
			return req_done(req, VIRTIO_BLK_S_IOERR);
		return req_parse_ranges(req, b, elem);
	default:
		return req_done(req, VIRTIO_BLK_S_UNSUPP);
	}
}

static int req_ranges_execute(struct blk_req *req, struct blk_backend *b)
{
	for (unsigned int i = 0; i < req->nranges; i++) {
		const struct blk_range *r = &req->ranges[i];
		int ret = req->type == VIRTIO_BLK_T_DISCARD
			      ? blk_backend_discard(b, r->off, r->len)
			      : blk_backend_write_zeroes(b, r->off, r->len, r->unmap);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void blk_req_execute(struct blk_req *req, struct blk_backend *b)
{
	int r;
	switch (req->type) {
	case VIRTIO_BLK_T_IN:
		r = blk_backend_read(b, req->iov, req->niov, req->off);
		break;
	case VIRTIO_BLK_T_OUT:
		r = blk_backend_write(b, req->iov, req->niov, req->off);
		break;
	case VIRTIO_BLK_T_FLUSH:
		r = blk_backend_flush(b);
		break;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		r = req_ranges_execute(req, b);
		break;
	default: /* blk_req_parse queues no other type */
		r = -1;
	}
	blk_req_set_result(req, r);
}

void blk_req_set_result(struct blk_req *req, int r)
{
	req->status = r < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
	if (r < 0 && req->type == VIRTIO_BLK_T_IN)
		req->used_len = 1; /* the data is not valid; say nothing was read */
}

uint64_t blk_req_left(const struct blk_req *req)
{
	uint64_t left = 0;
	for (unsigned int i = 0; i < req->niov; i++)
		left += req->iov[i].iov_len;
	return left;
}

uint64_t blk_req_advance(struct blk_req *req, uint64_t n)
{
	unsigned int i = 0;
	if (req->type == VIRTIO_BLK_T_IN) /* io_uring's read, done: core/dirty.h */
		dirty_mark_iov(req->iov, req->niov, (size_t)n);
	req->off += n;
	while (i < req->niov && n >= req->iov[i].iov_len)
		n -= req->iov[i++].iov_len;
	if (i < req->niov) {
		req->iov[i].iov_base = (uint8_t *)req->iov[i].iov_base + n;
		req->iov[i].iov_len -= n;
	}
	req->niov -= i;
	memmove(req->iov, req->iov + i, req->niov * sizeof(req->iov[0]));
	return blk_req_left(req);
}

void blk_req_finish(const struct blk_req *req)
{
	dma_sg_write(&req->status_sg, 1, 0, &req->status, 1);
}
