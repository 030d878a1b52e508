// SPDX-License-Identifier: MIT
/*
 * blob.c - encode and decode the connection blob (blob.h), with every
 * field range-checked on the way in.
 */
#include <errno.h>
#include <string.h>

#include "blob.h"

struct cursor {
	const uint8_t *p;
	uint32_t left;
	const char *why;
};

static bool take(struct cursor *c, void *dst, uint32_t n, const char *what)
{
	if (c->why)
		return false;
	if (c->left < n) {
		c->why = what;
		return false;
	}
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

static uint32_t take_be(struct cursor *c, uint32_t n, const char *what)
{
	uint8_t b[4] = { 0 };
	uint32_t v = 0;

	if (!take(c, b, n, what))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

static bool fail(struct cursor *c, const char *what)
{
	if (!c->why)
		c->why = what;
	return false;
}

static bool take_blob(struct cursor *c, struct xp_dp_blob *b, const char *what)
{
	uint32_t n = take_be(c, 1, what);

	if (c->why)
		return false;
	if (n == 0 || n > XP_DP_BLOB_MAX)
		return fail(c, what);
	b->len = (uint8_t)n;
	return take(c, b->bytes, n, what);
}

static bool take_name(struct cursor *c, char *name, const char *what)
{
	uint32_t n = take_be(c, 1, what);

	if (c->why)
		return false;
	if (n > XP_BLOB_NAME_MAX)
		return fail(c, what);
	if (!take(c, name, n, what))
		return false;
	name[n] = '\0';
	if (memchr(name, '\0', n))
		return fail(c, what);
	return true;
}

int xp_blob_decode(const uint8_t *in, uint32_t len, struct xp_conn_blob *b, const char **why)
{
	struct cursor c = { in, len, NULL };
	uint32_t flags;

	memset(b, 0, sizeof(*b));
	if (take_be(&c, 2, "magic") != XP_BLOB_MAGIC)
		fail(&c, "magic");
	if (take_be(&c, 1, "version") != XP_BLOB_VERSION)
		fail(&c, "version");
	flags = take_be(&c, 1, "flags");
	if (flags & ~1u)
		fail(&c, "flags");
	b->rc = flags & 1;
	b->conn_id = take_be(&c, 2, "conn_id");
	if (b->conn_id >= XP_MAX_CONNS)
		fail(&c, "conn_id");
	b->n_paths = take_be(&c, 1, "n_paths");
	if (b->n_paths == 0 || b->n_paths > XP_MAX_PATHS)
		fail(&c, "n_paths");
	b->mode = (uint8_t)take_be(&c, 1, "mode");
	if (b->mode > 3)
		fail(&c, "mode");
	b->nonce = take_be(&c, 4, "nonce");
	if (b->nonce == 0)
		fail(&c, "nonce");
	take_blob(&c, &b->ctrl, "ctrl");
	take_name(&c, b->cc, "cc");
	take_name(&c, b->lb, "lb");
	for (uint32_t i = 0; i < b->n_paths && !c.why; i++) {
		b->entropy[i] = (uint16_t)take_be(&c, 2, "paths.entropy");
		take_blob(&c, &b->paths[i], "paths.blob");
	}
	if (!c.why && c.left)
		fail(&c, "length");
	if (c.why) {
		if (why)
			*why = c.why;
		return -EBADMSG;
	}
	return 0;
}

struct writer {
	uint8_t *p;
	uint32_t left;
	bool full;
};

static void put(struct writer *w, const void *src, uint32_t n)
{
	if (w->full || w->left < n) {
		w->full = true;
		return;
	}
	memcpy(w->p, src, n);
	w->p += n;
	w->left -= n;
}

static void put_be(struct writer *w, uint32_t v, uint32_t n)
{
	uint8_t b[4];

	for (uint32_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	put(w, b, n);
}

int xp_blob_encode(const struct xp_conn_blob *b, uint8_t *out, uint32_t cap)
{
	struct writer w = { out, cap, false };
	size_t cc = strlen(b->cc), lb = strlen(b->lb);

	if (b->conn_id >= XP_MAX_CONNS || !b->nonce || !b->n_paths || b->n_paths > XP_MAX_PATHS ||
	    b->mode > 3 || !b->ctrl.len || b->ctrl.len > XP_DP_BLOB_MAX || cc > XP_BLOB_NAME_MAX ||
	    lb > XP_BLOB_NAME_MAX)
		return -EINVAL;
	put_be(&w, XP_BLOB_MAGIC, 2);
	put_be(&w, XP_BLOB_VERSION, 1);
	put_be(&w, b->rc ? 1 : 0, 1);
	put_be(&w, b->conn_id, 2);
	put_be(&w, b->n_paths, 1);
	put_be(&w, b->mode, 1);
	put_be(&w, b->nonce, 4);
	put_be(&w, b->ctrl.len, 1);
	put(&w, b->ctrl.bytes, b->ctrl.len);
	put_be(&w, (uint32_t)cc, 1);
	put(&w, b->cc, (uint32_t)cc);
	put_be(&w, (uint32_t)lb, 1);
	put(&w, b->lb, (uint32_t)lb);
	for (uint32_t i = 0; i < b->n_paths; i++) {
		if (!b->paths[i].len || b->paths[i].len > XP_DP_BLOB_MAX)
			return -EINVAL;
		put_be(&w, b->entropy[i], 2);
		put_be(&w, b->paths[i].len, 1);
		put(&w, b->paths[i].bytes, b->paths[i].len);
	}
	return w.full ? -ENOSPC : (int)(cap - w.left);
}
