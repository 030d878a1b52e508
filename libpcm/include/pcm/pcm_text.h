/* SPDX-License-Identifier: MIT */
/*
 * pcm_text.h - text that came from outside (a peer's address, a package's
 * name, a path) on its way to a person or a parser: pcmd's log and records,
 * pcmctl's tables and JSON. Such text is any bytes, so a name holding a
 * newline could forge a log line or a CSV row, and one holding an escape
 * sequence could drive the terminal that shows it. Each function copies @src
 * into @dst in one output's form, so that the text stays one field whatever
 * it holds:
 *
 *   visible  every byte that is not a printable character shows as \xNN: the
 *            C0 controls (newline, ESC ...), DEL, the C1 controls (U+0080 to
 *            U+009F, which some terminals obey), the characters that break or
 *            reorder lines (U+2028, U+2029, the bidirectional overrides
 *            U+202A-U+202E and U+2066-U+2069), and every byte that is not part
 *            of well-formed UTF-8. Everything else is kept, a backslash too.
 *   csv      the visible form as one RFC 4180 field: enclosed in double quotes
 *            (with each quote doubled) when it holds a comma or a quote.
 *   json     the inside of a JSON string (RFC 8259): quote and backslash
 *            escaped, and every character the visible form escapes as \u00XX
 *            (\u2028 ...); a byte that is not UTF-8 becomes the character of
 *            its value (\u00XX), so the document is always valid UTF-8.
 *
 * @dst always ends with a NUL; when it is too small the copy stops before a
 * whole character or escape that does not fit (never half of one). The _MAX
 * macros give the size that always suffices for @n bytes of @src.
 */
#ifndef PCM_PCM_TEXT_H
#define PCM_PCM_TEXT_H

#include <stddef.h>

#define PCM_TEXT_VISIBLE_MAX(n) (4 * (n) + 1)
#define PCM_TEXT_CSV_MAX(n) (4 * (n) + 3)
#define PCM_TEXT_JSON_MAX(n) (6 * (n) + 1)

/**
 * pcm_text_visible() - @src with every non-printable byte as \xNN.
 * @dst: output, NUL-terminated.
 * @len: its size (PCM_TEXT_VISIBLE_MAX(strlen(@src)) always suffices).
 * @src: the text.
 *
 * Return: the length written, without the NUL.
 */
size_t pcm_text_visible(char *dst, size_t len, const char *src);

/**
 * pcm_text_csv() - @src as one RFC 4180 field (its visible form, quoted when
 * it holds a comma or a double quote).
 * @dst: output, NUL-terminated.
 * @len: its size (PCM_TEXT_CSV_MAX(strlen(@src)) always suffices).
 * @src: the text.
 *
 * Return: the length written, without the NUL; 0 with @dst "" when @len
 * cannot hold the whole quoted field (a cut field would not be one).
 */
size_t pcm_text_csv(char *dst, size_t len, const char *src);

/**
 * pcm_text_json() - the inside of a JSON string holding @src.
 * @dst: output, NUL-terminated (without the enclosing quotes).
 * @len: its size (PCM_TEXT_JSON_MAX(strlen(@src)) always suffices).
 * @src: the text.
 *
 * Return: the length written, without the NUL.
 */
size_t pcm_text_json(char *dst, size_t len, const char *src);

#endif /* PCM_PCM_TEXT_H */
