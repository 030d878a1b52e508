// SPDX-License-Identifier: MIT
/*
 * expr_fn.c - the functions and constants of `!eval` expressions: Python's
 * numeric built-ins and the `math` module, with Python's results (expr_fn.h),
 * plus C's fmin, fmax, MIN and MAX.
 *
 * Each function is a row of one table: its name, how many arguments it takes,
 * which of them must be integers (checked once, before the call) and how it
 * computes. Float functions share one wrapper that turns a NaN or infinite
 * result from finite arguments into Python's "math domain error" or "math
 * range error"; integer functions compute in 128 bits and check the 64-bit
 * range once.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_fn.h"

typedef __int128 wide;

struct call {
	const struct pcm_expr_fn *fn;
	const struct pcm_num *a;
	unsigned n;
	struct pcm_num *out;
	char *msg;
	size_t size;
};

struct pcm_expr_fn {
	const char *name;
	unsigned char min_args, max_args; /* max PCM_EXPR_MAX_ARGS: any number */
	uint16_t int_args; /* bit k: argument k must be an integer (Python's TypeError) */
	int (*call)(struct call *c);
	double (*f1)(double);
	double (*f2)(double, double);
	const char *unsupported; /* why pcm cannot take it, or NULL */
};

#define ANY PCM_EXPR_MAX_ARGS
#define ALL_INT UINT16_MAX /* every argument; PCM_EXPR_MAX_ARGS is 16 */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int fail(struct call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct call *c, const char *fmt, ...)
{
	int n = snprintf(c->msg, c->size, "%s(): ", c->fn->name);
	va_list ap;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->size)
		vsnprintf(c->msg + n, c->size - (size_t)n, fmt, ap);
	va_end(ap);
	return -EDOM;
}

static bool is_int(const struct pcm_num *v)
{
	return v->type != PCM_NUM_FLOAT;
}

static double as_float(const struct pcm_num *v)
{
	return v->type == PCM_NUM_FLOAT ? v->f : v->type == PCM_NUM_UINT ? (double)v->u : (double)v->i;
}

static wide as_wide(const struct pcm_num *v)
{
	return v->type == PCM_NUM_UINT ? (wide)v->u : (wide)v->i;
}

/* Python's int as pcm's: int64 when it fits, else uint64, else an error. */
static int put_int(struct call *c, wide v)
{
	if (v >= INT64_MIN && v <= INT64_MAX) {
		c->out->type = PCM_NUM_INT;
		c->out->i = (int64_t)v;
	} else if (v > 0 && v <= (wide)UINT64_MAX) {
		c->out->type = PCM_NUM_UINT;
		c->out->u = (uint64_t)v;
	} else {
		return fail(c, "the integer result is out of 64-bit range");
	}
	return 0;
}

static int put_bool(struct call *c, bool v)
{
	return put_int(c, v);
}

/* A float result; NaN or infinity from finite arguments is Python's ValueError or OverflowError. */
static int put_float(struct call *c, double r)
{
	bool finite_args = true;

	for (unsigned k = 0; k < c->n; k++)
		finite_args &= !(c->a[k].type == PCM_NUM_FLOAT && !isfinite(c->a[k].f));
	if (finite_args && isnan(r))
		return fail(c, "math domain error");
	if (finite_args && isinf(r))
		return fail(c, "math range error");
	c->out->type = PCM_NUM_FLOAT;
	c->out->f = r;
	return 0;
}

/* The arguments the table marks as integers are integers, as Python's integer functions require. */
static int check_int_args(struct call *c)
{
	for (unsigned k = 0; k < c->n; k++) {
		if (((c->fn->int_args >> k) & 1u) && !is_int(&c->a[k]))
			return fail(c, "a float cannot be interpreted as an integer");
	}
	return 0;
}

/* A float to Python's int, truncated toward zero. */
static int float_to_int(struct call *c, double f)
{
	if (isnan(f))
		return fail(c, "cannot convert float NaN to integer");
	if (isinf(f))
		return fail(c, "cannot convert float infinity to integer");
	if (f <= -0x1p127 || f >= 0x1p127)
		return fail(c, "the integer result is out of 64-bit range");
	return put_int(c, (wide)f);
}

/* Float functions of math --------------------------------------------------- */

static int call_f1(struct call *c)
{
	return put_float(c, c->fn->f1(as_float(&c->a[0])));
}

static int call_f2(struct call *c)
{
	return put_float(c, c->fn->f2(as_float(&c->a[0]), as_float(&c->a[1])));
}

static double degrees(double x)
{
	return x * (180.0 / M_PI);
}

static double radians(double x)
{
	return x * (M_PI / 180.0);
}

static double ulp(double x)
{
	x = fabs(x);
	if (!isfinite(x))
		return x;
	if (x == DBL_MAX)
		return x - nextafter(x, 0.0);
	return nextafter(x, INFINITY) - x;
}

static double gamma_fn(double x)
{
	/* Python: a pole (zero or a negative integer) is a domain error */
	return x <= 0.0 && x == floor(x) ? NAN : tgamma(x);
}

static double lgamma_fn(double x)
{
	return x <= 0.0 && x == floor(x) ? NAN : lgamma(x);
}

static double log_fn(double x)
{
	return x <= 0.0 ? NAN : log(x);
}

static double log2_fn(double x)
{
	return x <= 0.0 ? NAN : log2(x);
}

static double log10_fn(double x)
{
	return x <= 0.0 ? NAN : log10(x);
}

static double log1p_fn(double x)
{
	return x <= -1.0 ? NAN : log1p(x);
}

static double atanh_fn(double x)
{
	return fabs(x) >= 1.0 ? NAN : atanh(x);
}

static int call_log(struct call *c)
{
	double x = as_float(&c->a[0]), b;

	if (c->n == 1)
		return put_float(c, log_fn(x));
	b = as_float(&c->a[1]);
	if (log_fn(b) == 0.0)
		return fail(c, "float division by zero");
	return put_float(c, log_fn(x) / log_fn(b));
}

static int call_hypot(struct call *c)
{
	double r = 0.0;

	for (unsigned k = 0; k < c->n; k++)
		r = hypot(r, as_float(&c->a[k]));
	return put_float(c, r);
}

static int call_ldexp(struct call *c)
{
	wide e = as_wide(&c->a[1]);

	e = e > 100000 ? 100000 : e < -100000 ? -100000 : e;
	return put_float(c, ldexp(as_float(&c->a[0]), (int)e));
}

static int call_isclose(struct call *c)
{
	double a = as_float(&c->a[0]), b = as_float(&c->a[1]);

	/* Python's defaults: rel_tol 1e-09, abs_tol 0 */
	if (a == b)
		return put_bool(c, true);
	if (isinf(a) || isinf(b))
		return put_bool(c, false);
	return put_bool(c, fabs(a - b) <= 1e-09 * fmax(fabs(a), fabs(b)));
}

static int call_isfinite(struct call *c)
{
	return put_bool(c, isfinite(as_float(&c->a[0])));
}

static int call_isinf(struct call *c)
{
	return put_bool(c, isinf(as_float(&c->a[0])));
}

static int call_isnan(struct call *c)
{
	return put_bool(c, isnan(as_float(&c->a[0])));
}

/* Rounding and conversion ----------------------------------------------------- */

/* floor(), ceil(), trunc() and int(): an integer stays; a float is rounded to Python's int. */
static int call_to_int(struct call *c)
{
	double (*round_fn)(double) = c->fn->f1 ? c->fn->f1 : trunc;

	if (is_int(&c->a[0]))
		return put_int(c, as_wide(&c->a[0]));
	return float_to_int(c, round_fn(c->a[0].f));
}

static int call_float(struct call *c)
{
	return put_float(c, as_float(&c->a[0]));
}

static int call_bool(struct call *c)
{
	return put_bool(c, is_int(&c->a[0]) ? as_wide(&c->a[0]) != 0 : c->a[0].f != 0.0);
}

static int call_abs(struct call *c)
{
	if (is_int(&c->a[0])) {
		wide v = as_wide(&c->a[0]);

		return put_int(c, v < 0 ? -v : v);
	}
	return put_float(c, fabs(c->a[0].f));
}

/* 10^k as an integer, k in 0..38. */
static wide pow10_wide(unsigned k)
{
	wide r = 1;

	while (k--)
		r *= 10;
	return r;
}

/* An integer rounded to a multiple of 10^-ndigits, half to even (ndigits < 0). */
static int round_int(struct call *c, wide v, wide ndigits)
{
	wide unit, q, r;

	if (ndigits >= 0)
		return put_int(c, v);
	if (ndigits < -38)
		return put_int(c, 0);
	unit = pow10_wide((unsigned)-ndigits);
	q = v / unit;
	r = v % unit;
	if (r < 0) {
		r += unit;
		q--;
	}
	if (2 * r > unit || (2 * r == unit && (q & 1)))
		q++;
	return put_int(c, q * unit);
}

/* round(x) and round(x, ndigits): half to even; an integer result without ndigits. */
static int call_round(struct call *c)
{
	wide nd = c->n == 2 ? as_wide(&c->a[1]) : 0;
	double x, scale, y;

	if (is_int(&c->a[0]))
		return round_int(c, as_wide(&c->a[0]), nd);
	x = c->a[0].f;
	if (c->n == 1)
		return float_to_int(c, nearbyint(x));
	if (!isfinite(x) || nd > 323)
		return put_float(c, x);
	if (nd < -308)
		return put_float(c, copysign(0.0, x));
	if (nd >= 0) {
		/* printf rounds the exact binary value half to even, as Python's round does */
		char buf[720];

		snprintf(buf, sizeof(buf), "%.*f", (int)nd, x);
		return put_float(c, strtod(buf, NULL));
	}
	scale = pow(10.0, (double)-nd);
	y = nearbyint(x / scale) * scale;
	return put_float(c, isfinite(y) ? y : x);
}

/* min() and max(): the first of the least (greatest) arguments, unchanged, as Python returns it. */
static int compare_num(const struct pcm_num *a, const struct pcm_num *b)
{
	if (is_int(a) && is_int(b)) {
		wide x = as_wide(a), y = as_wide(b);

		return (x > y) - (x < y);
	}
	return (as_float(a) > as_float(b)) - (as_float(a) < as_float(b));
}

static int call_min_max(struct call *c)
{
	bool want_max = c->fn->name[1] == 'a';
	unsigned best = 0;

	for (unsigned k = 1; k < c->n; k++) {
		int cmp = compare_num(&c->a[k], &c->a[best]);

		if (want_max ? cmp > 0 : cmp < 0)
			best = k;
	}
	*c->out = c->a[best];
	return 0;
}

/*
 * pow(): math's, which the SDK's scope puts over the built-in: always a
 * float; 0.0 to a negative power and a negative number to a fractional
 * one are domain errors, as in Python.
 */
static int call_pow(struct call *c)
{
	double x = as_float(&c->a[0]), y = as_float(&c->a[1]);

	if ((x == 0.0 && y < 0.0) || (x < 0.0 && isfinite(y) && y != floor(y)))
		return fail(c, "math domain error");
	return put_float(c, pow(x, y));
}

/* Integer functions of math ------------------------------------------------- */

static wide gcd_wide(wide a, wide b)
{
	a = a < 0 ? -a : a;
	b = b < 0 ? -b : b;
	while (b) {
		wide t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static int call_gcd_lcm(struct call *c)
{
	bool lcm = c->fn->name[0] == 'l';
	wide r = lcm ? 1 : 0;

	for (unsigned k = 0; k < c->n; k++) {
		wide v = as_wide(&c->a[k]);

		if (!lcm) {
			r = gcd_wide(r, v);
		} else if (v == 0 || r == 0) {
			r = 0;
		} else {
			v = v < 0 ? -v : v;
			if (__builtin_mul_overflow(r / gcd_wide(r, v), v, &r) || r > (wide)UINT64_MAX)
				return fail(c, "the integer result is out of 64-bit range");
		}
	}
	return put_int(c, r);
}

static int call_isqrt(struct call *c)
{
	wide n = as_wide(&c->a[0]), r;

	if (n < 0)
		return fail(c, "isqrt() argument must be nonnegative");
	r = (wide)sqrtl((long double)n);
	while (r * r > n)
		r--;
	while ((r + 1) * (r + 1) <= n)
		r++;
	return put_int(c, r);
}

/* n! / (n-k)!, divided by k! for comb(); every step checked against 64 bits. */
static int falling(struct call *c, wide n, wide k, bool divide)
{
	wide r = 1;

	if (divide && k > n - k)
		k = n - k;
	for (wide i = 0; i < k; i++) {
		if (__builtin_mul_overflow(r, n - i, &r))
			return fail(c, "the integer result is out of 64-bit range");
		if (divide)
			r /= i + 1;
		if (r > (wide)UINT64_MAX) /* the partial results only grow */
			return fail(c, "the integer result is out of 64-bit range");
	}
	return put_int(c, r);
}

static int call_factorial(struct call *c)
{
	wide n = as_wide(&c->a[0]);

	if (n < 0)
		return fail(c, "factorial() not defined for negative values");
	return falling(c, n, n, false);
}

static int call_comb_perm(struct call *c)
{
	bool comb = c->fn->name[0] == 'c';
	wide n = as_wide(&c->a[0]);
	wide k = c->n == 2 ? as_wide(&c->a[1]) : n;

	if (n < 0 || k < 0)
		return fail(c, "n and k must be non-negative integers");
	if (k > n)
		return put_int(c, 0);
	return falling(c, n, k, comb);
}

/* The table ------------------------------------------------------------------- */

#define F1(name, fn) { name, 1, 1, 0, call_f1, fn, NULL, NULL }
#define F2(name, fn) { name, 2, 2, 0, call_f2, NULL, fn, NULL }
#define TUPLE(name, n) { name, n, n, 0, NULL, NULL, NULL, "returns a tuple, which a spec value cannot hold" }
#define ITERABLE(name) { name, 1, 2, 0, NULL, NULL, NULL, "takes an iterable; !eval has no lists" }

static const struct pcm_expr_fn functions[] = {
	/* Python's numeric built-ins */
	{ "abs", 1, 1, 0, call_abs, NULL, NULL, NULL },
	{ "bool", 1, 1, 0, call_bool, NULL, NULL, NULL },
	{ "float", 1, 1, 0, call_float, NULL, NULL, NULL },
	{ "int", 1, 1, 0, call_to_int, NULL, NULL, NULL },
	{ "max", 2, ANY, 0, call_min_max, NULL, NULL, NULL },
	{ "min", 2, ANY, 0, call_min_max, NULL, NULL, NULL },
	{ "round", 1, 2, 0x2, call_round, NULL, NULL, NULL },
	TUPLE("divmod", 2),
	ITERABLE("sum"),
	/* math */
	F1("acos", acos),
	F1("acosh", acosh),
	F1("asin", asin),
	F1("asinh", asinh),
	F1("atan", atan),
	F2("atan2", atan2),
	F1("atanh", atanh_fn),
	F1("cbrt", cbrt),
	{ "ceil", 1, 1, 0, call_to_int, ceil, NULL, NULL },
	{ "comb", 2, 2, 0x3, call_comb_perm, NULL, NULL, NULL },
	F2("copysign", copysign),
	F1("cos", cos),
	F1("cosh", cosh),
	F1("degrees", degrees),
	ITERABLE("dist"),
	F1("erf", erf),
	F1("erfc", erfc),
	F1("exp", exp),
	F1("exp2", exp2),
	F1("expm1", expm1),
	F1("fabs", fabs),
	{ "factorial", 1, 1, 0x1, call_factorial, NULL, NULL, NULL },
	{ "floor", 1, 1, 0, call_to_int, floor, NULL, NULL },
	F2("fmod", fmod),
	TUPLE("frexp", 1),
	ITERABLE("fsum"),
	F1("gamma", gamma_fn),
	{ "gcd", 0, ANY, ALL_INT, call_gcd_lcm, NULL, NULL, NULL },
	{ "hypot", 0, ANY, 0, call_hypot, NULL, NULL, NULL },
	{ "isclose", 2, 2, 0, call_isclose, NULL, NULL, NULL },
	{ "isfinite", 1, 1, 0, call_isfinite, NULL, NULL, NULL },
	{ "isinf", 1, 1, 0, call_isinf, NULL, NULL, NULL },
	{ "isnan", 1, 1, 0, call_isnan, NULL, NULL, NULL },
	{ "isqrt", 1, 1, 0x1, call_isqrt, NULL, NULL, NULL },
	{ "lcm", 0, ANY, ALL_INT, call_gcd_lcm, NULL, NULL, NULL },
	{ "ldexp", 2, 2, 0x2, call_ldexp, NULL, NULL, NULL },
	F1("lgamma", lgamma_fn),
	{ "log", 1, 2, 0, call_log, NULL, NULL, NULL },
	F1("log10", log10_fn),
	F1("log1p", log1p_fn),
	F1("log2", log2_fn),
	TUPLE("modf", 1),
	F2("nextafter", nextafter),
	{ "perm", 1, 2, 0x3, call_comb_perm, NULL, NULL, NULL },
	{ "pow", 2, 2, 0, call_pow, NULL, NULL, NULL },
	ITERABLE("prod"),
	F1("radians", radians),
	F2("remainder", remainder),
	F1("sin", sin),
	F1("sinh", sinh),
	F1("sqrt", sqrt),
	F1("tan", tan),
	F1("tanh", tanh),
	{ "trunc", 1, 1, 0, call_to_int, trunc, NULL, NULL },
	F1("ulp", ulp),
	/* C's, for specs written for C */
	F2("fmax", fmax),
	F2("fmin", fmin),
};

const struct pcm_expr_fn *pcm_expr_fn_find(const char *name, size_t len)
{
	for (size_t k = 0; k < ARRAY_LEN(functions); k++) {
		if (strlen(functions[k].name) == len && memcmp(functions[k].name, name, len) == 0)
			return &functions[k];
	}
	return NULL;
}

const char *pcm_expr_fn_name(const struct pcm_expr_fn *fn)
{
	return fn->name;
}

int pcm_expr_fn_check(const struct pcm_expr_fn *fn, unsigned n, char *msg, size_t size)
{
	if (fn->unsupported)
		snprintf(msg, size, "%s() %s", fn->name, fn->unsupported);
	else if (n > PCM_EXPR_MAX_ARGS)
		snprintf(msg, size, "too many arguments to %s() (at most %d)", fn->name,
			 PCM_EXPR_MAX_ARGS);
	else if (fn->min_args == fn->max_args && n != fn->min_args)
		snprintf(msg, size, "%s() takes %u argument%s, not %u", fn->name, fn->min_args,
			 fn->min_args == 1 ? "" : "s", n);
	else if (n < fn->min_args)
		snprintf(msg, size, "%s() takes at least %u argument%s, not %u", fn->name,
			 fn->min_args, fn->min_args == 1 ? "" : "s", n);
	else if (n > fn->max_args)
		snprintf(msg, size, "%s() takes at most %u arguments, not %u", fn->name,
			 fn->max_args, n);
	else
		return 0;
	return -EINVAL;
}

int pcm_expr_fn_call(const struct pcm_expr_fn *fn, const struct pcm_num *args, unsigned n,
		     struct pcm_num *out, char *msg, size_t size)
{
	struct call c = { .fn = fn, .a = args, .n = n, .out = out, .msg = msg, .size = size };
	int ret = check_int_args(&c);

	return ret ? ret : fn->call(&c);
}

int pcm_expr_fn_constant(const char *name, size_t len, struct pcm_num *out)
{
	static const struct {
		const char *name;
		double value;
	} constants[] = {
		{ "pi", M_PI }, { "e", M_E }, { "tau", 2.0 * M_PI }, { "inf", INFINITY }, { "nan", NAN },
	};

	for (size_t k = 0; k < ARRAY_LEN(constants); k++) {
		if (strlen(constants[k].name) == len && memcmp(constants[k].name, name, len) == 0) {
			out->type = PCM_NUM_FLOAT;
			out->f = constants[k].value;
			return 0;
		}
	}
	return -ENOENT;
}
