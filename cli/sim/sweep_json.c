// SPDX-License-Identifier: MIT
/*
 * sweep_json.c - a small JSON reader: a value's leaves, each with the path
 * of keys that leads to it. Enough for the sweep's records, which pcm-sim
 * itself writes (objects, lists, strings, numbers, true, false, null);
 * \uXXXX escapes outside ASCII become '?'.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_json.h"

#define MAX_DEPTH 16
#define MAX_PATH 512

struct jreader {
	const char *s;
	char path[MAX_PATH];
	sweep_json_leaf_fn fn;
	void *ctx;
	int depth;
};

static void skip_ws(struct jreader *r)
{
	while (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r')
		r->s++;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A string at r->s (after its opening quote), unescaped into a new buffer. */
static int read_string(struct jreader *r, char **out)
{
	size_t cap = 64, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		char c = *r->s++;
		unsigned u;

		if (!c || (unsigned char)c < 0x20)
			goto bad;
		if (c == '"')
			break;
		if (c == '\\') {
			c = *r->s++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case '"': case '\\': case '/': break;
			case 'u':
				if (hex4(r->s, &u) < 0)
					goto bad;
				r->s += 4;
				c = u < 0x80 ? (char)u : '?';
				break;
			default:
				goto bad;
			}
		}
		if (n + 2 > cap) {
			char *g = realloc(b, cap *= 2);

			if (!g) {
				free(b);
				return -ENOMEM;
			}
			b = g;
		}
		b[n++] = c;
	}
	b[n] = '\0';
	*out = b;
	return 0;
bad:
	free(b);
	return -EINVAL;
}

static int read_value(struct jreader *r);

/* Append @name to the path for the value that follows, then take it back. */
static int read_member(struct jreader *r, const char *name)
{
	size_t len = strlen(r->path);
	int rc;

	if (len + strlen(name) + 2 > MAX_PATH)
		return -EINVAL;
	if (len)
		r->path[len] = '.';
	strcpy(r->path + len + (len ? 1 : 0), name);
	rc = read_value(r);
	r->path[len] = '\0';
	return rc;
}

/* The members of an object, or the items of a list (named by their index), to its end. */
static int read_container(struct jreader *r, bool object)
{
	skip_ws(r);
	if (*r->s == (object ? '}' : ']')) {
		r->s++;
		return 0;
	}
	for (unsigned i = 0;; i++) {
		char index[16], *key = NULL;
		int rc;

		skip_ws(r);
		if (object) {
			if (*r->s++ != '"')
				return -EINVAL;
			rc = read_string(r, &key);
			if (rc < 0)
				return rc;
			skip_ws(r);
			if (*r->s++ != ':') {
				free(key);
				return -EINVAL;
			}
		} else {
			snprintf(index, sizeof(index), "%u", i);
		}
		rc = read_member(r, object ? key : index);
		free(key);
		if (rc)
			return rc;
		skip_ws(r);
		if (*r->s == (object ? '}' : ']')) {
			r->s++;
			return 0;
		}
		if (*r->s++ != ',')
			return -EINVAL;
	}
}

/* A number, true, false or null, as written (null as ""). */
static int read_atom(struct jreader *r)
{
	static const char *const words[] = { "true", "false", "null" };
	const char *start = r->s;
	char text[64];
	size_t n;

	for (size_t i = 0; i < 3; i++) {
		n = strlen(words[i]);
		if (strncmp(r->s, words[i], n) == 0) {
			r->s += n;
			return r->fn(r->ctx, r->path, i == 2 ? "" : words[i]);
		}
	}
	strtod(start, (char **)&r->s);
	n = (size_t)(r->s - start);
	if (!n || n >= sizeof(text))
		return -EINVAL;
	memcpy(text, start, n);
	text[n] = '\0';
	return r->fn(r->ctx, r->path, text);
}

static int read_value(struct jreader *r)
{
	char *str;
	int rc;

	skip_ws(r);
	switch (*r->s) {
	case '{':
	case '[':
		if (++r->depth > MAX_DEPTH)
			return -EINVAL;
		rc = read_container(r, *r->s++ == '{');
		r->depth--;
		return rc;
	case '"':
		r->s++;
		rc = read_string(r, &str);
		if (rc < 0)
			return rc;
		rc = r->fn(r->ctx, r->path, str);
		free(str);
		return rc;
	default:
		return read_atom(r);
	}
}

int sweep_json_leaves(const char *text, sweep_json_leaf_fn fn, void *ctx)
{
	struct jreader r = { .s = text, .fn = fn, .ctx = ctx };
	int rc = read_value(&r);

	if (rc)
		return rc;
	skip_ws(&r);
	return *r.s ? -EINVAL : 0;
}
