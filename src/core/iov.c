#include "core/iov.h"

#include <string.h>

/* Copies between buf and the bytes [off, off + len) of the iovecs, in the
 * direction to_iov says; stops where the iovecs end. */
static size_t iov_copy(const struct iovec *iov, unsigned int n, size_t off, void *buf, size_t len,
		       bool to_iov)
{
	char *p = buf;
	size_t done = 0;

	for (unsigned int i = 0; i < n && done < len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t c = iov[i].iov_len - off;
		if (c > len - done)
			c = len - done;
		char *g = (char *)iov[i].iov_base + off;
		if (to_iov)
			memcpy(g, p + done, c);
		else
			memcpy(p + done, g, c);
		done += c;
		off = 0;
	}
	return done;
}

size_t iov_from_buf(const struct iovec *iov, unsigned int n, size_t off, const void *buf,
		    size_t len)
{
	return iov_copy(iov, n, off, (void *)buf, len, true);
}

size_t iov_to_buf(const struct iovec *iov, unsigned int n, size_t off, void *buf, size_t len)
{
	return iov_copy(iov, n, off, buf, len, false);
}

int iov_slice(const struct iovec *iov, unsigned int n, size_t off, size_t len, struct iovec *out,
	      unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n && len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t c = iov[i].iov_len - off;
		if (c > len)
			c = len;
		if (k == max)
			return -1;
		out[k].iov_base = (char *)iov[i].iov_base + off;
		out[k].iov_len = c;
		k++;
		len -= c;
		off = 0;
	}
	return (int)k;
}

int iov_skip(const struct iovec *iov, unsigned int n, size_t skip, struct iovec *out,
	     unsigned int max)
{
	return iov_slice(iov, n, skip, SIZE_MAX, out, max);
}

void *iov_byte(const struct iovec *iov, unsigned int n, size_t off)
{
	for (unsigned int i = 0; i < n; i++) {
		if (off < iov[i].iov_len)
			return (char *)iov[i].iov_base + off;
		off -= iov[i].iov_len;
	}
	return NULL;
}
