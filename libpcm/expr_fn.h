/* SPDX-License-Identifier: MIT */
/*
 * expr_fn.h - private to libpcm: the functions and constants an `!eval`
 * expression may name, as the SDK's evaluator puts them in scope.
 *
 * The SDK's code generator (hac/codegen.py) evaluates `!eval` values with
 * Python's eval(), `math`'s names as globals over Python's built-ins and the
 * spec's constants as locals; pcm's evaluator (expr.c) reads C syntax and
 * calls these by name with Python's results: min() and max() return the
 * chosen argument unchanged, round(), int(), floor(), ceil(), trunc() and the
 * integer functions (gcd, lcm, isqrt, factorial, comb, perm) return integers,
 * pow() is math's (a float), round() rounds half to even, and a math domain
 * or range error is an error. Integers are
 * 64 bits wide (Python's are unbounded): a result outside int64 and uint64
 * is an error. C's fmin, fmax, MIN and MAX stay, for specs written for C.
 */
#ifndef PCM_EXPR_FN_H
#define PCM_EXPR_FN_H

#include <stddef.h>

#include "pcm/spec.h"

#define PCM_EXPR_MAX_ARGS 16 /* arguments of one call (min, max, gcd, hypot take any number) */
#define PCM_EXPR_FN_MSG_MAX 120

struct pcm_expr_fn;

/* The function @name (@len bytes, not NUL-terminated), or NULL. */
const struct pcm_expr_fn *pcm_expr_fn_find(const char *name, size_t len);

const char *pcm_expr_fn_name(const struct pcm_expr_fn *fn);

/*
 * pcm_expr_fn_check() - may @fn be called with @n arguments here?
 * Return: 0, or -EINVAL with the reason in @msg (a wrong count, or a
 * function whose arguments or result need Python's lists or tuples).
 */
int pcm_expr_fn_check(const struct pcm_expr_fn *fn, unsigned n, char *msg, size_t size);

/*
 * pcm_expr_fn_call() - call @fn on @args (a count pcm_expr_fn_check() took).
 * Return: 0 with the result in @out, or -EDOM with Python's complaint in @msg
 * (a math domain or range error, a float where an integer is needed, a
 * result out of 64-bit range).
 */
int pcm_expr_fn_call(const struct pcm_expr_fn *fn, const struct pcm_num *args, unsigned n,
		     struct pcm_num *out, char *msg, size_t size);

/* math's constants (pi, e, tau, inf, nan). Return: 0, or -ENOENT. */
int pcm_expr_fn_constant(const char *name, size_t len, struct pcm_num *out);

#endif /* PCM_EXPR_FN_H */
