/* SPDX-License-Identifier: MIT */
/*
 * xp_core_state.h - the core object's state, shared by the core's files
 * (nothing outside transport/core includes it): the pools every connection
 * draws its messages and operations from, the connection table, the timers,
 * the work lists and the completion FIFO; and the two helpers every file
 * uses, the generator and the drop counter.
 *
 * The files call one way: core.c (the entry points) and post.c, then ack.c
 * (control records), conn.c (connections), send.c and recv.c, recovery.c,
 * path.c; op.c (operations and completions) and these headers are leaves.
 */
#ifndef XP_CORE_STATE_H
#define XP_CORE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "pacer.h"
#include "pool.h"
#include "rtt.h"
#include "timerq.h"
#include "xp_idlist.h"

struct xp_conn;
struct xp_op;
struct xp_path;
struct xp_rmsg;
struct xp_smsg;

struct xp_core {
	struct xp_core_config cfg;
	struct xp_rto_params rto;
	uint64_t rng;
	uint64_t max_msg_bytes;

	struct xp_conn *conns;
	struct xp_path *paths;
	uint32_t *free_ids;      /* FIFO ring of ids out of quarantine */
	uint32_t free_head;
	uint32_t free_len;
	uint32_t conns_open;
	uint32_t conns_quarantined;

	struct xp_smsg *smsgs;
	struct xp_pool smsg_pool;
	struct xp_rmsg *rmsgs;
	struct xp_pool rmsg_pool;
	struct xp_op *ops;
	struct xp_pool op_pool;

	struct xp_timerq timers;
	struct xp_wheel wheel;
	uint32_t *scratch;       /* ids expired off the wheel */

	struct xp_idlist ready;  /* may have chunks to send */
	struct xp_idlist ctrl;   /* have control records to send */
	struct xp_idlist wait_smsg; /* a queued send waits for a sender message entry */
	struct xp_idlist wait_rmsg; /* a queued receive waits for a receive entry */

	uint32_t comp_head;      /* completion FIFO of tagged items (op.c) */
	uint32_t comp_tail;
	uint32_t comp_len;

	uint64_t in_flight_bytes;
	uint32_t in_flight_chunks;
	struct xp_core_stats stats;
	size_t bytes_total;
};

/**
 * xp_rand() - draw from the core's generator, for nonces and path draws.
 *
 * Return: the core's next pseudo-random word (splitmix64 of the seed and the draws
 * so far: a function of the seed and the inputs only).
 */
static inline uint64_t xp_rand(struct xp_core *core)
{
	uint64_t z = (core->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/**
 * xp_pool_get_or_wait() - take an entry of @pool for connection @id, or put it on @wait (the
 * pool's wait list, retried oldest first as entries free up) when there is none.
 *
 * Return: the entry, or XP_NONE.
 */
static inline uint32_t xp_pool_get_or_wait(struct xp_core *core, struct xp_pool *pool,
					   struct xp_idlist *wait, uint32_t id)
{
	uint32_t i = xp_pool_get(pool);

	if (i == XP_NONE) {
		core->stats.pool_waits++;
		xp_idlist_push(wait, id);
	}
	return i;
}

/**
 * xp_drop() - count one input dropped for @why.
 */
static inline void xp_drop(struct xp_core *core, enum xp_drop why)
{
	core->stats.drops[why]++;
}

#endif /* XP_CORE_STATE_H */
