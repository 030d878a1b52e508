// SPDX-License-Identifier: MIT
/*
 * test_fx.c - pcm_fx.h: the fixed-point core in every Q format, the
 * build-selected handler API, and pcm_fxp16_mult().
 *
 * The format-generic core is checked for Q16.16, Q32.32 and Q42.22 in this
 * one binary. Sweeps draw a few thousand deterministic pseudo-random operands
 * (xorshift64, fixed seed) with log-uniform magnitudes so that small, large,
 * in-range and saturating results all occur. Each result is checked twice:
 *  - exactly, in 128-bit integers: it is the real result rounded to nearest
 *    (ties away from zero), or it is saturated and the real result lies at
 *    or beyond that bound;
 *  - against a double reference, within 1 ulp of the format (plus the
 *    double's own rounding error where the raw value exceeds 2^53).
 *
 * The pcm_fx_*() API tests hold in every arithmetic mode. This file builds
 * them in the default (double) mode; compiling it with -DPCM_ARITH_Q16_16,
 * -DPCM_ARITH_Q32_32 or -DPCM_ARITH_Q42_22 checks the API in that mode.
 */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include <pcm/pcm_fx.h>

#define SWEEP_PAIRS 4000
#define SWEEP_SEED 0x9e3779b97f4a7c15ull

static uint64_t rng_state;

static uint64_t xorshift64(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

/* Bits needed for the largest raw magnitude: 31 for Q16.16, 63 otherwise. */
static unsigned raw_bits(const struct pcm_fxq *q)
{
	return 64u - (unsigned)__builtin_clzll((unsigned long long)q->raw_max);
}

/* A raw value in [-raw_max, raw_max] with a log-uniform magnitude and random sign. */
static int64_t rand_raw(const struct pcm_fxq *q)
{
	unsigned bits = 1u + (unsigned)(xorshift64() % raw_bits(q));
	int64_t mag = (int64_t)(xorshift64() >> (64u - bits));

	return (xorshift64() & 1) ? -mag : mag;
}

static pcm_fx_s128 pow2(unsigned n)
{
	return (pcm_fx_s128)1 << n;
}

static double ulp(const struct pcm_fxq *q)
{
	return ldexp(1.0, -(int)q->frac_bits);
}

/*
 * Is @r the value num/den (den > 0) rounded to nearest with ties away from
 * zero, or saturated with num/den at or beyond the bound it saturated to?
 * With d = num - r * den the rounding error is d / den ulp; 2d is formed
 * only when |d| <= den so it cannot overflow.
 */
static bool is_rounded_or_saturated(const struct pcm_fxq *q, pcm_fx_s128 num, pcm_fx_s128 den,
				    int64_t r)
{
	pcm_fx_s128 d = num - (pcm_fx_s128)r * den;
	bool near = d >= -den && d <= den;

	if (r == q->raw_max && (d >= 0 || (near && 2 * d >= -den)))
		return true;
	if (r == q->raw_min && (d <= 0 || (near && 2 * d <= den)))
		return true;
	if (!near || 2 * d > den || 2 * d < -den)
		return false;
	if (2 * d == den)
		return r < 0;
	if (2 * d == -den)
		return r > 0;
	return true;
}

/* Compare with a double reference in raw units: 1 ulp, widened by the double's own error. */
static bool near_double(const struct pcm_fxq *q, int64_t r, double ref)
{
	double ref_raw = ldexp(ref, (int)q->frac_bits);

	return fabs((double)r - ref_raw) <= 1.0 + 4.0 * DBL_EPSILON * fabs(ref_raw);
}

/* Is a double reference clearly inside (1) or clearly outside (-1) the range, or too close (0)? */
static int range_side(const struct pcm_fxq *q, double ref)
{
	double ref_raw = ldexp(ref, (int)q->frac_bits);

	if (ref_raw < 0.999 * (double)q->raw_max && ref_raw > 0.999 * (double)q->raw_min)
		return 1;
	if (ref_raw > 1.001 * (double)q->raw_max || ref_raw < 1.001 * (double)q->raw_min)
		return -1;
	return 0;
}

#define CHECK_PAIR(q, cond, op, a, b, r)                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			print_error("%s %s: a=%lld b=%lld -> %lld fails %s\n", (q)->name, op,      \
				    (long long)(a), (long long)(b), (long long)(r), #cond);        \
			fail();                                                                    \
		}                                                                                  \
	} while (0)

/* ---- format-generic properties, instantiated per format below ---- */

static void check_mul_within_1ulp_of_double(const struct pcm_fxq *q)
{
	int in_range = 0, saturated = 0;

	rng_state = SWEEP_SEED;
	for (int i = 0; i < SWEEP_PAIRS; i++) {
		int64_t a = rand_raw(q), b = rand_raw(q);
		int64_t r = pcm_fxq_mul(q, a, b);
		double ref = pcm_fxq_to_double(q, a) * pcm_fxq_to_double(q, b);
		int side = range_side(q, ref);

		CHECK_PAIR(q, is_rounded_or_saturated(q, (pcm_fx_s128)a * b, pow2(q->frac_bits), r),
			   "mul", a, b, r);
		if (side > 0) {
			in_range++;
			CHECK_PAIR(q, near_double(q, r, ref), "mul", a, b, r);
		} else if (side < 0) {
			saturated++;
			CHECK_PAIR(q, r == (ref > 0 ? q->raw_max : q->raw_min), "mul", a, b, r);
		}
	}
	/* The sweep must exercise both regimes to mean anything. */
	assert_true(in_range > SWEEP_PAIRS / 2);
	assert_true(saturated > SWEEP_PAIRS / 100);
}

static void check_div_within_1ulp_of_double(const struct pcm_fxq *q)
{
	int in_range = 0, saturated = 0;

	rng_state = SWEEP_SEED ^ 0xd1b54a32d192ed03ull;
	for (int i = 0; i < SWEEP_PAIRS; i++) {
		int64_t a = rand_raw(q), b = rand_raw(q);
		int64_t r = pcm_fxq_div(q, a, b);
		double ref;
		int side;

		if (b == 0)
			continue;
		ref = pcm_fxq_to_double(q, a) / pcm_fxq_to_double(q, b);
		side = range_side(q, ref);
		/* num/den with den > 0: move the divisor's sign onto the numerator. */
		CHECK_PAIR(
		    q,
		    is_rounded_or_saturated(q, (b < 0 ? -(pcm_fx_s128)a : a) * pow2(q->frac_bits),
					    b < 0 ? -(pcm_fx_s128)b : b, r),
		    "div", a, b, r);
		if (side > 0) {
			in_range++;
			CHECK_PAIR(q, near_double(q, r, ref), "div", a, b, r);
		} else if (side < 0) {
			saturated++;
			CHECK_PAIR(q, r == (ref > 0 ? q->raw_max : q->raw_min), "div", a, b, r);
		}
	}
	assert_true(in_range > SWEEP_PAIRS / 2);
	assert_true(saturated > SWEEP_PAIRS / 100);
}

static void check_sqrt_within_1ulp_of_double(const struct pcm_fxq *q)
{
	rng_state = SWEEP_SEED ^ 0x8cb92ba72f3d8dd7ull;
	for (int i = 0; i < SWEEP_PAIRS; i++) {
		int64_t a = rand_raw(q);
		int64_t r = pcm_fxq_sqrt(q, a);
		pcm_fx_u128 four_n, lo, hi;

		if (a <= 0) {
			CHECK_PAIR(q, r == 0, "sqrt", a, 0, r);
			continue;
		}
		/* Exact: r - 1/2 <= sqrt(a * 2^frac) <= r + 1/2, squared and times 4. */
		four_n = (pcm_fx_u128)a << (q->frac_bits + 2);
		lo = r > 0 ? (pcm_fx_u128)(2 * r - 1) * (pcm_fx_u128)(2 * r - 1) : 0;
		hi = (pcm_fx_u128)(2 * r + 1) * (pcm_fx_u128)(2 * r + 1);
		CHECK_PAIR(q, lo <= four_n && four_n <= hi, "sqrt", a, 0, r);
		CHECK_PAIR(q, near_double(q, r, sqrt(pcm_fxq_to_double(q, a))), "sqrt", a, 0, r);
	}
}

/* A signed k < 2^52 whose magnitude has up to raw_bits + 8 bits, log-uniformly. */
static int64_t rand_fine(const struct pcm_fxq *q)
{
	unsigned max_bits = raw_bits(q) + 8 < 52 ? raw_bits(q) + 8 : 52;
	unsigned bits = 1u + (unsigned)(xorshift64() % max_bits);
	int64_t mag = (int64_t)(xorshift64() >> (64u - bits));

	return (xorshift64() & 1) ? -mag : mag;
}

static void check_conversions_round_trip_within_1ulp(const struct pcm_fxq *q)
{
	int64_t one = pcm_fxq_one(q);
	int checked = 0;

	rng_state = SWEEP_SEED ^ 0x2545f4914f6cdd1dull;
	for (int i = 0; i < SWEEP_PAIRS; i++) {
		int64_t a = rand_raw(q);
		int64_t back = pcm_fxq_from_double(q, pcm_fxq_to_double(q, a));
		/* x = k / 2^(frac + 8): exact in a double, 8 bits finer than the format. */
		int64_t k = rand_fine(q);
		double x = ldexp((double)k, -(int)q->frac_bits - 8);
		int64_t want = (k < 0 ? -1 : 1) * (((k < 0 ? -k : k) + 128) >> 8);
		int64_t got;

		/* raw -> double -> raw is exact below 2^53, then within the double's rounding. */
		if (a > -((int64_t)1 << 53) && a < ((int64_t)1 << 53)) {
			CHECK_PAIR(q, back == a, "raw->double->raw", a, 0, back);
			CHECK_PAIR(q,
				   pcm_fxq_to_int(q, a) == (int64_t)trunc(pcm_fxq_to_double(q, a)),
				   "to_int", a, 0, pcm_fxq_to_int(q, a));
		} else {
			CHECK_PAIR(q, fabs((double)back - (double)a) <= ldexp(fabs((double)a), -52),
				   "raw->double->raw", a, 0, back);
		}

		/* Integer round trips drop exactly the fraction, toward zero. */
		CHECK_PAIR(q, pcm_fxq_from_int(q, pcm_fxq_to_int(q, a)) == a - a % one,
			   "from_int(to_int)", a, 0, pcm_fxq_to_int(q, a));
		if (a >= 0)
			CHECK_PAIR(q, pcm_fxq_from_uint(q, pcm_fxq_to_uint(q, a)) == a - a % one,
				   "from_uint(to_uint)", a, 0, (int64_t)pcm_fxq_to_uint(q, a));

		/* double -> raw rounds to nearest, ties away; back to double is within 0.5 ulp. */
		if (want > q->raw_max || want < q->raw_min)
			continue;
		checked++;
		got = pcm_fxq_from_double(q, x);
		CHECK_PAIR(q, got == want, "from_double", k, 0, got);
		CHECK_PAIR(q, fabs(pcm_fxq_to_double(q, got) - x) <= 0.5 * ulp(q),
			   "double->raw->double", k, 0, got);
	}
	assert_true(checked > SWEEP_PAIRS * 9 / 10);
}

static void check_mul_rounds_half_ulp_away_from_zero(const struct pcm_fxq *q)
{
	int64_t half = pcm_fxq_one(q) / 2;

	/* 1 ulp * 0.5 is exactly half an ulp. */
	assert_int_equal(pcm_fxq_mul(q, 1, half), 1);
	assert_int_equal(pcm_fxq_mul(q, -1, half), -1);
	assert_int_equal(pcm_fxq_mul(q, 1, -half), -1);
	/* 2.5 ulp -> 3 (ties-to-even would give 2). */
	assert_int_equal(pcm_fxq_mul(q, 5, half), 3);
	assert_int_equal(pcm_fxq_mul(q, -5, half), -3);
	/* Just below a tie rounds down. */
	assert_int_equal(pcm_fxq_mul(q, 1, half - 1), 0);
	assert_int_equal(pcm_fxq_mul(q, -1, half - 1), 0);
	assert_int_equal(pcm_fxq_mul(q, 3, half - 1), 1);
	/* Exact products stay exact. */
	assert_int_equal(pcm_fxq_mul(q, pcm_fxq_from_double(q, 1.5), pcm_fxq_from_int(q, -4)),
			 pcm_fxq_from_int(q, -6));
}

static void check_div_rounds_half_ulp_away_from_zero(const struct pcm_fxq *q)
{
	int64_t two = pcm_fxq_from_int(q, 2), three = pcm_fxq_from_int(q, 3);

	assert_int_equal(pcm_fxq_div(q, 1, two), 1);
	assert_int_equal(pcm_fxq_div(q, -1, two), -1);
	assert_int_equal(pcm_fxq_div(q, 1, -two), -1);
	assert_int_equal(pcm_fxq_div(q, 5, two), 3);
	assert_int_equal(pcm_fxq_div(q, -5, -two), 3);
	assert_int_equal(pcm_fxq_div(q, -5, two), -3);
	/* 1/3 ulp -> 0, 2/3 ulp -> 1. */
	assert_int_equal(pcm_fxq_div(q, 1, three), 0);
	assert_int_equal(pcm_fxq_div(q, 2, three), 1);
	assert_int_equal(pcm_fxq_div(q, -2, three), -1);
	assert_int_equal(pcm_fxq_div(q, pcm_fxq_from_int(q, 3), pcm_fxq_from_int(q, 4)),
			 pcm_fxq_from_double(q, 0.75));
}

static void check_from_double_rounds_half_ulp_away_from_zero(const struct pcm_fxq *q)
{
	int f = (int)q->frac_bits;

	assert_int_equal(pcm_fxq_from_double(q, ldexp(0.5, -f)), 1);
	assert_int_equal(pcm_fxq_from_double(q, ldexp(-0.5, -f)), -1);
	assert_int_equal(pcm_fxq_from_double(q, ldexp(2.5, -f)), 3);
	assert_int_equal(pcm_fxq_from_double(q, ldexp(-2.5, -f)), -3);
	/* The largest double below 0.5: a naive floor(x + 0.5) would round it up. */
	assert_int_equal(pcm_fxq_from_double(q, ldexp(0.49999999999999994, -f)), 0);
	assert_int_equal(pcm_fxq_from_double(q, -0.0), 0);
	assert_int_equal(pcm_fxq_from_double(q, 1.0), pcm_fxq_one(q));
	assert_int_equal(pcm_fxq_from_double(q, -0.75), -3 * pcm_fxq_one(q) / 4);
}

static void check_add_sub_saturate_at_raw_limits(const struct pcm_fxq *q)
{
	assert_int_equal(pcm_fxq_add(q, q->raw_max, 1), q->raw_max);
	assert_int_equal(pcm_fxq_add(q, q->raw_max, q->raw_max), q->raw_max);
	assert_int_equal(pcm_fxq_add(q, q->raw_min, -1), q->raw_min);
	assert_int_equal(pcm_fxq_add(q, q->raw_min, q->raw_min), q->raw_min);
	assert_int_equal(pcm_fxq_add(q, q->raw_max, q->raw_min), -1);
	assert_int_equal(pcm_fxq_add(q, q->raw_max - 1, 1), q->raw_max);
	assert_int_equal(pcm_fxq_sub(q, q->raw_min, 1), q->raw_min);
	assert_int_equal(pcm_fxq_sub(q, q->raw_max, q->raw_min), q->raw_max);
	assert_int_equal(pcm_fxq_sub(q, q->raw_min, q->raw_max), q->raw_min);
	/* -raw_min does not fit in any of the formats. */
	assert_int_equal(pcm_fxq_sub(q, 0, q->raw_min), q->raw_max);
	assert_int_equal(pcm_fxq_sub(q, -1, q->raw_min), q->raw_max);
	assert_int_equal(pcm_fxq_sub(q, q->raw_min + 1, 1), q->raw_min);
}

static void check_mul_saturates_at_raw_limits(const struct pcm_fxq *q)
{
	int64_t two = pcm_fxq_from_int(q, 2);

	assert_int_equal(pcm_fxq_mul(q, q->raw_max, q->raw_max), q->raw_max);
	assert_int_equal(pcm_fxq_mul(q, q->raw_min, q->raw_min), q->raw_max);
	assert_int_equal(pcm_fxq_mul(q, q->raw_min, q->raw_max), q->raw_min);
	assert_int_equal(pcm_fxq_mul(q, q->raw_max, two), q->raw_max);
	assert_int_equal(pcm_fxq_mul(q, q->raw_max, -two), q->raw_min);
	assert_int_equal(pcm_fxq_mul(q, q->raw_min, -two), q->raw_max);
	/* Multiplying by 1.0 never saturates. */
	assert_int_equal(pcm_fxq_mul(q, q->raw_max, pcm_fxq_one(q)), q->raw_max);
	assert_int_equal(pcm_fxq_mul(q, q->raw_min, pcm_fxq_one(q)), q->raw_min);
	/* mul_int: the integer factor is not scaled. */
	assert_int_equal(pcm_fxq_mul_int(q, q->raw_max, 2), q->raw_max);
	assert_int_equal(pcm_fxq_mul_int(q, q->raw_min, 2), q->raw_min);
	assert_int_equal(pcm_fxq_mul_int(q, q->raw_min, -1), q->raw_max);
	assert_int_equal(pcm_fxq_mul_int(q, 1, INT64_MIN), q->raw_min);
	assert_int_equal(pcm_fxq_mul_int(q, pcm_fxq_from_double(q, 1.5), -4),
			 pcm_fxq_from_int(q, -6));
}

static void check_div_saturates_at_raw_limits(const struct pcm_fxq *q)
{
	assert_int_equal(pcm_fxq_div(q, q->raw_max, 1), q->raw_max);
	assert_int_equal(pcm_fxq_div(q, q->raw_max, -1), q->raw_min);
	assert_int_equal(pcm_fxq_div(q, q->raw_min, 1), q->raw_min);
	assert_int_equal(pcm_fxq_div(q, q->raw_min, -1), q->raw_max);
	/* raw_min / -1.0 is -raw_min, one past raw_max. */
	assert_int_equal(pcm_fxq_div(q, q->raw_min, -pcm_fxq_one(q)), q->raw_max);
	assert_int_equal(pcm_fxq_div(q, q->raw_max, pcm_fxq_one(q)), q->raw_max);
	assert_int_equal(pcm_fxq_div(q, q->raw_min, pcm_fxq_one(q)), q->raw_min);
}

static void check_div_by_zero_saturates_by_dividend_sign(const struct pcm_fxq *q)
{
	assert_int_equal(pcm_fxq_div(q, pcm_fxq_one(q), 0), q->raw_max);
	assert_int_equal(pcm_fxq_div(q, 0, 0), q->raw_max);
	assert_int_equal(pcm_fxq_div(q, -1, 0), q->raw_min);
	assert_int_equal(pcm_fxq_div(q, q->raw_min, 0), q->raw_min);
	assert_int_equal(pcm_fxq_div(q, q->raw_max, 0), q->raw_max);
	assert_int_equal(pcm_fxq_recip(q, 0), q->raw_max);
}

static void check_from_double_saturates_and_maps_nan_to_zero(const struct pcm_fxq *q)
{
	double max_value = pcm_fxq_to_double(q, q->raw_max);

	assert_int_equal(pcm_fxq_from_double(q, 2.0 * max_value), q->raw_max);
	assert_int_equal(pcm_fxq_from_double(q, -2.0 * max_value), q->raw_min);
	assert_int_equal(pcm_fxq_from_double(q, 1e300), q->raw_max);
	assert_int_equal(pcm_fxq_from_double(q, -1e300), q->raw_min);
	assert_int_equal(pcm_fxq_from_double(q, INFINITY), q->raw_max);
	assert_int_equal(pcm_fxq_from_double(q, -INFINITY), q->raw_min);
	assert_int_equal(pcm_fxq_from_double(q, NAN), 0);
	assert_int_equal(pcm_fxq_from_double(q, -NAN), 0);
	/* raw_min / 2^frac is a power of two, so exactly representable and not clipped. */
	assert_int_equal(pcm_fxq_from_double(q, pcm_fxq_to_double(q, q->raw_min)), q->raw_min);
	assert_int_equal(pcm_fxq_from_double(q, ldexp(1.0, -(int)q->frac_bits - 2)), 0);
}

static void check_int_conversions_saturate_and_truncate(const struct pcm_fxq *q)
{
	int64_t one = pcm_fxq_one(q);

	assert_int_equal(pcm_fxq_from_int(q, INT64_MAX), q->raw_max);
	assert_int_equal(pcm_fxq_from_int(q, INT64_MIN), q->raw_min);
	assert_int_equal(pcm_fxq_from_uint(q, UINT64_MAX), q->raw_max);
	assert_int_equal(pcm_fxq_from_int(q, -7), -7 * one);
	assert_int_equal(pcm_fxq_from_uint(q, 7), 7 * one);
	/* Truncation toward zero: -1.5 -> -1, 1.5 -> 1, -1 ulp -> 0. */
	assert_int_equal(pcm_fxq_to_int(q, -one - one / 2), -1);
	assert_int_equal(pcm_fxq_to_int(q, one + one / 2), 1);
	assert_int_equal(pcm_fxq_to_int(q, -1), 0);
	assert_int_equal(pcm_fxq_to_int(q, q->raw_min), q->raw_min / one);
	assert_int_equal(pcm_fxq_to_int(q, q->raw_max), q->raw_max / one);
	/* to_uint: negatives clamp to 0. */
	assert_int_equal(pcm_fxq_to_uint(q, -1), 0);
	assert_int_equal(pcm_fxq_to_uint(q, -one), 0);
	assert_int_equal(pcm_fxq_to_uint(q, q->raw_min), 0);
	assert_int_equal(pcm_fxq_to_uint(q, one + one / 2), 1);
	assert_int_equal(pcm_fxq_to_uint(q, q->raw_max), (uint64_t)q->raw_max / (uint64_t)one);
}

static void check_recip_sqrt_exact_cases(const struct pcm_fxq *q)
{
	int64_t one = pcm_fxq_one(q);
	pcm_fx_s128 one_over_ulp = pow2(2 * q->frac_bits);

	assert_int_equal(pcm_fxq_recip(q, 4 * one), one / 4);
	assert_int_equal(pcm_fxq_recip(q, -2 * one), -one / 2);
	assert_int_equal(pcm_fxq_recip(q, one), one);
	/* 1 / 1 ulp is 2^frac: fits Q42.22, saturates Q16.16 and Q32.32. */
	assert_int_equal(pcm_fxq_recip(q, 1),
			 one_over_ulp > q->raw_max ? q->raw_max : (int64_t)one_over_ulp);
	assert_int_equal(pcm_fxq_recip(q, -1),
			 -one_over_ulp < q->raw_min ? q->raw_min : -(int64_t)one_over_ulp);

	assert_int_equal(pcm_fxq_sqrt(q, 4 * one), 2 * one);
	assert_int_equal(pcm_fxq_sqrt(q, pcm_fxq_from_double(q, 2.25)),
			 pcm_fxq_from_double(q, 1.5));
	assert_int_equal(pcm_fxq_sqrt(q, one), one);
	assert_int_equal(pcm_fxq_sqrt(q, pcm_fxq_from_int(q, 10000)), pcm_fxq_from_int(q, 100));
	assert_int_equal(pcm_fxq_sqrt(q, pcm_fxq_from_double(q, 2.0)),
			 pcm_fxq_from_double(q, sqrt(2.0)));
	/*
	 * a * 2^frac = m^2 + m sits just below the midpoint (m + 1/2)^2, so the root
	 * rounds down to m: a = 1 - 1 ulp gives m = one - 1, a = 3 * (3 * one - 1) ulp
	 * gives m = 3 * one - 1.
	 */
	assert_int_equal(pcm_fxq_sqrt(q, one - 1), one - 1);
	assert_int_equal(pcm_fxq_sqrt(q, 3 * (3 * one - 1)), 3 * one - 1);
	assert_int_equal(pcm_fxq_sqrt(q, 0), 0);
	assert_int_equal(pcm_fxq_sqrt(q, -one), 0);
	assert_int_equal(pcm_fxq_sqrt(q, q->raw_min), 0);
	assert_int_equal(pcm_fxq_sqrt(q, q->raw_max),
			 pcm_fxq_from_double(q, sqrt(pcm_fxq_to_double(q, q->raw_max))));
}

static void check_min_max_abs_cmp_order_raw_values(const struct pcm_fxq *q)
{
	int64_t a = pcm_fxq_from_double(q, -1.25), b = pcm_fxq_from_double(q, 0.5);

	assert_int_equal(pcm_fxq_min(q, a, b), a);
	assert_int_equal(pcm_fxq_max(q, a, b), b);
	assert_int_equal(pcm_fxq_cmp(q, a, b), -1);
	assert_int_equal(pcm_fxq_cmp(q, b, a), 1);
	assert_int_equal(pcm_fxq_cmp(q, a, a), 0);
	assert_int_equal(pcm_fxq_cmp(q, q->raw_min, q->raw_max), -1);
	assert_int_equal(pcm_fxq_abs(q, a), pcm_fxq_from_double(q, 1.25));
	assert_int_equal(pcm_fxq_abs(q, b), b);
	/* |raw_min| is one past raw_max in every format. */
	assert_int_equal(pcm_fxq_abs(q, q->raw_min), q->raw_max);
	assert_int_equal(pcm_fxq_abs(q, q->raw_min + 1), q->raw_max);
}

#define FX_TEST_EACH_FORMAT(prop)                                                                  \
	static void test_q16_16_##prop(void **state)                                               \
	{                                                                                          \
		(void)state;                                                                       \
		check_##prop(PCM_FXQ_16_16);                                                       \
	}                                                                                          \
	static void test_q32_32_##prop(void **state)                                               \
	{                                                                                          \
		(void)state;                                                                       \
		check_##prop(PCM_FXQ_32_32);                                                       \
	}                                                                                          \
	static void test_q42_22_##prop(void **state)                                               \
	{                                                                                          \
		(void)state;                                                                       \
		check_##prop(PCM_FXQ_42_22);                                                       \
	}

#define FX_UNIT_EACH_FORMAT(prop)                                                                  \
	cmocka_unit_test(test_q16_16_##prop), cmocka_unit_test(test_q32_32_##prop),                \
	    cmocka_unit_test(test_q42_22_##prop)

FX_TEST_EACH_FORMAT(mul_within_1ulp_of_double)
FX_TEST_EACH_FORMAT(div_within_1ulp_of_double)
FX_TEST_EACH_FORMAT(sqrt_within_1ulp_of_double)
FX_TEST_EACH_FORMAT(conversions_round_trip_within_1ulp)
FX_TEST_EACH_FORMAT(mul_rounds_half_ulp_away_from_zero)
FX_TEST_EACH_FORMAT(div_rounds_half_ulp_away_from_zero)
FX_TEST_EACH_FORMAT(from_double_rounds_half_ulp_away_from_zero)
FX_TEST_EACH_FORMAT(add_sub_saturate_at_raw_limits)
FX_TEST_EACH_FORMAT(mul_saturates_at_raw_limits)
FX_TEST_EACH_FORMAT(div_saturates_at_raw_limits)
FX_TEST_EACH_FORMAT(div_by_zero_saturates_by_dividend_sign)
FX_TEST_EACH_FORMAT(from_double_saturates_and_maps_nan_to_zero)
FX_TEST_EACH_FORMAT(int_conversions_saturate_and_truncate)
FX_TEST_EACH_FORMAT(recip_sqrt_exact_cases)
FX_TEST_EACH_FORMAT(min_max_abs_cmp_order_raw_values)

/* ---- format-specific limits ---- */

static void test_q16_16_range_is_int32_about_32768(void **state)
{
	(void)state;
	assert_int_equal(PCM_FXQ_16_16->raw_min, INT32_MIN);
	assert_int_equal(PCM_FXQ_16_16->raw_max, INT32_MAX);
	assert_true(PCM_FXQ_16_16->frac_bits == 16);
	assert_true(PCM_FXQ_32_32->frac_bits == 32 && PCM_FXQ_32_32->raw_max == INT64_MAX);
	assert_true(PCM_FXQ_42_22->frac_bits == 22 && PCM_FXQ_42_22->raw_min == INT64_MIN);
	assert_string_equal(PCM_FXQ_16_16->name, "q16.16");
	assert_string_equal(PCM_FXQ_32_32->name, "q32.32");
	assert_string_equal(PCM_FXQ_42_22->name, "q42.22");
}

static void test_q16_16_mul_saturates_beyond_32768(void **state)
{
	const struct pcm_fxq *q = PCM_FXQ_16_16;
	int64_t x200 = pcm_fxq_from_int(q, 200);

	(void)state;
	assert_int_equal(pcm_fxq_mul(q, x200, x200), INT32_MAX);
	assert_int_equal(pcm_fxq_mul(q, -x200, x200), INT32_MIN);
	assert_int_equal(pcm_fxq_mul(q, -x200, -x200), INT32_MAX);
	/* 181^2 = 32761 still fits. */
	assert_int_equal(pcm_fxq_mul(q, pcm_fxq_from_int(q, 181), pcm_fxq_from_int(q, 181)),
			 pcm_fxq_from_int(q, 32761));
}

static void test_q32_32_mul_keeps_200_squared_exact(void **state)
{
	const struct pcm_fxq *q = PCM_FXQ_32_32;
	int64_t x200 = pcm_fxq_from_int(q, 200);

	(void)state;
	assert_int_equal(pcm_fxq_mul(q, x200, x200), pcm_fxq_from_int(q, 40000));
	assert_int_equal(pcm_fxq_mul(q, -x200, x200), pcm_fxq_from_int(q, -40000));
	assert_int_equal(pcm_fxq_mul(PCM_FXQ_42_22, pcm_fxq_from_int(PCM_FXQ_42_22, 200),
				     pcm_fxq_from_int(PCM_FXQ_42_22, 200)),
			 pcm_fxq_from_int(PCM_FXQ_42_22, 40000));
}

static void test_q16_16_add_saturates_beyond_32768(void **state)
{
	const struct pcm_fxq *q = PCM_FXQ_16_16;
	int64_t x30000 = pcm_fxq_from_int(q, 30000);

	(void)state;
	assert_int_equal(pcm_fxq_add(q, x30000, x30000), INT32_MAX);
	assert_int_equal(pcm_fxq_sub(q, -x30000, x30000), INT32_MIN);
	assert_int_equal(pcm_fxq_add(PCM_FXQ_32_32, pcm_fxq_from_int(PCM_FXQ_32_32, 30000),
				     pcm_fxq_from_int(PCM_FXQ_32_32, 30000)),
			 pcm_fxq_from_int(PCM_FXQ_32_32, 60000));
}

static void test_q16_16_div_saturates_beyond_32768(void **state)
{
	const struct pcm_fxq *q = PCM_FXQ_16_16;
	int64_t x1000 = pcm_fxq_from_int(q, 1000), hundredth = pcm_fxq_from_double(q, 0.01);

	(void)state;
	assert_int_equal(pcm_fxq_div(q, x1000, hundredth), INT32_MAX);
	assert_int_equal(pcm_fxq_div(q, -x1000, hundredth), INT32_MIN);
	/* 300 / 0.01 (0.01 is 655 ulp here) is about 30017: in range, so not clipped. */
	assert_true(near_double(q, pcm_fxq_div(q, pcm_fxq_from_int(q, 300), hundredth),
				300.0 / pcm_fxq_to_double(q, hundredth)));
}

static void test_q16_16_from_double_saturates_at_32768(void **state)
{
	const struct pcm_fxq *q = PCM_FXQ_16_16;

	(void)state;
	assert_int_equal(pcm_fxq_from_double(q, 32768.0), INT32_MAX);
	assert_int_equal(pcm_fxq_from_double(q, 40000.0), INT32_MAX);
	assert_int_equal(pcm_fxq_from_double(q, 32767.5), (int64_t)32767 * 65536 + 32768);
	/* The largest value is 32768 - 2^-16; half an ulp above it rounds to 32768 and clips. */
	assert_int_equal(pcm_fxq_from_double(q, 32768.0 - ldexp(1.0, -16)), INT32_MAX);
	assert_int_equal(pcm_fxq_from_double(q, 32768.0 - ldexp(1.0, -17)), INT32_MAX);
	assert_int_equal(pcm_fxq_from_double(q, 32768.0 - ldexp(5.0, -17)), INT32_MAX - 1);
	assert_int_equal(pcm_fxq_from_double(q, -32768.0), INT32_MIN);
	assert_int_equal(pcm_fxq_from_double(q, -32768.25), INT32_MIN);
	assert_int_equal(pcm_fxq_from_int(q, 32768), INT32_MAX);
	assert_int_equal(pcm_fxq_from_int(q, -32768), INT32_MIN);
	assert_int_equal(pcm_fxq_from_int(q, 32767), (int64_t)32767 * 65536);
}

static void test_q32_32_from_double_saturates_at_2_pow_31(void **state)
{
	const struct pcm_fxq *q = PCM_FXQ_32_32;

	(void)state;
	assert_int_equal(pcm_fxq_from_double(q, ldexp(1.0, 31)), INT64_MAX);
	assert_int_equal(pcm_fxq_from_double(q, -ldexp(1.0, 31)), INT64_MIN);
	assert_int_equal(pcm_fxq_from_double(q, ldexp(1.0, 30)), (int64_t)1 << 62);
	assert_int_equal(pcm_fxq_from_int(q, (int64_t)1 << 31), INT64_MAX);
	assert_int_equal(pcm_fxq_from_int(q, ((int64_t)1 << 31) - 1),
			 (int64_t)(((uint64_t)1 << 63) - ((uint64_t)1 << 32)));
}

static void test_q42_22_mul_saturates_beyond_2_pow_41(void **state)
{
	const struct pcm_fxq *q = PCM_FXQ_42_22;
	int64_t x2_20 = pcm_fxq_from_int(q, (int64_t)1 << 20);
	int64_t x2_21 = pcm_fxq_from_int(q, (int64_t)1 << 21);

	(void)state;
	assert_int_equal(pcm_fxq_mul(q, x2_20, x2_20), pcm_fxq_from_int(q, (int64_t)1 << 40));
	assert_int_equal(pcm_fxq_mul(q, x2_21, x2_21), INT64_MAX);
	assert_int_equal(pcm_fxq_mul(q, -x2_21, x2_21), INT64_MIN);
	assert_int_equal(pcm_fxq_from_double(q, ldexp(1.0, 41)), INT64_MAX);
}

/* ---- pcm_fxp16_mult ---- */

static void test_fxp16_mult_scales_1_mib_by_0_9_to_943712(void **state)
{
	uint32_t factor_0_9 = (uint32_t)((1u << 16) * 900u / 1000u);

	(void)state;
	/* The factor truncates to 58982 (0.899994); 58982 * 2^20 / 2^16 is exactly 943712. */
	assert_int_equal(factor_0_9, 58982);
	assert_int_equal(pcm_fxp16_mult(factor_0_9, 1u << 20), 943712);
	assert_int_equal(pcm_fxp16_mult(1u << 16, 123456789u), 123456789u);
	assert_int_equal(pcm_fxp16_mult(0, UINT32_MAX), 0);
	/* 0.5 of an odd value truncates. */
	assert_int_equal(pcm_fxp16_mult(1u << 15, 7u), 3u);
}

static void test_fxp16_mult_saturates_at_uint32_max(void **state)
{
	(void)state;
	assert_int_equal(pcm_fxp16_mult(2u << 16, UINT32_MAX), UINT32_MAX);
	assert_int_equal(pcm_fxp16_mult(UINT32_MAX, UINT32_MAX), UINT32_MAX);
	assert_int_equal(pcm_fxp16_mult(2u << 16, 1u << 31), UINT32_MAX);
	assert_int_equal(pcm_fxp16_mult(2u << 16, (1u << 31) - 1), UINT32_MAX - 1);
}

/* ---- build-selected API, in whichever mode this TU is compiled ---- */

_Static_assert(sizeof(pcm_fx) == 8, "pcm_fx fits a 64-bit handler slot");

static double api_tolerance(void)
{
	return PCM_FX_IS_DOUBLE ? 1e-12 : ldexp(1.0, -PCM_FX_FRAC_BITS);
}

static void test_fx_api_matches_selected_format(void **state)
{
	(void)state;
#if PCM_FX_IS_DOUBLE
	assert_string_equal(PCM_FX_NAME, "double");
	assert_int_equal(PCM_FX_FRAC_BITS, 0);
	assert_true(PCM_FX_ONE == 1.0 && PCM_FX_ZERO == 0.0);
#else
	assert_string_equal(PCM_FX_NAME, PCM_FX_Q->name);
	assert_int_equal(PCM_FX_FRAC_BITS, PCM_FX_Q->frac_bits);
	assert_int_equal(PCM_FX_ONE, pcm_fxq_one(PCM_FX_Q));
	assert_int_equal(PCM_FX_ZERO, 0);
#endif
	assert_true(pcm_fx_to_double(PCM_FX_ONE) == 1.0);
	assert_true(pcm_fx_to_double(PCM_FX_ZERO) == 0.0);
}

static void test_fx_api_arithmetic_is_exact_on_dyadic_values(void **state)
{
	pcm_fx a = pcm_fx_from_double(1.5), b = pcm_fx_from_int(-4);

	(void)state;
	assert_true(pcm_fx_to_double(pcm_fx_add(a, b)) == -2.5);
	assert_true(pcm_fx_to_double(pcm_fx_sub(a, b)) == 5.5);
	assert_true(pcm_fx_to_double(pcm_fx_mul(a, b)) == -6.0);
	assert_true(fabs(pcm_fx_to_double(pcm_fx_div(b, a)) - (-4.0 / 1.5)) <= api_tolerance());
	assert_true(pcm_fx_to_double(pcm_fx_div(a, b)) == -0.375);
	assert_true(pcm_fx_to_double(pcm_fx_mul_int(a, 3)) == 4.5);
	assert_true(pcm_fx_to_double(pcm_fx_recip(pcm_fx_from_uint(4))) == 0.25);
	assert_true(pcm_fx_to_double(pcm_fx_sqrt(pcm_fx_from_double(2.25))) == 1.5);
	assert_true(pcm_fx_to_double(pcm_fx_sqrt(b)) == 0.0);
	assert_true(pcm_fx_to_double(pcm_fx_abs(b)) == 4.0);
	assert_true(pcm_fx_to_double(pcm_fx_min(a, b)) == -4.0);
	assert_true(pcm_fx_to_double(pcm_fx_max(a, b)) == 1.5);
	assert_true(pcm_fx_lt(b, a) && !pcm_fx_lt(a, a));
	assert_true(pcm_fx_le(b, a) && pcm_fx_le(a, a) && !pcm_fx_le(a, b));
	assert_true(pcm_fx_gt(a, b) && !pcm_fx_gt(a, a));
	assert_true(pcm_fx_ge(a, b) && pcm_fx_ge(a, a) && !pcm_fx_ge(b, a));
}

static void test_fx_api_int_conversions_truncate_and_clamp(void **state)
{
	(void)state;
	assert_int_equal(pcm_fx_to_int(pcm_fx_from_double(-2.5)), -2);
	assert_int_equal(pcm_fx_to_int(pcm_fx_from_double(2.75)), 2);
	assert_int_equal(pcm_fx_to_uint(pcm_fx_from_double(2.75)), 2);
	assert_int_equal(pcm_fx_to_uint(pcm_fx_from_double(-2.5)), 0);
	assert_int_equal(pcm_fx_to_uint(pcm_fx_from_int(-1)), 0);
	assert_int_equal(pcm_fx_to_int(pcm_fx_from_uint(1000)), 1000);
	assert_int_equal(pcm_fx_to_int(pcm_fx_from_double(NAN)), 0);
}

static void test_fx_api_div_by_zero_saturates_by_dividend_sign(void **state)
{
	pcm_fx pos = pcm_fx_div(PCM_FX_ONE, PCM_FX_ZERO);
	pcm_fx zero = pcm_fx_div(PCM_FX_ZERO, PCM_FX_ZERO);
	pcm_fx neg = pcm_fx_div(pcm_fx_from_int(-1), PCM_FX_ZERO);

	(void)state;
#if PCM_FX_IS_DOUBLE
	assert_true(pos == DBL_MAX && zero == DBL_MAX && neg == -DBL_MAX);
	assert_true(pcm_fx_recip(0.0) == DBL_MAX);
#else
	assert_int_equal(pos, PCM_FX_Q->raw_max);
	assert_int_equal(zero, PCM_FX_Q->raw_max);
	assert_int_equal(neg, PCM_FX_Q->raw_min);
	assert_int_equal(pcm_fx_recip(PCM_FX_ZERO), PCM_FX_Q->raw_max);
#endif
}

static void test_fx_api_slot_round_trips_bit_exactly(void **state)
{
	pcm_fx vals[] = {PCM_FX_ZERO,
			 PCM_FX_ONE,
			 pcm_fx_from_double(-0.375),
			 pcm_fx_from_double(-0.0),
			 pcm_fx_from_int(-20000),
			 pcm_fx_from_double(12345.5)};

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		pcm_fx back = pcm_fx_from_slot(pcm_fx_to_slot(vals[i]));

		assert_memory_equal(&back, &vals[i], sizeof(back));
	}
	/* An all-zero slot reads back as zero in every mode. */
	assert_true(pcm_fx_to_double(pcm_fx_from_slot(0)) == 0.0);
#if PCM_FX_IS_DOUBLE
	assert_int_equal(pcm_fx_to_slot(1.0), 0x3ff0000000000000ull);
	assert_int_equal(pcm_fx_to_slot(-0.0), 0x8000000000000000ull);
#else
	assert_int_equal(pcm_fx_to_slot(pcm_fx_from_int(-1)), (uint64_t)0 - (uint64_t)PCM_FX_ONE);
	assert_int_equal(pcm_fx_from_slot(UINT64_MAX), -1);
	assert_int_equal(pcm_fx_from_slot((uint64_t)1 << 63), INT64_MIN);
#endif
}

static void test_fx_api_ewma_tracks_double_reference(void **state)
{
	/* avg += (x - avg) / 8, as an RTT filter would, over values that fit every format. */
	pcm_fx avg = PCM_FX_ZERO, gain = pcm_fx_recip(pcm_fx_from_int(8));
	double ref = 0.0;

	(void)state;
	rng_state = SWEEP_SEED;
	for (int i = 0; i < 1000; i++) {
		double x = (double)(xorshift64() % 20000) / 1000.0;

		avg = pcm_fx_add(avg, pcm_fx_mul(pcm_fx_sub(pcm_fx_from_double(x), avg), gain));
		ref += (x - ref) / 8.0;
	}
	/* Each step adds at most ~1.5 ulp of rounding; the filter decays errors by 7/8. */
	assert_true(fabs(pcm_fx_to_double(avg) - ref) <= 16.0 * api_tolerance());
}

#if PCM_FX_IS_DOUBLE
static void test_fx_api_double_to_int_saturates_instead_of_ub(void **state)
{
	/* volatile: keep the compiler from folding an out-of-range cast at build time. */
	volatile double big = 1e30, two_pow_64 = 18446744073709551616.0;

	(void)state;
	assert_int_equal(pcm_fx_to_uint(big), UINT64_MAX);
	assert_int_equal(pcm_fx_to_uint(two_pow_64), UINT64_MAX);
	assert_int_equal(pcm_fx_to_int(big), INT64_MAX);
	assert_int_equal(pcm_fx_to_int(-big), INT64_MIN);
	assert_int_equal(pcm_fx_to_uint(INFINITY), UINT64_MAX);
	assert_int_equal(pcm_fx_to_uint(-INFINITY), 0);
	assert_int_equal(pcm_fx_to_uint(NAN), 0);
	assert_int_equal(pcm_fx_to_uint(18446744073709549568.0), 18446744073709549568ull);
	assert_int_equal(pcm_fx_to_int(1e30), INT64_MAX);
	assert_int_equal(pcm_fx_to_int(-1e30), INT64_MIN);
	assert_int_equal(pcm_fx_to_int(-9223372036854775808.0), INT64_MIN);
	assert_true(pcm_fx_from_double(NAN) == 0.0);
	assert_true(pcm_fx_sqrt(NAN) == 0.0);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		FX_UNIT_EACH_FORMAT(mul_within_1ulp_of_double),
		FX_UNIT_EACH_FORMAT(div_within_1ulp_of_double),
		FX_UNIT_EACH_FORMAT(sqrt_within_1ulp_of_double),
		FX_UNIT_EACH_FORMAT(conversions_round_trip_within_1ulp),
		FX_UNIT_EACH_FORMAT(mul_rounds_half_ulp_away_from_zero),
		FX_UNIT_EACH_FORMAT(div_rounds_half_ulp_away_from_zero),
		FX_UNIT_EACH_FORMAT(from_double_rounds_half_ulp_away_from_zero),
		FX_UNIT_EACH_FORMAT(add_sub_saturate_at_raw_limits),
		FX_UNIT_EACH_FORMAT(mul_saturates_at_raw_limits),
		FX_UNIT_EACH_FORMAT(div_saturates_at_raw_limits),
		FX_UNIT_EACH_FORMAT(div_by_zero_saturates_by_dividend_sign),
		FX_UNIT_EACH_FORMAT(from_double_saturates_and_maps_nan_to_zero),
		FX_UNIT_EACH_FORMAT(int_conversions_saturate_and_truncate),
		FX_UNIT_EACH_FORMAT(recip_sqrt_exact_cases),
		FX_UNIT_EACH_FORMAT(min_max_abs_cmp_order_raw_values),
		cmocka_unit_test(test_q16_16_range_is_int32_about_32768),
		cmocka_unit_test(test_q16_16_mul_saturates_beyond_32768),
		cmocka_unit_test(test_q32_32_mul_keeps_200_squared_exact),
		cmocka_unit_test(test_q16_16_add_saturates_beyond_32768),
		cmocka_unit_test(test_q16_16_div_saturates_beyond_32768),
		cmocka_unit_test(test_q16_16_from_double_saturates_at_32768),
		cmocka_unit_test(test_q32_32_from_double_saturates_at_2_pow_31),
		cmocka_unit_test(test_q42_22_mul_saturates_beyond_2_pow_41),
		cmocka_unit_test(test_fxp16_mult_scales_1_mib_by_0_9_to_943712),
		cmocka_unit_test(test_fxp16_mult_saturates_at_uint32_max),
		cmocka_unit_test(test_fx_api_matches_selected_format),
		cmocka_unit_test(test_fx_api_arithmetic_is_exact_on_dyadic_values),
		cmocka_unit_test(test_fx_api_int_conversions_truncate_and_clamp),
		cmocka_unit_test(test_fx_api_div_by_zero_saturates_by_dividend_sign),
		cmocka_unit_test(test_fx_api_slot_round_trips_bit_exactly),
		cmocka_unit_test(test_fx_api_ewma_tracks_double_reference),
#if PCM_FX_IS_DOUBLE
		cmocka_unit_test(test_fx_api_double_to_int_saturates_instead_of_ub),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
