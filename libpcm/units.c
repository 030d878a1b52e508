// SPDX-License-Identifier: MIT
/*
 * units.c - sizes, rates and durations as people write them (pcm_units.h):
 * one table of units per kind, one reader, and the SI form of a rate.
 *
 * A number made of digits alone is read exactly and multiplied by its unit
 * with an overflow check, so that "18446744073709551615" or "3000000000000ps"
 * is what it says; any other number (a decimal, an exponent) goes through a
 * double, as strtod() reads it, and is rounded to the nearest unit of the
 * result (bit/s, ps) or must be whole (bytes).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcm_units.h"

struct unit {
	const char *name;
	uint64_t mult; /* in the kind's result unit */
};

static const struct unit size_units[] = {
	{"B", 1},
	{"KB", 1000},
	{"MB", 1000000},
	{"GB", 1000000000},
	{"TB", 1000000000000},
	{"KiB", 1ull << 10},
	{"MiB", 1ull << 20},
	{"GiB", 1ull << 30},
	{"TiB", 1ull << 40},
	{NULL, 0},
};

static const struct unit rate_units[] = {
	{"bps", 1},
	{"Kbps", 1000},
	{"Mbps", 1000000},
	{"Gbps", 1000000000},
	{"Tbps", 1000000000000},
	{NULL, 0},
};

static const struct unit time_units[] = {
	{"ps", 1},
	{"ns", PCM_UNITS_PS_PER_NS},
	{"us", PCM_UNITS_PS_PER_US},
	{"ms", PCM_UNITS_PS_PER_MS},
	{"s", PCM_UNITS_PS_PER_S},
	{NULL, 0},
};

struct kind {
	const struct unit *units;
	const char *noun;   /* "'x' is not a <noun>" */
	const char *result; /* the unit of the result, for overflow */
	bool any_case;      /* rates: Gbps, gbps, GBPS; sizes and times: ms is not Ms */
};

static const struct kind kinds[] = {
	[PCM_UNIT_SIZE] = {size_units, "size", "bytes", false},
	[PCM_UNIT_RATE] = {rate_units, "rate", "bit/s", true},
	[PCM_UNIT_TIME] = {time_units, "duration", "ps", false},
};

static const struct unit *find_unit(const struct kind *k, const char *name)
{
	for (const struct unit *u = k->units; u->name; u++)
		if (k->any_case ? strcasecmp(name, u->name) == 0 : strcmp(name, u->name) == 0)
			return u;
	return NULL;
}

/* "B, KB, MB, ...": the units of @k, for messages. */
static void list_units(const struct kind *k, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct unit *u = k->units; u->name && used < len; u++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", u->name);
}

static int refuse(char *why, size_t why_len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *why, size_t why_len, int rc, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/*
 * The number at the start of @s: *@real as strtod() reads it, and, when it
 * is digits alone that fit in 64 bits, *@whole exactly (*@exact set).
 * Return: where the number ends (@s if there is none).
 */
static const char *read_number(const char *s, double *real, uint64_t *whole, bool *exact)
{
	const char *p = s, *digits_end;
	char *end;

	*real = strtod(s, &end);
	*exact = false;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	digits_end = p + strspn(p, "0123456789");
	if (digits_end > p && digits_end == end) {
		errno = 0;
		*whole = strtoull(p, NULL, 10);
		*exact = errno == 0;
	}
	return end;
}

/* @real * @mult as the kind's result: rounded, or whole bytes. Return: 0, -EINVAL, -ERANGE. */
static int scale_real(enum pcm_unit_kind kind, double real, uint64_t mult, uint64_t *out)
{
	double v = real * (double)mult;

	if (v >= 0x1p64)
		return -ERANGE;
	if (kind == PCM_UNIT_SIZE) {
		if (v != floor(v))
			return -EINVAL;
		*out = (uint64_t)v;
	} else {
		/* llround() is defined below 2^63; above 2^53 a double is an integer anyway */
		*out = v < 0x1p63 ? (uint64_t)llround(v) : (uint64_t)v;
	}
	return 0;
}

/* @whole * @mult, exactly. Return: 0, -ERANGE. */
static int scale_whole(uint64_t whole, uint64_t mult, uint64_t *out)
{
	if (whole > UINT64_MAX / mult)
		return -ERANGE;
	*out = whole * mult;
	return 0;
}

int pcm_units_parse(enum pcm_unit_kind kind, const char *text, const char *bare_unit,
		    uint64_t *out, char *why, size_t why_len)
{
	const struct kind *k = &kinds[kind];
	const struct unit *u = NULL;
	const char *end, *name;
	char names[96];
	uint64_t whole = 0, v = 0;
	double real;
	bool exact;
	int rc;

	end = read_number(text, &real, &whole, &exact);
	if (end == text || !isfinite(real) || real < 0)
		return refuse(why, why_len, -EINVAL, "'%.48s' is not a non-negative %s", text,
			      k->noun);
	name = end;
	while (*name == ' ')
		name++;
	if (*name)
		u = find_unit(k, name);
	else if (bare_unit)
		u = find_unit(k, bare_unit);
	else if (real == 0)
		u = &k->units[0]; /* 0 needs no unit */
	if (!u) {
		list_units(k, names, sizeof(names));
		if (*name)
			return refuse(why, why_len, -EINVAL,
				      "'%.48s' is not a %s: unknown unit '%.16s' (%s)", text,
				      k->noun, name, names);
		if (bare_unit)
			return refuse(why, why_len, -EINVAL, "'%.16s' is not a unit of a %s (%s)",
				      bare_unit, k->noun, names);
		return refuse(why, why_len, -EINVAL, "'%.48s' needs a unit (%s)", text, names);
	}
	rc = exact ? scale_whole(whole, u->mult, &v) : scale_real(kind, real, u->mult, &v);
	if (rc == -ERANGE)
		return refuse(why, why_len, rc, "'%.48s' does not fit in 64 bits (of %s)", text,
			      k->result);
	if (rc < 0)
		return refuse(why, why_len, rc, "'%.48s' is not a whole number of bytes", text);
	*out = v;
	return 0;
}

int pcm_units_parse_in(enum pcm_unit_kind kind, const char *text, const char *unit,
		       uint64_t *out, char *why, size_t why_len)
{
	const struct unit *u = find_unit(&kinds[kind], unit);
	uint64_t v;
	int rc;

	if (!u)
		return pcm_units_parse(kind, text, unit, out, why, why_len); /* says why */
	rc = pcm_units_parse(kind, text, unit, &v, why, why_len);
	if (rc < 0)
		return rc;
	if (v % u->mult)
		return refuse(why, why_len, -EINVAL, "'%.48s' is not a whole number of %s", text,
			      u->name);
	*out = v / u->mult;
	return 0;
}

void pcm_units_format_rate(uint64_t bps, const char *unit, char *buf, size_t len)
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
