/* SPDX-License-Identifier: MIT */
/*
 * units.h - rates for people: "9.80 G", "450.0 M", "12.3 k", "7", the SI
 * prefix of a bit rate, shared by pcmd's status line and pcmctl's tables.
 * Header-only so that pcmctl links nothing of pcmd.
 */
#ifndef PCMD_UNITS_H
#define PCMD_UNITS_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* @bps with an SI prefix and @unit appended ("bit/s", or "" for a bare column). */
static inline void pcmd_format_rate(uint64_t bps, const char *unit, char *buf, size_t len)
{
	if (bps >= 1000000000ull)
		snprintf(buf, len, "%.2f G%s", (double)bps / 1e9, unit);
	else if (bps >= 1000000ull)
		snprintf(buf, len, "%.1f M%s", (double)bps / 1e6, unit);
	else if (bps >= 1000ull)
		snprintf(buf, len, "%.1f k%s", (double)bps / 1e3, unit);
	else
		snprintf(buf, len, "%" PRIu64 " %s", bps, unit);
}

#endif /* PCMD_UNITS_H */
