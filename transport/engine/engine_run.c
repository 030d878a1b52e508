// SPDX-License-Identifier: MIT
/*
 * engine_run.c - an engine's loop body (xp_engine_run_once()): commands in,
 * datapath events in, timers, the core's actions out to the datapath,
 * completions out to the application. Whoever runs the engine calls it: its
 * thread (engine_thread.c), the application's poll (INLINE progress,
 * xp_engine_progress()), or a driver (EXTERNAL).
 *
 * One run:
 *   1. publish completions that waited for ring room (engine_comp.c);
 *   2. take up to 64 commands: posts go to the core (engine_op.c; a refused
 *      post completes at once), closes and control requests to
 *      engine_conn.c; then the ports' submissions (port.c);
 *   3. poll the datapath (up to 4 x 64 events) into the core;
 *   4. run the core's timers if one is due;
 *   5. drain the core: writes in bursts of at most the datapath's free send
 *      slots, control packets one by one, completions (an operation's to
 *      engine_op.c, a connection's CLOSE to engine_conn.c);
 *   6. wake the application's waiter if anything was published; flush the ports.
 *
 * An engine going away (xp_engine_destroy(), or the process exiting with it
 * alive: engine.c) aborts its connections and drains once more, so that
 * every peer gets a RESET at once (xp_engine_reset_peers()).
 */

#include "engine_int.h"

static void cmd_ctl(struct xp_engine *e, struct xp_ctl *ctl, uint64_t now)
{
	bool notify = ctl->notify;
	uint64_t token = ctl->token;

	ctl->diag.msg[0] = '\0';
	xp_engine_ctl(e, ctl, now);
	/* After done is set the caller may free the request: read nothing of it after. */
	if (notify) {
		struct xp_engine_comp c = { .kind = XP_ECOMP_CTL, .status = ctl->status,
					    .conn = ctl->conn, .cookie = token, .ctl = ctl };

		atomic_store_explicit(&ctl->done, 1, memory_order_release);
		xp_engine_complete(e, &c);
	} else {
		atomic_store_explicit(&ctl->done, 1, memory_order_release);
	}
}

static uint32_t take_commands(struct xp_engine *e, uint64_t now)
{
	uint32_t n = 0;

	while (n < XP_ENGINE_CMD_BURST) {
		const struct xp_cmd *p = xp_mpsc_peek(&e->cmds);
		struct xp_cmd c;

		if (!p)
			break;
		c = *p;
		xp_mpsc_release(&e->cmds);
		n++;
		switch (c.op) {
		case XP_CMD_SEND:
		case XP_CMD_RECV:
			xp_engine_post(e, &c, NULL, now);
			break;
		case XP_CMD_CLOSE:
			xp_engine_close(e, &c, now);
			break;
		case XP_CMD_CTL:
			cmd_ctl(e, c.ctl, now);
			break;
		default:
			break;
		}
	}
	XP_ENGINE_STAT_ADD(e, commands, n);
	return n;
}

static uint32_t poll_datapath(struct xp_engine *e, uint64_t now)
{
	uint32_t total = 0;

	for (uint32_t round = 0; round < XP_ENGINE_POLLS; round++) {
		int n = xp_dp_poll(e->dp, e->evs, XP_ENGINE_EVENT_BURST);

		for (int i = 0; i < n; i++) {
			const struct xp_dp_event *ev = &e->evs[i];

			switch (ev->kind) {
			case XP_DP_EV_CHUNK:
				xp_core_on_chunk(e->core, ev->imm, ev->len, ev->path, ev->ecn_ce,
						 now);
				break;
			case XP_DP_EV_CTRL:
				xp_core_on_ctrl(e->core, ev->peer, ev->bytes, ev->len, now);
				break;
			case XP_DP_EV_WRITE_DONE:
				xp_core_on_write_done(e->core, ev->token, ev->status, now);
				break;
			default:
				break;
			}
		}
		if (n <= 0)
			break;
		total += (uint32_t)n;
		if (n < XP_ENGINE_EVENT_BURST)
			break;
	}
	XP_ENGINE_STAT_ADD(e, events, total);
	return total;
}

static void on_core_completion(struct xp_engine *e, const struct xp_completion *c)
{
	if (c->kind == XP_COMP_CLOSE)
		xp_engine_conn_closed(e, c->conn, c->status);
	else
		xp_engine_op_done(e, c);
}

static uint32_t drain(struct xp_engine *e, uint64_t now)
{
	struct xp_batch b = { .acts = e->acts, .cap = XP_ENGINE_ACTIONS,
			      .ctrl_buf = e->ctrl_buf, .ctrl_cap = XP_ENGINE_CTRL_BUF };
	uint32_t total = 0;

	for (;;) {
		uint32_t slots = xp_dp_send_slots(e->dp), n, nw = 0;

		xp_batch_reset(&b, slots < XP_ENGINE_ACTIONS ? slots : XP_ENGINE_ACTIONS);
		n = xp_core_drain(e->core, now, &b);
		if (!n)
			break;
		total += n;
		for (uint32_t i = 0; i < b.n; i++) {
			const struct xp_action *a = &b.acts[i];

			switch (a->kind) {
			case XP_ACT_WRITE:
				e->writes[nw++] = a->u.write;
				break;
			case XP_ACT_CTRL:
				xp_dp_post_ctrl(e->dp, a->u.ctrl.peer, a->u.ctrl.bytes, a->u.ctrl.len);
				XP_ENGINE_STAT_ADD(e, ctrl_sent, 1);
				break;
			case XP_ACT_COMPLETE:
				on_core_completion(e, &a->u.comp);
				break;
			default:
				break;
			}
		}
		if (nw) {
			uint32_t posted = xp_dp_post_writes(e->dp, e->writes, nw);

			XP_ENGINE_STAT_ADD(e, writes, posted);
			XP_ENGINE_STAT_ADD(e, writes_dropped, nw - posted);
		}
	}
	return total;
}

static void wake_waiter(struct xp_engine *e)
{
	struct xp_waiter *w = e->cfg.waiter;

	e->published = false;
	if (!w)
		return;
	(void)xp_wake_ring(&w->waiting, w->efd); /* xp_wake.h: paired with the waiter's arm */
}

uint32_t xp_engine_run_once(struct xp_engine *e, uint64_t now_ns)
{
	uint32_t work = 0;

	XP_ENGINE_STAT_ADD(e, runs, 1);
	work += xp_engine_overflow_flush(e);
	work += take_commands(e, now_ns);
	work += xp_engine_ports_intake(e, now_ns);
	work += poll_datapath(e, now_ns);
	if (now_ns >= xp_core_next_deadline(e->core)) {
		xp_core_timer(e->core, now_ns);
		work++;
	}
	work += drain(e, now_ns);
	if (e->published)
		wake_waiter(e);
	xp_engine_ports_flush(e);
	if (work)
		XP_ENGINE_STAT_ADD(e, busy_runs, 1);
	else
		XP_ENGINE_STAT_ADD(e, idle_polls, 1);
	return work;
}

#define XP_ENGINE_LAST_POLLS 16 /* polls after the RESETs went, for the datapath to send them */

void xp_engine_reset_peers(struct xp_engine *e)
{
	uint64_t now = xp_dp_now_ns(e->dp);

	if (e->torn_down)
		return;
	e->torn_down = true;
	for (uint32_t i = 0; i < e->cfg.core.max_conns; i++)
		if (e->conns[i].state != ECONN_FREE)
			(void)xp_conn_close(e->core, i, XP_CLOSE_ABORT, now); /* -EALREADY: gone */
	drain(e, now);
	/* Reap send completions, so that a datapath that needs them (verbs) lets the RESETs go. */
	for (int k = 0; k < XP_ENGINE_LAST_POLLS; k++)
		if (xp_dp_poll(e->dp, e->evs, XP_ENGINE_EVENT_BURST) <= 0)
			break;
}

uint32_t xp_engine_progress(struct xp_engine *e)
{
	uint32_t work;

	if (pthread_mutex_trylock(&e->run_lock) != 0)
		return 0;
	work = xp_engine_run_once(e, xp_dp_now_ns(e->dp));
	pthread_mutex_unlock(&e->run_lock);
	return work;
}

bool xp_engine_has_input(struct xp_engine *e)
{
	uint64_t tail = atomic_load_explicit(&e->cmds.tail, memory_order_acquire);

	return tail != e->cmds.head;
}
