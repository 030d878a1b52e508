// SPDX-License-Identifier: MIT
/*
 * conn.c - the connection table: ids, nonces, quarantine, binding, close,
 * failure, per-connection timers, and the control records that are about
 * the connection as a whole (FIN, FIN_ACK, RESET, RESET_ACK).
 *
 * States: OPEN -> CLOSING (graceful close) -> QUARANTINE -> FREE, or
 * OPEN/CLOSING -> DEAD (peer reset, no progress, I/O error) -> QUARANTINE on
 * the application's close. An abortive close goes from OPEN or CLOSING to
 * QUARANTINE at once. A quarantined id keeps its nonce and its peer, so it
 * can still answer: FIN_ACK to a FIN, "complete" to an ACK request for a
 * message it received, RESET to anything after a reset. Ids leave
 * quarantine in FIFO order, so a reused id is the one closed longest ago.
 *
 * Graceful close: FIN {sends_total, recvs_total} tells the peer how many
 * messages this side will ever send and receive; the peer fails its
 * operations beyond those with -ECONNRESET. The close completes when every
 * local operation has finished, every ABORT was acknowledged, and the peer
 * acknowledged the FIN, or the peer's own FIN showed that it needs nothing
 * from ours (this side posted at least the receives and sends the peer's
 * bounds say).
 *
 * conn.c calls send.c, recv.c and recovery.c, never the other way round:
 * what their functions change on a connection comes back as enum xp_news
 * bits, and xp_conn_act() (xp_conn.h, inline for the per-chunk and per-ACK
 * paths) acts on them.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_op.h"
#include "xp_path.h"
#include "xp_recovery.h"
#include "xp_recv.h"
#include "xp_send.h"

#define XP_CLOSE_RTX_MAX 16 /* RESET retransmissions before giving up */
#define XP_BACKOFF_MAX 30

struct xp_conn *xp_conn_get(struct xp_core *core, uint32_t id)
{
	if (id >= core->cfg.max_conns || core->conns[id].state == XP_CS_FREE)
		return NULL;
	return &core->conns[id];
}

static void progress(struct xp_conn *c, uint64_t now_ns)
{
	c->last_progress_ns = now_ns;
}

static void want_ctrl(struct xp_core *core, struct xp_conn *c)
{
	xp_idlist_push(&core->ctrl, c->id);
}

/*
 * A connection's nonce, never 0: from getrandom(), so that two engines (two processes) do not
 * give their first connections the same one; a seed in the core's configuration (tests) makes
 * them a function of it instead.
 */
static uint32_t new_nonce(struct xp_core *core)
{
	uint32_t n = 0;

	while (!n)
		if (core->cfg.seed || getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n))
			n = (uint32_t)xp_rand(core);
	return n;
}

static int check_conn_config(const struct xp_core *core, const struct xp_conn_config *cfg)
{
	if (!cfg || cfg->n_paths == 0 || cfg->n_paths > core->cfg.max_paths || !cfg->path_handles)
		return -EINVAL;
	return xp_cc_ops_check(cfg->cc.ops);
}

static void init_slots(struct xp_conn *c)
{
	for (uint32_t s = 0; s < XP_MSG_SLOTS; s++) {
		c->smsg[s] = XP_NONE;
		c->rmsg[s] = XP_NONE;
	}
	xp_seqwin_init(&c->sw);
	xp_seqwin_init(&c->rw);
	c->sq.head = c->sq.tail = XP_NONE;
	c->rq.head = c->rq.tail = XP_NONE;
}

int xp_conn_create(struct xp_core *core, const struct xp_conn_config *cfg, uint64_t now_ns,
		   uint32_t *id, uint32_t *nonce)
{
	struct xp_path *paths;
	struct xp_conn *c;
	uint32_t cid;
	int rc;

	rc = check_conn_config(core, cfg);
	if (rc < 0)
		return rc;
	if (!core->free_len)
		return -ENOSPC;
	cid = core->free_ids[core->free_head];
	c = &core->conns[cid];
	paths = c->paths;
	memset(c, 0, sizeof(*c));
	c->id = cid;
	c->paths = paths;
	c->n_paths = cfg->n_paths;
	for (uint32_t p = 0; p < cfg->n_paths; p++) {
		paths[p].handle = cfg->path_handles[p];
		paths[p].ev = cfg->path_entropy ? cfg->path_entropy[p] : (uint16_t)p;
		paths[p].rtt_ewma_ns = 0;
		paths[p].in_flight = 0;
		paths[p].rack_tx_seq = 0;
		paths[p].rack_rtt_ns = 0;
	}
	c->nonce = new_nonce(core);
	c->flow_seed = xp_rand(core) | 1;
	c->rc_mode = cfg->rc_mode;
	c->no_progress_ns = cfg->no_progress_ns ? cfg->no_progress_ns : core->cfg.no_progress_ns;
	c->cc = cfg->cc;
	rc = c->cc.ops->flow_open(c->cc.ctx, c->flow_seed, now_ns, &c->cc_flow);
	if (rc < 0) {
		c->state = XP_CS_FREE;
		return rc;
	}
	c->cc.ops->info(c->cc.ctx, &c->cc_info);
	init_slots(c);
	xp_rack_init(c);
	c->comp_next = XP_NONE;
	c->last_progress_ns = now_ns;
	c->state = XP_CS_OPEN;
	core->free_head = (core->free_head + 1) % core->cfg.max_conns;
	core->free_len--;
	core->conns_open++;
	*id = cid;
	*nonce = c->nonce;
	return 0;
}

/* CTSs held from before the bind came from another peer than the bootstrap names: forged. */
static void pre_bind_check(struct xp_core *core, struct xp_conn *c)
{
	if (!c->pre_heard || c->pre_peer == c->ctrl_peer)
		return;
	core->stats.drops[XP_DROP_REC_WRONG_PEER] += (uint64_t)__builtin_popcount(c->cts_held);
	c->cts_held = 0;
	c->cts_ack_pend = 0;
	c->abort_pend = 0;
}

int xp_conn_bind(struct xp_core *core, uint32_t id, uint32_t peer_id, uint32_t peer_nonce,
		 uint32_t ctrl_peer, uint64_t now_ns)
{
	struct xp_conn *c = xp_conn_get(core, id);

	if (!c)
		return -ENOENT;
	if (c->state != XP_CS_OPEN)
		return -ESHUTDOWN;
	if (c->bound)
		return -EALREADY;
	if (peer_id >= XP_MAX_CONNS || peer_nonce == 0)
		return -EINVAL;
	c->peer_id = peer_id;
	c->peer_nonce = peer_nonce;
	c->ctrl_peer = ctrl_peer;
	c->bound = true;
	pre_bind_check(core, c);
	/* CTSs that arrived before the bind may start messages, and may have left answers. */
	want_ctrl(core, c);
	xp_conn_act(core, c, xp_send_try_start(core, c, now_ns) | XP_NEWS_SEND, now_ns);
	xp_conn_rearm(core, c, now_ns);
	return 0;
}

int xp_conn_info(struct xp_core *core, uint32_t id, struct xp_conn_info *info)
{
	struct xp_conn *c = xp_conn_get(core, id);

	if (!c)
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	info->srtt_ns = c->rtt.srtt_ns;
	info->rttvar_ns = c->rtt.rttvar_ns;
	info->min_rtt_ns = c->rtt.samples ? c->rtt.min_ns : 0;
	info->rto_ns = xp_rto_ns(core, c);
	info->reo_wnd_ns = xp_rack_reo_wnd_ns(c);
	info->in_flight_bytes = c->in_flight_bytes;
	info->in_flight_chunks = c->in_flight_chunks;
	info->lost_chunks = c->lost_chunks;
	info->send_msgs = c->n_smsgs;
	info->recv_msgs = c->n_rmsgs;
	info->rto_backoff = c->rack.rto_backoff;
	info->cc_flow = c->cc_flow;
	for (uint32_t p = 0; p < c->n_paths; p++)
		info->path_rtt_ns[p] = c->paths[p].rtt_ewma_ns;
	info->chunks_retx = c->chunks_retx;
	info->rto_fires = c->rto_fires;
	info->spurious_retx = c->spurious_retx;
	info->no_progress_ns = c->no_progress_ns;
	info->cwnd_bytes = UINT64_MAX;
	if (xp_conn_live(c)) { /* a quarantined connection's flow is closed in its binding */
		struct xp_cc_ctl ctl;

		xp_cc_read(c, &ctl);
		info->cwnd_bytes = ctl.cwnd_bytes;
		info->rate_bps = xp_pacer_rate_bps(ctl.rate, core->cfg.line_rate_bps);
	}
	return 0;
}

/* The binding's flow changed: its info again, and its controls at the next round. */
static void cc_refresh(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	c->cc.ops->info(c->cc.ctx, &c->cc_info);
	c->cc_tick_ns = 0;
	xp_conn_want_send(core, c);
	xp_conn_rearm(core, c, now_ns);
}

int xp_conn_set_cc(struct xp_core *core, uint32_t id, struct xp_cc_binding cc, uint64_t now_ns)
{
	struct xp_conn *c = xp_conn_get(core, id);
	uint32_t flow;
	int rc;

	if (!c || !xp_conn_live(c))
		return -ENOENT;
	if (xp_cc_ops_check(cc.ops) < 0)
		return -EINVAL;
	rc = cc.ops->flow_open(cc.ctx, c->flow_seed, now_ns, &flow);
	if (rc < 0)
		return rc;
	c->cc.ops->flow_close(c->cc.ctx, c->cc_flow, now_ns);
	c->cc = cc;
	c->cc_flow = flow;
	cc_refresh(core, c, now_ns);
	return 0;
}

int xp_conn_set_no_progress(struct xp_core *core, uint32_t id, uint64_t no_progress_ns,
			    uint64_t now_ns)
{
	struct xp_conn *c = xp_conn_get(core, id);

	if (!c || !xp_conn_live(c))
		return -ENOENT;
	c->no_progress_ns = no_progress_ns ? no_progress_ns : core->cfg.no_progress_ns;
	xp_conn_rearm(core, c, now_ns);
	return 0;
}

int xp_conn_cc_refresh(struct xp_core *core, uint32_t id, uint64_t now_ns)
{
	struct xp_conn *c = xp_conn_get(core, id);

	if (!c || !xp_conn_live(c))
		return -ENOENT;
	cc_refresh(core, c, now_ns);
	return 0;
}

static void clear_recovery(struct xp_core *core, struct xp_conn *c)
{
	xp_rack_stop(&c->rack);
	c->cc_tick_ns = 0;
	xp_wheel_remove(&core->wheel, c->id);
}

static void to_quarantine(struct xp_core *core, struct xp_conn *c, int status, uint64_t now_ns)
{
	clear_recovery(core, c);
	c->cc.ops->flow_close(c->cc.ctx, c->cc_flow, now_ns);
	c->state = XP_CS_QUARANTINE;
	c->quarantine_until_ns = now_ns + core->cfg.quarantine_ns;
	/* A graceful close keeps answering: its final ACKs and FIN_ACK may be pending. */
	if (c->reset_end)
		c->ack_pend = c->done_ack_pend = c->cts_pend = c->abort_ack_pend = 0;
	c->cts_ack_pend = c->abort_pend = c->ack_req_pend = c->abort_unacked = 0;
	c->abort_rtx_ns = 0;
	c->ctl_pend &= (uint8_t)~(XP_CTL_FIN | XP_CTL_KEEPALIVE);
	if (!c->reset_end)
		c->close_rtx_ns = 0;
	core->conns_open--;
	core->conns_quarantined++;
	xp_complete_close(core, c, status);
	want_ctrl(core, c);
	xp_conn_rearm(core, c, now_ns);
}

static void conn_free(struct xp_core *core, struct xp_conn *c)
{
	uint32_t tail = (core->free_head + core->free_len) % core->cfg.max_conns;

	c->state = XP_CS_FREE;
	c->ctl_pend = 0;
	c->ack_pend = c->done_ack_pend = c->cts_pend = 0;
	xp_timerq_cancel(&core->timers, c->id);
	core->conns_quarantined--;
	core->free_ids[tail] = c->id;
	core->free_len++;
}

/* Fail every operation of @c with @err and drop what it had in flight. */
static void fail_all_ops(struct xp_core *core, struct xp_conn *c, int err)
{
	xp_send_fail_from(core, c, c->sw.below, err);
	xp_recv_fail_from(core, c, c->rw.below, err);
	c->cts_held = 0;
	c->ack_pend = c->done_ack_pend = c->cts_pend = 0;
	c->cts_ack_pend = c->abort_pend = c->ack_req_pend = 0;
	c->abort_unacked = c->abort_ack_pend = 0;
	c->abort_rtx_ns = 0;
	clear_recovery(core, c);
}

/* Start sending RESET for @reason (retransmitted until RESET_ACK or XP_CLOSE_RTX_MAX). */
static void start_reset(struct xp_core *core, struct xp_conn *c, unsigned reason)
{
	c->reset_end = true;
	if (!reason || !c->bound)
		return;
	c->reset_reason = (uint8_t)reason;
	c->reset_acked = false;
	c->close_backoff = 0;
	c->close_rtx_ns = 0;
	c->ctl_pend |= XP_CTL_RESET;
	want_ctrl(core, c);
}

void xp_conn_fail(struct xp_core *core, struct xp_conn *c, int err, unsigned reset_reason,
		  uint64_t now_ns)
{
	bool closing = c->state == XP_CS_CLOSING;

	fail_all_ops(core, c, err);
	c->ctl_pend &= (uint8_t)~(XP_CTL_FIN | XP_CTL_FIN_ACK | XP_CTL_KEEPALIVE);
	c->close_rtx_ns = 0;
	start_reset(core, c, reset_reason);
	c->err = err;
	if (closing) {
		to_quarantine(core, c, err, now_ns);
		return;
	}
	c->state = XP_CS_DEAD;
	xp_conn_rearm(core, c, now_ns);
}

/* The peer needs our FIN still: it was not acknowledged, and the peer's own
 * FIN does not show that it can finish without it. */
static bool fin_needed(const struct xp_conn *c)
{
	if (c->fin_acked)
		return false;
	return !(c->peer_fin && seq_diff(c->send_posted, c->peer_recvs_total) >= 0 &&
		 seq_diff(c->recv_posted, c->peer_sends_total) >= 0);
}

void xp_conn_check_closed(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (c->state != XP_CS_CLOSING || c->ops_open || c->n_smsgs || c->n_rmsgs ||
	    c->abort_unacked)
		return;
	if (fin_needed(c))
		return;
	to_quarantine(core, c, 0, now_ns);
}

int xp_conn_close(struct xp_core *core, uint32_t id, enum xp_close_mode mode, uint64_t now_ns)
{
	struct xp_conn *c = xp_conn_get(core, id);

	if (!c)
		return -ENOENT;
	if (mode != XP_CLOSE_GRACEFUL && mode != XP_CLOSE_ABORT)
		return -EINVAL;
	switch (c->state) {
	case XP_CS_QUARANTINE:
		return -EALREADY;
	case XP_CS_DEAD:
		to_quarantine(core, c, c->err, now_ns);
		return 0;
	case XP_CS_CLOSING:
		if (mode == XP_CLOSE_GRACEFUL)
			return -EALREADY;
		break;
	default:
		break;
	}
	if (mode == XP_CLOSE_ABORT || !c->bound) {
		/* An unbound connection has no peer to finish anything with. */
		fail_all_ops(core, c, -ECANCELED);
		c->ctl_pend = 0;
		c->close_rtx_ns = 0;
		if (mode == XP_CLOSE_ABORT)
			start_reset(core, c, XP_RESET_ABORT);
		to_quarantine(core, c, mode == XP_CLOSE_ABORT ? -ECANCELED : 0, now_ns);
		return 0;
	}
	c->state = XP_CS_CLOSING;
	c->ctl_pend |= XP_CTL_FIN;
	want_ctrl(core, c);
	xp_conn_check_closed(core, c, now_ns);
	xp_conn_rearm(core, c, now_ns);
	return 0;
}

/* Record handling */

struct xp_conn *xp_conn_for_record(struct xp_core *core, const struct xp_rec *rec,
				   uint32_t peer, enum xp_drop *why)
{
	struct xp_conn *c;

	if (rec->conn >= core->cfg.max_conns || core->conns[rec->conn].state == XP_CS_FREE) {
		*why = XP_DROP_REC_UNKNOWN_CONN;
		return NULL;
	}
	c = &core->conns[rec->conn];
	if (rec->nonce != c->nonce) {
		*why = XP_DROP_REC_WRONG_NONCE;
		return NULL;
	}
	if (c->bound) {
		if (peer != c->ctrl_peer) {
			*why = XP_DROP_REC_WRONG_PEER;
			return NULL;
		}
		return c;
	}
	/*
	 * Before the bind the peer is not known yet: only a CTS is taken (it may beat the bind;
	 * the rest is retransmitted), only from the peer the first one came from, and only held:
	 * the bind drops it unless the bootstrap names that peer (pre_bind_check()).
	 */
	if (rec->type != XP_REC_CTS) {
		*why = XP_DROP_REC_UNEXPECTED;
		return NULL;
	}
	if (c->pre_heard && peer != c->pre_peer) {
		*why = XP_DROP_REC_WRONG_PEER;
		return NULL;
	}
	c->pre_heard = true;
	c->pre_peer = peer;
	return c;
}

static void on_fin(struct xp_core *core, struct xp_conn *c, const struct xp_rec_fin *fin,
		   uint64_t now_ns)
{
	if (c->peer_fin) {
		if (fin->sends_total != c->peer_sends_total ||
		    fin->recvs_total != c->peer_recvs_total) {
			xp_drop(core, XP_DROP_FIN_BAD);
			return;
		}
		c->ctl_pend |= XP_CTL_FIN_ACK; /* our FIN_ACK was lost */
		want_ctrl(core, c);
		return;
	}
	/* Messages we finished receiving were sent; receives that took our sends were posted. */
	if (seq_diff(fin->sends_total, c->rw.below) < 0 ||
	    seq_diff(fin->recvs_total, c->sw.below) < 0) {
		xp_drop(core, XP_DROP_FIN_BAD);
		return;
	}
	c->peer_fin = true;
	c->peer_sends_total = fin->sends_total;
	c->peer_recvs_total = fin->recvs_total;
	c->ctl_pend |= XP_CTL_FIN_ACK;
	progress(c, now_ns);
	xp_recv_fail_from(core, c, fin->sends_total, -ECONNRESET);
	xp_send_fail_from(core, c, fin->recvs_total, -ECONNRESET);
	want_ctrl(core, c);
	xp_conn_check_closed(core, c, now_ns);
}

static void on_fin_ack(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (!c->fin_sent || c->fin_acked) {
		xp_drop(core, XP_DROP_REC_UNEXPECTED);
		return;
	}
	c->fin_acked = true;
	c->close_rtx_ns = 0;
	progress(c, now_ns);
	xp_conn_check_closed(core, c, now_ns);
}

static void on_peer_reset(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	xp_conn_fail(core, c, -ECONNRESET, 0, now_ns);
	c->reset_acked = true;
	c->ctl_pend |= XP_CTL_RESET_ACK;
	want_ctrl(core, c);
}

/* A record for a connection that is dead or quarantined. */
static void answer_closed(struct xp_core *core, struct xp_conn *c, const struct xp_rec *rec)
{
	switch (rec->type) {
	case XP_REC_RESET:
		c->reset_acked = true;
		c->close_rtx_ns = 0;
		c->ctl_pend &= (uint8_t)~XP_CTL_RESET;
		c->ctl_pend |= XP_CTL_RESET_ACK;
		break;
	case XP_REC_RESET_ACK:
		if (!c->reset_end || c->reset_acked) {
			xp_drop(core, XP_DROP_REC_UNEXPECTED);
			return;
		}
		c->reset_acked = true;
		c->close_rtx_ns = 0;
		return;
	default:
		/* After a reset, and to a keepalive (the prober waits on a connection gone here). */
		if (c->reset_end || rec->type == XP_REC_KEEPALIVE) {
			c->ctl_pend |= XP_CTL_RESET;
			if (!c->reset_reason)
				c->reset_reason = XP_RESET_CLOSED;
			xp_drop(core, XP_DROP_REC_CLOSED_CONN);
			break;
		}
		if (rec->type == XP_REC_FIN) {
			c->ctl_pend |= XP_CTL_FIN_ACK;
			break;
		}
		if (rec->type == XP_REC_ACK_REQ && xp_recv_done_ok(c, rec->u.msg_seq)) {
			c->done_ack_pend |= (uint16_t)(1u << (rec->u.msg_seq & XP_SLOT_MASK));
			break;
		}
		if (rec->type == XP_REC_ABORT && xp_recv_aborted(c, rec->u.msg_seq)) {
			c->abort_ack_pend |= (uint16_t)(1u << (rec->u.msg_seq & XP_SLOT_MASK));
			break;
		}
		xp_drop(core, XP_DROP_REC_CLOSED_CONN);
		return;
	}
	want_ctrl(core, c);
}

void xp_conn_on_record(struct xp_core *core, struct xp_conn *c, const struct xp_rec *rec,
		       uint64_t now_ns)
{
	if (!xp_conn_live(c)) {
		answer_closed(core, c, rec);
		return;
	}
	/* Waiting, not owed: any word from the peer shows it is there. */
	if (c->watch == XP_WATCH_IDLE)
		progress(c, now_ns);
	switch (rec->type) {
	case XP_REC_ACK:
		xp_conn_act(core, c, xp_send_on_ack(core, c, &rec->u.ack, now_ns), now_ns);
		break;
	case XP_REC_CTS:
		xp_conn_act(core, c, xp_send_on_cts(core, c, &rec->u.cts, now_ns), now_ns);
		break;
	case XP_REC_CTS_ACK:
	case XP_REC_ABORT:
	case XP_REC_ACK_REQ:
		xp_conn_act(core, c, xp_recv_on_seq_record(core, c, rec, now_ns), now_ns);
		break;
	case XP_REC_ABORT_ACK:
		xp_conn_act(core, c, xp_send_on_abort_ack(core, c, rec->u.msg_seq, now_ns), now_ns);
		break;
	case XP_REC_FIN:
		on_fin(core, c, &rec->u.fin, now_ns);
		break;
	case XP_REC_FIN_ACK:
		on_fin_ack(core, c, now_ns);
		break;
	case XP_REC_RESET:
		on_peer_reset(core, c, now_ns);
		break;
	case XP_REC_KEEPALIVE:
		c->ctl_pend |= XP_CTL_KEEPALIVE_ACK;
		want_ctrl(core, c);
		break;
	case XP_REC_KEEPALIVE_ACK:
		break; /* heard: that was all it was for */
	default: /* RESET_ACK while live: we never sent a RESET */
		xp_drop(core, XP_DROP_REC_UNEXPECTED);
		break;
	}
}

/*
 * What the liveness clock watches: something the peer owes (chunks unacknowledged, a CTS,
 * ABORT or FIN unanswered), or, with nothing owed, operations waiting on the peer (receives
 * posted, sends queued for a CTS). Unbound connections are the bootstrap's to time out.
 */
static enum xp_watch watch_of(const struct xp_conn *c)
{
	if (!xp_conn_live(c) || !c->bound)
		return XP_WATCH_NONE;
	if (c->in_flight_chunks || c->lost_chunks || c->cts_unconfirmed || c->abort_unacked ||
	    (c->state == XP_CS_CLOSING && fin_needed(c)))
		return XP_WATCH_OWED;
	return c->ops_open ? XP_WATCH_IDLE : XP_WATCH_NONE;
}

/*
 * A keepalive goes a quarter of the limit after the last word from the peer; one unanswered
 * goes again after the control RTO, backed off, like any control record (a lost KEEPALIVE or
 * KEEPALIVE_ACK must not cost a quarter of the limit).
 */
static uint64_t keepalive_at(const struct xp_core *core, const struct xp_conn *c)
{
	if (c->ka_sent_ns > c->last_progress_ns)
		return c->ka_sent_ns + xp_rto_ctl_ns(core, c, c->ka_backoff);
	return c->last_progress_ns + c->no_progress_ns / 4;
}

/* An idle connection with operations waiting asks whether its peer is still there. */
static void keepalive_due(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (c->watch != XP_WATCH_IDLE || !c->no_progress_ns || now_ns < keepalive_at(core, c))
		return;
	if (c->ka_sent_ns <= c->last_progress_ns)
		c->ka_backoff = 0;
	else if (c->ka_backoff < XP_BACKOFF_MAX)
		c->ka_backoff++;
	c->ka_sent_ns = now_ns;
	c->ctl_pend |= XP_CTL_KEEPALIVE;
	want_ctrl(core, c);
}

/* Timers */

static uint64_t close_interval_ns(const struct xp_core *core, const struct xp_conn *c)
{
	return xp_rto_ctl_ns(core, c, c->close_backoff);
}

/* FIN or RESET retransmission, when its timer is due. */
static void close_rtx_due(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (!c->close_rtx_ns || now_ns < c->close_rtx_ns)
		return;
	c->close_rtx_ns = 0;
	if (c->state == XP_CS_CLOSING && c->fin_sent && fin_needed(c)) {
		c->ctl_pend |= XP_CTL_FIN;
	} else if (c->reset_end && !c->reset_acked && c->close_backoff < XP_CLOSE_RTX_MAX) {
		c->ctl_pend |= XP_CTL_RESET;
	} else {
		return;
	}
	if (c->close_backoff < XP_BACKOFF_MAX)
		c->close_backoff++;
	want_ctrl(core, c);
}

void xp_conn_on_close_record_sent(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	if (!c->close_rtx_ns)
		c->close_rtx_ns = now_ns + close_interval_ns(core, c);
}

void xp_conn_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	unsigned news;

	switch (c->state) {
	case XP_CS_FREE:
		return;
	case XP_CS_QUARANTINE:
		if (now_ns >= c->quarantine_until_ns) {
			if (!c->close_comp_pending) {
				conn_free(core, c);
				return;
			}
			/* Its close completion is not out yet: keep the id a little longer. */
			c->quarantine_until_ns = now_ns + core->rto.granularity_ns;
		}
		close_rtx_due(core, c, now_ns);
		break;
	case XP_CS_DEAD:
		close_rtx_due(core, c, now_ns);
		break;
	default:
		if (c->no_progress_ns && c->watch &&
		    now_ns >= c->last_progress_ns + c->no_progress_ns) {
			core->stats.conns_timed_out++;
			xp_conn_fail(core, c, -ETIMEDOUT, XP_RESET_TIMEOUT, now_ns);
			return;
		}
		keepalive_due(core, c, now_ns);
		news = xp_rack_on_timer(core, c, now_ns);
		news |= xp_send_on_timer(core, c, now_ns);
		news |= xp_recv_on_timer(core, c, now_ns);
		xp_conn_act(core, c, news, now_ns);
		close_rtx_due(core, c, now_ns);
		if (c->cc_tick_ns && now_ns >= c->cc_tick_ns) {
			c->cc.ops->tick(c->cc.ctx, c->cc_flow, now_ns);
			c->cc_tick_ns = 0;
			xp_conn_want_send(core, c);
		}
		break;
	}
	xp_conn_rearm(core, c, now_ns);
}

static void earliest(uint64_t *d, uint64_t t)
{
	if (t && t < *d)
		*d = t;
}

void xp_conn_rearm(struct xp_core *core, struct xp_conn *c, uint64_t now_ns)
{
	uint64_t d = UINT64_MAX;
	enum xp_watch w = watch_of(c);

	if (c->state == XP_CS_FREE) {
		xp_timerq_cancel(&core->timers, c->id);
		return;
	}
	/*
	 * The clock starts when the watch begins (something owed, or operations waiting). From
	 * owed to waiting or back it runs on: the peer's silence counts from its last word, so a
	 * dead peer is found one limit after it went, whatever the connection started meanwhile.
	 */
	if (w != XP_WATCH_NONE && c->watch == XP_WATCH_NONE)
		c->last_progress_ns = now_ns;
	c->watch = (uint8_t)w;
	if (c->state == XP_CS_QUARANTINE)
		earliest(&d, c->quarantine_until_ns);
	earliest(&d, c->close_rtx_ns);
	if (xp_conn_live(c)) {
		earliest(&d, xp_rack_deadline(&c->rack));
		earliest(&d, c->abort_rtx_ns);
		earliest(&d, xp_recv_cts_deadline(core, c));
		if (c->no_progress_ns && w)
			earliest(&d, c->last_progress_ns + c->no_progress_ns);
		if (c->no_progress_ns && w == XP_WATCH_IDLE)
			earliest(&d, keepalive_at(core, c));
		if (c->cc_info.tick_ns && xp_send_busy(c)) {
			if (!c->cc_tick_ns)
				c->cc_tick_ns = now_ns + c->cc_info.tick_ns;
			earliest(&d, c->cc_tick_ns);
		} else {
			c->cc_tick_ns = 0;
		}
	}
	if (d == UINT64_MAX)
		xp_timerq_cancel(&core->timers, c->id);
	else
		xp_timerq_set(&core->timers, c->id, d);
}
