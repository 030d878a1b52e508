/* SPDX-License-Identifier: MIT */
/*
 * verbs_map.h - a fixed-capacity u32 -> u32 hash map (linear probing,
 * backward-shift deletion) for the verbs datapath's lookups off a
 * completion: QP number -> path, rkey -> receive key, source -> peer.
 *
 * The capacity is fixed at init (twice the entries it must hold, rounded up
 * to a power of two, so probes stay short); nothing allocates afterwards.
 */
#ifndef XP_VERBS_MAP_H
#define XP_VERBS_MAP_H

#include <stdbool.h>
#include <stdint.h>

struct vb_map {
	uint32_t *keys;
	uint32_t *vals; /* value + 1; 0: empty */
	uint32_t mask;
	uint32_t shift; /* 32 - log2(capacity) */
	uint32_t n;
	uint32_t max;   /* entries it may hold */
};

/**
 * vb_map_init() - a map for up to @max entries.
 *
 * Return: 0, -ENOMEM, -EINVAL (@max 0 or above 2^30).
 */
int vb_map_init(struct vb_map *m, uint32_t max);

/** vb_map_fini() - free the map (a zeroed map is fine). */
void vb_map_fini(struct vb_map *m);

/**
 * vb_map_put() - map @key to @val (replacing a value it had).
 *
 * Return: 0, -ENOSPC (full).
 */
int vb_map_put(struct vb_map *m, uint32_t key, uint32_t val);

/** vb_map_get() - the value of @key into @val. Return: whether it is there. */
bool vb_map_get(const struct vb_map *m, uint32_t key, uint32_t *val);

/** vb_map_del() - remove @key (absent: nothing). */
void vb_map_del(struct vb_map *m, uint32_t key);

#endif /* XP_VERBS_MAP_H */
