// SPDX-License-Identifier: MIT
/*
 * pcmfi_util.c - small helpers of the pcm provider: libpcmtransport's codes
 * as libfabric's, copies between iovecs and flat bytes, random keys, and
 * the monotonic clock of timeouts.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "pcmfi.h"

/**
 * pcmfi_errno() - a libpcmtransport code (0 or -errno) as a libfabric one.
 * @pcm_err: the code.
 *
 * libfabric's FI_E* values for POSIX errors are the errno values themselves;
 * a code libfabric has no name for becomes -FI_EIO.
 *
 * Return: 0 or a negative FI_E* code.
 */
int pcmfi_errno(int pcm_err)
{
	if (pcm_err >= 0)
		return 0;
	switch (-pcm_err) {
	case EPERM: case ENOENT: case EINTR: case EIO: case E2BIG: case EBADF: case EAGAIN:
	case ENOMEM: case EACCES: case EFAULT: case EBUSY: case ENODEV: case EINVAL: case EMFILE:
	case ENOSPC: case ENOSYS: case ENODATA: case EOVERFLOW: case EMSGSIZE: case ENOPROTOOPT:
	case EOPNOTSUPP: case EADDRINUSE: case EADDRNOTAVAIL: case ENETDOWN: case ENETUNREACH:
	case ECONNABORTED: case ECONNRESET: case ENOBUFS: case EISCONN: case ENOTCONN:
	case ESHUTDOWN: case ETIMEDOUT: case ECONNREFUSED: case EHOSTDOWN: case EHOSTUNREACH:
	case EALREADY: case EINPROGRESS: case ECANCELED: case EKEYREJECTED:
		return pcm_err;
	default:
		return -FI_EIO;
	}
}

/**
 * pcmfi_iov_len() - the bytes of @count iovecs.
 */
size_t pcmfi_iov_len(const struct iovec *iov, size_t count)
{
	size_t n = 0;

	for (size_t i = 0; i < count; i++)
		n += iov[i].iov_len;
	return n;
}

/* Walk [@offset, @offset + @len) of the iovecs, copying to (@to) or from them. */
static size_t iov_copy(const struct iovec *iov, size_t count, uint64_t offset, uint8_t *flat,
		       size_t len, int to)
{
	size_t done = 0;

	for (size_t i = 0; i < count && done < len; i++) {
		size_t n;

		if (offset >= iov[i].iov_len) {
			offset -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - offset;
		if (n > len - done)
			n = len - done;
		if (to)
			memcpy((uint8_t *)iov[i].iov_base + offset, flat + done, n);
		else
			memcpy(flat + done, (uint8_t *)iov[i].iov_base + offset, n);
		done += n;
		offset = 0;
	}
	return done;
}

/**
 * pcmfi_iov_copy_to() - copy @len bytes of @src into the iovecs at @offset.
 *
 * Return: the bytes copied (fewer when the iovecs end first).
 */
size_t pcmfi_iov_copy_to(const struct iovec *iov, size_t count, uint64_t offset,
			 const void *src, size_t len)
{
	return iov_copy(iov, count, offset, (uint8_t *)src, len, 1);
}

/**
 * pcmfi_iov_copy_from() - copy @len bytes at @offset of the iovecs to @dst.
 *
 * Return: the bytes copied (fewer when the iovecs end first).
 */
size_t pcmfi_iov_copy_from(const struct iovec *iov, size_t count, uint64_t offset, void *dst,
			   size_t len)
{
	return iov_copy(iov, count, offset, dst, len, 0);
}

/**
 * pcmfi_random64() - 64 bits from the kernel's generator (memory keys a peer
 * cannot guess).
 */
uint64_t pcmfi_random64(void)
{
	uint64_t v = 0;

	while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		;
	return v;
}

/* pcmfi_now_ms() - the monotonic clock, in ms (timeouts). */
int64_t pcmfi_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
