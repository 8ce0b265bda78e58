#include "net/iov.h"

#include <string.h>

size_t iov_from_buf(const struct iovec *iov, unsigned int n, size_t off, const void *buf,
		    size_t len)
{
	const char *src = buf;
	size_t done = 0;

	for (unsigned int i = 0; i < n && done < len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t c = iov[i].iov_len - off;
		if (c > len - done)
			c = len - done;
		memcpy((char *)iov[i].iov_base + off, src + done, c);
		done += c;
		off = 0;
	}
	return done;
}

size_t iov_to_buf(const struct iovec *iov, unsigned int n, size_t off, void *buf, size_t len)
{
	char *dst = buf;
	size_t done = 0;

	for (unsigned int i = 0; i < n && done < len; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t c = iov[i].iov_len - off;
		if (c > len - done)
			c = len - done;
		memcpy(dst + done, (const char *)iov[i].iov_base + off, c);
		done += c;
		off = 0;
	}
	return done;
}

int iov_skip(const struct iovec *iov, unsigned int n, size_t skip, struct iovec *out,
	     unsigned int max)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		if (k == max)
			return -1;
		out[k].iov_base = (char *)iov[i].iov_base + skip;
		out[k].iov_len = iov[i].iov_len - skip;
		skip = 0;
		k++;
	}
	return (int)k;
}
