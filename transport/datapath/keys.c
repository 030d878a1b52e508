// SPDX-License-Identifier: MIT
/*
 * keys.c - remote keys with generations and a writer count (keys.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "xp_range.h"

#define GEN_MASK ((1u << (32 - XP_KEY_INDEX_BITS)) - 1)

int xp_keys_init(struct xp_keys *t, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	if (!n || n > XP_KEYS_MAX)
		return -EINVAL;
	t->k = calloc(n, sizeof(*t->k));
	if (!t->k)
		return -ENOMEM;
	t->n = n;
	for (uint32_t i = 0; i < n; i++)
		t->k[i].next_free = i + 1 < n ? i + 1 : UINT32_MAX;
	t->free_tail = n - 1;
	return 0;
}

void xp_keys_fini(struct xp_keys *t)
{
	free(t->k);
	memset(t, 0, sizeof(*t));
}

int xp_keys_alloc(struct xp_keys *t, uint64_t addr, uint64_t len, uint32_t *word)
{
	uint32_t i = t->free, w;
	struct xp_key *k;

	if (i == UINT32_MAX || !t->k)
		return -ENOSPC;
	k = &t->k[i];
	t->free = k->next_free;
	if (t->free == UINT32_MAX)
		t->free_tail = UINT32_MAX;
	k->gen = (uint16_t)((k->gen + 1) & GEN_MASK);
	if (k->gen == 0)
		k->gen = 1;
	k->addr = addr;
	k->len = len;
	w = ((uint32_t)k->gen << XP_KEY_INDEX_BITS) | i;
	atomic_store_explicit(&k->word, w, memory_order_release);
	t->used++;
	*word = w;
	return 0;
}

void xp_keys_release(struct xp_keys *t, uint32_t word)
{
	uint32_t i = word & XP_KEY_INDEX_MASK;
	struct xp_key *k;

	if (i >= t->n || word == 0)
		return;
	k = &t->k[i];
	if (atomic_load(&k->word) != word)
		return;
	atomic_store(&k->word, 0);
	while (atomic_load_explicit(&k->writers, memory_order_acquire))
		;
	k->next_free = UINT32_MAX;
	if (t->free_tail == UINT32_MAX)
		t->free = i;
	else
		t->k[t->free_tail].next_free = i;
	t->free_tail = i;
	t->used--;
}

bool xp_keys_place(struct xp_keys *t, uint32_t word, uint64_t raddr, uint64_t len,
		   const void *src)
{
	uint32_t i = word & XP_KEY_INDEX_MASK;
	struct xp_key *k;
	bool ok = false;

	if (i >= t->n || word == 0)
		return false;
	k = &t->k[i];
	atomic_fetch_add(&k->writers, 1);
	if (atomic_load(&k->word) == word && raddr >= k->addr &&
	    xp_range_within(raddr - k->addr, len, k->len)) {
		if (src && len)
			memcpy((void *)(uintptr_t)raddr, src, len);
		ok = true;
	}
	atomic_fetch_sub_explicit(&k->writers, 1, memory_order_release);
	return ok;
}

int xp_keys_mr_reg(struct xp_keys *t, const char *who, void *addr, size_t len,
		   struct xp_dp_mr *mr, struct pcm_diag *diag)
{
	uint32_t key;
	int rc;

	if (!addr && len) {
		snprintf(diag->msg, sizeof(diag->msg), "%s: a NULL region", who);
		return -EINVAL;
	}
	rc = xp_keys_alloc(t, (uint64_t)(uintptr_t)addr, len, &key);
	if (rc < 0) {
		snprintf(diag->msg, sizeof(diag->msg), "%s: all %u keys are in use", who, t->n);
		return rc;
	}
	*mr = (struct xp_dp_mr){ .addr = addr, .len = len, .lkey = key, .rkey = key,
				 .handle = key };
	return 0;
}

int xp_keys_recv_key(struct xp_keys *t, const struct xp_dp_mr *mr, uint64_t addr, uint64_t len,
		     uint32_t *rkey)
{
	uint64_t base = (uint64_t)(uintptr_t)mr->addr;

	if (addr < base || !xp_range_within(addr - base, len, mr->len))
		return -EINVAL;
	return xp_keys_alloc(t, addr, len, rkey);
}
