// SPDX-License-Identifier: MIT
/*
 * verbs_map.c - the verbs datapath's u32 -> u32 hash map (verbs_map.h):
 * Fibonacci hashing, linear probing, and deletion by shifting the entries
 * that follow back into the hole, so that no tombstones accumulate.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs_map.h"

static uint32_t slot_of(const struct vb_map *m, uint32_t key)
{
	return (uint32_t)(key * 2654435769u) >> m->shift;
}

int vb_map_init(struct vb_map *m, uint32_t max)
{
	uint32_t cap = 4, bits = 2;

	*m = (struct vb_map){ 0 };
	if (max == 0 || max > (1u << 30))
		return -EINVAL;
	while (cap < 2 * max) {
		cap <<= 1;
		bits++;
	}
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		vb_map_fini(m);
		return -ENOMEM;
	}
	m->mask = cap - 1;
	m->shift = 32 - bits;
	m->max = max;
	return 0;
}

void vb_map_fini(struct vb_map *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct vb_map){ 0 };
}

int vb_map_put(struct vb_map *m, uint32_t key, uint32_t val)
{
	uint32_t i = slot_of(m, key);

	for (;; i = (i + 1) & m->mask) {
		if (!m->vals[i]) {
			if (m->n == m->max)
				return -ENOSPC;
			m->keys[i] = key;
			m->vals[i] = val + 1;
			m->n++;
			return 0;
		}
		if (m->keys[i] == key) {
			m->vals[i] = val + 1;
			return 0;
		}
	}
}

bool vb_map_get(const struct vb_map *m, uint32_t key, uint32_t *val)
{
	if (!m->vals)
		return false;
	for (uint32_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
		if (!m->vals[i])
			return false;
		if (m->keys[i] == key) {
			*val = m->vals[i] - 1;
			return true;
		}
	}
}

void vb_map_del(struct vb_map *m, uint32_t key)
{
	uint32_t i, j;

	if (!m->vals)
		return;
	for (i = slot_of(m, key);; i = (i + 1) & m->mask) {
		if (!m->vals[i])
			return;
		if (m->keys[i] == key)
			break;
	}
	m->vals[i] = 0;
	m->n--;
	/* Move back every entry after the hole that its home slot allows to sit in it. */
	for (j = (i + 1) & m->mask; m->vals[j]; j = (j + 1) & m->mask) {
		uint32_t home = slot_of(m, m->keys[j]);

		/* it may move to i unless its home lies cyclically in (i, j] */
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = 0;
			i = j;
		}
	}
}
