// SPDX-License-Identifier: MIT
/*
 * cc_pcm.c - xp_cc_ops over PCM shells (cc_pcm.h).
 *
 * Signal mapping (the core's events -> one pcm_event each; times ns -> ps):
 *   ACK record  ACK = chunks newly acked, DATA_TX = their bytes, RTT = the
 *               Karn-clean sample, ECN = CE-marked chunks echoed, ECN_EV and
 *               ACK_EV = entropy of the echoed chunk's path (ECN_EV only when
 *               that chunk was CE-marked), QUEUE_DELAY = the receiver's hold
 *               of it, IN_FLIGHT, TX_BACKLOG_BYTES;
 *   loss        NACK = chunks declared lost, DATA_NACKED = their bytes,
 *               NACK_EV = entropy of the last one's path, IN_FLIGHT,
 *               TX_BACKLOG_BYTES;
 *   RTO         RTO = 1, IN_FLIGHT;
 *   transmit    TX_READY_PKTS = 1 (a chunk is about to go; EV is read right
 *               after), TX_BACKLOG_BYTES, IN_FLIGHT (only to packages that
 *               read TX_READY_PKTS, e.g. LB);
 *   tick        no sample: ELAPSED_TIME timers fire (packages with one).
 * FLOW_SEED goes in every event. Counts of zero are not marked valid, so a
 * record without news does not touch a LAST signal. Every event is masked
 * with the target's signals: a signal the datapath does not provide is
 * never fed, even where the core could compute it.
 *
 * Controls: CWND from the package that drives it (none: no window), RATE
 * likewise (none: line rate, unpaced), EV from the package that drives it
 * (none: the core's power of two choices).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_pcm.h"
#include "shell.h"

#define BIT(t) ((pcm_uint)1 << (t))
#define PS_PER_NS 1000u
#define DEFAULT_TICK_NS 10000u
#define INLINE_POLL_BUDGET 16u

struct pkg_shell {
	const struct pcm_package *pkg;
	struct pcm_shell *sync;
	struct pcm_async *async;
	bool wants_tx;  /* reads TX_READY_PKTS */
	bool has_timer; /* has an ELAPSED_TIME trigger */
};

/*
 * Flow slots over fixed-size shells. This is what becomes add/remove of
 * dynamic flows when the shells have them.
 */
struct slot_alloc {
	uint32_t n;
	uint32_t fresh; /* slots below were handed out at least once */
	uint32_t *free; /* reusable slots (synchronous shells only) */
	uint32_t n_free;
	uint32_t open;
	bool reuse;
};

struct xp_cc_pcm {
	struct xp_cc_pcm_config cfg;
	struct pkg_shell pkgs[2];
	uint32_t n_pkgs;
	int ctl_pkg[PCM_CTRL_COUNT]; /* package index driving each control, or -1 */
	pcm_uint provided;           /* the target's signals */
	struct slot_alloc slots;
	uint64_t *seed;              /* FLOW_SEED per slot */
	bool wants_tx;
	bool has_timer;
	uint64_t handler_errors;
};

void xp_cc_pcm_config_default(struct xp_cc_pcm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = XP_CC_PCM_SYNC;
	pcm_async_config_default(&cfg->async);
	cfg->max_flows = 1024;
	cfg->tick_ns = DEFAULT_TICK_NS;
}

/* The small shell interface: one switch per operation over the two kinds. */

static void shell_poll_inline(const struct xp_cc_pcm *p, const struct pkg_shell *ps,
			      uint32_t slot)
{
	int worker;

	if (!ps->async || !p->cfg.async_inline)
		return;
	worker = pcm_async_worker_of(ps->async, slot);
	if (worker >= 0)
		pcm_async_poll(ps->async, (uint32_t)worker, INLINE_POLL_BUDGET);
}

static int shell_feed(struct xp_cc_pcm *p, struct pkg_shell *ps, uint32_t slot,
		      const struct pcm_event *ev, pcm_uint now_ps)
{
	int rc;

	if (ps->sync)
		return pcm_shell_feed(ps->sync, slot, ev, now_ps);
	rc = pcm_async_feed(ps->async, slot, ev, now_ps);
	shell_poll_inline(p, ps, slot);
	return rc;
}

static int shell_tick(struct xp_cc_pcm *p, struct pkg_shell *ps, uint32_t slot, pcm_uint now_ps)
{
	int rc;

	if (ps->sync)
		return pcm_shell_tick(ps->sync, slot, now_ps);
	rc = pcm_async_tick(ps->async, slot, now_ps);
	shell_poll_inline(p, ps, slot);
	return rc;
}

static int shell_control(const struct pkg_shell *ps, uint32_t slot, pcm_control_t type,
			 pcm_uint *v)
{
	if (ps->sync)
		return pcm_shell_control(ps->sync, slot, type, v);
	return pcm_async_control(ps->async, slot, type, v);
}

static void shell_reset(struct pkg_shell *ps, uint32_t slot, pcm_uint now_ps)
{
	if (ps->sync)
		pcm_shell_flow_reset(ps->sync, slot, now_ps);
}

static size_t shell_bytes_per_flow(const struct pkg_shell *ps)
{
	return ps->sync ? pcm_shell_bytes_per_flow(ps->sync) : pcm_async_bytes_per_flow(ps->async);
}

static void shell_destroy(struct pkg_shell *ps)
{
	pcm_shell_destroy(ps->sync);
	pcm_async_destroy(ps->async);
	ps->sync = NULL;
	ps->async = NULL;
}

/* Slot allocator. */

static int slots_init(struct slot_alloc *s, uint32_t n, bool reuse)
{
	s->free = malloc((size_t)n * sizeof(*s->free));
	if (!s->free)
		return -ENOMEM;
	s->n = n;
	s->fresh = s->n_free = s->open = 0;
	s->reuse = reuse;
	return 0;
}

/* Return: 1 with a reused slot (reset it), 0 with a fresh one, -ENOSPC. */
static int slot_take(struct slot_alloc *s, uint32_t *slot)
{
	if (s->n_free) {
		*slot = s->free[--s->n_free];
		s->open++;
		return 1;
	}
	if (s->fresh == s->n)
		return -ENOSPC;
	*slot = s->fresh++;
	s->open++;
	return 0;
}

static void slot_give(struct slot_alloc *s, uint32_t slot)
{
	s->open--;
	if (s->reuse)
		s->free[s->n_free++] = slot;
}

/* Setup. */

static bool has_timer_trigger(const struct pcm_package *pkg)
{
	for (uint32_t k = 0; k < pkg->n_signals; k++)
		if (pkg->signals[k].type == PCM_SIG_ELAPSED_TIME &&
		    pkg->signals[k].trigger != PCM_SIG_TRIGGER_NONE &&
		    pkg->signals[k].threshold != PCM_SIG_NO_TRIGGER)
			return true;
	return false;
}

static int add_package(struct xp_cc_pcm *p, const struct pcm_package *pkg,
		       struct pcm_diag *diag)
{
	struct pkg_shell *ps = &p->pkgs[p->n_pkgs];
	pcm_uint now_ps = p->cfg.now_ns * PS_PER_NS;
	int rc;

	for (int t = 0; t < PCM_CTRL_COUNT; t++) {
		if (!(pkg->control_types & (1u << t)))
			continue;
		if (p->ctl_pkg[t] >= 0) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "packages '%s' and '%s' both drive %s: an LB package may only "
				 "drive controls the CC package leaves alone",
				 p->pkgs[p->ctl_pkg[t]].pkg->name, pkg->name,
				 pcm_control_name((pcm_control_t)t));
			return -EINVAL;
		}
		p->ctl_pkg[t] = (int)p->n_pkgs;
	}
	ps->pkg = pkg;
	if (p->cfg.mode == XP_CC_PCM_SYNC)
		rc = pcm_shell_create(pkg, p->cfg.target, p->cfg.max_flows, now_ps, &ps->sync, diag);
	else
		rc = pcm_async_create(pkg, p->cfg.target, p->cfg.max_flows, now_ps, &p->cfg.async,
				      &ps->async, diag);
	if (rc < 0)
		return rc;
	ps->wants_tx = pkg->signal_types & BIT(PCM_SIG_TX_READY_PKTS);
	ps->has_timer = has_timer_trigger(pkg);
	p->wants_tx |= ps->wants_tx;
	p->has_timer |= ps->has_timer;
	p->n_pkgs++;
	return 0;
}

int xp_cc_pcm_create(const struct xp_cc_pcm_config *cfg, struct xp_cc_pcm **out,
		     struct pcm_diag *diag)
{
	const struct pcm_target *target;
	struct xp_cc_pcm *p;
	int rc;

	diag->msg[0] = '\0';
	if (!cfg || !cfg->cc || !cfg->max_flows) {
		snprintf(diag->msg, sizeof(diag->msg), "a CC package and max_flows >= 1 are needed");
		return -EINVAL;
	}
	target = cfg->target ? cfg->target : pcm_target_find("reference");
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	p->cfg.target = target;
	if (!p->cfg.tick_ns)
		p->cfg.tick_ns = DEFAULT_TICK_NS;
	p->provided = target->signals;
	for (int t = 0; t < PCM_CTRL_COUNT; t++)
		p->ctl_pkg[t] = -1;
	p->seed = calloc(cfg->max_flows, sizeof(*p->seed));
	rc = p->seed ? slots_init(&p->slots, cfg->max_flows, cfg->mode == XP_CC_PCM_SYNC)
		     : -ENOMEM;
	if (rc == 0)
		rc = add_package(p, cfg->cc, diag);
	if (rc == 0 && cfg->lb)
		rc = add_package(p, cfg->lb, diag);
	if (rc < 0) {
		xp_cc_pcm_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

void xp_cc_pcm_destroy(struct xp_cc_pcm *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_pkgs; i++)
		shell_destroy(&p->pkgs[i]);
	free(p->slots.free);
	free(p->seed);
	free(p);
}

int xp_cc_pcm_start(struct xp_cc_pcm *p)
{
	if (p->cfg.mode != XP_CC_PCM_ASYNC || p->cfg.async_inline)
		return 0;
	for (uint32_t i = 0; i < p->n_pkgs; i++) {
		int rc = pcm_async_start(p->pkgs[i].async);

		if (rc < 0) {
			xp_cc_pcm_stop(p);
			return rc;
		}
	}
	return 0;
}

void xp_cc_pcm_stop(struct xp_cc_pcm *p)
{
	for (uint32_t i = 0; i < p->n_pkgs; i++)
		if (p->pkgs[i].async)
			pcm_async_stop(p->pkgs[i].async);
}

size_t xp_cc_pcm_bytes_per_flow(const struct xp_cc_pcm *p)
{
	size_t n = sizeof(*p->seed);

	for (uint32_t i = 0; i < p->n_pkgs; i++)
		n += shell_bytes_per_flow(&p->pkgs[i]);
	return n;
}

uint32_t xp_cc_pcm_flows_open(const struct xp_cc_pcm *p)
{
	return p->slots.open;
}

int xp_cc_pcm_peek(const struct xp_cc_pcm *p, unsigned which, uint32_t flow, pcm_uint *out)
{
	const struct pkg_shell *ps;

	if (which >= p->n_pkgs || flow >= p->cfg.max_flows)
		return -ERANGE;
	ps = &p->pkgs[which];
	if (ps->async)
		return pcm_async_flow_peek(ps->async, flow, out);
	memcpy(out, pcm_shell_record(ps->sync, flow), ps->pkg->handler_slots * sizeof(*out));
	return 0;
}

uint64_t xp_cc_pcm_handler_calls(const struct xp_cc_pcm *p)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->n_pkgs; i++) {
		struct pcm_shell_stats st;

		if (!p->pkgs[i].sync)
			continue;
		pcm_shell_stats(p->pkgs[i].sync, &st);
		n += st.handler_calls;
	}
	return n;
}

/* The ops. */

/* Feed @ev (masked by the target) to the packages; TX events only to those that read them. */
static void feed(struct xp_cc_pcm *p, uint32_t slot, struct pcm_event *ev, uint64_t now_ns,
		 bool tx)
{
	pcm_uint now_ps = now_ns * PS_PER_NS;

	ev->valid |= BIT(PCM_SIG_FLOW_SEED);
	ev->values[PCM_SIG_FLOW_SEED] = p->seed[slot];
	ev->valid &= p->provided;
	for (uint32_t i = 0; i < p->n_pkgs; i++) {
		if (tx && !p->pkgs[i].wants_tx)
			continue;
		if (shell_feed(p, &p->pkgs[i], slot, ev, now_ps) < 0)
			p->handler_errors++;
	}
}

static void set(struct pcm_event *ev, pcm_signal_t t, pcm_uint v)
{
	ev->valid |= BIT(t);
	ev->values[t] = v;
}

static void set_count(struct pcm_event *ev, pcm_signal_t t, pcm_uint v)
{
	if (v)
		set(ev, t, v);
}

static void pcm_info(void *ctx, struct xp_cc_info *info)
{
	struct xp_cc_pcm *p = ctx;

	info->wants_tx = p->wants_tx;
	info->tick_ns = p->has_timer ? p->cfg.tick_ns : 0;
}

static int pcm_flow_open(void *ctx, uint64_t flow_seed, uint64_t now_ns, uint32_t *flow)
{
	struct xp_cc_pcm *p = ctx;
	int rc = slot_take(&p->slots, flow);

	if (rc < 0)
		return rc;
	if (rc == 1)
		for (uint32_t i = 0; i < p->n_pkgs; i++)
			shell_reset(&p->pkgs[i], *flow, now_ns * PS_PER_NS);
	p->seed[*flow] = flow_seed ? flow_seed : 1;
	return 0;
}

static void pcm_flow_close(void *ctx, uint32_t flow, uint64_t now_ns)
{
	struct xp_cc_pcm *p = ctx;

	slot_give(&p->slots, flow);
}

static void pcm_on_ack(void *ctx, uint32_t flow, const struct xp_cc_ack *a, uint64_t now_ns)
{
	struct pcm_event ev = { 0 };

	set_count(&ev, PCM_SIG_ACK, a->acked_chunks);
	set_count(&ev, PCM_SIG_DATA_TX, a->acked_bytes);
	set_count(&ev, PCM_SIG_ECN, a->ecn_ce);
	if (a->rtt_ns) {
		set(&ev, PCM_SIG_RTT, a->rtt_ns * PS_PER_NS);
		set(&ev, PCM_SIG_QUEUE_DELAY, a->hold_ns * PS_PER_NS);
	}
	set(&ev, PCM_SIG_ACK_EV, a->ev);
	if (a->echo_ce)
		set(&ev, PCM_SIG_ECN_EV, a->ev);
	set(&ev, PCM_SIG_IN_FLIGHT, a->in_flight_bytes);
	set(&ev, PCM_SIG_TX_BACKLOG_BYTES, a->backlog_bytes);
	feed(ctx, flow, &ev, now_ns, false);
}

static void pcm_on_loss(void *ctx, uint32_t flow, const struct xp_cc_loss *l, uint64_t now_ns)
{
	struct pcm_event ev = { 0 };

	set_count(&ev, PCM_SIG_NACK, l->lost_chunks);
	set_count(&ev, PCM_SIG_DATA_NACKED, l->lost_bytes);
	set(&ev, PCM_SIG_NACK_EV, l->ev);
	set(&ev, PCM_SIG_IN_FLIGHT, l->in_flight_bytes);
	set(&ev, PCM_SIG_TX_BACKLOG_BYTES, l->backlog_bytes);
	feed(ctx, flow, &ev, now_ns, false);
}

static void pcm_on_rto(void *ctx, uint32_t flow, uint64_t in_flight_bytes, uint64_t now_ns)
{
	struct pcm_event ev = { 0 };

	set(&ev, PCM_SIG_RTO, 1);
	set(&ev, PCM_SIG_IN_FLIGHT, in_flight_bytes);
	feed(ctx, flow, &ev, now_ns, false);
}

static void pcm_on_tx(void *ctx, uint32_t flow, uint64_t backlog_bytes, uint64_t in_flight_bytes,
		      uint64_t now_ns)
{
	struct pcm_event ev = { 0 };

	set(&ev, PCM_SIG_TX_READY_PKTS, 1);
	set(&ev, PCM_SIG_TX_BACKLOG_BYTES, backlog_bytes);
	set(&ev, PCM_SIG_IN_FLIGHT, in_flight_bytes);
	feed(ctx, flow, &ev, now_ns, true);
}

static void pcm_tick(void *ctx, uint32_t flow, uint64_t now_ns)
{
	struct xp_cc_pcm *p = ctx;

	for (uint32_t i = 0; i < p->n_pkgs; i++)
		if (p->pkgs[i].has_timer && shell_tick(p, &p->pkgs[i], flow, now_ns * PS_PER_NS) < 0)
			p->handler_errors++;
}

static void pcm_read(void *ctx, uint32_t flow, struct xp_cc_ctl *ctl)
{
	struct xp_cc_pcm *p = ctx;
	pcm_uint v;

	ctl->cwnd_bytes = UINT64_MAX;
	ctl->rate = PCM_RATE_ONE;
	ctl->has_ev = false;
	ctl->ev = 0;
	if (p->ctl_pkg[PCM_CTRL_CWND] >= 0 &&
	    shell_control(&p->pkgs[p->ctl_pkg[PCM_CTRL_CWND]], flow, PCM_CTRL_CWND, &v) == 0)
		ctl->cwnd_bytes = v;
	if (p->ctl_pkg[PCM_CTRL_RATE] >= 0 &&
	    shell_control(&p->pkgs[p->ctl_pkg[PCM_CTRL_RATE]], flow, PCM_CTRL_RATE, &v) == 0)
		ctl->rate = v;
	if (p->ctl_pkg[PCM_CTRL_EV] >= 0 &&
	    shell_control(&p->pkgs[p->ctl_pkg[PCM_CTRL_EV]], flow, PCM_CTRL_EV, &v) == 0) {
		ctl->has_ev = true;
		ctl->ev = v;
	}
}

static const struct xp_cc_ops pcm_ops = {
	.name = "pcm",
	.info = pcm_info,
	.flow_open = pcm_flow_open,
	.flow_close = pcm_flow_close,
	.on_ack = pcm_on_ack,
	.on_loss = pcm_on_loss,
	.on_rto = pcm_on_rto,
	.on_tx = pcm_on_tx,
	.tick = pcm_tick,
	.read = pcm_read,
};

struct xp_cc_binding xp_cc_pcm_binding(struct xp_cc_pcm *p)
{
	struct xp_cc_binding b = { &pcm_ops, p };

	return b;
}
