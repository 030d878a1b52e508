// SPDX-License-Identifier: MIT
/*
 * dst_watch.c - no chunk is marked lost twice while its retransmission is
 * out, checked from the wire (dst_watch.h).
 *
 * One open-addressing table keyed by (sender, host, connection, slot, chunk),
 * or by (sender, host, connection, slot) with the chunk field all ones for the slot's
 * generation: a chunk entry of an older generation than its slot's is a
 * chunk of an earlier message, forgotten.
 */
#include <errno.h>
#include <stdlib.h>

#include "dst_watch.h"
#include "imm.h"

#define SLOT_KEY 0xffffu

struct entry {
	uint64_t key;    /* 0: empty */
	uint64_t timers; /* chunk: the sender's RTO and TLP firings at its last transmission */
	uint32_t gen;    /* chunk: its slot's generation then; slot: the generation now */
	uint32_t count;  /* chunk: transmissions seen in that generation */
};

struct dst_watch {
	struct entry *t;
	uint32_t cap; /* a power of two */
	uint32_t used;
};

static uint64_t key_of(uint32_t sender, uint32_t host, uint32_t conn, uint32_t slot,
		       uint32_t chunk)
{
	return ((uint64_t)(sender & 0xff) << 56) | ((uint64_t)((host + 1) & 0xff) << 48) |
	       ((uint64_t)conn << 32) | ((uint64_t)slot << 16) | chunk;
}

static uint64_t hash(uint64_t k)
{
	k ^= k >> 31;
	k *= 0x9e3779b97f4a7c15ull;
	return k ^ (k >> 29);
}

int dst_watch_create(struct dst_watch **out)
{
	struct dst_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->cap = 1024;
	w->t = calloc(w->cap, sizeof(*w->t));
	if (!w->t) {
		free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

void dst_watch_destroy(struct dst_watch *w)
{
	if (!w)
		return;
	free(w->t);
	free(w);
}

static struct entry *slot_of(struct entry *t, uint32_t cap, uint64_t key)
{
	uint32_t i = (uint32_t)hash(key) & (cap - 1);

	while (t[i].key && t[i].key != key)
		i = (i + 1) & (cap - 1);
	return &t[i];
}

static void grow(struct dst_watch *w)
{
	struct entry *old = w->t;
	uint32_t n = w->cap;

	w->t = calloc((size_t)n * 2, sizeof(*w->t));
	if (!w->t)
		abort();
	w->cap = n * 2;
	for (uint32_t i = 0; i < n; i++)
		if (old[i].key)
			*slot_of(w->t, w->cap, old[i].key) = old[i];
	free(old);
}

/* The entry of @key, made (zeroed) if new. */
static struct entry *get(struct dst_watch *w, uint64_t key)
{
	struct entry *e;

	if (2 * (w->used + 1) > w->cap)
		grow(w);
	e = slot_of(w->t, w->cap, key);
	if (!e->key) {
		e->key = key;
		w->used++;
	}
	return e;
}

bool dst_watch_chunk(struct dst_watch *w, uint32_t sender, uint32_t dst_host, uint32_t imm,
		     uint64_t timers)
{
	struct xp_imm f;
	uint32_t gen;
	struct entry *e;
	bool ok = true;

	xp_imm_decode(imm, &f);
	gen = get(w, key_of(sender, dst_host, f.conn, f.slot, SLOT_KEY))->gen;
	e = get(w, key_of(sender, dst_host, f.conn, f.slot, f.chunk));
	if (e->gen != gen) {
		e->gen = gen;
		e->count = 0;
	}
	if (e->count >= 2 && e->timers == timers)
		ok = false; /* sent a third time with no RTO or probe since the second */
	e->count++;
	e->timers = timers;
	return ok;
}

void dst_watch_msg_done(struct dst_watch *w, uint32_t sender, uint32_t dst_host, uint32_t conn,
			uint32_t slot)
{
	get(w, key_of(sender, dst_host, conn, slot, SLOT_KEY))->gen++;
}

void dst_watch_conn_new(struct dst_watch *w, uint32_t sender, uint32_t dst_host, uint32_t conn)
{
	for (uint32_t s = 0; s < XP_MSG_SLOTS; s++)
		dst_watch_msg_done(w, sender, dst_host, conn, s);
}
