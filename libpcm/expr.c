// SPDX-License-Identifier: MIT
/*
 * expr.c - evaluate the C constant expressions of `!eval` spec values.
 *
 * A recursive-descent parser that evaluates as it parses; no tree is built.
 * Recursion is bounded: every path that can nest (parentheses, casts, unary
 * operators, ?: arms, call arguments) passes through enter(), which stops at
 * PCM_EXPR_MAX_DEPTH, and binary operators nest at most once per precedence
 * level. Operands that C would not evaluate are parsed in "skip" mode, where
 * undefined operations yield 0 instead of an error, as a C compiler folding
 * the same expression would allow.
 *
 * Types follow C on LP64: a literal without a suffix is a 32-bit int when it
 * fits (so `1 << 40` overflows, as it does in C), names are 64-bit pcm_uint,
 * pcm_int or double values, and the usual arithmetic conversions combine them.
 * One operator follows the SDK instead of C: `/` between integers is true
 * division, as in the SDK's Python evaluator, so an inexact quotient is a
 * double (`7 / 2` is 3.5, `8 / 2` is the integer 4). pcmc emits the values
 * this computes, never the expression text, so C's reading of the text never
 * matters.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strtod_l() */
#endif
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "expr_fn.h"

enum tok_kind {
	TOK_END,
	TOK_NUM,
	TOK_IDENT,
	TOK_PUNCT,
};

enum op {
	OP_LPAREN,
	OP_RPAREN,
	OP_COMMA,
	OP_QUESTION,
	OP_COLON,
	OP_NOT,
	OP_BITNOT,
	OP_MUL,
	OP_DIV,
	OP_MOD,
	OP_ADD,
	OP_SUB,
	OP_SHL,
	OP_SHR,
	OP_LT,
	OP_GT,
	OP_LE,
	OP_GE,
	OP_EQ,
	OP_NE,
	OP_BITAND,
	OP_BITXOR,
	OP_BITOR,
	OP_AND,
	OP_OR,
};

struct punct {
	const char *text;
	enum op op;
};

/* Two-character operators come first: the lexer takes the first match. */
static const struct punct puncts[] = {
	{ "<<", OP_SHL },	{ ">>", OP_SHR },     { "<=", OP_LE },	  { ">=", OP_GE },
	{ "==", OP_EQ },	{ "!=", OP_NE },      { "&&", OP_AND },	  { "||", OP_OR },
	{ "(", OP_LPAREN },	{ ")", OP_RPAREN },   { ",", OP_COMMA },  { "?", OP_QUESTION },
	{ ":", OP_COLON },	{ "!", OP_NOT },      { "~", OP_BITNOT }, { "*", OP_MUL },
	{ "/", OP_DIV },	{ "%", OP_MOD },      { "+", OP_ADD },	  { "-", OP_SUB },
	{ "<", OP_LT },		{ ">", OP_GT },	      { "&", OP_BITAND }, { "^", OP_BITXOR },
	{ "|", OP_BITOR },
};

/*
 * A value being computed. @narrow marks C's 32-bit int and unsigned int, the
 * types of small unsuffixed literals; otherwise integers are 64 bits wide.
 * A narrow int is kept in num.i, a narrow unsigned in num.u.
 */
struct value {
	struct pcm_num num;
	bool narrow;
};

struct token {
	enum tok_kind kind;
	enum op op; /* TOK_PUNCT */
	size_t start; /* offset in the text */
	size_t len;
	struct value val; /* TOK_NUM */
};

struct parser {
	const char *text;
	size_t len;
	size_t pos; /* where the next token starts */
	struct token tok;
	unsigned depth;
	unsigned skip; /* > 0 inside an operand C would not evaluate */
	pcm_expr_lookup_fn lookup;
	void *ctx;
	struct pcm_expr_error *err;
};

struct cast_type {
	const char *name;
	enum pcm_num_type type;
};

static const struct cast_type cast_types[] = {
	{ "pcm_uint", PCM_NUM_UINT }, { "uint64_t", PCM_NUM_UINT }, { "pcm_int", PCM_NUM_INT },
	{ "int64_t", PCM_NUM_INT },   { "pcm_float", PCM_NUM_FLOAT }, { "double", PCM_NUM_FLOAT },
};

/* C's MIN and MAX macros: the result has the operands' common type. */
static const char *const c_min_max[] = { "MIN", "MAX" };

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TWO_POW_63 9223372036854775808.0
#define TWO_POW_64 18446744073709551616.0
#define NARROW_UINT_MAX 0xffffffffu
#define NARROW_HINT " (unsuffixed literals are 32-bit ints in C: write 1ull or cast to (pcm_uint))"

static int parse_conditional(struct parser *p, struct value *out);
static int parse_unary(struct parser *p, struct value *out);

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || is_digit(c);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool pcm_is_identifier(const char *text, size_t len)
{
	if (len == 0 || !is_ident_start(text[0]))
		return false;
	for (size_t i = 1; i < len; i++) {
		if (!is_ident_char(text[i]))
			return false;
	}
	return true;
}

const char *pcm_num_type_name(enum pcm_num_type type)
{
	switch (type) {
	case PCM_NUM_UINT:
		return "uint";
	case PCM_NUM_INT:
		return "int";
	case PCM_NUM_FLOAT:
		return "float";
	}
	return "?";
}

static bool name_is(const char *name, size_t len, const char *literal)
{
	return strlen(literal) == len && memcmp(name, literal, len) == 0;
}

int pcm_expr_builtin(const char *name, size_t len, struct pcm_num *out)
{
	out->type = PCM_NUM_UINT;
	if (name_is(name, len, "PCM_SIG_NO_TRIGGER"))
		out->u = PCM_SIG_NO_TRIGGER;
	else if (name_is(name, len, "PCM_SIG_REARM"))
		out->u = PCM_SIG_REARM;
	else if (name_is(name, len, "PCM_RATE_ONE"))
		out->u = PCM_RATE_ONE;
	else
		return -ENOENT;
	return 0;
}

void pcm_num_format(const struct pcm_num *num, char *buf, size_t size)
{
	switch (num->type) {
	case PCM_NUM_UINT:
		snprintf(buf, size, "%" PRIu64, num->u);
		break;
	case PCM_NUM_INT:
		snprintf(buf, size, "%" PRId64, num->i);
		break;
	case PCM_NUM_FLOAT:
		snprintf(buf, size, "%.15g", num->f);
		break;
	}
}

static int float_to_uint_exact(double f, uint64_t *out)
{
	if (!isfinite(f) || f < 0 || f >= TWO_POW_64)
		return isnan(f) ? -EDOM : -ERANGE;
	if (f != trunc(f))
		return -EDOM;
	*out = (uint64_t)f;
	return 0;
}

static int float_to_int_exact(double f, int64_t *out)
{
	if (!isfinite(f) || f < -TWO_POW_63 || f >= TWO_POW_63)
		return isnan(f) ? -EDOM : -ERANGE;
	if (f != trunc(f))
		return -EDOM;
	*out = (int64_t)f;
	return 0;
}

int pcm_num_convert(struct pcm_num *num, enum pcm_num_type type)
{
	struct pcm_num v = { .type = type };
	int ret = 0;

	if (num->type == type)
		return 0;
	switch (type) {
	case PCM_NUM_FLOAT:
		v.f = num->type == PCM_NUM_UINT ? (double)num->u : (double)num->i;
		break;
	case PCM_NUM_UINT:
		if (num->type == PCM_NUM_INT) {
			if (num->i < 0)
				return -ERANGE;
			v.u = (uint64_t)num->i;
		} else {
			ret = float_to_uint_exact(num->f, &v.u);
		}
		break;
	case PCM_NUM_INT:
		if (num->type == PCM_NUM_UINT) {
			if (num->u > (uint64_t)INT64_MAX)
				return -ERANGE;
			v.i = (int64_t)num->u;
		} else {
			ret = float_to_int_exact(num->f, &v.i);
		}
		break;
	}
	if (ret == 0)
		*num = v;
	return ret;
}

/* Numeric literals ------------------------------------------------------- */

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

struct int_suffix {
	bool is_unsigned;
	bool is_long; /* l, L, ll or LL */
};

/* An integer suffix: at most one u/U and one l/L/ll/LL, in either order. */
static int parse_int_suffix(const char *s, size_t len, struct int_suffix *suffix)
{
	size_t i = 0;

	suffix->is_unsigned = false;
	suffix->is_long = false;
	while (i < len) {
		char c = s[i++];

		if ((c == 'u' || c == 'U') && !suffix->is_unsigned) {
			suffix->is_unsigned = true;
		} else if ((c == 'l' || c == 'L') && !suffix->is_long) {
			suffix->is_long = true;
			if (i < len && s[i] == c)
				i++;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The type C gives an integer literal on LP64: the first of int, unsigned int
 * (not for unsuffixed decimals), long, unsigned long that holds the value,
 * skipping the unsigned ones without u and the 32-bit ones with l. A decimal
 * too large for long becomes unsigned long, as GCC does.
 */
static void type_int_literal(uint64_t v, bool decimal, const struct int_suffix *suffix,
			     struct value *out)
{
	bool may_be_signed = !suffix->is_unsigned;
	bool may_be_unsigned = suffix->is_unsigned || !decimal;

	out->narrow = !suffix->is_long;
	if (out->narrow && may_be_signed && v <= INT32_MAX) {
		out->num.type = PCM_NUM_INT;
		out->num.i = (int64_t)v;
		return;
	}
	if (!(out->narrow && may_be_unsigned && v <= NARROW_UINT_MAX))
		out->narrow = false;
	if (!out->narrow && may_be_signed && v <= (uint64_t)INT64_MAX) {
		out->num.type = PCM_NUM_INT;
		out->num.i = (int64_t)v;
		return;
	}
	out->num.type = PCM_NUM_UINT;
	out->num.u = v;
}

/* C's integer literals: 0x hex, a leading 0 for octal, else decimal. */
static int parse_int_literal(const char *s, size_t len, struct value *out)
{
	unsigned base = 10;
	size_t i = 0, digits_start;
	uint64_t v = 0;
	bool too_large = false;
	struct int_suffix suffix;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len >= 1 && s[0] == '0') {
		base = 8;
	}
	digits_start = i;
	for (; i < len; i++) {
		int d = digit_value(s[i]);

		if (d < 0 || (unsigned)d >= base)
			break;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			too_large = true;
		else
			v = v * base + (unsigned)d;
	}
	if (i == digits_start || parse_int_suffix(s + i, len - i, &suffix))
		return -EINVAL;
	if (too_large)
		return -ERANGE;
	type_int_literal(v, base == 10, &suffix, out);
	return 0;
}

static size_t skip_digits(const char *s, size_t len, size_t i)
{
	while (i < len && is_digit(s[i]))
		i++;
	return i;
}

/* Decimal floating literals without suffix: 1.0, .5, 5., 1e-3, 2.5E+4. */
static int parse_float_literal(const char *s, size_t len, struct value *out)
{
	char buf[PCM_EXPR_MAX_LEN + 1];
	size_t i, mantissa_digits, exp_start;
	locale_t c_locale;
	double f;

	i = skip_digits(s, len, 0);
	mantissa_digits = i;
	if (i < len && s[i] == '.') {
		size_t frac_start = ++i;

		i = skip_digits(s, len, i);
		mantissa_digits += i - frac_start;
	}
	if (mantissa_digits == 0)
		return -EINVAL;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		exp_start = i;
		i = skip_digits(s, len, i);
		if (i == exp_start)
			return -EINVAL;
	}
	if (i != len || len > PCM_EXPR_MAX_LEN)
		return -EINVAL;

	memcpy(buf, s, len);
	buf[len] = '\0';
	/* The text is plain C; the process's locale must not change its meaning. */
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (!c_locale)
		return -ENOMEM;
	f = strtod_l(buf, NULL, c_locale);
	freelocale(c_locale);
	if (!isfinite(f))
		return -ERANGE;
	out->num.type = PCM_NUM_FLOAT;
	out->num.f = f;
	out->narrow = false;
	return 0;
}

static bool is_hex_prefixed(const char *s, size_t len)
{
	return len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

static bool looks_like_float(const char *s, size_t len)
{
	if (is_hex_prefixed(s, len))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			return true;
	}
	return false;
}

/* One unsigned C numeric literal, the whole of @s. */
static int parse_literal(const char *s, size_t len, struct value *out)
{
	if (looks_like_float(s, len))
		return parse_float_literal(s, len, out);
	return parse_int_literal(s, len, out);
}

static int negate_literal(struct pcm_num *num)
{
	switch (num->type) {
	case PCM_NUM_FLOAT:
		num->f = -num->f;
		return 0;
	case PCM_NUM_INT:
		num->i = -num->i; /* a literal is never negative, so this cannot overflow */
		return 0;
	case PCM_NUM_UINT:
		if (num->u > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		num->type = PCM_NUM_INT;
		num->i = num->u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)num->u;
		return 0;
	}
	return -EINVAL;
}

int pcm_number_parse(const char *text, size_t len, struct pcm_num *out)
{
	struct value val;
	bool negative = false;
	size_t i = 0;
	int ret;

	if (len > 0 && (text[0] == '-' || text[0] == '+')) {
		negative = text[0] == '-';
		i = 1;
	}
	if (i == len || !(is_digit(text[i]) || text[i] == '.'))
		return -EINVAL;
	ret = parse_literal(text + i, len - i, &val);
	if (ret == 0 && negative)
		ret = negate_literal(&val.num);
	if (ret == 0)
		*out = val.num;
	return ret;
}

/* Errors ------------------------------------------------------------------ */

static int fail_at(struct parser *p, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	p->err->col = (unsigned)pos + 1;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/*
 * An operation C leaves undefined. It is an error unless the operand is not
 * evaluated, in which case @out becomes zero (keeping its type) and parsing goes on.
 */
static int undefined_at(struct parser *p, size_t pos, struct value *out, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int undefined_at(struct parser *p, size_t pos, struct value *out, const char *fmt, ...)
{
	va_list ap;

	out->num.u = 0;
	if (out->num.type == PCM_NUM_FLOAT)
		out->num.f = 0.0;
	if (p->skip > 0)
		return 0;
	p->err->col = (unsigned)pos + 1;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The current token as messages show it. */
static void describe_token(const struct parser *p, char *buf, size_t size)
{
	const struct token *t = &p->tok;

	if (t->kind == TOK_END)
		snprintf(buf, size, "the end of the expression");
	else
		snprintf(buf, size, "'%.*s'", (int)MIN(t->len, (size_t)32), p->text + t->start);
}

static int fail_unexpected(struct parser *p, const char *wanted)
{
	char found[48];

	describe_token(p, found, sizeof(found));
	return fail_at(p, p->tok.start, "expected %s but found %s", wanted, found);
}

/* Lexer ------------------------------------------------------------------- */

static bool is_exponent_mark(char c)
{
	return c == 'e' || c == 'E' || c == 'p' || c == 'P';
}

/* A C preprocessing number: a digit (or '.' digit), then letters, digits, '.', and e+/e-. */
static size_t scan_pp_number(const char *s, size_t len, size_t i)
{
	while (i < len) {
		char c = s[i];
		bool sign = (c == '+' || c == '-') && is_exponent_mark(s[i - 1]);

		if (!is_ident_char(c) && c != '.' && !sign)
			break;
		i++;
	}
	return i;
}

static int lex_number(struct parser *p, size_t start)
{
	size_t end = scan_pp_number(p->text, p->len, start);
	size_t len = end - start;
	int ret = parse_literal(p->text + start, len, &p->tok.val);
	int shown = (int)MIN(len, (size_t)40);

	if (ret == -EINVAL)
		return fail_at(p, start, "bad number '%.*s'", shown, p->text + start);
	if (ret == -ERANGE)
		return fail_at(p, start, "number '%.*s' is too large", shown, p->text + start);
	if (ret)
		return ret;
	p->tok.kind = TOK_NUM;
	p->tok.len = len;
	p->pos = end;
	return 0;
}

static int lex_punct(struct parser *p, size_t start)
{
	size_t left = p->len - start;
	unsigned char c = (unsigned char)p->text[start];

	for (size_t k = 0; k < ARRAY_LEN(puncts); k++) {
		size_t n = strlen(puncts[k].text);

		if (n <= left && memcmp(p->text + start, puncts[k].text, n) == 0) {
			p->tok.kind = TOK_PUNCT;
			p->tok.op = puncts[k].op;
			p->tok.len = n;
			p->pos = start + n;
			return 0;
		}
	}
	if (c >= 0x20 && c < 0x7f)
		return fail_at(p, start, "unexpected character '%c'", c);
	return fail_at(p, start, "unexpected byte 0x%02x", c);
}

static int lex(struct parser *p)
{
	const char *s = p->text;
	size_t i = p->pos;

	while (i < p->len && is_space(s[i]))
		i++;
	p->tok.start = i;
	p->tok.len = 0;
	if (i == p->len) {
		p->tok.kind = TOK_END;
		p->pos = i;
		return 0;
	}
	if (is_ident_start(s[i])) {
		size_t end = i + 1;

		while (end < p->len && is_ident_char(s[end]))
			end++;
		p->tok.kind = TOK_IDENT;
		p->tok.len = end - i;
		p->pos = end;
		return 0;
	}
	if (is_digit(s[i]) || (s[i] == '.' && i + 1 < p->len && is_digit(s[i + 1])))
		return lex_number(p, i);
	return lex_punct(p, i);
}

static bool tok_is(const struct parser *p, enum op op)
{
	return p->tok.kind == TOK_PUNCT && p->tok.op == op;
}

static int enter(struct parser *p)
{
	if (++p->depth > PCM_EXPR_MAX_DEPTH)
		return fail_at(p, p->tok.start, "expression nests deeper than %d levels",
			       PCM_EXPR_MAX_DEPTH);
	return 0;
}

/* Values ------------------------------------------------------------------ */

static bool is_true(const struct value *v)
{
	switch (v->num.type) {
	case PCM_NUM_UINT:
		return v->num.u != 0;
	case PCM_NUM_INT:
		return v->num.i != 0;
	case PCM_NUM_FLOAT:
		return v->num.f != 0.0;
	}
	return false;
}

static bool is_integer(const struct value *v)
{
	return v->num.type != PCM_NUM_FLOAT;
}

/*
 * C's usual arithmetic conversions on LP64. Between a 32-bit and a 64-bit
 * integer the 64-bit type wins, and long holds every unsigned int, so the
 * result is unsigned only when the 64-bit operand is.
 */
static struct value common_type(const struct value *a, const struct value *b)
{
	struct value t = { .num.type = PCM_NUM_INT };

	if (a->num.type == PCM_NUM_FLOAT || b->num.type == PCM_NUM_FLOAT) {
		t.num.type = PCM_NUM_FLOAT;
	} else if (a->narrow && b->narrow) {
		t.narrow = true;
		if (a->num.type == PCM_NUM_UINT || b->num.type == PCM_NUM_UINT)
			t.num.type = PCM_NUM_UINT;
	} else {
		const struct value *wide = a->narrow ? b : a;
		const struct value *other = a->narrow ? a : b;

		if (wide->num.type == PCM_NUM_UINT ||
		    (!other->narrow && other->num.type == PCM_NUM_UINT))
			t.num.type = PCM_NUM_UINT;
	}
	return t;
}

/* Converts @v to the type of @t (a common type, so never float to integer). */
static struct value promote(const struct value *v, const struct value *t)
{
	struct value r = *t;

	switch (t->num.type) {
	case PCM_NUM_FLOAT:
		r.num.f = v->num.type == PCM_NUM_FLOAT ? v->num.f
			  : v->num.type == PCM_NUM_UINT ? (double)v->num.u
							: (double)v->num.i;
		break;
	case PCM_NUM_INT:
		/* From int, or from an unsigned int into a 64-bit int: value kept. */
		r.num.i = v->num.type == PCM_NUM_INT ? v->num.i : (int64_t)v->num.u;
		break;
	case PCM_NUM_UINT:
		/* Modulo 2^32 or 2^64, as C converts to an unsigned type. */
		r.num.u = v->num.type == PCM_NUM_UINT ? v->num.u : (uint64_t)v->num.i;
		if (t->narrow)
			r.num.u &= NARROW_UINT_MAX;
		break;
	}
	return r;
}

/* C's int: the type of comparisons and logical operators. */
static struct value int_value(bool truth)
{
	struct value r = { .num.type = PCM_NUM_INT, .narrow = true };

	r.num.i = truth ? 1 : 0;
	return r;
}

static const char *op_text(enum op op)
{
	for (size_t k = 0; k < ARRAY_LEN(puncts); k++) {
		if (puncts[k].op == op)
			return puncts[k].text;
	}
	return "?";
}

static int require_integers(struct parser *p, const struct token *op, const struct value *a,
			    const struct value *b)
{
	if (is_integer(a) && (!b || is_integer(b)))
		return 0;
	return fail_at(p, op->start, "operands of '%s' must be integers", op_text(op->op));
}

static int overflow_at(struct parser *p, size_t pos, struct value *out, enum op op)
{
	if (out->narrow)
		return undefined_at(p, pos, out, "integer overflow in '%s'%s", op_text(op),
				    NARROW_HINT);
	return undefined_at(p, pos, out, "integer overflow in '%s'", op_text(op));
}

/* Signed arithmetic; 32-bit operands never overflow the 64-bit computation. */
static int arith_int(struct parser *p, const struct token *op, int64_t a, int64_t b,
		     struct value *out)
{
	int64_t r = 0, min = out->narrow ? INT32_MIN : INT64_MIN;
	int64_t max = out->narrow ? INT32_MAX : INT64_MAX;
	bool overflow = false;

	switch (op->op) {
	case OP_ADD:
		overflow = __builtin_add_overflow(a, b, &r);
		break;
	case OP_SUB:
		overflow = __builtin_sub_overflow(a, b, &r);
		break;
	case OP_MUL:
		overflow = __builtin_mul_overflow(a, b, &r);
		break;
	default: /* OP_DIV, OP_MOD */
		if (b == 0)
			return undefined_at(p, op->start, out, "%s by zero",
					    op->op == OP_DIV ? "division" : "modulo");
		if (a == min && b == -1)
			overflow = true;
		else
			r = op->op == OP_DIV ? a / b : a % b;
		break;
	}
	if (overflow || r < min || r > max)
		return overflow_at(p, op->start, out, op->op);
	out->num.i = r;
	return 0;
}

static int arith_uint(struct parser *p, const struct token *op, uint64_t a, uint64_t b,
		      struct value *out)
{
	switch (op->op) {
	case OP_ADD:
		out->num.u = a + b;
		break;
	case OP_SUB:
		out->num.u = a - b;
		break;
	case OP_MUL:
		out->num.u = a * b;
		break;
	default: /* OP_DIV, OP_MOD */
		if (b == 0)
			return undefined_at(p, op->start, out, "%s by zero",
					    op->op == OP_DIV ? "division" : "modulo");
		out->num.u = op->op == OP_DIV ? a / b : a % b;
		break;
	}
	if (out->narrow)
		out->num.u &= NARROW_UINT_MAX;
	return 0;
}

static int arith_float(struct parser *p, const struct token *op, double a, double b,
		       struct value *out)
{
	switch (op->op) {
	case OP_ADD:
		out->num.f = a + b;
		break;
	case OP_SUB:
		out->num.f = a - b;
		break;
	case OP_MUL:
		out->num.f = a * b;
		break;
	case OP_DIV:
		if (b == 0.0)
			return undefined_at(p, op->start, out, "division by zero");
		out->num.f = a / b;
		break;
	default:
		return fail_at(p, op->start, "operands of '%%' must be integers");
	}
	if (!isfinite(out->num.f))
		return undefined_at(p, op->start, out, "floating-point overflow in '%s'",
				    op_text(op->op));
	return 0;
}

/* Whether integer @x / @y has no remainder; a zero divisor is left to the C rules. */
static bool divides_exactly(const struct value *x, const struct value *y)
{
	if (x->num.type == PCM_NUM_INT)
		return y->num.i == 0 || y->num.i == -1 || x->num.i % y->num.i == 0;
	return y->num.u == 0 || x->num.u % y->num.u == 0;
}

static int apply_arith(struct parser *p, const struct token *op, struct value *a,
		       const struct value *b)
{
	struct value type = common_type(a, b);
	struct value x = promote(a, &type), y = promote(b, &type);

	/*
	 * The SDK evaluates spec values in Python, where / is true division, and
	 * its packages are written for that (12000000 / 1000000000000 is 1.2e-5,
	 * not 0): an integer quotient with a remainder is the double quotient.
	 */
	if (op->op == OP_DIV && type.num.type != PCM_NUM_FLOAT && !divides_exactly(&x, &y)) {
		type = (struct value){ .num.type = PCM_NUM_FLOAT };
		x = promote(&x, &type);
		y = promote(&y, &type);
	}
	*a = type;
	switch (type.num.type) {
	case PCM_NUM_INT:
		return arith_int(p, op, x.num.i, y.num.i, a);
	case PCM_NUM_UINT:
		return arith_uint(p, op, x.num.u, y.num.u, a);
	case PCM_NUM_FLOAT:
		break;
	}
	return arith_float(p, op, x.num.f, y.num.f, a);
}

/* << and >>: the result has the left operand's type, as in C. */
static int apply_shift(struct parser *p, const struct token *op, struct value *a,
		       const struct value *b)
{
	unsigned width = a->narrow ? 32 : 64;
	int64_t max = a->narrow ? INT32_MAX : INT64_MAX;
	uint64_t count;
	char shown[32];
	int ret = require_integers(p, op, a, b);

	if (ret)
		return ret;
	if (b->num.type == PCM_NUM_INT ? (b->num.i < 0 || b->num.i >= width) : b->num.u >= width) {
		pcm_num_format(&b->num, shown, sizeof(shown));
		return undefined_at(p, op->start, a, "shift count %s is out of range 0..%u%s",
				    shown, width - 1, a->narrow ? NARROW_HINT : "");
	}
	count = b->num.type == PCM_NUM_INT ? (uint64_t)b->num.i : b->num.u;
	if (a->num.type == PCM_NUM_UINT) {
		a->num.u = op->op == OP_SHL ? a->num.u << count : a->num.u >> count;
		if (a->narrow)
			a->num.u &= NARROW_UINT_MAX;
		return 0;
	}
	if (op->op == OP_SHR) {
		a->num.i >>= count;
		return 0;
	}
	if (a->num.i < 0)
		return undefined_at(p, op->start, a, "left shift of a negative value");
	if (a->num.i > (max >> count))
		return overflow_at(p, op->start, a, OP_SHL);
	a->num.i <<= count;
	return 0;
}

/* -1, 0 or 1, comparing in the operands' common type. */
static int compare(const struct value *a, const struct value *b)
{
	struct value type = common_type(a, b);
	struct value x = promote(a, &type), y = promote(b, &type);

	switch (type.num.type) {
	case PCM_NUM_INT:
		return (x.num.i > y.num.i) - (x.num.i < y.num.i);
	case PCM_NUM_UINT:
		return (x.num.u > y.num.u) - (x.num.u < y.num.u);
	case PCM_NUM_FLOAT:
		break;
	}
	return (x.num.f > y.num.f) - (x.num.f < y.num.f);
}

static void apply_compare(enum op op, struct value *a, const struct value *b)
{
	int c = compare(a, b);
	bool truth = false;

	switch (op) {
	case OP_LT:
		truth = c < 0;
		break;
	case OP_GT:
		truth = c > 0;
		break;
	case OP_LE:
		truth = c <= 0;
		break;
	case OP_GE:
		truth = c >= 0;
		break;
	case OP_EQ:
		truth = c == 0;
		break;
	default: /* OP_NE */
		truth = c != 0;
		break;
	}
	*a = int_value(truth);
}

static int apply_bitwise(struct parser *p, const struct token *op, struct value *a,
			 const struct value *b)
{
	struct value type, x, y;
	int ret = require_integers(p, op, a, b);

	if (ret)
		return ret;
	type = common_type(a, b);
	x = promote(a, &type);
	y = promote(b, &type);
	/*
	 * On the 64-bit representation: a narrow int is sign-extended and a narrow
	 * unsigned zero-extended, and both stay so under &, ^ and |.
	 */
	if (op->op == OP_BITAND)
		x.num.u &= y.num.u;
	else if (op->op == OP_BITXOR)
		x.num.u ^= y.num.u;
	else
		x.num.u |= y.num.u;
	*a = x;
	return 0;
}

static int apply_binary(struct parser *p, const struct token *op, struct value *a,
			const struct value *b)
{
	switch (op->op) {
	case OP_MUL:
	case OP_DIV:
	case OP_MOD:
	case OP_ADD:
	case OP_SUB:
		return apply_arith(p, op, a, b);
	case OP_SHL:
	case OP_SHR:
		return apply_shift(p, op, a, b);
	case OP_BITAND:
	case OP_BITXOR:
	case OP_BITOR:
		return apply_bitwise(p, op, a, b);
	default:
		apply_compare(op->op, a, b);
		return 0;
	}
}

static int apply_unary(struct parser *p, const struct token *op, struct value *v)
{
	int64_t min = v->narrow ? INT32_MIN : INT64_MIN;

	switch (op->op) {
	case OP_ADD:
		return 0;
	case OP_SUB:
		if (v->num.type == PCM_NUM_FLOAT)
			v->num.f = -v->num.f;
		else if (v->num.type == PCM_NUM_UINT)
			v->num.u = (0 - v->num.u) & (v->narrow ? NARROW_UINT_MAX : UINT64_MAX);
		else if (v->num.i == min)
			return overflow_at(p, op->start, v, OP_SUB);
		else
			v->num.i = -v->num.i;
		return 0;
	case OP_NOT:
		*v = int_value(!is_true(v));
		return 0;
	default: /* OP_BITNOT */
		if (!is_integer(v))
			return fail_at(p, op->start, "the operand of '~' must be an integer");
		v->num.u = ~v->num.u;
		if (v->narrow && v->num.type == PCM_NUM_UINT)
			v->num.u &= NARROW_UINT_MAX;
		return 0;
	}
}

/* An explicit cast: C conversion, where a float out of the target's range is undefined. */
static int apply_cast(struct parser *p, size_t pos, enum pcm_num_type type, struct value *v)
{
	struct value r = { .num.type = type };
	bool in_range = true;

	if (type == PCM_NUM_FLOAT || v->num.type != PCM_NUM_FLOAT) {
		r = promote(v, &r); /* to a 64-bit type: never narrows */
	} else if (type == PCM_NUM_UINT) {
		in_range = v->num.f > -1.0 && v->num.f < TWO_POW_64;
		if (in_range)
			r.num.u = (uint64_t)v->num.f;
	} else {
		in_range = v->num.f >= -TWO_POW_63 && v->num.f < TWO_POW_63;
		if (in_range)
			r.num.i = (int64_t)v->num.f;
	}
	*v = r;
	if (!in_range)
		return undefined_at(p, pos, v, "value out of range for a cast to %s",
				    pcm_num_type_name(type));
	return 0;
}

/* Parser ------------------------------------------------------------------ */

static int binary_precedence(const struct token *t)
{
	if (t->kind != TOK_PUNCT)
		return 0;
	switch (t->op) {
	case OP_OR:
		return 1;
	case OP_AND:
		return 2;
	case OP_BITOR:
		return 3;
	case OP_BITXOR:
		return 4;
	case OP_BITAND:
		return 5;
	case OP_EQ:
	case OP_NE:
		return 6;
	case OP_LT:
	case OP_GT:
	case OP_LE:
	case OP_GE:
		return 7;
	case OP_SHL:
	case OP_SHR:
		return 8;
	case OP_ADD:
	case OP_SUB:
		return 9;
	case OP_MUL:
	case OP_DIV:
	case OP_MOD:
		return 10;
	default:
		return 0;
	}
}

static const struct cast_type *find_cast_type(const struct parser *p, const struct token *t)
{
	if (t->kind != TOK_IDENT)
		return NULL;
	for (size_t k = 0; k < ARRAY_LEN(cast_types); k++) {
		if (name_is(p->text + t->start, t->len, cast_types[k].name))
			return &cast_types[k];
	}
	return NULL;
}

/* -1 for MIN, +1 for MAX, 0 for anything else. */
static int find_c_min_max(const struct parser *p, const struct token *t)
{
	for (size_t k = 0; k < ARRAY_LEN(c_min_max); k++) {
		if (name_is(p->text + t->start, t->len, c_min_max[k]))
			return k ? 1 : -1;
	}
	return 0;
}

static int parse_binary(struct parser *p, int min_precedence, struct value *out);

/* The right side of && or ||, which C evaluates only when the left side did not decide. */
static int parse_logical_rhs(struct parser *p, const struct token *op, int precedence,
			     struct value *lhs)
{
	bool lhs_true = is_true(lhs);
	bool decided = op->op == OP_AND ? !lhs_true : lhs_true;
	struct value rhs = { 0 };
	int ret;

	if (decided)
		p->skip++;
	ret = parse_binary(p, precedence + 1, &rhs);
	if (decided)
		p->skip--;
	if (ret)
		return ret;
	*lhs = int_value(decided ? op->op == OP_OR : is_true(&rhs));
	return 0;
}

static int parse_binary(struct parser *p, int min_precedence, struct value *out)
{
	int ret = parse_unary(p, out);

	while (ret == 0) {
		int precedence = binary_precedence(&p->tok);
		struct token op = p->tok;
		struct value rhs = { 0 };

		if (precedence == 0 || precedence < min_precedence)
			break;
		ret = lex(p);
		if (ret)
			break;
		if (op.op == OP_AND || op.op == OP_OR) {
			ret = parse_logical_rhs(p, &op, precedence, out);
			continue;
		}
		ret = parse_binary(p, precedence + 1, &rhs);
		if (ret == 0)
			ret = apply_binary(p, &op, out, &rhs);
	}
	return ret;
}

static int apply_c_min_max(int min_max, const struct value *args, struct value *out)
{
	struct value type = common_type(&args[0], &args[1]);
	int c = compare(&args[0], &args[1]);
	bool take_first = min_max < 0 ? c < 0 : c > 0;

	/* MIN(a, b) is ((a) < (b) ? (a) : (b)): the result has the common type. */
	*out = promote(take_first ? &args[0] : &args[1], &type);
	return 0;
}

/* A call of Python's built-ins and math (expr_fn.c), or of C's MIN and MAX. */
static int apply_function(struct parser *p, const struct token *name, const struct value *args,
			  unsigned n_args, struct value *out)
{
	const struct pcm_expr_fn *fn = pcm_expr_fn_find(p->text + name->start, name->len);
	int min_max = find_c_min_max(p, name);
	struct pcm_num nums[PCM_EXPR_MAX_ARGS];
	char msg[PCM_EXPR_FN_MSG_MAX];

	if (min_max && n_args != 2)
		return fail_at(p, name->start, "%s() takes 2 arguments, not %u",
			       c_min_max[min_max > 0], n_args);
	if (min_max)
		return apply_c_min_max(min_max, args, out);
	if (pcm_expr_fn_check(fn, n_args, msg, sizeof(msg)))
		return fail_at(p, name->start, "%s", msg);
	for (unsigned k = 0; k < n_args; k++)
		nums[k] = args[k].num;
	out->narrow = false; /* results are 64-bit, as names are */
	out->num.type = PCM_NUM_INT;
	if (pcm_expr_fn_call(fn, nums, n_args, &out->num, msg, sizeof(msg)))
		return undefined_at(p, name->start, out, "%s", msg);
	return 0;
}

/* A call; the current token is the '(' after the function's name. */
static int parse_call(struct parser *p, const struct token *name, struct value *out)
{
	struct value args[PCM_EXPR_MAX_ARGS] = { 0 };
	unsigned n_args = 0;
	int ret;

	if (!pcm_expr_fn_find(p->text + name->start, name->len) && !find_c_min_max(p, name))
		return fail_at(p, name->start,
			       "unknown function '%.*s' (!eval has Python's built-ins abs, bool, "
			       "float, int, max, min, round, math's functions, and C's MIN, MAX)",
			       (int)MIN(name->len, (size_t)24), p->text + name->start);
	ret = enter(p);
	if (ret == 0)
		ret = lex(p);
	while (ret == 0 && !tok_is(p, OP_RPAREN)) {
		if (n_args == PCM_EXPR_MAX_ARGS)
			return fail_at(p, p->tok.start, "too many arguments (at most %d)",
				       PCM_EXPR_MAX_ARGS);
		ret = parse_conditional(p, &args[n_args++]);
		if (ret)
			return ret;
		if (tok_is(p, OP_COMMA))
			ret = lex(p);
		else if (!tok_is(p, OP_RPAREN))
			return fail_unexpected(p, "',' or ')'");
	}
	if (ret)
		return ret;
	p->depth--;
	ret = lex(p);
	if (ret)
		return ret;
	return apply_function(p, name, args, n_args, out);
}

static int parse_name(struct parser *p, struct value *out)
{
	struct token name = p->tok;
	const char *text = p->text + name.start;
	int shown = (int)MIN(name.len, (size_t)40);
	int ret = lex(p);

	if (ret)
		return ret;
	if (tok_is(p, OP_LPAREN))
		return parse_call(p, &name, out);
	if (find_cast_type(p, &name))
		return fail_at(p, name.start, "type name '%.*s' outside a cast", shown, text);
	out->narrow = false; /* names are 64-bit pcm_uint, pcm_int or double */
	ret = p->lookup ? p->lookup(p->ctx, text, name.len, &out->num) : -ENOENT;
	if (ret == -ENOENT) /* the spec's names first, then math's constants, as in Python */
		ret = pcm_expr_fn_constant(text, name.len, &out->num);
	if (ret == -ENOENT)
		return fail_at(p, name.start, "unknown name '%.*s'", shown, text);
	return ret;
}

/* A parenthesized expression or a cast; the current token is the '('. */
static int parse_paren(struct parser *p, struct value *out)
{
	size_t open = p->tok.start;
	const struct cast_type *cast;
	int ret = enter(p);

	if (ret == 0)
		ret = lex(p);
	if (ret)
		return ret;
	cast = find_cast_type(p, &p->tok);
	if (cast) {
		ret = lex(p);
		if (ret == 0 && !tok_is(p, OP_RPAREN))
			ret = fail_unexpected(p, "')' after the type name");
		if (ret == 0)
			ret = lex(p);
		if (ret == 0)
			ret = parse_unary(p, out);
		if (ret == 0)
			ret = apply_cast(p, open, cast->type, out);
	} else {
		ret = parse_conditional(p, out);
		if (ret == 0 && !tok_is(p, OP_RPAREN))
			ret = fail_unexpected(p, "')'");
		if (ret == 0)
			ret = lex(p);
	}
	p->depth--;
	return ret;
}

static int parse_primary(struct parser *p, struct value *out)
{
	switch (p->tok.kind) {
	case TOK_NUM:
		*out = p->tok.val;
		return lex(p);
	case TOK_IDENT:
		return parse_name(p, out);
	case TOK_PUNCT:
		if (p->tok.op == OP_LPAREN)
			return parse_paren(p, out);
		break;
	case TOK_END:
		break;
	}
	return fail_unexpected(p, "a value");
}

static bool is_unary_op(const struct token *t)
{
	return t->kind == TOK_PUNCT &&
	       (t->op == OP_ADD || t->op == OP_SUB || t->op == OP_NOT || t->op == OP_BITNOT);
}

static int parse_unary(struct parser *p, struct value *out)
{
	struct token op = p->tok;
	int ret;

	if (!is_unary_op(&op))
		return parse_primary(p, out);
	ret = enter(p);
	if (ret == 0)
		ret = lex(p);
	if (ret == 0)
		ret = parse_unary(p, out);
	if (ret)
		return ret;
	p->depth--;
	return apply_unary(p, &op, out);
}

/* cond ? a : b, right-associative; only the chosen arm is evaluated. */
static int parse_conditional(struct parser *p, struct value *out)
{
	struct value a = { 0 }, b = { 0 }, type;
	bool cond;
	int ret = parse_binary(p, 1, out);

	if (ret || !tok_is(p, OP_QUESTION))
		return ret;
	cond = is_true(out);
	ret = enter(p);
	if (ret == 0)
		ret = lex(p);
	if (ret)
		return ret;
	p->skip += !cond;
	ret = parse_conditional(p, &a);
	p->skip -= !cond;
	if (ret == 0 && !tok_is(p, OP_COLON))
		ret = fail_unexpected(p, "':'");
	if (ret == 0)
		ret = lex(p);
	if (ret)
		return ret;
	p->skip += cond;
	ret = parse_conditional(p, &b);
	p->skip -= cond;
	if (ret)
		return ret;
	p->depth--;
	type = common_type(&a, &b);
	*out = promote(cond ? &a : &b, &type);
	return 0;
}

int pcm_expr_eval(const char *text, size_t len, pcm_expr_lookup_fn lookup, void *ctx,
		  struct pcm_num *out, struct pcm_expr_error *err)
{
	struct pcm_expr_error scratch;
	struct parser p = {
		.text = text,
		.len = len,
		.lookup = lookup,
		.ctx = ctx,
		.err = err ? err : &scratch,
	};
	struct value value = { 0 };
	int ret;

	p.err->col = 0;
	p.err->msg[0] = '\0';
	if (len > PCM_EXPR_MAX_LEN)
		return fail_at(&p, 0, "expression is longer than %d characters", PCM_EXPR_MAX_LEN);
	ret = lex(&p);
	if (ret == 0)
		ret = parse_conditional(&p, &value);
	if (ret == 0 && p.tok.kind != TOK_END)
		ret = fail_unexpected(&p, "an operator");
	if (ret == 0 && value.num.type == PCM_NUM_FLOAT && !isfinite(value.num.f))
		ret = fail_at(&p, 0, "the value is %s, which a generated header cannot hold",
			      isnan(value.num.f) ? "NaN" : "infinite");
	if (ret == 0)
		*out = value.num;
	return ret;
}
