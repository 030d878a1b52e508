/* SPDX-License-Identifier: MIT */
/*
 * pcm_units.h - sizes, rates and durations as people write them: one parser
 * for pcmd.yaml, scenario files and the command lines of pcm's programs, so
 * that every size, rate and duration takes the same spellings, and the SI
 * form of a rate that pcmd's status line and pcmctl's tables print.
 *
 * A value is a non-negative number (an integer, a decimal or an exponent:
 * 64, 3.3, 1e6), optionally followed by spaces, then a unit:
 *   size      B; KB, MB, GB, TB (powers of 10); KiB, MiB, GiB, TiB (powers of 2)
 *   rate      bps, Kbps, Mbps, Gbps, Tbps, in any case (gbps, GBPS)
 *   duration  ps, ns, us, ms, s
 * Sizes and durations are case-sensitive (ms is not Ms). A caller names the
 * unit of a number written without one (a pcmd.yaml size is in bytes, a
 * `*_ms` key in milliseconds), or none: then a unit is required, except for
 * 0. An integer times its unit is exact; a decimal is rounded to the nearest
 * bit/s or ps, and a size must come to a whole number of bytes. A setting
 * kept in a unit of its own (pcmd.yaml's stats_interval_ms) is read as a
 * whole number of it (pcm_units_parse_in()).
 * docs/units.md is the user's description of the same rules.
 */
#ifndef PCM_PCM_UNITS_H
#define PCM_PCM_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* What a value measures; the parser's result is in bytes, bit/s or ps. */
enum pcm_unit_kind {
	PCM_UNIT_SIZE,
	PCM_UNIT_RATE,
	PCM_UNIT_TIME,
};

/* A duration's result is in ps: these turn it into the caller's unit. */
#define PCM_UNITS_PS_PER_NS 1000ull
#define PCM_UNITS_PS_PER_US 1000000ull
#define PCM_UNITS_PS_PER_MS 1000000000ull
#define PCM_UNITS_PS_PER_S 1000000000000ull

/* Room for pcm_units_parse()'s explanation of a value it refuses. */
#define PCM_UNITS_WHY_MAX 192

/**
 * pcm_units_parse() - read a size, rate or duration.
 * @kind: what @text measures.
 * @text: the value, as written ("64KiB", "3.3 us", "100Gbps").
 * @bare_unit: the unit of a number written without one ("B", "ms", "s"), one
 *	of @kind's; NULL: a unit is required unless the number is 0.
 * @out: set to the value in bytes (size), bit/s (rate) or ps (duration);
 *	untouched on an error.
 * @why: on an error, what is wrong with @text and what is allowed
 *	("'12XB' is not a size: unknown unit 'XB' (B, KB, ...)"), for the
 *	caller to prefix with where @text came from; may be NULL.
 * @why_len: size of @why (PCM_UNITS_WHY_MAX always suffices: @text is cut).
 *
 * Return: 0; -EINVAL if @text is not a non-negative number with a unit of
 * @kind (or @bare_unit is not one), or a size is not a whole number of
 * bytes; -ERANGE if the value does not fit in 64 bits.
 */
int pcm_units_parse(enum pcm_unit_kind kind, const char *text, const char *bare_unit,
		    uint64_t *out, char *why, size_t why_len);

/**
 * pcm_units_parse_in() - read a size, rate or duration as a whole number of
 * @unit ("2s" in ms is 2000), for a setting kept in a unit of its own.
 * @kind: what @text measures.
 * @text: the value, as written; a bare number is in @unit.
 * @unit: one of @kind's units.
 * @out: set to the value in @unit; untouched on an error.
 * @why: as for pcm_units_parse(); a value that is no whole number of @unit
 *	("1500us" in ms) is refused as such.
 * @why_len: size of @why.
 *
 * Return: 0, -EINVAL, -ERANGE, as pcm_units_parse().
 */
int pcm_units_parse_in(enum pcm_unit_kind kind, const char *text, const char *unit,
		       uint64_t *out, char *why, size_t why_len);

/**
 * pcm_units_format_rate() - a rate for people: "9.80 G", "450.0 M", "12.3 k", "7 ".
 * @bps: the rate in bit/s.
 * @unit: appended after the SI prefix ("bit/s"; "" for a bare column).
 * @buf: the text, cut to @len.
 * @len: size of @buf.
 */
void pcm_units_format_rate(uint64_t bps, const char *unit, char *buf, size_t len);

#endif /* PCM_PCM_UNITS_H */
