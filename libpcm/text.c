// SPDX-License-Identifier: MIT
/*
 * text.c - outside text made safe for a terminal, a CSV field or a JSON
 * string (pcm_text.h): one UTF-8 reader and one rule for what is not
 * printable, written out in each output's escapes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pcm_text.h"

enum form { VISIBLE, CSV_INSIDE, JSON };

/*
 * The well-formed UTF-8 sequence at @s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF): its length, and its code point in
 * *@cp. Return: 1..4, or 0 when the byte at @s starts none.
 */
static size_t utf8_char(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	size_t n;
	uint32_t v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, v = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, v = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, v = s[0] & 0x07u;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* a NUL ends the sequence here too */
		v = v << 6 | (s[i] & 0x3fu);
	}
	if (v < min[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* Not shown as itself: controls, and what breaks or reorders a line. */
static bool hidden(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 ||
	       cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Append @n bytes at *@at if they fit with the NUL; else leave everything as it is. */
static bool put(char *dst, size_t len, size_t *at, const char *s, size_t n)
{
	if (*at + n + 1 > len)
		return false;
	memcpy(dst + *at, s, n);
	*at += n;
	dst[*at] = '\0';
	return true;
}

/* One character (or one byte that starts none: @n 1, @valid false) in @form. */
static bool put_char(enum form form, char *dst, size_t len, size_t *at, const char *s, size_t n,
		     uint32_t cp, bool valid)
{
	char esc[32];
	size_t k = 0;

	if (valid && !hidden(cp)) {
		if (form == JSON && (cp == '"' || cp == '\\'))
			return put(dst, len, at, cp == '"' ? "\\\"" : "\\\\", 2);
		if (form == CSV_INSIDE && cp == '"')
			return put(dst, len, at, "\"\"", 2);
		return put(dst, len, at, s, n);
	}
	if (form == JSON)
		k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x",
				     valid ? (unsigned)cp : (unsigned)(unsigned char)s[0]);
	else
		for (size_t i = 0; i < n; i++)
			k += (size_t)snprintf(esc + k, sizeof(esc) - k, "\\x%02x",
					      (unsigned)(unsigned char)s[i]);
	return put(dst, len, at, esc, k);
}

/* Append @src in @form at *@at. Return: false when it was cut (@dst full). */
static bool emit(enum form form, char *dst, size_t len, size_t *at, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;

	while (*s) {
		uint32_t cp = 0;
		size_t n = utf8_char(s, &cp);

		if (!put_char(form, dst, len, at, (const char *)s, n ? n : 1, cp, n != 0))
			return false;
		s += n ? n : 1;
	}
	return true;
}

/* @src in @form, cut where @dst is full. */
static size_t copy(enum form form, char *dst, size_t len, const char *src)
{
	size_t at = 0;

	if (len == 0)
		return 0;
	dst[0] = '\0';
	emit(form, dst, len, &at, src);
	return at;
}

size_t pcm_text_visible(char *dst, size_t len, const char *src)
{
	return copy(VISIBLE, dst, len, src);
}

size_t pcm_text_json(char *dst, size_t len, const char *src)
{
	return copy(JSON, dst, len, src);
}

size_t pcm_text_csv(char *dst, size_t len, const char *src)
{
	bool ok;
	size_t at = 0;

	if (len == 0)
		return 0;
	dst[0] = '\0';
	if (!strpbrk(src, ",\""))
		ok = emit(VISIBLE, dst, len, &at, src);
	else
		ok = put(dst, len, &at, "\"", 1) && emit(CSV_INSIDE, dst, len, &at, src) &&
		     put(dst, len, &at, "\"", 1);
	if (!ok) {
		dst[0] = '\0';
		return 0;
	}
	return at;
}
