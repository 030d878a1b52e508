/* SPDX-License-Identifier: MIT */
/*
 * bytes.h - big-endian fields of a wire record or an exchanged blob.
 *
 * One rule for every byte string the transport puts on a wire or hands to
 * a peer: unsigned fields, most significant byte first, of 1 to 8 bytes.
 * The control records (wire.c) and the datapaths' address and path blobs
 * (null.c, softnic.c, verbs*.c) all write and read their fields with these.
 */
#ifndef XP_BYTES_H
#define XP_BYTES_H

#include <stdint.h>

/* Write the low @n bytes (1..8) of @v at @p, most significant first. */
static inline void xp_put_be(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* Read @n bytes (1..8) at @p, most significant first. */
static inline uint64_t xp_get_be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

#endif /* XP_BYTES_H */
