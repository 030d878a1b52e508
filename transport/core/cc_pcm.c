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
 * Controls, per flow from the packages it runs now: CWND from the one that
 * drives it (none: no window), RATE likewise (none: line rate, unpaced), EV
 * likewise (none: the core's power of two choices).
 *
 * Flows: shell 0 runs the CC packages, shell 1 (made when a flow first needs
 * one) the LB packages. A connection's flow is its CC shell handle; its LB
 * flow, if any, has its own handle in shell 1, on the same worker.
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
#define NO_FLOW UINT32_MAX
#define KIND_CC 0u
#define KIND_LB 1u
#define KINDS 2u

/* One shell: synchronous or asynchronous. */
struct kind_shell {
	struct pcm_shell *sync;
	struct pcm_async *async;
};

/* A connection's flow, by its CC handle. */
struct flow_state {
	const struct pcm_package *pkg[KINDS]; /* pkg[KIND_CC] NULL: the handle is free */
	uint32_t handle[KINDS];               /* in each shell; NO_FLOW without one */
	uint32_t worker;
	uint64_t seed;
};

/* Room per flow each shell reserves (for packages swapped to later). */
struct room {
	uint32_t record_slots, window_slots, pub_slots, control_slots;
};

struct xp_cc_pcm {
	struct xp_cc_pcm_config cfg;
	struct kind_shell shells[KINDS];
	struct room room;
	bool started;
	pcm_uint provided;           /* the target's signals */
	struct flow_state *flows;    /* by CC handle */
	uint32_t flows_cap;
	uint32_t open;
	uint32_t *worker_load;       /* ASYNC: flows per worker */
	bool wants_tx;               /* some package ever added reads TX_READY_PKTS */
	bool has_timer;              /* some package ever added has an ELAPSED_TIME trigger */
	uint64_t handler_errors;
};

void xp_cc_pcm_config_default(struct xp_cc_pcm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = XP_CC_PCM_SYNC;
	pcm_async_config_default(&cfg->async);
	cfg->max_flows = 1024;
	cfg->numa_node = -1;
	cfg->tick_ns = DEFAULT_TICK_NS;
}

static pcm_uint ps_of(uint64_t ns)
{
	return (pcm_uint)ns * PS_PER_NS;
}

/* ---- the small shell interface: one switch per operation over the two kinds ------------- */

static void shell_poll_inline(const struct xp_cc_pcm *p, const struct kind_shell *ks,
			      uint32_t handle)
{
	int worker;

	if (!ks->async || !p->cfg.async_inline)
		return;
	worker = pcm_async_worker_of(ks->async, handle);
	if (worker >= 0)
		pcm_async_poll(ks->async, (uint32_t)worker, INLINE_POLL_BUDGET);
}

static int shell_feed(struct xp_cc_pcm *p, struct kind_shell *ks, uint32_t handle,
		      const struct pcm_event *ev, pcm_uint now_ps)
{
	int rc;

	if (ks->sync)
		return pcm_shell_feed(ks->sync, handle, ev, now_ps);
	rc = pcm_async_feed(ks->async, handle, ev, now_ps);
	shell_poll_inline(p, ks, handle);
	return rc;
}

static int shell_tick(struct xp_cc_pcm *p, struct kind_shell *ks, uint32_t handle,
		      pcm_uint now_ps)
{
	int rc;

	if (ks->sync)
		return pcm_shell_tick(ks->sync, handle, now_ps);
	rc = pcm_async_tick(ks->async, handle, now_ps);
	shell_poll_inline(p, ks, handle);
	return rc;
}

static int shell_control(const struct kind_shell *ks, uint32_t handle, pcm_control_t type,
			 pcm_uint *v)
{
	if (ks->sync)
		return pcm_shell_control(ks->sync, handle, type, v);
	return pcm_async_control(ks->async, handle, type, v);
}

static int shell_package_add(struct kind_shell *ks, const struct pcm_package *pkg,
			     struct pcm_diag *diag)
{
	if (ks->sync)
		return pcm_shell_package_add(ks->sync, pkg, diag);
	return pcm_async_package_add(ks->async, pkg, diag);
}

static int shell_flow_add(struct kind_shell *ks, uint32_t worker, const struct pcm_package *pkg,
			  pcm_uint now_ps, uint32_t *handle)
{
	if (ks->sync)
		return pcm_shell_flow_add(ks->sync, pkg, now_ps, handle);
	return pcm_async_flow_add(ks->async, worker, pkg, now_ps, handle);
}

static void shell_flow_remove(struct kind_shell *ks, uint32_t handle)
{
	if (ks->sync)
		pcm_shell_flow_remove(ks->sync, handle);
	else
		pcm_async_flow_remove(ks->async, handle);
}

static int shell_flow_swap(struct kind_shell *ks, uint32_t handle, const struct pcm_package *pkg,
			   pcm_uint now_ps)
{
	if (ks->sync)
		return pcm_shell_flow_swap(ks->sync, handle, pkg, now_ps);
	return pcm_async_flow_swap(ks->async, handle, pkg, now_ps);
}

static size_t shell_bytes_per_flow(const struct kind_shell *ks)
{
	if (ks->sync)
		return pcm_shell_bytes_per_flow(ks->sync);
	return ks->async ? pcm_async_bytes_per_flow(ks->async) : 0;
}

static void shell_destroy(struct kind_shell *ks)
{
	pcm_shell_destroy(ks->sync);
	pcm_async_destroy(ks->async);
	ks->sync = NULL;
	ks->async = NULL;
}

static bool shell_exists(const struct kind_shell *ks)
{
	return ks->sync || ks->async;
}

/* ---- setup ---------------------------------------------------------------------------------- */

static bool has_timer_trigger(const struct pcm_package *pkg)
{
	for (uint32_t k = 0; k < pkg->n_signals; k++)
		if (pkg->signals[k].type == PCM_SIG_ELAPSED_TIME &&
		    pkg->signals[k].trigger != PCM_SIG_TRIGGER_NONE &&
		    pkg->signals[k].threshold != PCM_SIG_NO_TRIGGER)
			return true;
	return false;
}

static void room_grow(struct room *r, const struct pcm_package *pkg)
{
	if (!pkg)
		return;
	if (pkg->record_slots > r->record_slots)
		r->record_slots = pkg->record_slots;
	if (pkg->window_slots > r->window_slots)
		r->window_slots = pkg->window_slots;
	if (pkg->pub_slots > r->pub_slots)
		r->pub_slots = pkg->pub_slots;
	if (pkg->n_controls > r->control_slots)
		r->control_slots = pkg->n_controls;
}

/* One rule for a CC and an LB package together: they never drive one control. */
static int controls_disjoint(const struct pcm_package *cc, const struct pcm_package *lb,
			     struct pcm_diag *diag)
{
	pcm_uint both;

	if (!lb)
		return 0;
	both = cc->control_types & lb->control_types;
	for (int t = 0; t < PCM_CTRL_COUNT; t++)
		if (both & BIT(t)) {
			snprintf(diag->msg, sizeof(diag->msg),
				 "packages '%s' and '%s' both drive %s: an LB package may only "
				 "drive controls the CC package leaves alone",
				 cc->name, lb->name, pcm_control_name((pcm_control_t)t));
			return -EINVAL;
		}
	return 0;
}

/* Note what a package added to a shell asks of the binding. */
static void note_package(struct xp_cc_pcm *p, const struct pcm_package *pkg)
{
	p->wants_tx |= (pkg->signal_types & BIT(PCM_SIG_TX_READY_PKTS)) != 0;
	p->has_timer |= has_timer_trigger(pkg);
}

/*
 * Handles of an asynchronous shell: every worker holds its handles in
 * chunks of its own (flowtab.h), so max_flows connections spread over the
 * workers in any way need up to one partly used chunk per worker more.
 */
static uint32_t async_handles(const struct xp_cc_pcm *p)
{
	uint64_t n = (uint64_t)p->cfg.max_flows + (uint64_t)p->cfg.async.n_workers *
							   PCM_FLOWTAB_CHUNK_FLOWS;

	return n < PCM_ASYNC_MAX_FLOWS ? (uint32_t)n : PCM_ASYNC_MAX_FLOWS;
}

/* Make the shell of @kind, with @pkg as its first package. */
static int shell_make(struct xp_cc_pcm *p, unsigned kind, const struct pcm_package *pkg,
		      struct pcm_diag *diag)
{
	struct kind_shell *ks = &p->shells[kind];
	const struct pcm_package *pkgs[1] = { pkg };
	int rc;

	if (p->cfg.mode == XP_CC_PCM_SYNC) {
		struct pcm_shell_config sc = {
			.packages = pkgs, .n_packages = 1, .target = p->cfg.target,
			.max_flows = p->cfg.max_flows, .record_slots = p->room.record_slots,
		};

		rc = pcm_shell_create_cfg(&sc, &ks->sync, diag);
	} else {
		struct pcm_async_config ac = p->cfg.async;

		ac.packages = pkgs;
		ac.n_packages = 1;
		ac.target = p->cfg.target;
		ac.max_flows = async_handles(p);
		ac.record_slots = p->room.record_slots;
		ac.window_slots = p->room.window_slots;
		ac.pub_slots = p->room.pub_slots;
		ac.control_slots = p->room.control_slots;
		rc = pcm_async_create_cfg(&ac, &ks->async, diag);
		if (rc == 0 && p->started)
			rc = pcm_async_start(ks->async);
		if (rc < 0)
			shell_destroy(ks);
	}
	if (rc == 0)
		note_package(p, pkg);
	return rc;
}

/* Let the shell of @kind run @pkg, making the shell if it is not there yet. */
static int shell_allow(struct xp_cc_pcm *p, unsigned kind, const struct pcm_package *pkg,
		       struct pcm_diag *diag)
{
	int rc;

	if (!shell_exists(&p->shells[kind]))
		return shell_make(p, kind, pkg, diag);
	rc = shell_package_add(&p->shells[kind], pkg, diag);
	if (rc == 0)
		note_package(p, pkg);
	return rc;
}

int xp_cc_pcm_create(const struct xp_cc_pcm_config *cfg, struct xp_cc_pcm **out,
		     struct pcm_diag *diag)
{
	struct xp_cc_pcm *p;
	uint32_t workers;
	int rc;

	diag->msg[0] = '\0';
	if (!cfg || !cfg->cc || !cfg->max_flows) {
		snprintf(diag->msg, sizeof(diag->msg), "a CC package and max_flows >= 1 are needed");
		return -EINVAL;
	}
	rc = controls_disjoint(cfg->cc, cfg->lb, diag);
	if (rc < 0)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	p->cfg.target = cfg->target ? cfg->target : pcm_target_find("reference");
	if (!p->cfg.tick_ns)
		p->cfg.tick_ns = DEFAULT_TICK_NS;
	p->provided = p->cfg.target->signals;
	room_grow(&p->room, cfg->cc);
	room_grow(&p->room, cfg->lb);
	for (size_t i = 0; cfg->room_for && cfg->room_for[i]; i++)
		room_grow(&p->room, cfg->room_for[i]);
	workers = cfg->mode == XP_CC_PCM_ASYNC && cfg->async.n_workers ? cfg->async.n_workers : 1;
	p->worker_load = calloc(workers, sizeof(*p->worker_load));
	rc = p->worker_load ? shell_make(p, KIND_CC, cfg->cc, diag) : -ENOMEM;
	if (rc == 0 && cfg->lb)
		rc = shell_make(p, KIND_LB, cfg->lb, diag);
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
	for (unsigned k = 0; k < KINDS; k++)
		shell_destroy(&p->shells[k]);
	free(p->worker_load);
	free(p->flows);
	free(p);
}

int xp_cc_pcm_start(struct xp_cc_pcm *p)
{
	if (p->cfg.mode != XP_CC_PCM_ASYNC || p->cfg.async_inline)
		return 0;
	for (unsigned k = 0; k < KINDS; k++) {
		int rc = p->shells[k].async ? pcm_async_start(p->shells[k].async) : 0;

		if (rc < 0) {
			xp_cc_pcm_stop(p);
			return rc;
		}
	}
	p->started = true;
	return 0;
}

void xp_cc_pcm_stop(struct xp_cc_pcm *p)
{
	for (unsigned k = 0; k < KINDS; k++)
		if (p->shells[k].async)
			pcm_async_stop(p->shells[k].async);
	p->started = false;
}

size_t xp_cc_pcm_bytes_per_flow(const struct xp_cc_pcm *p)
{
	size_t n = sizeof(struct flow_state);

	for (unsigned k = 0; k < KINDS; k++)
		n += shell_bytes_per_flow(&p->shells[k]);
	return n;
}

uint32_t xp_cc_pcm_flows_open(const struct xp_cc_pcm *p)
{
	return p->open;
}

static const struct flow_state *flow_get(const struct xp_cc_pcm *p, uint32_t flow)
{
	return flow < p->flows_cap && p->flows[flow].pkg[KIND_CC] ? &p->flows[flow] : NULL;
}

int xp_cc_pcm_flow_packages(const struct xp_cc_pcm *p, uint32_t flow,
			    const struct pcm_package **cc, const struct pcm_package **lb)
{
	const struct flow_state *f = flow_get(p, flow);

	if (!f)
		return -ENOENT;
	*cc = f->pkg[KIND_CC];
	*lb = f->pkg[KIND_LB];
	return 0;
}

int xp_cc_pcm_flow_worker(const struct xp_cc_pcm *p, uint32_t flow)
{
	const struct flow_state *f = flow_get(p, flow);

	if (!f)
		return -ENOENT;
	return p->shells[KIND_CC].async ? pcm_async_worker_of(p->shells[KIND_CC].async, flow)
					: -EOPNOTSUPP;
}

int xp_cc_pcm_peek(const struct xp_cc_pcm *p, unsigned which, uint32_t flow, pcm_uint *out)
{
	const struct flow_state *f = flow_get(p, flow);
	const struct kind_shell *ks;

	if (which >= KINDS || !f || f->handle[which] == NO_FLOW)
		return -ERANGE;
	ks = &p->shells[which];
	if (ks->async)
		return pcm_async_flow_peek(ks->async, f->handle[which], out);
	memcpy(out, pcm_shell_record(ks->sync, f->handle[which]),
	       f->pkg[which]->handler_slots * sizeof(*out));
	return 0;
}

uint64_t xp_cc_pcm_handler_calls(const struct xp_cc_pcm *p)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < KINDS; k++) {
		struct pcm_shell_stats st;
		struct pcm_async_stats as;

		if (p->shells[k].sync) {
			pcm_shell_stats(p->shells[k].sync, &st);
			n += st.handler_calls;
		} else if (p->shells[k].async &&
			   pcm_async_stats(p->shells[k].async, UINT32_MAX, &as) == 0) {
			n += as.handler_calls;
		}
	}
	return n;
}

/* ---- flows and placement ----------------------------------------------------------------- */

/* The least loaded worker on the engine's node, or of all when none is there. */
static uint32_t pick_worker(const struct xp_cc_pcm *p)
{
	const struct pcm_async *as = p->shells[KIND_CC].async;
	uint32_t n = as ? p->cfg.async.n_workers : 1, best = UINT32_MAX;
	bool on_node = false;

	if (as && p->cfg.numa_node >= 0)
		for (uint32_t w = 0; w < n && !on_node; w++)
			on_node = pcm_async_worker_node(as, w) == p->cfg.numa_node;
	for (uint32_t w = 0; w < n; w++) {
		if (on_node && pcm_async_worker_node(as, w) != p->cfg.numa_node)
			continue;
		if (best == UINT32_MAX || p->worker_load[w] < p->worker_load[best])
			best = w;
	}
	return best;
}

static int flows_reserve(struct xp_cc_pcm *p, uint32_t handle)
{
	uint32_t cap = p->flows_cap ? p->flows_cap : 64;
	struct flow_state *n;

	if (handle < p->flows_cap)
		return 0;
	while (cap <= handle)
		cap *= 2;
	n = realloc(p->flows, (size_t)cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + p->flows_cap, 0, (size_t)(cap - p->flows_cap) * sizeof(*n));
	p->flows = n;
	p->flows_cap = cap;
	return 0;
}

/* Give flow @f an LB flow running @lb, on its worker. */
static int lb_flow_add(struct xp_cc_pcm *p, struct flow_state *f, const struct pcm_package *lb,
		       pcm_uint now_ps)
{
	int rc = shell_flow_add(&p->shells[KIND_LB], f->worker, lb, now_ps, &f->handle[KIND_LB]);

	if (rc == 0)
		f->pkg[KIND_LB] = lb;
	return rc;
}

static void lb_flow_remove(struct xp_cc_pcm *p, struct flow_state *f)
{
	shell_flow_remove(&p->shells[KIND_LB], f->handle[KIND_LB]);
	f->handle[KIND_LB] = NO_FLOW;
	f->pkg[KIND_LB] = NULL;
}

static int pcm_flow_open(void *ctx, uint64_t flow_seed, uint64_t now_ns, uint32_t *flow)
{
	struct xp_cc_pcm *p = ctx;
	uint32_t worker = pick_worker(p), handle;
	struct flow_state *f;
	int rc;

	if (p->open >= p->cfg.max_flows)
		return -ENOSPC;
	rc = shell_flow_add(&p->shells[KIND_CC], worker, p->cfg.cc, ps_of(now_ns), &handle);
	if (rc < 0)
		return rc;
	rc = flows_reserve(p, handle);
	if (rc < 0) {
		shell_flow_remove(&p->shells[KIND_CC], handle);
		return rc;
	}
	f = &p->flows[handle];
	*f = (struct flow_state){ .pkg = { p->cfg.cc, NULL }, .handle = { handle, NO_FLOW },
				  .worker = worker, .seed = flow_seed ? flow_seed : 1 };
	if (p->cfg.lb) {
		rc = lb_flow_add(p, f, p->cfg.lb, ps_of(now_ns));
		if (rc < 0) {
			shell_flow_remove(&p->shells[KIND_CC], handle);
			*f = (struct flow_state){ 0 };
			return rc;
		}
	}
	p->worker_load[worker]++;
	p->open++;
	*flow = handle;
	return 0;
}

static void pcm_flow_close(void *ctx, uint32_t flow, uint64_t now_ns)
{
	struct xp_cc_pcm *p = ctx;
	struct flow_state *f;

	(void)now_ns;
	if (!flow_get(p, flow))
		return;
	f = &p->flows[flow];
	if (f->handle[KIND_LB] != NO_FLOW)
		lb_flow_remove(p, f);
	shell_flow_remove(&p->shells[KIND_CC], flow);
	p->worker_load[f->worker]--;
	p->open--;
	*f = (struct flow_state){ 0 };
}

int xp_cc_pcm_flow_swap(struct xp_cc_pcm *p, uint32_t flow, const struct pcm_package *cc,
			const struct pcm_package *lb, uint64_t now_ns, struct pcm_diag *diag)
{
	pcm_uint now_ps = ps_of(now_ns);
	struct flow_state *f;
	int rc;

	diag->msg[0] = '\0';
	if (!flow_get(p, flow)) {
		snprintf(diag->msg, sizeof(diag->msg), "policy swap: no CC flow %u", flow);
		return -ENOENT;
	}
	if (!cc) {
		snprintf(diag->msg, sizeof(diag->msg), "policy swap: no CC package given");
		return -EINVAL;
	}
	f = &p->flows[flow];
	/* every check that can fail first, so that a failure changes nothing */
	rc = controls_disjoint(cc, lb, diag);
	if (rc == 0)
		rc = shell_allow(p, KIND_CC, cc, diag);
	if (rc == 0 && lb)
		rc = shell_allow(p, KIND_LB, lb, diag);
	if (rc < 0)
		return rc;
	if (cc != f->pkg[KIND_CC]) {
		rc = shell_flow_swap(&p->shells[KIND_CC], flow, cc, now_ps);
		if (rc < 0)
			return rc;
		f->pkg[KIND_CC] = cc;
	}
	if (lb == f->pkg[KIND_LB])
		return 0;
	if (!lb) {
		lb_flow_remove(p, f);
		return 0;
	}
	if (!f->pkg[KIND_LB])
		return lb_flow_add(p, f, lb, now_ps);
	rc = shell_flow_swap(&p->shells[KIND_LB], f->handle[KIND_LB], lb, now_ps);
	if (rc == 0)
		f->pkg[KIND_LB] = lb;
	return rc;
}

/* ---- the ops ------------------------------------------------------------------------------ */

/* Feed @ev (masked by the target) to the flow's packages; TX events only to those that read them. */
static void feed(struct xp_cc_pcm *p, uint32_t flow, struct pcm_event *ev, uint64_t now_ns,
		 bool tx)
{
	const struct flow_state *f = flow_get(p, flow);

	if (!f)
		return;
	ev->valid |= BIT(PCM_SIG_FLOW_SEED);
	ev->values[PCM_SIG_FLOW_SEED] = f->seed;
	ev->valid &= p->provided;
	for (unsigned k = 0; k < KINDS; k++) {
		if (!f->pkg[k] || (tx && !(f->pkg[k]->signal_types & BIT(PCM_SIG_TX_READY_PKTS))))
			continue;
		if (shell_feed(p, &p->shells[k], f->handle[k], ev, ps_of(now_ns)) < 0)
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

static void pcm_on_ack(void *ctx, uint32_t flow, const struct xp_cc_ack *a, uint64_t now_ns)
{
	struct pcm_event ev = { 0 };

	set_count(&ev, PCM_SIG_ACK, a->acked_chunks);
	set_count(&ev, PCM_SIG_DATA_TX, a->acked_bytes);
	set_count(&ev, PCM_SIG_ECN, a->ecn_ce);
	if (a->rtt_ns) {
		set(&ev, PCM_SIG_RTT, ps_of(a->rtt_ns));
		set(&ev, PCM_SIG_QUEUE_DELAY, ps_of(a->hold_ns));
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
	const struct flow_state *f = flow_get(p, flow);

	for (unsigned k = 0; f && k < KINDS; k++)
		if (f->pkg[k] && has_timer_trigger(f->pkg[k]) &&
		    shell_tick(p, &p->shells[k], f->handle[k], ps_of(now_ns)) < 0)
			p->handler_errors++;
}

/* Control @t of flow @f from whichever of its packages drives it. */
static bool read_control(const struct xp_cc_pcm *p, const struct flow_state *f, pcm_control_t t,
			 pcm_uint *v)
{
	for (unsigned k = 0; k < KINDS; k++)
		if (f->pkg[k] && (f->pkg[k]->control_types & BIT(t)))
			return shell_control(&p->shells[k], f->handle[k], t, v) == 0;
	return false;
}

static void pcm_read(void *ctx, uint32_t flow, struct xp_cc_ctl *ctl)
{
	struct xp_cc_pcm *p = ctx;
	const struct flow_state *f = flow_get(p, flow);
	pcm_uint v;

	ctl->cwnd_bytes = UINT64_MAX;
	ctl->rate = PCM_RATE_ONE;
	ctl->has_ev = false;
	ctl->ev = 0;
	if (!f)
		return;
	if (read_control(p, f, PCM_CTRL_CWND, &v))
		ctl->cwnd_bytes = v;
	if (read_control(p, f, PCM_CTRL_RATE, &v))
		ctl->rate = v;
	if (read_control(p, f, PCM_CTRL_EV, &v)) {
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
