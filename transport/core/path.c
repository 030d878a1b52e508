// SPDX-License-Identifier: MIT
/*
 * path.c - which of a connection's paths a chunk takes.
 *
 * With an LB package the control EV picks it: path = EV mod n_paths. Without
 * one, power of two choices on per-path RTT: draw two distinct paths at
 * random and take the one with the lower EWMA RTT (alpha 1/8); a path with
 * no sample yet counts as 0, so new paths get tried. A chunk declared lost
 * on a path feeds that path's EWMA a penalty sample of the connection's
 * RTO, so a path that went dark stops winning the draw; RTT samples pull it
 * back once traffic over it is acknowledged again.
 */
#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_path.h"

uint32_t xp_path_choose(struct xp_core *core, struct xp_conn *c, const struct xp_cc_ctl *ctl)
{
	uint32_t a, b;

	if (c->n_paths == 1)
		return 0;
	if (ctl->has_ev)
		return (uint32_t)(ctl->ev % c->n_paths);
	a = (uint32_t)(xp_rand(core) % c->n_paths);
	b = (uint32_t)(xp_rand(core) % (c->n_paths - 1));
	if (b >= a)
		b++;
	return c->paths[a].rtt_ewma_ns <= c->paths[b].rtt_ewma_ns ? a : b;
}

static void ewma(struct xp_path *p, uint64_t sample_ns)
{
	p->rtt_ewma_ns = p->rtt_ewma_ns ? p->rtt_ewma_ns - p->rtt_ewma_ns / 8 + sample_ns / 8
					: sample_ns;
}

void xp_path_on_rtt(struct xp_conn *c, uint32_t path, uint64_t rtt_ns)
{
	ewma(&c->paths[path], rtt_ns);
}

void xp_path_on_loss(struct xp_conn *c, uint32_t path, uint64_t penalty_ns)
{
	ewma(&c->paths[path], penalty_ns);
}
