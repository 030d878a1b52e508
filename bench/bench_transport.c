// SPDX-License-Identifier: MIT
/*
 * bench_transport.c - pcm-bench goodput and pcm-bench latency: the
 * transport engine end to end over a datapath found by name
 * (xp_dp_find(): null, softnic, verbs where built).
 *
 * goodput: F flows, each a connection from a sender engine to a receiver
 * engine, each keeping 8 messages of S bytes in flight (and 8 receives
 * posted). null: 2 x E engines in INLINE progress, all driven by this one
 * thread (so the CPU time is the engines' and the rings'), copy off (a
 * chunk moves only its event), wall time. softnic: one engine per host of an
 * incast fabric (F senders to one receiver) in virtual time; goodput and
 * Jain's index over the flows are in emulated time, CPU per chunk in this
 * thread's time.
 *
 * latency: a ping-pong of one message at a time between two null engines
 * (INLINE, copy on), 64 B to 64 KiB, p50 and p99 of the round trip.
 *
 * One JSON line per result (bench, datapath, policy, mode, flows, msg_size,
 * chunk_size, engines, goodput_gbps, chunks_per_s, cpu_ns_per_chunk, ...).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "bench_pair.h"
#include "bench_rig.h"
#include "xp_cc.h"
#include "cc_pcm.h"
#include "pcm.h"
#include "engine.h"
#include "softnic.h"
#include "softnic_driver.h"
#include "uet.h"

static int connect_flow(struct tp_rig *r, struct tp_flow *f)
{
	struct xp_ctl *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	int rc;

	a->op = XP_CTL_CONN_OPEN;
	a->opts = r->copts;
	rc = tp_ctl_sync(r, f->se, a);
	if (rc == 0) {
		b->op = XP_CTL_CONN_ACCEPT;
		b->opts = r->copts;
		memcpy(b->peer_msg, a->msg, a->msg_len);
		b->peer_len = a->msg_len;
		rc = tp_ctl_sync(r, f->re, b);
	}
	if (rc == 0) {
		a->op = XP_CTL_CONN_BIND;
		memcpy(a->peer_msg, b->msg, b->msg_len);
		a->peer_len = b->msg_len;
		rc = tp_ctl_sync(r, f->se, a);
	}
	f->sconn = a->conn;
	f->rconn = b->conn;
	free(a);
	free(b);
	return rc;
}

/* ---- native Swift as a compiled-in CC binding (the native_ratio baseline) ------------------- */

struct native_cc {
	struct native_swift_params p;
	struct native_swift_flow f[MAX_FLOWS];
	uint32_t n;
};

static void ncc_info(void *ctx, struct xp_cc_info *info)
{
	(void)ctx;
	*info = (struct xp_cc_info){ 0 };
}

static int ncc_flow_open(void *ctx, uint64_t seed, uint64_t now_ns, uint32_t *flow)
{
	struct native_cc *n = ctx;

	(void)seed;
	if (n->n >= MAX_FLOWS)
		return -ENOSPC;
	native_swift_init(&n->f[n->n], &n->p, now_ns * 1000);
	*flow = n->n++;
	return 0;
}

static void ncc_flow_close(void *ctx, uint32_t flow, uint64_t now_ns)
{
	(void)ctx;
	(void)flow;
	(void)now_ns;
}

static void ncc_feed(struct native_cc *n, uint32_t flow, const struct native_swift_event *ev,
		     uint64_t now_ns)
{
	if (flow < n->n)
		native_swift_on_event(&n->f[flow], &n->p, ev, now_ns * 1000);
}

static void ncc_on_ack(void *ctx, uint32_t flow, const struct xp_cc_ack *a, uint64_t now_ns)
{
	struct native_swift_event ev = { .acks = a->acked_chunks, .has_rtt = a->rtt_ns != 0,
					 .acked_bytes = a->acked_bytes, .rtt_ps = a->rtt_ns * 1000 };

	ncc_feed(ctx, flow, &ev, now_ns);
}

static void ncc_on_loss(void *ctx, uint32_t flow, const struct xp_cc_loss *l, uint64_t now_ns)
{
	struct native_swift_event ev = { .nacks = l->lost_chunks };

	ncc_feed(ctx, flow, &ev, now_ns);
}

static void ncc_on_rto(void *ctx, uint32_t flow, uint64_t in_flight, uint64_t now_ns)
{
	struct native_swift_event ev = { .rtos = 1 };

	(void)in_flight;
	ncc_feed(ctx, flow, &ev, now_ns);
}

static void ncc_on_tx(void *ctx, uint32_t flow, uint64_t backlog, uint64_t in_flight,
		      uint64_t now_ns)
{
	(void)ctx;
	(void)flow;
	(void)backlog;
	(void)in_flight;
	(void)now_ns;
}

static void ncc_tick(void *ctx, uint32_t flow, uint64_t now_ns)
{
	(void)ctx;
	(void)flow;
	(void)now_ns;
}

static void ncc_read(void *ctx, uint32_t flow, struct xp_cc_ctl *ctl)
{
	struct native_cc *n = ctx;

	*ctl = (struct xp_cc_ctl){ .cwnd_bytes = flow < n->n ? n->f[flow].cwnd_bytes : UINT64_MAX,
				   .rate = PCM_RATE_ONE };
}

static const struct xp_cc_ops native_cc_ops = {
	.name = "native-swift",
	.info = ncc_info,
	.flow_open = ncc_flow_open,
	.flow_close = ncc_flow_close,
	.on_ack = ncc_on_ack,
	.on_loss = ncc_on_loss,
	.on_rto = ncc_on_rto,
	.on_tx = ncc_on_tx,
	.tick = ncc_tick,
	.read = ncc_read,
};

static int make_world(struct tp_rig *r)
{
	struct uet_scenario *scn = calloc(1, sizeof(*scn));
	struct xp_softnic_config cfg = { .seed = 1 };
	struct pcm_diag diag;
	int rc;

	uet_scenario_defaults(scn);
	snprintf(scn->name, sizeof(scn->name), "pcm-bench");
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	scn->topo.kind = UET_TOPO_INCAST;
	scn->topo.senders = r->o->flows;
	scn->topo.link_rate_bps = r->o->link_gbps * 1000000000ull;
	scn->nic.data_rate_bps = r->o->link_gbps * 1000000000ull;
	scn->topo.queue_bytes = r->o->queue_bytes; /* 0: the scenario's, one BDP */
	if (r->o->queue_bytes && r->o->queue_bytes < 2ull * (scn->nic.rdma_data_mss +
							    UET_WIRE_HDR_BYTES)) {
		fprintf(stderr, "pcm-bench: --queue-bytes %" PRIu64 ": below two full packets "
				"(%u B): a switch port holds at least that\n", r->o->queue_bytes,
			2 * (scn->nic.rdma_data_mss + UET_WIRE_HDR_BYTES));
		uet_scenario_free(scn);
		return -EINVAL;
	}
	cfg.scn = scn;
	rc = xp_softnic_world_create(&cfg, &r->w, &diag);
	if (rc < 0)
		fprintf(stderr, "pcm-bench: softnic: %s\n", diag.msg);
	uet_scenario_free(scn);
	return rc;
}

static void post_op(struct tp_rig *r, struct tp_flow *f, bool recv)
{
	uint64_t slot = (recv ? f->recvs_out : f->sends_out) % DEPTH;
	struct xp_cmd cmd = {
		.op = recv ? XP_CMD_RECV : XP_CMD_SEND,
		.conn = recv ? f->rconn : f->sconn,
		.mr = recv ? f->rmr : f->smr,
		.addr = (uint64_t)(uintptr_t)(recv ? f->rbuf : f->sbuf) + slot * r->o->msg_size,
		.len = r->o->msg_size,
		.cookie = (uint64_t)(f - r->f),
	};

	tp_submit(r, recv ? f->re : f->se, &cmd);
	if (recv)
		f->recvs_out++;
	else
		f->sends_out++;
}

/* Take completions and repost, keeping DEPTH of each in flight. */
static bool goodput_step(void *ctx)
{
	struct tp_rig *r = ctx;

	for (uint32_t i = 0; i < r->n_e; i++) {
		struct xp_engine_comp k[64];
		uint32_t n = xp_engine_poll(r->e[i], k, 64);

		for (uint32_t j = 0; j < n; j++) {
			struct tp_flow *f = &r->f[k[j].cookie % MAX_FLOWS];

			if (k[j].status < 0 || k[j].kind == XP_ECOMP_CTL)
				continue;
			if (k[j].kind == XP_ECOMP_RECV) {
				if (r->measuring)
					f->bytes_done += k[j].bytes;
				post_op(r, f, true);
			} else if (k[j].kind == XP_ECOMP_SEND) {
				post_op(r, f, false);
			}
		}
	}
	return tp_rig_now(r) >= r->stop_ns;
}

static uint64_t chunks_received(struct tp_rig *r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < r->n_e; i++)
		n += xp_core_stats(xp_engine_core(r->e[i]))->chunks_received;
	return n;
}

static int rig_flows(struct tp_rig *r)
{
	uint32_t pairs = r->w ? 0 : r->o->engines;

	for (uint32_t i = 0; i < r->o->flows; i++) {
		struct tp_flow *f = &r->f[i];
		size_t len = DEPTH * r->o->msg_size;

		/* null: flow i on pair i mod E; softnic: host i sends to host F (the incast) */
		f->se = (int)(r->w ? i : i % pairs);
		f->re = (int)(r->w ? r->o->flows : pairs + i % pairs);
		f->sbuf = calloc(1, len);
		f->rbuf = calloc(1, len);
		r->n_f = i + 1;
		if (!f->sbuf || !f->rbuf || tp_reg(r, f->se, f->sbuf, len, &f->smr) < 0 ||
		    tp_reg(r, f->re, f->rbuf, len, &f->rmr) < 0 || connect_flow(r, f) < 0)
			return -1;
		for (int d = 0; d < DEPTH; d++)
			post_op(r, f, true);
		for (int d = 0; d < DEPTH; d++)
			post_op(r, f, false);
	}
	return 0;
}

static double jain(const struct tp_rig *r)
{
	double s = 0, s2 = 0;

	for (uint32_t i = 0; i < r->n_f; i++) {
		s += (double)r->f[i].bytes_done;
		s2 += (double)r->f[i].bytes_done * (double)r->f[i].bytes_done;
	}
	return s2 > 0 ? s * s / ((double)r->n_f * s2) : 0;
}

/*
 * --async-workers N: the PCM binding the engines' cc table would make for an
 * asynchronous connection with N workers (cc_table.c), made here and handed
 * to the connections as their binding, because an INLINE engine runs its
 * asynchronous handlers on its own thread. The engines stay INLINE on this
 * thread; the N workers are threads of their own.
 */
static int make_worker_binding(struct tp_rig *r)
{
	struct xp_cc_pcm_config cfg;
	struct xp_dp_info info;
	struct pcm_diag diag;
	int rc;

	xp_dp_info(xp_engine_dp(r->e[0]), &info);
	xp_cc_pcm_config_default(&cfg);
	cfg.cc = r->copts.cc;
	cfg.target = pcm_target_find(info.target);
	cfg.mode = XP_CC_PCM_ASYNC;
	cfg.async.mode = r->copts.async_mode;
	cfg.async.n_workers = r->o->async_workers;
	cfg.async_inline = false;
	cfg.max_flows = 2 * MAX_FLOWS;
	cfg.now_ns = tp_rig_now(r);
	rc = xp_cc_pcm_create(&cfg, &r->pcm, &diag);
	if (rc == 0)
		rc = xp_cc_pcm_start(r->pcm);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: --async-workers %u: %s\n", r->o->async_workers,
			rc == -EINVAL || rc == -ENOTSUP ? diag.msg : strerror(-rc));
		return rc;
	}
	r->copts.native = xp_cc_pcm_binding(r->pcm);
	return 0;
}

/* The core's counters of the softnic sender of flow @i (engine i). */
static const struct xp_core_stats *flow_stats(const struct tp_rig *r, uint32_t i)
{
	return xp_core_stats(xp_engine_core(r->e[i]));
}

/* The loss recovery counters summed over the engines' cores (all spurious on null). */
static void print_recovery(const struct tp_rig *r)
{
	uint64_t retx = 0, rto = 0, tlp = 0, rack = 0, spur = 0;

	for (uint32_t i = 0; i < r->n_e; i++) {
		const struct xp_core_stats *cs = xp_core_stats(xp_engine_core(r->e[i]));

		retx += cs->chunks_retx;
		rto += cs->rto_fires;
		tlp += cs->tlp_fires;
		rack += cs->rack_losses;
		spur += cs->spurious_retx;
	}
	printf(",\"chunks_retx\":%" PRIu64 ",\"rto_fires\":%" PRIu64 ",\"tlp_fires\":%" PRIu64
	       ",\"rack_losses\":%" PRIu64 ",\"spurious_retx\":%" PRIu64,
	       retx, rto, tlp, rack, spur);
}

/*
 * One goodput run. @native: the same run with native Swift compiled in instead of the PCM
 * package (printed by the caller as native_ratio's baseline, not here); @cpu_ns_per_chunk: out.
 */
static int goodput_once(const struct tp_opts *o, const struct xp_dp_ops *dp, bool native,
			double baseline_ns, double *cpu_ns_per_chunk)
{
	struct tp_rig *r = calloc(1, sizeof(*r));
	static struct native_cc ncc;
	uint64_t t0, c0, cpu0, t1, c1, cpu1, bytes = 0, proc0, proc1, calls0, calls1;
	bool virt = strcmp(dp->name, "softnic") == 0;
	double secs;
	int rc = -1;

	r->o = o;
	r->dp = dp;
	if (tp_parse_policy(o, &r->copts) < 0)
		goto out;
	if (native) {
		memset(&ncc, 0, sizeof(ncc));
		native_swift_default_params(&ncc.p);
		r->copts.native = (struct xp_cc_binding){ .ops = &native_cc_ops, .ctx = &ncc };
	}
	if ((virt && make_world(r) < 0) ||
	    tp_make_engines(r, virt ? o->flows + 1 : 2 * o->engines, false) < 0 ||
	    (!native && o->async_workers && make_worker_binding(r) < 0) || rig_flows(r) < 0)
		goto out;
	/* warm up for a tenth of the run, then measure */
	r->stop_ns = tp_rig_now(r) + (virt ? o->virtual_us * 100 : (uint64_t)(o->seconds * 1e8));
	if (virt)
		xp_softnic_drive(r->w, r->e, r->n_e, UINT64_MAX, goodput_step, r);
	else
		while (!goodput_step(r))
			tp_rig_step(r);
	r->measuring = true;
	t0 = tp_rig_now(r);
	c0 = chunks_received(r);
	calls0 = r->pcm ? xp_cc_pcm_handler_calls(r->pcm) : 0;
	proc0 = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	cpu0 = tp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	r->stop_ns = t0 + (virt ? o->virtual_us * 1000 : (uint64_t)(o->seconds * 1e9));
	if (virt)
		xp_softnic_drive(r->w, r->e, r->n_e, UINT64_MAX, goodput_step, r);
	else
		while (!goodput_step(r))
			tp_rig_step(r);
	t1 = tp_rig_now(r);
	c1 = chunks_received(r);
	cpu1 = tp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	proc1 = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	calls1 = r->pcm ? xp_cc_pcm_handler_calls(r->pcm) : 0;
	for (uint32_t i = 0; i < r->n_f; i++)
		bytes += r->f[i].bytes_done;
	secs = (double)(t1 - t0) / 1e9;
	*cpu_ns_per_chunk = c1 > c0 ? (double)(cpu1 - cpu0) / (double)(c1 - c0) : 0.0;
	if (native) {
		rc = 0;
		goto out;
	}
	printf("{\"bench\":\"goodput\",\"datapath\":\"%s\",\"policy\":\"%s\",\"mode\":\"%s\","
	       "\"flows\":%u,\"msg_size\":%" PRIu64 ",\"chunk_size\":%u,\"engines\":%u,"
	       "\"goodput_gbps\":%.3f,\"chunks_per_s\":%.0f,\"cpu_ns_per_chunk\":%.1f,"
	       "\"time\":\"%s\",\"seconds\":%.6f",
	       dp->name, o->policy, o->mode, o->flows, o->msg_size, o->chunk_size, r->n_e,
	       (double)bytes * 8 / secs / 1e9, (double)(c1 - c0) / secs,
	       c1 > c0 ? (double)(cpu1 - cpu0) / (double)(c1 - c0) : 0.0,
	       virt ? "emulated" : "wall", secs);
	if (virt)
		printf(",\"line_rate_gbps\":%" PRIu64 ",\"line_fraction\":%.4f,\"jain\":%.4f",
		       o->link_gbps, (double)bytes * 8 / secs / 1e9 / (double)o->link_gbps,
		       jain(r));
	if (baseline_ns > 0)
		printf(",\"native_cpu_ns_per_chunk\":%.1f,\"native_ratio\":%.4f", baseline_ns,
		       *cpu_ns_per_chunk / baseline_ns);
	if (r->pcm) {
		/* the other threads of this process are the workers (the engines are INLINE) */
		double worker_ns = proc1 - proc0 > cpu1 - cpu0 ? (double)(proc1 - proc0 - (cpu1 - cpu0))
							       : 0.0;

		printf(",\"async_workers\":%u,\"handler_calls\":%" PRIu64 ","
		       "\"handler_calls_per_chunk\":%.5f,"
		       "\"worker_cpu_ns_per_chunk\":%.1f,\"worker_cpu_ns_per_call\":%.1f",
		       o->async_workers, calls1 - calls0, c1 > c0 ? (double)(calls1 - calls0) / (double)(c1 - c0) : 0,
		       c1 > c0 ? worker_ns / (double)(c1 - c0) : 0,
		       calls1 > calls0 ? worker_ns / (double)(calls1 - calls0) : 0);
	}
	print_recovery(r);
	if (virt) {
		printf(",\"flow_gbps\":[");
		for (uint32_t i = 0; i < r->n_f; i++)
			printf("%s%.2f", i ? "," : "", (double)r->f[i].bytes_done * 8 / secs / 1e9);
		printf("],\"flow_chunks_retx\":[");
		for (uint32_t i = 0; i < r->n_f; i++)
			printf("%s%" PRIu64, i ? "," : "", flow_stats(r, i)->chunks_retx);
		printf("],\"flow_rto_fires\":[");
		for (uint32_t i = 0; i < r->n_f; i++)
			printf("%s%" PRIu64, i ? "," : "", flow_stats(r, i)->rto_fires);
		printf("]");
	}
	printf("}\n");
	fflush(stdout);
	rc = 0;
out:
	tp_rig_free(r);
	xp_cc_pcm_destroy(r->pcm);
	free(r);
	return rc;
}

/* goodput; on null with swift, first the native baseline, then the PCM run and its ratio. */
static int goodput_run(const struct tp_opts *o, const struct xp_dp_ops *dp)
{
	double native_ns = 0, ns;

	if (strcmp(dp->name, "null") == 0 && strcmp(o->policy, "swift") == 0 &&
	    goodput_once(o, dp, true, 0, &native_ns) < 0)
		return -1;
	return goodput_once(o, dp, false, native_ns, &ns);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Completions taken but not yet waited for, per engine and kind (ping-pong order varies). */
static uint32_t pending[2][XP_ECOMP_CTL + 1];

static int wait_one(struct tp_rig *r, int e, uint8_t kind)
{
	while (!pending[e][kind]) {
		struct xp_engine_comp k[8];
		uint32_t n;

		tp_rig_step(r);
		for (int s = 0; s < 2; s++) {
			n = xp_engine_poll(r->e[s], k, 8);
			for (uint32_t j = 0; j < n; j++) {
				if (k[j].status < 0)
					return k[j].status;
				if (k[j].kind <= XP_ECOMP_CTL)
					pending[s][k[j].kind]++;
			}
		}
	}
	pending[e][kind]--;
	return 0;
}

/* One size of the ping-pong: @iters round trips, engine 0 pings, engine 1 echoes. */
static int latency_size(struct tp_rig *r, struct tp_flow *f, uint64_t size, uint32_t iters)
{
	uint64_t *rtt = calloc(iters, sizeof(*rtt)), sum_ns = 0;
	struct xp_cmd cmd;

	if (!rtt)
		return -ENOMEM;
	for (uint32_t i = 0; i < iters + iters / 10; i++) {
		uint64_t t0;

		/* receives first on both sides, so the CTSs travel ahead */
		cmd = (struct xp_cmd){ .op = XP_CMD_RECV, .conn = f->rconn, .mr = f->rmr,
				       .addr = (uintptr_t)f->rbuf, .len = size };
		tp_submit(r, f->re, &cmd);
		cmd = (struct xp_cmd){ .op = XP_CMD_RECV, .conn = f->sconn, .mr = f->smr,
				       .addr = (uintptr_t)f->sbuf + size, .len = size };
		tp_submit(r, f->se, &cmd);
		tp_rig_step(r);
		tp_rig_step(r);
		t0 = tp_clock_ns(CLOCK_MONOTONIC);
		cmd = (struct xp_cmd){ .op = XP_CMD_SEND, .conn = f->sconn, .mr = f->smr,
				       .addr = (uintptr_t)f->sbuf, .len = size };
		tp_submit(r, f->se, &cmd);
		if (wait_one(r, f->re, XP_ECOMP_RECV) < 0)
			return -EIO;
		cmd = (struct xp_cmd){ .op = XP_CMD_SEND, .conn = f->rconn, .mr = f->rmr,
				       .addr = (uintptr_t)f->rbuf, .len = size };
		tp_submit(r, f->re, &cmd);
		if (wait_one(r, f->se, XP_ECOMP_RECV) < 0)
			return -EIO;
		if (i >= iters / 10)
			rtt[i - iters / 10] = tp_clock_ns(CLOCK_MONOTONIC) - t0;
		/* the two send completions */
		(void)wait_one(r, f->se, XP_ECOMP_SEND);
		(void)wait_one(r, f->re, XP_ECOMP_SEND);
	}
	qsort(rtt, iters, sizeof(*rtt), cmp_u64);
	for (uint32_t i = 0; i < iters; i++)
		sum_ns += rtt[i];
	printf("{\"bench\":\"latency\",\"datapath\":\"%s\",\"policy\":\"%s\",\"mode\":\"%s\","
	       "\"msg_size\":%" PRIu64 ",\"chunk_size\":%u,\"engines\":2,\"iters\":%u,"
	       "\"progress\":\"%s\",\"spin_ns\":%lld,"
	       "\"rtt_p50_us\":%.3f,\"rtt_p99_us\":%.3f,\"rtt_mean_us\":%.3f,\"time\":\"wall\"}\n",
	       r->dp->name, r->o->policy, r->o->mode, size, r->o->chunk_size, iters,
	       r->o->threads ? "thread" : "inline", (long long)r->o->spin_ns,
	       (double)rtt[iters / 2] / 1e3, (double)rtt[(uint64_t)iters * 99 / 100] / 1e3,
	       (double)sum_ns / iters / 1e3);
	fflush(stdout);
	free(rtt);
	return 0;
}

static int latency_run(const struct tp_opts *o, const struct xp_dp_ops *dp)
{
	struct tp_rig *r = calloc(1, sizeof(*r));
	struct tp_flow *f = &r->f[0];
	int rc = -1;

	r->o = o;
	r->dp = dp;
	if (strcmp(dp->name, "null") != 0 && strcmp(dp->name, "verbs") != 0) {
		fprintf(stderr, "pcm-bench latency: --datapath %s: only null and verbs are measured "
				"here (softnic's time is virtual)\n", dp->name);
		goto out;
	}
	if (tp_parse_policy(o, &r->copts) < 0 || tp_make_engines(r, 2, true) < 0)
		goto out;
	f->se = 0;
	f->re = 1;
	f->sbuf = calloc(1, 2 * 65536);
	f->rbuf = calloc(1, 2 * 65536);
	r->n_f = 1;
	if (tp_reg(r, 0, f->sbuf, 2 * 65536, &f->smr) < 0 || tp_reg(r, 1, f->rbuf, 2 * 65536, &f->rmr) < 0 ||
	    connect_flow(r, f) < 0)
		goto out;
	for (uint64_t size = 64; size <= 65536; size *= 4)
		if (latency_size(r, f, size, o->iters) < 0)
			goto out;
	rc = 0;
out:
	tp_rig_free(r);
	free(r);
	return rc;
}

/* @flag's value @v: @no (false) or @yes (true); Return: 0 or -EINVAL (printed). */
static int parse_either(const char *flag, const char *v, const char *no, const char *yes,
			bool *out)
{
	*out = strcmp(v, yes) == 0;
	if (*out || strcmp(v, no) == 0)
		return 0;
	fprintf(stderr, "pcm-bench: %s %s: %s or %s\n", flag, v, no, yes);
	return -EINVAL;
}

/* The verbs-only flags are refused elsewhere, and --listen/--connect are one role. */
static int check_verbs_opts(const struct tp_opts *o)
{
	bool verbs = strcmp(o->datapath, "verbs") == 0;
	const char *flag = o->device ? "--device" : o->gid_index >= 0 ? "--gid-index" :
			   o->rc ? "--qp rc" : o->listen ? "--listen" : o->connect ? "--connect" : NULL;

	if (!verbs && flag) {
		fprintf(stderr, "pcm-bench: %s: only with --datapath verbs (not %s)\n", flag,
			o->datapath);
		return -EINVAL;
	}
	if (o->listen && o->connect) {
		fprintf(stderr, "pcm-bench: --listen %s and --connect %s: one process is one side "
				"(the receiver listens, the sender connects)\n", o->listen, o->connect);
		return -EINVAL;
	}
	if ((o->listen || o->connect) && o->flows != 1) {
		fprintf(stderr, "pcm-bench: --flows %u: two processes measure one flow\n", o->flows);
		return -EINVAL;
	}
	return 0;
}

/* --async-workers and --queue-bytes: where they mean something. */
static int check_bench_opts(const struct tp_opts *o, bool latency)
{
	bool softnic = strcmp(o->datapath, "softnic") == 0;
	const char *why = NULL;

	if (o->queue_bytes && !softnic)
		why = "--queue-bytes: only with --datapath softnic (the emulated switch's queues)";
	else if (o->async_workers && softnic)
		why = "--async-workers: not with softnic, whose engines run in virtual time on one "
		      "thread";
	else if (o->async_workers && (latency || strncmp(o->mode, "async-", 6) != 0 ||
				      strcmp(o->policy, "none") == 0))
		why = "--async-workers: goodput with a policy and --mode async-relaxed, "
		      "async-locked or async-bounded only";
	else if (o->async_workers && o->threads)
		why = "--async-workers: the engines stay INLINE on the bench's thread (not "
		      "with --progress thread)";
	if (!why)
		return 0;
	fprintf(stderr, "pcm-bench: %s\n", why);
	return -EINVAL;
}

static int parse_tp_opts(int argc, char **argv, struct tp_opts *o)
{
	static const struct option opts[] = {
		{ "datapath", required_argument, NULL, 'd' },
		{ "flows", required_argument, NULL, 'f' },
		{ "msg-size", required_argument, NULL, 's' },
		{ "chunk-size", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "engines", required_argument, NULL, 'e' },
		{ "seconds", required_argument, NULL, 't' },
		{ "virtual-us", required_argument, NULL, 'v' },
		{ "link-gbps", required_argument, NULL, 'l' },
		{ "iters", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "progress", required_argument, NULL, 'P' },
		{ "spin-ns", required_argument, NULL, 'S' },
		{ "device", required_argument, NULL, 'D' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "qp", required_argument, NULL, 'q' },
		{ "listen", required_argument, NULL, 'L' },
		{ "connect", required_argument, NULL, 'C' },
		{ "seed", required_argument, NULL, 'x' },
		{ "async-workers", required_argument, NULL, 'w' },
		{ "queue-bytes", required_argument, NULL, 'Q' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct tp_opts){ .datapath = "null", .policy = "none", .mode = "sync", .flows = 1,
			       .msg_size = 1 << 20, .chunk_size = 65536, .engines = 1,
			       .seconds = 1.0, .virtual_us = 2000, .link_gbps = 400,
			       .iters = 20000, .spin_ns = -1, .gid_index = -1, .seed = 1 };
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end = NULL;
		unsigned long long v = optarg ? strtoull(optarg, &end, 0) : 0;
		bool num_ok = optarg && end && *end == '\0' && v > 0;
		uint64_t u;

		switch (c) {
		case 'd': o->datapath = optarg; continue;
		case 'p': o->policy = optarg; continue;
		case 'm': o->mode = optarg; continue;
		case 'j': o->json = true; continue;
		case 'D': o->device = optarg; continue;
		case 'L': o->listen = optarg; continue;
		case 'C': o->connect = optarg; continue;
		case 'q':
			if (parse_either("--qp", optarg, "uc", "rc", &o->rc) < 0)
				return -EINVAL;
			continue;
		case 'g': o->gid_index = (int)v; num_ok = end != optarg && *end == '\0' && v <= 255; break;
		case 'x': o->seed = v; num_ok = end != optarg && *end == '\0'; break;
		case 'P':
			if (parse_either("--progress", optarg, "inline", "thread", &o->threads) < 0)
				return -EINVAL;
			continue;
		/* sizes, durations and rates (pcm-units(7)), a bare number in the flag's unit */
		case 'S': if (bench_parse_in("--spin-ns", optarg, PCM_UNIT_TIME, "ns", 0, INT64_MAX,
					     &u) < 0)
				  return -EINVAL;
			  o->spin_ns = (int64_t)u;
			  continue;
		case 't': if (bench_parse_seconds("--seconds", optarg, 1e9, &o->seconds) < 0)
				  return -EINVAL;
			  continue;
		case 's': if (bench_parse_in("--msg-size", optarg, PCM_UNIT_SIZE, "B", 1, 1ull << 30,
					     &o->msg_size) < 0)
				  return -EINVAL;
			  continue;
		case 'c': if (bench_parse_in("--chunk-size", optarg, PCM_UNIT_SIZE, "B", 1, 1u << 20,
					     &u) < 0)
				  return -EINVAL;
			  o->chunk_size = (uint32_t)u;
			  continue;
		case 'v': if (bench_parse_in("--virtual-us", optarg, PCM_UNIT_TIME, "us", 1,
					     UINT64_MAX, &o->virtual_us) < 0)
				  return -EINVAL;
			  continue;
		case 'l': if (bench_parse_in("--link-gbps", optarg, PCM_UNIT_RATE, "Gbps", 1,
					     UINT64_MAX, &o->link_gbps) < 0)
				  return -EINVAL;
			  continue;
		case 'Q': if (bench_parse_in("--queue-bytes", optarg, PCM_UNIT_SIZE, "B", 1,
					     1ull << 34, &o->queue_bytes) < 0)
				  return -EINVAL;
			  continue;
		case 'f': o->flows = (uint32_t)v; num_ok &= v <= MAX_FLOWS; break;
		case 'e': o->engines = (uint32_t)v; num_ok &= v <= MAX_ENGINES / 2; break;
		case 'i': o->iters = (uint32_t)v; break;
		case 'w': o->async_workers = (uint32_t)v; num_ok &= v <= PCM_ASYNC_MAX_WORKERS; break;
		default:
			fprintf(stderr, "pcm-bench: see pcm-bench --help\n");
			return -EINVAL;
		}
		if (!num_ok) {
			const char *name = "?";

			for (const struct option *x = opts; x->name; x++)
				if (x->val == c)
					name = x->name;
			fprintf(stderr, "pcm-bench: --%s %s: not a number in range\n", name, optarg);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pcm-bench: %s: unexpected argument\n", argv[optind]);
		return -EINVAL;
	}
	return check_verbs_opts(o);
}

static int tp_main(int argc, char **argv, bool latency)
{
	struct tp_opts o;
	const struct xp_dp_ops *dp;

	if (parse_tp_opts(argc, argv, &o) < 0 || check_bench_opts(&o, latency) < 0)
		return 2;
	dp = xp_dp_find(o.datapath);
	if (!dp) {
		fprintf(stderr, "pcm-bench: --datapath %s: not built here (built: %s)\n", o.datapath,
			xp_dp_names());
		return 2;
	}
	if (latency && (o.listen || o.connect)) {
		fprintf(stderr, "pcm-bench latency: --listen/--connect: goodput only\n");
		return 2;
	}
	if (o.listen || o.connect)
		return tp_pair_goodput(&o, dp) < 0 ? 1 : 0;
	return (latency ? latency_run(&o, dp) : goodput_run(&o, dp)) < 0 ? 1 : 0;
}

int bench_goodput(int argc, char **argv)
{
	return tp_main(argc, argv, false);
}

int bench_latency(int argc, char **argv)
{
	return tp_main(argc, argv, true);
}
