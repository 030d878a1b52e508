/* SPDX-License-Identifier: MIT */
/*
 * xp_path.h - a connection's paths (path.c): which one a chunk takes, the
 * per-path RTT that choice reads, and the path's own RACK state
 * (recovery.c judges a chunk against deliveries on its path only, so
 * spraying over paths of different delay is not reordering).
 */
#ifndef XP_PATH_H
#define XP_PATH_H

#include <stdint.h>

#include "xp_cc.h"

struct xp_conn;
struct xp_core;

struct xp_path {
	uint32_t handle;
	uint16_t ev;
	uint16_t in_flight;   /* chunks in flight whose latest transmission took this path */
	uint64_t rtt_ewma_ns; /* 0: no sample yet */
	uint64_t rack_tx_seq; /* newest transmission on this path known delivered, 0: none */
	uint64_t rack_rtt_ns; /* RACK.rtt of that transmission */
};

/**
 * xp_path_choose() - pick the path of the next chunk.
 *
 * Return: the path index for @c's next chunk: EV mod n_paths, else power of
 * two choices.
 */
uint32_t xp_path_choose(struct xp_core *core, struct xp_conn *c, const struct xp_cc_ctl *ctl);

/**
 * xp_path_on_rtt() - fold an RTT sample into @path's EWMA (alpha 1/8).
 */
void xp_path_on_rtt(struct xp_conn *c, uint32_t path, uint64_t rtt_ns);

/**
 * xp_path_on_loss() - A chunk on @path was declared lost: fold a penalty sample of @penalty_ns
 * (recovery passes the connection's RTO) into its EWMA.
 */
void xp_path_on_loss(struct xp_conn *c, uint32_t path, uint64_t penalty_ns);

#endif /* XP_PATH_H */
