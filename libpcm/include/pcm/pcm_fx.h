/* SPDX-License-Identifier: MIT */
/*
 * pcm_fx.h - fixed-point arithmetic for congestion-control handlers.
 *
 * Handlers may run where floating point is missing or costly (NIC cores), so
 * one handler source builds with one of four arithmetics, chosen by pcmc with
 * exactly one macro:
 *
 *   PCM_ARITH_DOUBLE    IEEE double (the default when none is defined)
 *   PCM_ARITH_Q16_16    Qm.f fixed point, value = raw / 2^f, raw kept in
 *   PCM_ARITH_Q32_32    an int64_t; Q16.16 additionally limits raw to the
 *   PCM_ARITH_Q42_22    int32_t range, i.e. about +-32768.0.
 *
 * Two layers:
 *  - pcm_fxq_*(): the format-generic core. It works on int64_t raw values
 *    and takes the format (struct pcm_fxq) as an argument, so one program
 *    can use every format; tests check all of them in one binary.
 *  - pcm_fx_*(): the build-selected API for handler code, over the scalar
 *    type pcm_fx. Under a Q format each call passes a constant format to the
 *    core, so after inlining the format fields fold to immediates.
 *
 * Every fixed-point operation saturates to [raw_min, raw_max] instead of
 * wrapping, and none has undefined behaviour for any input. Products and
 * quotients are computed exactly in 128 bits and rounded once, to nearest
 * with ties away from zero. One "ulp" below is one raw step, 2^-frac_bits.
 *
 * pcm_fxp16_mult() is the 16.16 rate-scaling multiply used by rate-based
 * handlers in the style of the DOCA PCC samples.
 */
#ifndef PCM_PCM_FX_H
#define PCM_PCM_FX_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* Exactly one arithmetic per TU: two would silently pick one of them. */
#if (defined(PCM_ARITH_DOUBLE) + defined(PCM_ARITH_Q16_16) + defined(PCM_ARITH_Q32_32) +           \
     defined(PCM_ARITH_Q42_22)) > 1
#error "pcm_fx.h: define at most one PCM_ARITH_* (DOUBLE, Q16_16, Q32_32, Q42_22)"
#endif

/* Exact intermediates for products and quotients; __extension__ keeps -pedantic quiet. */
__extension__ typedef __int128 pcm_fx_s128;
__extension__ typedef unsigned __int128 pcm_fx_u128;

/**
 * struct pcm_fxq - a fixed-point format: value = raw / 2^frac_bits.
 * @frac_bits: fractional bits, 1..62.
 * @raw_min: smallest raw value; negative. Results below it saturate to it.
 * @raw_max: largest raw value; positive. Results above it saturate to it.
 * @name: printable name, e.g. "q16.16".
 */
struct pcm_fxq {
	unsigned frac_bits;
	int64_t raw_min;
	int64_t raw_max;
	const char *name;
};

/*
 * The supported formats, as const struct pcm_fxq pointers. Each expands to
 * a compound literal, so a TU needs no object to link against; at file
 * scope it is a valid static initializer.
 */
#define PCM_FXQ_16_16 (&(const struct pcm_fxq){16, INT32_MIN, INT32_MAX, "q16.16"})
#define PCM_FXQ_32_32 (&(const struct pcm_fxq){32, INT64_MIN, INT64_MAX, "q32.32"})
#define PCM_FXQ_42_22 (&(const struct pcm_fxq){22, INT64_MIN, INT64_MAX, "q42.22"})

/**
 * pcm_fxq_one() - raw value of 1.0 in a format.
 * @q: the format.
 *
 * Return: 2^frac_bits.
 */
static inline int64_t pcm_fxq_one(const struct pcm_fxq *q)
{
	return (int64_t)((uint64_t)1 << q->frac_bits);
}

/**
 * pcm_fxq_sat() - clamp an exact 128-bit raw value into a format's range.
 * @q: the format.
 * @v: exact raw value.
 *
 * Return: @v, or raw_min / raw_max when @v lies outside them.
 */
static inline int64_t pcm_fxq_sat(const struct pcm_fxq *q, pcm_fx_s128 v)
{
	if (v > q->raw_max)
		return q->raw_max;
	if (v < q->raw_min)
		return q->raw_min;
	return (int64_t)v;
}

/**
 * pcm_fxq_shr_round() - divide an exact value by 2^shift, rounding to nearest.
 * @v: the dividend; |v| < 2^126.
 * @shift: 1..62.
 *
 * Ties round away from zero. Works on magnitudes so no negative value is shifted.
 *
 * Return: round(@v / 2^@shift), exact in 128 bits.
 */
static inline pcm_fx_s128 pcm_fxq_shr_round(pcm_fx_s128 v, unsigned shift)
{
	pcm_fx_s128 half = (pcm_fx_s128)1 << (shift - 1);

	if (v >= 0)
		return (v + half) >> shift;
	return -((-v + half) >> shift);
}

/**
 * pcm_fxq_from_int() - convert a signed integer to a fixed-point raw value.
 * @q: the format.
 * @n: the integer.
 *
 * Return: n * 2^frac_bits, saturated (e.g. 40000 saturates in Q16.16).
 */
static inline int64_t pcm_fxq_from_int(const struct pcm_fxq *q, int64_t n)
{
	return pcm_fxq_sat(q, (pcm_fx_s128)n * pcm_fxq_one(q));
}

/**
 * pcm_fxq_from_uint() - convert an unsigned integer to a fixed-point raw value.
 * @q: the format.
 * @n: the integer.
 *
 * Return: n * 2^frac_bits, saturated to raw_max.
 */
static inline int64_t pcm_fxq_from_uint(const struct pcm_fxq *q, uint64_t n)
{
	return pcm_fxq_sat(q, (pcm_fx_s128)n * pcm_fxq_one(q));
}

/**
 * pcm_fxq_from_double() - convert a double to a fixed-point raw value.
 * @q: the format.
 * @x: the value.
 *
 * Rounds x * 2^frac_bits to the nearest integer, ties away from zero
 * (0.5 ulp -> 1 ulp, -2.5 ulp -> -3 ulp). NaN gives 0; +-infinity and
 * out-of-range values saturate.
 *
 * Return: the rounded, saturated raw value.
 */
static inline int64_t pcm_fxq_from_double(const struct pcm_fxq *q, double x)
{
	double r;

	if (isnan(x))
		return 0;
	/* Scaling by a power of two is exact; round() is the only rounding step. */
	r = round(x * (double)pcm_fxq_one(q));
	/* 2^63 is the first double above INT64_MAX; -2^63 itself converts exactly. */
	if (r >= 9223372036854775808.0)
		return q->raw_max;
	if (r < -9223372036854775808.0)
		return q->raw_min;
	return pcm_fxq_sat(q, (int64_t)r);
}

/**
 * pcm_fxq_to_double() - convert a fixed-point raw value to double.
 * @q: the format.
 * @a: raw value.
 *
 * Exact when |a| < 2^53; beyond that the int64 -> double conversion rounds
 * to nearest (only Q32.32 / Q42.22 values that large are affected).
 *
 * Return: a / 2^frac_bits.
 */
static inline double pcm_fxq_to_double(const struct pcm_fxq *q, int64_t a)
{
	return (double)a / (double)pcm_fxq_one(q);
}

/**
 * pcm_fxq_to_int() - convert a fixed-point raw value to a signed integer.
 * @q: the format.
 * @a: raw value.
 *
 * Return: a / 2^frac_bits truncated toward zero (-1.5 -> -1).
 */
static inline int64_t pcm_fxq_to_int(const struct pcm_fxq *q, int64_t a)
{
	/* C division truncates toward zero; the divisor is never -1. */
	return a / pcm_fxq_one(q);
}

/**
 * pcm_fxq_to_uint() - convert a fixed-point raw value to an unsigned integer.
 * @q: the format.
 * @a: raw value.
 *
 * Return: 0 if @a is negative, else a / 2^frac_bits truncated.
 */
static inline uint64_t pcm_fxq_to_uint(const struct pcm_fxq *q, int64_t a)
{
	if (a < 0)
		return 0;
	return (uint64_t)a >> q->frac_bits;
}

/**
 * pcm_fxq_add() - saturating addition.
 * @q: the format.
 * @a: raw value.
 * @b: raw value.
 *
 * Return: a + b, exact or saturated.
 */
static inline int64_t pcm_fxq_add(const struct pcm_fxq *q, int64_t a, int64_t b)
{
	return pcm_fxq_sat(q, (pcm_fx_s128)a + b);
}

/**
 * pcm_fxq_sub() - saturating subtraction.
 * @q: the format.
 * @a: raw value.
 * @b: raw value.
 *
 * Return: a - b, exact or saturated.
 */
static inline int64_t pcm_fxq_sub(const struct pcm_fxq *q, int64_t a, int64_t b)
{
	return pcm_fxq_sat(q, (pcm_fx_s128)a - b);
}

/**
 * pcm_fxq_mul() - saturating fixed-point multiplication.
 * @q: the format.
 * @a: raw value.
 * @b: raw value.
 *
 * The 126-bit product a * b is exact; it is divided by 2^frac_bits once,
 * rounding to nearest with ties away from zero, so the result is within
 * 0.5 ulp of the real product.
 *
 * Return: the rounded product, saturated (200.0 * 200.0 saturates to
 * raw_max in Q16.16 but is exact in Q32.32).
 */
static inline int64_t pcm_fxq_mul(const struct pcm_fxq *q, int64_t a, int64_t b)
{
	return pcm_fxq_sat(q, pcm_fxq_shr_round((pcm_fx_s128)a * b, q->frac_bits));
}

/**
 * pcm_fxq_div() - saturating fixed-point division.
 * @q: the format.
 * @a: raw dividend.
 * @b: raw divisor.
 *
 * Computes a * 2^frac_bits / b exactly in 128 bits and rounds to nearest,
 * ties away from zero, so the result is within 0.5 ulp of the real quotient.
 * Division by zero saturates: raw_max when a >= 0 (including 0 / 0),
 * raw_min when a < 0.
 *
 * Return: the rounded, saturated quotient.
 */
static inline int64_t pcm_fxq_div(const struct pcm_fxq *q, int64_t a, int64_t b)
{
	pcm_fx_u128 num, den, quo, rem;
	bool neg = (a < 0) != (b < 0);

	if (b == 0)
		return a >= 0 ? q->raw_max : q->raw_min;
	/* Magnitudes via 128 bits: |INT64_MIN| does not fit in int64_t. */
	num = (pcm_fx_u128)(a < 0 ? -(pcm_fx_s128)a : (pcm_fx_s128)a) << q->frac_bits;
	den = (pcm_fx_u128)(b < 0 ? -(pcm_fx_s128)b : (pcm_fx_s128)b);
	quo = num / den;
	rem = num % den;
	if (rem >= den - rem)
		quo++;
	/* quo < 2^126, so the signed conversion is exact. */
	return pcm_fxq_sat(q, neg ? -(pcm_fx_s128)quo : (pcm_fx_s128)quo);
}

/**
 * pcm_fxq_mul_int() - multiply a fixed-point value by an integer.
 * @q: the format.
 * @a: raw value.
 * @n: integer factor.
 *
 * Return: a * n, exact or saturated (no rounding is needed).
 */
static inline int64_t pcm_fxq_mul_int(const struct pcm_fxq *q, int64_t a, int64_t n)
{
	return pcm_fxq_sat(q, (pcm_fx_s128)a * n);
}

/**
 * pcm_fxq_recip() - reciprocal.
 * @q: the format.
 * @a: raw value.
 *
 * Same rounding and saturation as pcm_fxq_div(); 1 / 0 gives raw_max.
 *
 * Return: 1 / a, rounded to nearest and saturated.
 */
static inline int64_t pcm_fxq_recip(const struct pcm_fxq *q, int64_t a)
{
	return pcm_fxq_div(q, pcm_fxq_one(q), a);
}

/**
 * pcm_fxq_sqrt() - square root.
 * @q: the format.
 * @a: raw value.
 *
 * The raw result is sqrt(a * 2^frac_bits), taken exactly with a bit-by-bit
 * integer square root over 128 bits and rounded to nearest (an exact tie
 * cannot occur), so it is within 0.5 ulp of the real root.
 *
 * Return: the rounded root, or 0 when @a <= 0.
 */
static inline int64_t pcm_fxq_sqrt(const struct pcm_fxq *q, int64_t a)
{
	pcm_fx_u128 rem, root = 0, bit = (pcm_fx_u128)1 << 126;

	if (a <= 0)
		return 0;
	rem = (pcm_fx_u128)a << q->frac_bits;
	while (bit > rem)
		bit >>= 2;
	while (bit) {
		if (rem >= root + bit) {
			rem -= root + bit;
			root = (root >> 1) + bit;
		} else {
			root >>= 1;
		}
		bit >>= 2;
	}
	/* Now rem = n - root^2; n > root^2 + root means n > (root + 0.5)^2. */
	if (rem > root)
		root++;
	return pcm_fxq_sat(q, (pcm_fx_s128)root);
}

/**
 * pcm_fxq_min() - smaller of two raw values.
 * @q: the format (unused; kept for a uniform signature).
 * @a: raw value.
 * @b: raw value.
 *
 * Return: min(a, b).
 */
static inline int64_t pcm_fxq_min(const struct pcm_fxq *q, int64_t a, int64_t b)
{
	(void)q;
	return a < b ? a : b;
}

/**
 * pcm_fxq_max() - larger of two raw values.
 * @q: the format (unused; kept for a uniform signature).
 * @a: raw value.
 * @b: raw value.
 *
 * Return: max(a, b).
 */
static inline int64_t pcm_fxq_max(const struct pcm_fxq *q, int64_t a, int64_t b)
{
	(void)q;
	return a > b ? a : b;
}

/**
 * pcm_fxq_abs() - saturating absolute value.
 * @q: the format.
 * @a: raw value.
 *
 * Return: |a|; |raw_min| saturates to raw_max when it does not fit.
 */
static inline int64_t pcm_fxq_abs(const struct pcm_fxq *q, int64_t a)
{
	return pcm_fxq_sat(q, a < 0 ? -(pcm_fx_s128)a : (pcm_fx_s128)a);
}

/**
 * pcm_fxq_cmp() - three-way comparison.
 * @q: the format (unused; kept for a uniform signature).
 * @a: raw value.
 * @b: raw value.
 *
 * Return: -1 if a < b, 0 if equal, 1 if a > b.
 */
static inline int pcm_fxq_cmp(const struct pcm_fxq *q, int64_t a, int64_t b)
{
	(void)q;
	return (a > b) - (a < b);
}

/**
 * pcm_fxp16_mult() - scale an unsigned quantity by a 16.16 factor.
 * @factor_q16: the factor in unsigned Q16.16, i.e. factor * 2^16
 *              (0.9 is (1 << 16) * 900 / 1000 = 58982).
 * @value: the quantity to scale, in its own unit (e.g. a rate in the
 *         handler's rate unit); the result is in the same unit.
 *
 * The 64-bit product cannot overflow. The fraction is truncated, so the
 * result rounds toward zero.
 *
 * Return: (factor_q16 * value) >> 16, saturated to UINT32_MAX.
 */
static inline uint32_t pcm_fxp16_mult(uint32_t factor_q16, uint32_t value)
{
	uint64_t prod = ((uint64_t)factor_q16 * value) >> 16;

	return prod > UINT32_MAX ? UINT32_MAX : (uint32_t)prod;
}

/*
 * Build-selected API. PCM_FX_IS_DOUBLE tells the two kinds apart in
 * preprocessor code; PCM_FX_Q is the format the fixed modes pass to the core.
 */
#if defined(PCM_ARITH_Q16_16)
#define PCM_FX_IS_DOUBLE 0
#define PCM_FX_Q PCM_FXQ_16_16
#define PCM_FX_FRAC_BITS 16
#define PCM_FX_NAME "q16.16"
#elif defined(PCM_ARITH_Q32_32)
#define PCM_FX_IS_DOUBLE 0
#define PCM_FX_Q PCM_FXQ_32_32
#define PCM_FX_FRAC_BITS 32
#define PCM_FX_NAME "q32.32"
#elif defined(PCM_ARITH_Q42_22)
#define PCM_FX_IS_DOUBLE 0
#define PCM_FX_Q PCM_FXQ_42_22
#define PCM_FX_FRAC_BITS 22
#define PCM_FX_NAME "q42.22"
#else
#define PCM_FX_IS_DOUBLE 1
#define PCM_FX_FRAC_BITS 0
#define PCM_FX_NAME "double"
#endif

#if PCM_FX_IS_DOUBLE
/* The handler scalar: a double, or a raw fixed-point value of format PCM_FX_Q. */
typedef double pcm_fx;
#define PCM_FX_ONE 1.0
#define PCM_FX_ZERO 0.0
/* Largest finite double, the double-mode stand-in for raw_max (DBL_MAX without <float.h>). */
#define PCM_FX_DBL_MAX 0x1.fffffffffffffp+1023
#else
typedef int64_t pcm_fx;
#define PCM_FX_ONE ((pcm_fx)((int64_t)1 << PCM_FX_FRAC_BITS))
#define PCM_FX_ZERO ((pcm_fx)0)
#endif

/*
 * The double-mode expression of a pcm_fx operation, or its fixed-point one:
 * the other is dropped unexpanded, so each may name what only its mode has.
 */
#if PCM_FX_IS_DOUBLE
#define PCM_FX_PICK(dbl, fixed) (dbl)
#else
#define PCM_FX_PICK(dbl, fixed) (fixed)
#endif

/**
 * pcm_fx_from_int() - signed integer to pcm_fx.
 * @n: the integer.
 *
 * Return: (double)n (rounded above 2^53), or pcm_fxq_from_int() (saturating).
 */
static inline pcm_fx pcm_fx_from_int(int64_t n)
{
	return PCM_FX_PICK((double)n, pcm_fxq_from_int(PCM_FX_Q, n));
}

/**
 * pcm_fx_from_uint() - unsigned integer to pcm_fx.
 * @n: the integer.
 *
 * Return: (double)n (rounded above 2^53), or pcm_fxq_from_uint() (saturating).
 */
static inline pcm_fx pcm_fx_from_uint(uint64_t n)
{
	return PCM_FX_PICK((double)n, pcm_fxq_from_uint(PCM_FX_Q, n));
}

/**
 * pcm_fx_from_double() - double to pcm_fx.
 * @x: the value.
 *
 * NaN gives 0 in every mode. Fixed modes round to nearest, ties away from
 * zero, and saturate (see pcm_fxq_from_double()).
 *
 * Return: the converted value.
 */
static inline pcm_fx pcm_fx_from_double(double x)
{
	return PCM_FX_PICK(isnan(x) ? 0.0 : x, pcm_fxq_from_double(PCM_FX_Q, x));
}

/**
 * pcm_fx_to_double() - pcm_fx to double.
 * @a: the value.
 *
 * Return: @a as a double (see pcm_fxq_to_double() for large raw values).
 */
static inline double pcm_fx_to_double(pcm_fx a)
{
	return PCM_FX_PICK(a, pcm_fxq_to_double(PCM_FX_Q, a));
}

/**
 * pcm_fx_to_int() - pcm_fx to signed integer, truncating toward zero.
 * @a: the value.
 *
 * In double mode NaN gives 0 and values outside int64_t saturate, where a
 * plain cast would be undefined.
 *
 * Return: trunc(a), saturated.
 */
static inline int64_t pcm_fx_to_int(pcm_fx a)
{
#if PCM_FX_IS_DOUBLE
	if (isnan(a))
		return 0;
	if (a >= 9223372036854775808.0)
		return INT64_MAX;
	if (a < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)a;
#else
	return pcm_fxq_to_int(PCM_FX_Q, a);
#endif
}

/**
 * pcm_fx_to_uint() - pcm_fx to unsigned integer, truncating.
 * @a: the value.
 *
 * Negative values and NaN give 0; in double mode values >= 2^64 give
 * UINT64_MAX.
 *
 * Return: trunc(a), clamped to [0, UINT64_MAX].
 */
static inline uint64_t pcm_fx_to_uint(pcm_fx a)
{
#if PCM_FX_IS_DOUBLE
	if (!(a > 0.0))
		return 0;
	if (a >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)a;
#else
	return pcm_fxq_to_uint(PCM_FX_Q, a);
#endif
}

/**
 * pcm_fx_add() - addition, saturating in fixed modes.
 * @a: the value.
 * @b: the value.
 *
 * Return: a + b.
 */
static inline pcm_fx pcm_fx_add(pcm_fx a, pcm_fx b)
{
	return PCM_FX_PICK(a + b, pcm_fxq_add(PCM_FX_Q, a, b));
}

/**
 * pcm_fx_sub() - subtraction, saturating in fixed modes.
 * @a: the value.
 * @b: the value.
 *
 * Return: a - b.
 */
static inline pcm_fx pcm_fx_sub(pcm_fx a, pcm_fx b)
{
	return PCM_FX_PICK(a - b, pcm_fxq_sub(PCM_FX_Q, a, b));
}

/**
 * pcm_fx_mul() - multiplication.
 * @a: the value.
 * @b: the value.
 *
 * Fixed modes round to nearest, ties away from zero, and saturate (see
 * pcm_fxq_mul()); double mode is IEEE multiplication.
 *
 * Return: a * b.
 */
static inline pcm_fx pcm_fx_mul(pcm_fx a, pcm_fx b)
{
	return PCM_FX_PICK(a * b, pcm_fxq_mul(PCM_FX_Q, a, b));
}

/**
 * pcm_fx_div() - division with saturating divide-by-zero.
 * @a: dividend.
 * @b: divisor.
 *
 * Fixed modes round to nearest, ties away from zero, and saturate (see
 * pcm_fxq_div()). In every mode b == 0 saturates instead of trapping or
 * giving infinity/NaN: to the largest value when a >= 0 and to the most
 * negative when a < 0. In double mode those are DBL_MAX and -DBL_MAX (a NaN
 * dividend counts as negative).
 *
 * Return: a / b.
 */
static inline pcm_fx pcm_fx_div(pcm_fx a, pcm_fx b)
{
#if PCM_FX_IS_DOUBLE
	if (b == 0.0)
		return a >= 0.0 ? PCM_FX_DBL_MAX : -PCM_FX_DBL_MAX;
	return a / b;
#else
	return pcm_fxq_div(PCM_FX_Q, a, b);
#endif
}

/**
 * pcm_fx_mul_int() - multiply by an integer.
 * @a: the value.
 * @n: integer factor.
 *
 * Return: a * n, saturating in fixed modes.
 */
static inline pcm_fx pcm_fx_mul_int(pcm_fx a, int64_t n)
{
	return PCM_FX_PICK(a * (double)n, pcm_fxq_mul_int(PCM_FX_Q, a, n));
}

/**
 * pcm_fx_recip() - reciprocal.
 * @a: the value.
 *
 * Return: 1 / a with the rounding and divide-by-zero rule of pcm_fx_div().
 */
static inline pcm_fx pcm_fx_recip(pcm_fx a)
{
	return pcm_fx_div(PCM_FX_ONE, a);
}

/**
 * pcm_fx_sqrt() - square root.
 * @a: the value.
 *
 * Fixed modes round to nearest (see pcm_fxq_sqrt()).
 *
 * Return: sqrt(a), or 0 when a <= 0 (or NaN in double mode).
 */
static inline pcm_fx pcm_fx_sqrt(pcm_fx a)
{
	return PCM_FX_PICK(a > 0.0 ? sqrt(a) : 0.0, pcm_fxq_sqrt(PCM_FX_Q, a));
}

/**
 * pcm_fx_min() - smaller of two values.
 * @a: the value.
 * @b: the value.
 *
 * Return: a < b ? a : b.
 */
static inline pcm_fx pcm_fx_min(pcm_fx a, pcm_fx b)
{
	return a < b ? a : b;
}

/**
 * pcm_fx_max() - larger of two values.
 * @a: the value.
 * @b: the value.
 *
 * Return: a > b ? a : b.
 */
static inline pcm_fx pcm_fx_max(pcm_fx a, pcm_fx b)
{
	return a > b ? a : b;
}

/**
 * pcm_fx_abs() - absolute value, saturating in fixed modes.
 * @a: the value.
 *
 * Return: |a|.
 */
static inline pcm_fx pcm_fx_abs(pcm_fx a)
{
	return PCM_FX_PICK(fabs(a), pcm_fxq_abs(PCM_FX_Q, a));
}

/**
 * pcm_fx_lt() - a < b.
 * @a: the value.
 * @b: the value.
 *
 * Return: true if a < b.
 */
static inline bool pcm_fx_lt(pcm_fx a, pcm_fx b)
{
	return a < b;
}

/**
 * pcm_fx_le() - a <= b.
 * @a: the value.
 * @b: the value.
 *
 * Return: true if a <= b.
 */
static inline bool pcm_fx_le(pcm_fx a, pcm_fx b)
{
	return a <= b;
}

/**
 * pcm_fx_gt() - a > b.
 * @a: the value.
 * @b: the value.
 *
 * Return: true if a > b.
 */
static inline bool pcm_fx_gt(pcm_fx a, pcm_fx b)
{
	return a > b;
}

/**
 * pcm_fx_ge() - a >= b.
 * @a: the value.
 * @b: the value.
 *
 * Return: true if a >= b.
 */
static inline bool pcm_fx_ge(pcm_fx a, pcm_fx b)
{
	return a >= b;
}

/**
 * pcm_fx_to_slot() - store a pcm_fx in a 64-bit handler variable slot.
 * @a: the value.
 *
 * Double mode stores the IEEE bit pattern (so -0.0 and NaN payloads
 * survive); fixed modes store the raw value as two's complement.
 *
 * Return: the slot contents; pcm_fx_from_slot() inverts it exactly.
 */
static inline uint64_t pcm_fx_to_slot(pcm_fx a)
{
#if PCM_FX_IS_DOUBLE
	union {
		double d;
		uint64_t u;
	} pun = {.d = a};

	return pun.u;
#else
	return (uint64_t)a;
#endif
}

/**
 * pcm_fx_from_slot() - load a pcm_fx from a 64-bit handler variable slot.
 * @slot: contents written by pcm_fx_to_slot() (0 reads as zero in every mode).
 *
 * Return: the stored value.
 */
static inline pcm_fx pcm_fx_from_slot(uint64_t slot)
{
#if PCM_FX_IS_DOUBLE
	union {
		uint64_t u;
		double d;
	} pun = {.u = slot};

	return pun.d;
#else
	/* Two's complement decode without the implementation-defined unsigned -> signed cast. */
	if (slot <= (uint64_t)INT64_MAX)
		return (pcm_fx)slot;
	return -(pcm_fx)(~slot) - 1;
#endif
}

#endif /* PCM_PCM_FX_H */
