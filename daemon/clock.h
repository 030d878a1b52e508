/* SPDX-License-Identifier: MIT */
/*
 * clock.h - pcmd's one clock: CLOCK_MONOTONIC in nanoseconds, read by the
 * loop's timers, the clients' and flows' ages, the records, the stats file,
 * sd_notify's RELOADING stamp and the softnic fabric's pacing against the
 * wall. The wall clock (CLOCK_REALTIME) only stamps what people and other
 * machines read beside it (the records' and the stats file's unix_ns): it
 * can step, so nothing is timed by it. Header-only and a leaf: every file
 * may read it, and none calls up into the daemon object for the time.
 */
#ifndef PCMD_CLOCK_H
#define PCMD_CLOCK_H

#include <stdint.h>

#include "xp_clock.h"

/* CLOCK_MONOTONIC in nanoseconds (the transport's clock, so both name one time). */
static inline uint64_t pcmd_now_ns(void)
{
	return xp_mono_ns();
}

/* CLOCK_REALTIME in nanoseconds since the epoch. */
static inline uint64_t pcmd_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The wall-clock time of monotonic instant @mono_ns (in the past), as the wall clock reads now. */
static inline uint64_t pcmd_wall_of_ns(uint64_t mono_ns)
{
	uint64_t now = pcmd_now_ns(), wall = pcmd_wall_ns();

	return mono_ns <= now && now - mono_ns <= wall ? wall - (now - mono_ns) : 0;
}

#endif /* PCMD_CLOCK_H */
