/* Scatter-gather helpers for device paths (virtio-net, virtio-blk): copying between a host buffer
 * and an iovec array (guest buffers from virtq_pop), and trimming bytes off
 * the front of an iovec array without copying data. */
#ifndef SKIFF_CORE_IOV_H
#define SKIFF_CORE_IOV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Copies up to len bytes of buf into the iovecs, starting off bytes into
 * them. Returns the bytes copied (less than len if the iovecs end). */
size_t iov_from_buf(const struct iovec *iov, unsigned int n, size_t off, const void *buf,
		    size_t len);
/* Copies up to len bytes from the iovecs, starting off bytes into them, to
 * buf. Returns the bytes copied. */
size_t iov_to_buf(const struct iovec *iov, unsigned int n, size_t off, void *buf, size_t len);
/* Writes to out the iovecs that remain after skipping skip bytes, without
 * empty entries. Returns the number written, or -1 if more than max would
 * be needed. */
int iov_skip(const struct iovec *iov, unsigned int n, size_t skip, struct iovec *out,
	     unsigned int max);
/* Writes to out the iovecs covering bytes [off, off + len) (fewer if the
 * iovecs end first), without empty entries. Returns the number written, or
 * -1 if more than max would be needed. */
int iov_slice(const struct iovec *iov, unsigned int n, size_t off, size_t len, struct iovec *out,
	      unsigned int max);
/* Host pointer to byte off of the iovecs, or NULL past their end. */
void *iov_byte(const struct iovec *iov, unsigned int n, size_t off);

#endif
