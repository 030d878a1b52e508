// SPDX-License-Identifier: MIT
/*
 * test_units.c - the one reader of sizes, rates and durations (pcm_units.h)
 * that pcmd.yaml, scenario files and the command lines share: every spelling
 * docs/units.md lists, exact integers up to 64 bits, decimals rounded (or
 * whole bytes), the unit of a bare number, and a message that names the
 * value and what is allowed for everything it refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pcm_units.h"

static uint64_t ok(enum pcm_unit_kind kind, const char *text, const char *bare)
{
	char why[PCM_UNITS_WHY_MAX] = "";
	uint64_t v = 12345;
	int rc = pcm_units_parse(kind, text, bare, &v, why, sizeof(why));

	if (rc != 0)
		fail_msg("'%s': rc %d, %s", text, rc, why);
	return v;
}

/* @text is refused with @rc and a message containing @what; the output is untouched. */
static void refused(enum pcm_unit_kind kind, const char *text, const char *bare, int rc,
		    const char *what)
{
	char why[PCM_UNITS_WHY_MAX] = "";
	uint64_t v = 12345;

	assert_int_equal(pcm_units_parse(kind, text, bare, &v, why, sizeof(why)), rc);
	assert_int_equal(v, 12345);
	if (!strstr(why, what))
		fail_msg("'%s': message '%s' lacks '%s'", text, why, what);
}

struct good {
	enum pcm_unit_kind kind;
	const char *text, *bare;
	uint64_t want;
};

static void all_ok(const struct good *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ok(g[i].kind, g[i].text, g[i].bare) != g[i].want)
			fail_msg("'%s': %llu, wanted %llu", g[i].text,
				 (unsigned long long)ok(g[i].kind, g[i].text, g[i].bare),
				 (unsigned long long)g[i].want);
}

static void test_sizes_take_decimal_and_binary_prefixes(void **state)
{
	static const struct good g[] = {
		{PCM_UNIT_SIZE, "4096", "B", 4096},
		{PCM_UNIT_SIZE, "7B", NULL, 7},
		{PCM_UNIT_SIZE, "4KB", NULL, 4000},
		{PCM_UNIT_SIZE, "4MB", NULL, 4000000},
		{PCM_UNIT_SIZE, "2GB", NULL, 2000000000},
		{PCM_UNIT_SIZE, "3TB", NULL, 3000000000000ull},
		{PCM_UNIT_SIZE, "64KiB", NULL, 64 << 10},
		{PCM_UNIT_SIZE, "64MiB", NULL, 64 << 20},
		{PCM_UNIT_SIZE, "8GiB", NULL, 8ull << 30},
		{PCM_UNIT_SIZE, "2TiB", NULL, 2ull << 40},
		/* spaces between number and unit, decimals that come to whole bytes, exponents */
		{PCM_UNIT_SIZE, "64 KiB", NULL, 64 << 10},
		{PCM_UNIT_SIZE, "1.5KiB", NULL, 1536},
		{PCM_UNIT_SIZE, "0.5 MB", NULL, 500000},
		{PCM_UNIT_SIZE, "1e3", "B", 1000},
	};

	all_ok(g, sizeof(g) / sizeof(g[0]));
}

static void test_rates_take_any_case(void **state)
{
	static const struct good g[] = {
		{PCM_UNIT_RATE, "9600bps", NULL, 9600},
		{PCM_UNIT_RATE, "100Kbps", NULL, 100000},
		{PCM_UNIT_RATE, "450 Mbps", NULL, 450000000},
		{PCM_UNIT_RATE, "100Gbps", NULL, 100000000000ull},
		{PCM_UNIT_RATE, "1.6Tbps", NULL, 1600000000000ull},
		{PCM_UNIT_RATE, "100gbps", NULL, 100000000000ull},
		{PCM_UNIT_RATE, "100GBPS", NULL, 100000000000ull},
		{PCM_UNIT_RATE, "31.52Gbps", NULL, 31520000000ull},
	};

	all_ok(g, sizeof(g) / sizeof(g[0]));
}

static void test_durations_are_in_ps_and_case_sensitive(void **state)
{
	static const struct good g[] = {
		{PCM_UNIT_TIME, "15ps", NULL, 15},
		{PCM_UNIT_TIME, "15ns", NULL, 15000},
		{PCM_UNIT_TIME, "3.3us", NULL, 3300000},
		{PCM_UNIT_TIME, "5 ms", NULL, 5000000000ull},
		{PCM_UNIT_TIME, "1s", NULL, 1000000000000ull},
		/* rounded to the nearest ps */
		{PCM_UNIT_TIME, "0.0004ns", NULL, 0},
		{PCM_UNIT_TIME, "0.0006ns", NULL, 1},
	};

	all_ok(g, sizeof(g) / sizeof(g[0]));
	refused(PCM_UNIT_TIME, "5Ms", NULL, -EINVAL, "unknown unit 'Ms'");
	refused(PCM_UNIT_TIME, "5 sec", NULL, -EINVAL, "unknown unit 'sec'");
}

static void test_bare_number_takes_the_callers_unit_or_needs_one(void **state)
{
	assert_int_equal(ok(PCM_UNIT_TIME, "250", "ms"), 250000000000ull);
	assert_int_equal(ok(PCM_UNIT_TIME, "2.5", "s"), 2500000000000ull);
	assert_int_equal(ok(PCM_UNIT_RATE, "100", "Gbps"), 100000000000ull);
	/* a written unit wins over the bare one */
	assert_int_equal(ok(PCM_UNIT_TIME, "2s", "ms"), 2000000000000ull);
	refused(PCM_UNIT_TIME, "3", NULL, -EINVAL, "'3' needs a unit (ps, ns, us, ms, s)");
	refused(PCM_UNIT_RATE, "400", NULL, -EINVAL, "needs a unit (bps, Kbps");
	/* 0 is 0 in any unit */
	assert_int_equal(ok(PCM_UNIT_TIME, "0", NULL), 0);
	assert_int_equal(ok(PCM_UNIT_TIME, "0.0", NULL), 0);
	refused(PCM_UNIT_TIME, "3", "parsecs", -EINVAL, "'parsecs' is not a unit of a duration");
}

/* A setting kept in a unit of its own gets a whole number of it. */
static void test_parse_in_gives_a_whole_number_of_the_unit(void **state)
{
	char why[PCM_UNITS_WHY_MAX] = "";
	uint64_t v = 0;

	assert_int_equal(pcm_units_parse_in(PCM_UNIT_TIME, "2s", "ms", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 2000);
	assert_int_equal(pcm_units_parse_in(PCM_UNIT_TIME, "250", "ms", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 250);
	assert_int_equal(pcm_units_parse_in(PCM_UNIT_RATE, "25Gbps", "gbps", &v, why, sizeof(why)),
			 0);
	assert_int_equal(v, 25);
	assert_int_equal(pcm_units_parse_in(PCM_UNIT_SIZE, "3MiB", "KiB", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 3072);
	v = 7;
	assert_int_equal(pcm_units_parse_in(PCM_UNIT_TIME, "1500us", "ms", &v, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(v, 7);
	assert_string_equal(why, "'1500us' is not a whole number of ms");
	assert_int_equal(pcm_units_parse_in(PCM_UNIT_TIME, "1", "parsecs", &v, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "'parsecs' is not a unit of a duration"));
}

static void test_integers_are_exact_to_64_bits(void **state)
{
	/* beyond a double's 53 bits of mantissa */
	assert_int_equal(ok(PCM_UNIT_SIZE, "18446744073709551615", "B"), UINT64_MAX);
	assert_int_equal(ok(PCM_UNIT_TIME, "9007199254740993ps", NULL), 9007199254740993ull);
	assert_int_equal(ok(PCM_UNIT_SIZE, "16777215TiB", NULL), 16777215ull << 40);
	refused(PCM_UNIT_SIZE, "16777216TiB", NULL, -ERANGE, "does not fit in 64 bits (of bytes)");
	refused(PCM_UNIT_SIZE, "99999999999999999999", "B", -ERANGE, "does not fit in 64 bits");
	refused(PCM_UNIT_TIME, "1e30 s", NULL, -ERANGE, "does not fit in 64 bits (of ps)");
	/* above 2^63 a decimal is still read (no llround() overflow) */
	assert_int_equal(ok(PCM_UNIT_TIME, "1.8e7 s", NULL), 18000000000000000000ull);
}

static void test_bad_values_say_what_is_wrong_and_allowed(void **state)
{
	refused(PCM_UNIT_SIZE, "12XB", NULL, -EINVAL,
		"'12XB' is not a size: unknown unit 'XB' (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
	refused(PCM_UNIT_RATE, "10 Gb/s", NULL, -EINVAL,
		"unknown unit 'Gb/s' (bps, Kbps, Mbps, Gbps, Tbps)");
	refused(PCM_UNIT_SIZE, "1.5", "B", -EINVAL, "'1.5' is not a whole number of bytes");
	refused(PCM_UNIT_SIZE, "-4", "B", -EINVAL, "'-4' is not a non-negative size");
	refused(PCM_UNIT_RATE, "fast", NULL, -EINVAL, "'fast' is not a non-negative rate");
	refused(PCM_UNIT_TIME, "", NULL, -EINVAL, "'' is not a non-negative duration");
	refused(PCM_UNIT_TIME, "inf s", NULL, -EINVAL, "is not a non-negative duration");
	refused(PCM_UNIT_TIME, "nan", "s", -EINVAL, "is not a non-negative duration");
	/* trailing text after the unit is not a unit */
	refused(PCM_UNIT_SIZE, "4 KiB x", NULL, -EINVAL, "unknown unit 'KiB x'");
	/* a caller without room for the message still gets the code */
	assert_int_equal(pcm_units_parse(PCM_UNIT_SIZE, "x", "B", &(uint64_t){0}, NULL, 0),
			 -EINVAL);
}

static void test_rates_print_with_an_si_prefix(void **state)
{
	char buf[32];

	pcm_units_format_rate(9800000000ull, "bit/s", buf, sizeof(buf));
	assert_string_equal(buf, "9.80 Gbit/s");
	pcm_units_format_rate(450000000ull, "bit/s", buf, sizeof(buf));
	assert_string_equal(buf, "450.0 Mbit/s");
	pcm_units_format_rate(12300, "", buf, sizeof(buf));
	assert_string_equal(buf, "12.3 k");
	pcm_units_format_rate(7, "bit/s", buf, sizeof(buf));
	assert_string_equal(buf, "7 bit/s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_take_decimal_and_binary_prefixes),
		cmocka_unit_test(test_rates_take_any_case),
		cmocka_unit_test(test_durations_are_in_ps_and_case_sensitive),
		cmocka_unit_test(test_bare_number_takes_the_callers_unit_or_needs_one),
		cmocka_unit_test(test_parse_in_gives_a_whole_number_of_the_unit),
		cmocka_unit_test(test_integers_are_exact_to_64_bits),
		cmocka_unit_test(test_bad_values_say_what_is_wrong_and_allowed),
		cmocka_unit_test(test_rates_print_with_an_si_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
