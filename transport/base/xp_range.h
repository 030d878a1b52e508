/* SPDX-License-Identifier: MIT */
/*
 * xp_range.h - the one check that [off, off + len) lies inside an object of
 * `size` bytes, written so that no sum can wrap: a client's buffer in its
 * region, a region in a registration, a buffer in a registered range. Every
 * such check in the tree is this function.
 */
#ifndef XP_RANGE_H
#define XP_RANGE_H

#include <stdbool.h>
#include <stdint.h>

/**
 * xp_range_within() - whether [off, off + len) lies inside [0, size)
 * @off: the range's start, relative to the object
 * @len: the range's length (0 is inside when off <= size)
 * @size: the object's size
 *
 * Return: true when the whole range is inside.
 */
static inline bool xp_range_within(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/**
 * xp_range_within_ptr() - whether the bytes [p, p + len) lie inside [base, base + size)
 * @base: the object's first byte
 * @size: the object's size
 * @p: the range's first byte
 * @len: the range's length
 *
 * Return: true when the whole range is inside (compared as addresses, never wrapping).
 */
static inline bool xp_range_within_ptr(const void *base, uint64_t size, const void *p, uint64_t len)
{
	uintptr_t b = (uintptr_t)base, a = (uintptr_t)p;

	return a >= b && xp_range_within(a - b, len, size);
}

#endif /* XP_RANGE_H */
