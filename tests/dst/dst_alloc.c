// SPDX-License-Identifier: MIT
/*
 * dst_alloc.c - the wrapped allocator of dst_core (dst_alloc.h): the linker
 * sends malloc, calloc, realloc, aligned_alloc and free here
 * (-Wl,--wrap=...), and each goes on to the C library's (__real_*) unless
 * the calling thread is armed.
 * The state is thread-local, so an armed thread fails and counts only its
 * own calls.
 */
#include <errno.h>
#include <stddef.h>

#include "dst_alloc.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
void __wrap_free(void *p);

static _Thread_local struct {
	bool armed;
	uint64_t nth;
	struct dst_alloc_tally tally;
} self;

void dst_alloc_arm(uint64_t nth)
{
	self.armed = true;
	self.nth = nth;
	self.tally = (struct dst_alloc_tally){ 0 };
}

void dst_alloc_disarm(struct dst_alloc_tally *out)
{
	*out = self.tally;
	self.armed = false;
}

/* Whether this allocation is the one to fail (counting it when armed). */
static bool fail_this(void)
{
	if (!self.armed || ++self.tally.seen != self.nth)
		return false;
	self.tally.failed = true;
	errno = ENOMEM;
	return true;
}

/* Count @p, a block just made, when armed; return it. */
static void *made(void *p)
{
	if (p && self.armed)
		self.tally.live++;
	return p;
}

void *__wrap_malloc(size_t n)
{
	return fail_this() ? NULL : made(__real_malloc(n));
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_this() ? NULL : made(__real_calloc(n, size));
}

void *__wrap_realloc(void *p, size_t n)
{
	void *q;

	if (fail_this())
		return NULL;
	q = __real_realloc(p, n);
	if (!p)
		return made(q);
	if (!q && !n && self.armed) /* glibc: realloc(p, 0) frees p */
		self.tally.live--;
	return q;
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	return fail_this() ? NULL : made(__real_aligned_alloc(align, n));
}

void __wrap_free(void *p)
{
	if (p && self.armed)
		self.tally.live--;
	__real_free(p);
}
