/* SPDX-License-Identifier: MIT */
/*
 * dst_alloc.h - allocation failures on demand, for dst_core's F_NOMEM
 * ingredient: dst_core is linked with -Wl,--wrap= for malloc, calloc,
 * realloc, aligned_alloc and free, so every allocation of the code linked
 * into it (transport/core, libpcm, the tests) goes through dst_alloc.c,
 * which passes it to the C library unless the calling thread armed it. Armed, a thread counts its own
 * allocations and frees and fails the one it named; other threads are never
 * affected.
 */
#ifndef DST_ALLOC_H
#define DST_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

/* What a thread's allocations did between dst_alloc_arm() and dst_alloc_disarm(). */
struct dst_alloc_tally {
	uint64_t seen; /* allocations (malloc, calloc, realloc, aligned_alloc) asked for */
	int64_t live;  /* made and not yet freed: 0 when nothing leaked */
	bool failed;   /* the armed allocation was failed */
};

/**
 * dst_alloc_arm() - start counting the calling thread's allocations and frees,
 * and fail its @nth allocation from now (1 is the next one; 0: none fails).
 * @nth: which allocation fails.
 */
void dst_alloc_arm(uint64_t nth);

/**
 * dst_alloc_disarm() - stop counting on the calling thread.
 * @out: what was counted since dst_alloc_arm().
 */
void dst_alloc_disarm(struct dst_alloc_tally *out);

#endif /* DST_ALLOC_H */
