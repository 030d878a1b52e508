// SPDX-License-Identifier: MIT
/*
 * bench_flags.c - the subcommands' size, duration and rate flags, read as
 * pcm-units(7) spells them (pcm_units.h): a whole number of the unit the
 * flag names, or seconds. A bad value is printed with its flag.
 */
#include <errno.h>
#include <stdio.h>

#include "bench.h"

int bench_parse_in(const char *flag, const char *s, enum pcm_unit_kind kind, const char *unit,
		   uint64_t min, uint64_t max, uint64_t *out)
{
	char why[PCM_UNITS_WHY_MAX];
	uint64_t v;

	if (pcm_units_parse_in(kind, s, unit, &v, why, sizeof(why)) < 0) {
		fprintf(stderr, "pcm-bench: %s: %s (pcm-units(7))\n", flag, why);
		return -EINVAL;
	}
	if (v < min || v > max) {
		fprintf(stderr, "pcm-bench: %s: '%s' is not in %llu..%llu %s\n", flag, s,
			(unsigned long long)min, (unsigned long long)max, unit);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int bench_parse_seconds(const char *flag, const char *s, double max, double *out)
{
	uint64_t ps = 0;
	double v;

	if (pcm_units_parse(PCM_UNIT_TIME, s, "s", &ps, NULL, 0) < 0 ||
	    !((v = (double)ps / (double)PCM_UNITS_PS_PER_S) > 0 && v <= max)) {
		fprintf(stderr, "pcm-bench: %s %s: seconds in (0, %g], or with a unit (500ms)\n",
			flag, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}
