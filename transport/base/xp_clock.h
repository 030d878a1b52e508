/* SPDX-License-Identifier: MIT */
/*
 * xp_clock.h - CLOCK_MONOTONIC in nanoseconds: the one clock that datapaths,
 * engines, endpoints and pcmd read (the core never reads a clock; it is
 * given `now`).
 */
#ifndef XP_CLOCK_H
#define XP_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t xp_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* XP_CLOCK_H */
