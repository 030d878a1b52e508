// SPDX-License-Identifier: MIT
/*
 * cc.c - the ops-table check and the fixed-window binding (xp_cc.h).
 */
#include <errno.h>

#include "xp_cc.h"

int xp_cc_ops_check(const struct xp_cc_ops *ops)
{
	if (!ops || !ops->name || !ops->info || !ops->flow_open || !ops->flow_close ||
	    !ops->on_ack || !ops->on_loss || !ops->on_rto || !ops->on_tx || !ops->tick ||
	    !ops->read)
		return -EINVAL;
	return 0;
}

static void fixed_info(void *ctx, struct xp_cc_info *info)
{
	info->wants_tx = false;
	info->tick_ns = 0;
}

static int fixed_open(void *ctx, uint64_t flow_seed, uint64_t now_ns, uint32_t *flow)
{
	struct xp_cc_fixed *f = ctx;

	*flow = f->open_flows++;
	return 0;
}

static void fixed_close(void *ctx, uint32_t flow, uint64_t now_ns)
{
	struct xp_cc_fixed *f = ctx;

	f->open_flows--;
}

static void fixed_on_ack(void *ctx, uint32_t flow, const struct xp_cc_ack *ack, uint64_t now_ns)
{
}

static void fixed_on_loss(void *ctx, uint32_t flow, const struct xp_cc_loss *loss,
			  uint64_t now_ns)
{
	struct xp_cc_fixed *f = ctx;

	f->lost_chunks += loss->lost_chunks;
	f->loss_events++;
}

static void fixed_on_rto(void *ctx, uint32_t flow, uint64_t in_flight_bytes, uint64_t now_ns)
{
	struct xp_cc_fixed *f = ctx;

	f->rto_events++;
}

static void fixed_on_tx(void *ctx, uint32_t flow, uint64_t backlog_bytes,
			uint64_t in_flight_bytes, uint64_t now_ns)
{
}

static void fixed_tick(void *ctx, uint32_t flow, uint64_t now_ns)
{
}

static void fixed_read(void *ctx, uint32_t flow, struct xp_cc_ctl *ctl)
{
	const struct xp_cc_fixed *f = ctx;

	ctl->cwnd_bytes = f->cwnd_bytes;
	ctl->rate = f->rate;
	ctl->has_ev = false;
	ctl->ev = 0;
}

const struct xp_cc_ops xp_cc_fixed_ops = {
	.name = "fixed",
	.info = fixed_info,
	.flow_open = fixed_open,
	.flow_close = fixed_close,
	.on_ack = fixed_on_ack,
	.on_loss = fixed_on_loss,
	.on_rto = fixed_on_rto,
	.on_tx = fixed_on_tx,
	.tick = fixed_tick,
	.read = fixed_read,
};
