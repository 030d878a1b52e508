/* SPDX-License-Identifier: MIT */
/*
 * clock.h - pcmd's one clock: CLOCK_MONOTONIC in nanoseconds, read by the
 * loop's timers, the clients' and flows' ages, the records, the stats file,
 * sd_notify's RELOADING stamp and the softnic fabric's pacing against the
 * wall. Header-only and a leaf: every file may read it, and none calls up
 * into the daemon object for the time.
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

#endif /* PCMD_CLOCK_H */
