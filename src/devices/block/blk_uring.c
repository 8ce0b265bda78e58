// SPDX-License-Identifier: Apache-2.0
#include "devices/block/blk_uring.h"

#include <errno.h>
#include <string.h>

int blk_uring_init(struct blk_uring *u, unsigned int entries)
{
	memset(u, 0, sizeof(*u));
	int r = io_uring_queue_init(entries, &u->ring, IORING_SETUP_R_DISABLED);
	if (r < 0)
		return r;
	struct io_uring_restriction res[] = {
	    {.opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READV},
	    {.opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_WRITEV},
	    {.opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_FSYNC},
	    {.opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_NOP},
	    {.opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED, .sqe_flags = IOSQE_IO_DRAIN},
	};
	/* The raw register calls: Debian's liburing 2.3 declares
	 * io_uring_register_restrictions and io_uring_enable_rings but does
	 * not export them. Both return -errno. */
	int fd = u->ring.ring_fd;
	r = io_uring_register(fd, IORING_REGISTER_RESTRICTIONS, res, sizeof(res) / sizeof(res[0]));
	if (r == 0)
		r = io_uring_register(fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	if (r < 0) {
		io_uring_queue_exit(&u->ring);
		return r;
	}
	u->ready = true;
	return 0;
}

void blk_uring_exit(struct blk_uring *u)
{
	if (u->ready)
		io_uring_queue_exit(&u->ring);
	u->ready = false;
}

bool blk_uring_prep_nop(struct blk_uring *u, uint64_t tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	if (!sqe)
		return false;
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, tag);
	return true;
}

bool blk_uring_prep(struct blk_uring *u, const struct blk_req *req, int fd, uint64_t tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	if (!sqe)
		return false;
	switch (req->type) {
	case VIRTIO_BLK_T_IN:
		io_uring_prep_readv(sqe, fd, req->iov, req->niov, req->off);
		break;
	case VIRTIO_BLK_T_OUT:
		io_uring_prep_writev(sqe, fd, req->iov, req->niov, req->off);
		break;
	case VIRTIO_BLK_T_FLUSH:
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
		break;
	default:
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
	}
	io_uring_sqe_set_data64(sqe, tag);
	return true;
}

int blk_uring_submit(struct blk_uring *u)
{
	/* A short submit leaves the rest in the ring; nothing else would
	 * submit it, so go on, a bounded number of times. */
	for (int tries = 0; io_uring_sq_ready(&u->ring) && tries < 1000; tries++) {
		int r = io_uring_submit(&u->ring);
		if (r < 0 && r != -EINTR && r != -EAGAIN)
			return r;
	}
	return io_uring_sq_ready(&u->ring) ? -EAGAIN : 0;
}

int blk_uring_reap(struct blk_uring *u, struct blk_uring_done *out, unsigned int max)
{
	struct io_uring_cqe *cqe;
	int r;
	do
		r = io_uring_wait_cqe(&u->ring, &cqe);
	while (r == -EINTR);
	if (r < 0)
		return r;
	unsigned int n = 0, head;
	io_uring_for_each_cqe(&u->ring, head, cqe)
	{
		if (n == max)
			break;
		out[n].tag = io_uring_cqe_get_data64(cqe);
		out[n].res = cqe->res;
		n++;
	}
	io_uring_cq_advance(&u->ring, n);
	return (int)n;
}
