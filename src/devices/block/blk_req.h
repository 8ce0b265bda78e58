// SPDX-License-Identifier: Apache-2.0
/* virtio-blk requests (virtio 1.2 §5.2.6): turning a popped chain into a
 * checked request, and carrying it out against a blk_backend.
 *
 * A chain is: a 16-byte header {le32 type, le32 reserved, le64 sector} in
 * the readable part (it may span several buffers), then the data (readable
 * for OUT/DISCARD/WRITE_ZEROES, writable for IN/GET_ID), then one status
 * byte: the last writable byte. Everything the guest wrote is copied out
 * once (header, discard ranges) before it is checked. Guest memory is
 * accessed through core/dma.h with the ordered accessors: a fence is small
 * next to the system call a request costs anyway. */
#ifndef SKIFF_BLK_REQ_H
#define SKIFF_BLK_REQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "devices/block/blk_backend.h"
#include "virtio/virtq.h"

/* Request types */
#define VIRTIO_BLK_T_IN		  0
#define VIRTIO_BLK_T_OUT	  1
#define VIRTIO_BLK_T_FLUSH	  4
#define VIRTIO_BLK_T_GET_ID	  8
#define VIRTIO_BLK_T_DISCARD	  11
#define VIRTIO_BLK_T_WRITE_ZEROES 13
/* Status byte values */
#define VIRTIO_BLK_S_OK	    0
#define VIRTIO_BLK_S_IOERR  1
#define VIRTIO_BLK_S_UNSUPP 2

#define VIRTIO_BLK_HDR_LEN 16
/* Data segments per request, advertised as seg_max: the header and status
 * take two more, so a largest request fits a 128-entry ring even without
 * indirect descriptors. A guest that sends more gets IOERR. */
#define BLK_SEG_MAX 126
/* Ranges per DISCARD / WRITE_ZEROES request and sectors per range,
 * advertised in the config space. Write-zeroes may fall back to writing
 * zeroes, so its ranges are kept shorter (a bounded stall of the worker). */
#define BLK_DISCARD_SEG_MAX	     16
#define BLK_DISCARD_SECTORS_MAX	     (1u << 22) /* 2 GiB */
#define BLK_WRITE_ZEROES_SECTORS_MAX (1u << 16) /* 32 MiB */
#define BLK_WRITE_ZEROES_FLAG_UNMAP  1u

enum blk_req_next {
	BLK_REQ_QUEUE, /* valid: carry it out with blk_req_execute (may block) */
	BLK_REQ_DONE,  /* answered already: status holds the result */
	BLK_REQ_DROP,  /* no status byte to answer in: push with len 0 */
};

struct blk_range {
	uint64_t off, len; /* bytes */
	bool unmap;
};

struct blk_req {
	uint16_t head;
	uint32_t type;
	uint8_t status;		/* VIRTIO_BLK_S_* to report */
	struct iovec status_sg; /* the guest's status byte (a dma_sg_slice) */
	uint32_t used_len;	/* bytes written to the guest, status included */
	uint64_t off;		/* IN / OUT: byte offset in the image */
	uint64_t len;		/* IN / OUT: data bytes asked for (stays as iov is consumed) */
	unsigned int niov;	/* IN / OUT: data buffers (guest RAM) */
	struct iovec iov[BLK_SEG_MAX];
	unsigned int nranges; /* DISCARD / WRITE_ZEROES */
	struct blk_range ranges[BLK_DISCARD_SEG_MAX];
	uint64_t gen;  /* owned by the device: drops requests from before a reset */
	bool buffered; /* aio=io_uring: the direct file refused it (EINVAL) */
};

/* Checks the chain in elem against the backend (capacity, ro) and fills
 * req. Does the whole of cheap requests (GET_ID, every error) on the spot;
 * the caller then writes the status with blk_req_finish. */
enum blk_req_next blk_req_parse(struct blk_req *req, const struct virtq_elem *elem,
				const struct blk_backend *b);
/* Does the I/O of a BLK_REQ_QUEUE request and sets req->status. May block:
 * call it off the vCPU thread. Touches guest RAM only by preadv/pwritev on
 * req->iov (a dma_sg_slice: see the rule in core/dma.h). */
void blk_req_execute(struct blk_req *req, struct blk_backend *b);
/* Sets status (and used_len) from an I/O result: 0 or -errno. */
void blk_req_set_result(struct blk_req *req, int r);
/* After a short read or write of n bytes: drops them from the front of
 * req->iov and moves req->off past them. Returns the bytes still to do. */
uint64_t blk_req_advance(struct blk_req *req, uint64_t n);
/* Bytes req->iov still covers. */
uint64_t blk_req_left(const struct blk_req *req);
/* Writes the status byte into the guest's buffer (ordered, dma_sg_write). */
void blk_req_finish(const struct blk_req *req);

#endif
