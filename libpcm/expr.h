/* SPDX-License-Identifier: MIT */
/*
 * expr.h - private to libpcm: the C constant-expression evaluator behind
 * `!eval "<expr>"` spec values, and the number/identifier rules that plain
 * spec values share with it.
 *
 * The evaluator follows C: 64-bit signed and unsigned integers with C's usual
 * arithmetic conversions, doubles, casts, and the functions of expr_fn.h
 * (Python's built-ins and math, with Python's results, as the SDK). What C
 * leaves undefined (signed overflow, division by zero, out-of-range shifts and
 * float-to-integer conversions) is an error here, except in operands C would
 * not evaluate (the unused arm of ?:, the right side of a decided && or ||).
 * The one exception is the SDK's: `/` between integers is true division, an
 * integer when exact and a double otherwise. Generated headers carry the
 * values computed here, never the expression text.
 */
#ifndef PCM_EXPR_H
#define PCM_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "pcm/spec.h"

#define PCM_EXPR_MAX_LEN 4096 /* characters of expression text */
#define PCM_EXPR_MAX_DEPTH 64 /* nested parentheses, unary operators and ?: */
#define PCM_EXPR_MSG_MAX 160

/* Why an expression was rejected, and where: @col is 1-based within the text. */
struct pcm_expr_error {
	unsigned col;
	char msg[PCM_EXPR_MSG_MAX];
};

/*
 * Resolves an identifier that is not a function or a type name. @name is not
 * NUL-terminated. Returns 0 and fills @out, -ENOENT for an unknown name, or
 * another negative errno, which stops the evaluation and is returned as is
 * (the spec loader uses -EAGAIN for a constant it has not evaluated yet).
 */
typedef int (*pcm_expr_lookup_fn)(void *ctx, const char *name, size_t len, struct pcm_num *out);

/**
 * pcm_expr_eval() - evaluate a C constant expression.
 * @text: the expression; need not be NUL-terminated.
 * @len: its length; at most PCM_EXPR_MAX_LEN.
 * @lookup: resolves names; may be NULL when no names are allowed.
 * @ctx: passed to @lookup.
 * @out: the value, typed by C's rules (int, unsigned or double).
 * @err: on -EINVAL, the reason and its column.
 *
 * Return: 0, -EINVAL for a bad or undefined expression, -ENOMEM, or what
 * @lookup returned other than 0 and -ENOENT.
 */
int pcm_expr_eval(const char *text, size_t len, pcm_expr_lookup_fn lookup, void *ctx,
		  struct pcm_num *out, struct pcm_expr_error *err);

/**
 * pcm_number_parse() - parse a plain spec value that is one C numeric literal,
 * optionally signed: "4096", "0x10", "1.5e3", "-2", "100u".
 * @text: the literal; need not be NUL-terminated.
 * @len: its length.
 * @out: the value. A leading '-' makes an integer signed when it fits.
 *
 * Return: 0, -EINVAL when @text is not a number, -ERANGE when it does not fit.
 */
int pcm_number_parse(const char *text, size_t len, struct pcm_num *out);

/**
 * pcm_num_convert() - convert a value exactly to @type, as a spec field's type demands.
 * @num: the value, converted in place on success.
 * @type: the wanted type.
 *
 * Integers convert to float even when that rounds. A float converts to an
 * integer type only when it is integral and in range.
 *
 * Return: 0, -EDOM when a float is not integral, -ERANGE when out of range
 * (including a negative value for uint).
 */
int pcm_num_convert(struct pcm_num *num, enum pcm_num_type type);

/**
 * pcm_num_format() - write a value as decimal text, for messages.
 * @num: the value.
 * @buf: the destination.
 * @size: its size.
 */
void pcm_num_format(const struct pcm_num *num, char *buf, size_t size);

/**
 * pcm_expr_builtin() - the value of a name pcm.h defines for use in specs:
 * PCM_SIG_NO_TRIGGER, PCM_SIG_REARM and PCM_RATE_ONE.
 *
 * Return: 0, -ENOENT for another name.
 */
int pcm_expr_builtin(const char *name, size_t len, struct pcm_num *out);

/* Whether @text[0..len) is a C identifier. */
bool pcm_is_identifier(const char *text, size_t len);

/* The spec spelling of a number type: "uint", "int", "float". */
const char *pcm_num_type_name(enum pcm_num_type type);

/* Name tables (names.c). A kind selects one of the enums of pcm.h. */
enum pcm_name_kind {
	PCM_NAMES_SIGNAL,
	PCM_NAMES_CONTROL,
	PCM_NAMES_ACCUM,
	PCM_NAMES_TRIGGER, /* RAW, DELTA, MAGNITUDE; NONE is not a spec spelling */
	PCM_NAMES_TRIGGER_OP,
};

/**
 * pcm_name_lookup() - map a spec spelling ("PCM_SIG_ACK", ">=") to its enum value.
 * @kind: which table.
 * @text: NUL-terminated spelling.
 * @value: set to the enum value.
 *
 * Return: 0, -ENOENT when @text is not in the table.
 */
int pcm_name_lookup(enum pcm_name_kind kind, const char *text, unsigned *value);

/* The spelling closest to @text by edit distance, if close enough to suggest; else NULL. */
const char *pcm_name_closest(enum pcm_name_kind kind, const char *text);

/* Like pcm_name_closest(), among @n caller-given @spellings (spec keys, say). */
const char *pcm_closest_spelling(const char *const *spellings, unsigned n, const char *text);

/* Writes the table's spellings as "A, B, C" into @buf (truncated to @size). */
void pcm_name_list(enum pcm_name_kind kind, char *buf, size_t size);

/* Whether @name is one of the @n strings of @list. */
bool pcm_in_list(const char *const *list, size_t n, const char *name);

/* Whether @name starts with @prefix. */
bool pcm_has_prefix(const char *name, const char *prefix);

#endif /* PCM_EXPR_H */
