// SPDX-License-Identifier: MIT
/*
 * bench_transport.c - pcm-bench goodput and pcm-bench latency: the transport
 * engine end to end (engine, core, CC, datapath).
 *
 *   pcm-bench goodput --datapath softnic|null|verbs --flows F --msg-size S
 *                     --chunk-size C --policy P
 *                     --mode sync|async-relaxed|async-locked|async-bounded
 *                     --engines E [--paths N] [--link-gbps G] [--seconds T] [--json]
 *   pcm-bench latency [--datapath null] [--iters N] [--json]
 *
 * goodput, null (and verbs): E sending and E receiving engines with inline
 * progress, driven by this one thread (flows spread over the engine pairs),
 * each flow keeping 16 messages in flight for T wall seconds; the null
 * datapath moves events only (no copy). goodput_gbps is wall-clock;
 * chunks_per_s is chunks received per second; cpu_ns_per_chunk is this
 * thread's CPU time per chunk (sender and receiver work both).
 * goodput, softnic: an F:1 incast on an emulated link of G Gbit/s (host F
 * receives), --paths paths per flow (default 1), one engine per host, for T/100 s of
 * emulated time (--seconds 1: 10 ms of the fabric); goodput_gbps is in
 * emulated time, with Jain's index over the flows.
 * latency: a ping-pong between two engines on the null datapath (copying
 * bytes), 64 B .. 64 KiB; p50 and p99 round trips in wall time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "builtin.h"
#include "engine.h"
#include "softnic.h"

#define DEPTH 16          /* messages in flight per flow */
#define MAX_ENGINES 64
#define MAX_FLOWS 4096

struct gp_opts {
	const char *datapath, *policy, *mode_name;
	uint32_t flows, engines, paths;
	uint64_t msg_size, chunk_size, link_gbps;
	double seconds;
	enum xp_cc_pcm_mode mode;
	enum pcm_async_mode async_mode;
	bool json;
	bool copy;             /* null: copy chunk bytes */
};

struct flow {
	uint32_t tx, rx;          /* engine indices */
	uint32_t conn[2];
	uint32_t mr[2];
	uint8_t *buf[2];
	uint64_t bytes;           /* received */
	uint32_t in_flight;
};

struct gp {
	struct gp_opts o;
	const struct xp_dp_ops *dp;
	struct xp_softnic_world *w;
	struct xp_engine *e[MAX_ENGINES + 1];
	uint32_t n_e;
	struct flow *f;
	uint64_t chunks;
};

static const struct pcm_package *find_policy(const char *name)
{
	for (size_t i = 0; name && pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	return NULL;
}

static void drive(struct gp *g)
{
	if (g->w) {
		xp_softnic_step(g->w, g->e, g->n_e, UINT64_MAX);
		return;
	}
	for (uint32_t i = 0; i < g->n_e; i++)
		xp_engine_progress(g->e[i]);
}

static int ctl_run(struct gp *g, uint32_t ei, struct xp_ctl *ctl)
{
	struct xp_cmd cmd = { .op = XP_CMD_CTL, .ctl = ctl };

	atomic_store(&ctl->done, 0);
	if (xp_engine_submit(g->e[ei], &cmd) < 0)
		return -EAGAIN;
	for (uint64_t i = 0; !atomic_load_explicit(&ctl->done, memory_order_acquire); i++)
		if (i > 100000000ull)
			return -ETIMEDOUT;
		else
			drive(g);
	return ctl->status;
}

static int engine_open(struct gp *g, uint32_t i, struct pcm_diag *diag)
{
	struct xp_engine_config cfg;

	xp_engine_config_default(&cfg);
	cfg.dp_ops = g->dp;
	cfg.dp.copy = g->o.copy;
	cfg.dp.world = g->w;
	cfg.dp.host = i;
	cfg.index = i;
	cfg.progress = g->w ? XP_PROGRESS_EXTERNAL : XP_PROGRESS_INLINE;
	cfg.async_workers = 0; /* one thread: asynchronous handlers run on the engine's */
	cfg.core.chunk_bytes = (uint32_t)g->o.chunk_size;
	if (cfg.core.min_chunk_bytes > cfg.core.chunk_bytes)
		cfg.core.min_chunk_bytes = cfg.core.chunk_bytes;
	cfg.core.seed = 1 + i;
	return xp_engine_create(&cfg, &g->e[i], diag);
}

static int flow_open(struct gp *g, struct flow *f, const struct xp_conn_opts *opts)
{
	struct xp_ctl *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	size_t len = (size_t)DEPTH * g->o.msg_size;
	uint32_t side_e[2] = { f->tx, f->rx };
	int rc = a && b ? 0 : -ENOMEM;

	for (int s = 0; s < 2 && rc == 0; s++) {
		f->buf[s] = calloc(1, len ? len : 1);
		if (!f->buf[s]) {
			rc = -ENOMEM;
			break;
		}
		memset(a, 0, sizeof(*a));
		a->op = XP_CTL_MR_REG;
		a->addr = f->buf[s];
		a->len = len;
		rc = ctl_run(g, side_e[s], a);
		f->mr[s] = a->mr;
	}
	if (rc == 0) {
		memset(a, 0, sizeof(*a));
		a->op = XP_CTL_CONN_OPEN;
		a->opts = *opts;
		rc = ctl_run(g, f->tx, a);
	}
	if (rc == 0) {
		b->op = XP_CTL_CONN_ACCEPT;
		b->opts = *opts;
		memcpy(b->peer_msg, a->msg, a->msg_len);
		b->peer_len = a->msg_len;
		rc = ctl_run(g, f->rx, b);
	}
	if (rc == 0) {
		a->op = XP_CTL_CONN_BIND;
		memcpy(a->peer_msg, b->msg, b->msg_len);
		a->peer_len = b->msg_len;
		rc = ctl_run(g, f->tx, a);
	}
	if (rc != 0)
		fprintf(stderr, "pcm-bench goodput: connection setup: %s %s (%d)\n", a ? a->diag.msg : "",
			b ? b->diag.msg : "", rc);
	f->conn[0] = a ? a->conn : 0;
	f->conn[1] = b ? b->conn : 0;
	free(a);
	free(b);
	return rc;
}

static void post_pair(struct gp *g, uint32_t fi, uint32_t slot)
{
	struct flow *f = &g->f[fi];
	uint64_t off = (uint64_t)slot * g->o.msg_size;
	struct xp_cmd recv = { .op = XP_CMD_RECV, .conn = f->conn[1], .mr = f->mr[1],
			       .addr = (uint64_t)(uintptr_t)f->buf[1] + off, .len = g->o.msg_size,
			       .cookie = (uint64_t)fi << 8 | slot };
	struct xp_cmd send = { .op = XP_CMD_SEND, .conn = f->conn[0], .mr = f->mr[0],
			       .addr = (uint64_t)(uintptr_t)f->buf[0] + off, .len = g->o.msg_size,
			       .cookie = (uint64_t)fi << 8 | slot };

	while (xp_engine_submit(g->e[f->rx], &recv) == -EAGAIN)
		drive(g);
	while (xp_engine_submit(g->e[f->tx], &send) == -EAGAIN)
		drive(g);
}

/* Take completions; a received message is counted and its slot posted again. */
static int reap(struct gp *g, bool repost)
{
	struct xp_engine_comp c[64];

	for (uint32_t i = 0; i < g->n_e; i++)
		for (uint32_t n; (n = xp_engine_poll(g->e[i], c, 64)) > 0;)
			for (uint32_t k = 0; k < n; k++) {
				uint32_t fi = (uint32_t)(c[k].cookie >> 8);

				if (c[k].status != 0) {
					fprintf(stderr, "pcm-bench goodput: flow %u: status %d\n", fi,
						c[k].status);
					return -EIO;
				}
				if (c[k].kind == XP_ECOMP_RECV) {
					g->f[fi].bytes += c[k].bytes;
					g->chunks += (c[k].bytes + g->o.chunk_size - 1) /
						     g->o.chunk_size;
				} else if (c[k].kind == XP_ECOMP_SEND && repost) {
					post_pair(g, fi, (uint32_t)(c[k].cookie & 0xff));
				}
			}
	return 0;
}

static double jain(const struct gp *g)
{
	double sum = 0, sq = 0;

	for (uint32_t i = 0; i < g->o.flows; i++) {
		sum += (double)g->f[i].bytes;
		sq += (double)g->f[i].bytes * (double)g->f[i].bytes;
	}
	return sq > 0 ? sum * sum / ((double)g->o.flows * sq) : 0;
}

static int softnic_world(struct gp *g, struct pcm_diag *diag)
{
	struct uet_scenario *scn = calloc(1, sizeof(*scn));
	int rc;

	if (!scn)
		return -ENOMEM;
	uet_scenario_defaults(scn);
	scn->topo.kind = UET_TOPO_INCAST;
	scn->topo.senders = g->o.flows;
	scn->topo.link_rate_bps = g->o.link_gbps * 1000000000ull;
	scn->nic.data_rate_bps = g->o.link_gbps * 1000000000ull;
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	rc = xp_softnic_world_create(scn, 1, &g->w, diag);
	free(scn);
	return rc;
}

static int gp_setup(struct gp *g, struct pcm_diag *diag)
{
	struct xp_conn_opts opts = { .paths = g->o.paths };
	int rc;

	if (g->o.policy && strcmp(g->o.policy, "none") != 0) {
		opts.cc = find_policy(g->o.policy);
		if (!opts.cc) {
			snprintf(diag->msg, sizeof(diag->msg), "--policy: no built-in policy '%s'",
				 g->o.policy);
			return -EINVAL;
		}
		snprintf(opts.cc_name, sizeof(opts.cc_name), "%s", g->o.policy);
		opts.mode = g->o.mode;
		opts.async_mode = g->o.async_mode;
	}
	g->n_e = g->w ? g->o.flows + 1 : 2 * g->o.engines;
	for (uint32_t i = 0; i < g->n_e; i++) {
		rc = engine_open(g, i, diag);
		if (rc < 0)
			return rc;
	}
	for (uint32_t i = 0; i < g->o.flows; i++) {
		struct flow *f = &g->f[i];

		f->tx = g->w ? i : i % g->o.engines;
		f->rx = g->w ? g->o.flows : g->o.engines + i % g->o.engines;
		rc = flow_open(g, f, &opts);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int gp_run(struct gp *g)
{
	uint64_t t0v = g->w ? xp_softnic_now_ns(g->w) : 0, bytes = 0;
	double t0 = bench_now_s(), c0 = bench_thread_cpu_s(), secs, cpu;
	uint64_t stop_v = t0v + (uint64_t)(g->o.seconds * 1e9);
	int rc = 0;

	for (uint32_t i = 0; i < g->o.flows; i++)
		for (uint32_t s = 0; s < DEPTH; s++)
			post_pair(g, i, s);
	for (uint64_t it = 0; rc == 0; it++) {
		drive(g);
		rc = reap(g, true);
		if ((it & 255) == 0 && (g->w ? xp_softnic_now_ns(g->w) >= stop_v
					      : bench_now_s() - t0 >= g->o.seconds))
			break;
	}
	secs = g->w ? (double)(xp_softnic_now_ns(g->w) - t0v) * 1e-9 : bench_now_s() - t0;
	cpu = bench_thread_cpu_s() - c0;
	for (uint32_t i = 0; i < g->o.flows; i++)
		bytes += g->f[i].bytes;
	for (uint32_t i = 0; getenv("PCM_BENCH_VERBOSE") && i < g->n_e; i++) {
		const struct xp_core_stats *c = xp_core_stats(xp_engine_core(g->e[i]));
		struct xp_dp_stats d;

		xp_engine_dp(g->e[i])->ops->stats(xp_engine_dp(g->e[i]), &d);
		fprintf(stderr, "engine %u: sent %" PRIu64 " retx %" PRIu64 " rto %" PRIu64
			" rack %" PRIu64 " dp lost %" PRIu64 " full %" PRIu64 "\n", i,
			c->chunks_sent, c->chunks_retx, c->rto_fires, c->rack_losses, d.writes_lost,
			d.writes_full);
	}
	if (rc == 0)
		printf("{\"bench\":\"goodput\",\"datapath\":\"%s\",\"policy\":\"%s\",\"mode\":\"%s\","
		       "\"flows\":%u,\"msg_size\":%" PRIu64 ",\"chunk_size\":%" PRIu64
		       ",\"engines\":%u,\"goodput_gbps\":%.3f,\"chunks_per_s\":%.0f,"
		       "\"cpu_ns_per_chunk\":%.1f,\"time\":\"%s\",\"seconds\":%.4f,"
		       "\"link_gbps\":%" PRIu64 ",\"jain\":%.4f}\n",
		       g->o.datapath, g->o.policy ? g->o.policy : "none", g->o.mode_name,
		       g->o.flows, g->o.msg_size, g->o.chunk_size, g->w ? g->n_e : g->o.engines,
		       (double)bytes * 8 / secs / 1e9, (double)g->chunks / secs,
		       g->chunks ? cpu * 1e9 / (double)g->chunks : 0.0,
		       g->w ? "emulated" : "wall", secs, g->w ? g->o.link_gbps : 0, jain(g));
	return rc;
}

static void gp_free(struct gp *g)
{
	for (uint32_t i = 0; i < g->n_e; i++)
		xp_engine_destroy(g->e[i]);
	for (uint32_t i = 0; g->f && i < g->o.flows; i++) {
		free(g->f[i].buf[0]);
		free(g->f[i].buf[1]);
	}
	free(g->f);
	xp_softnic_world_destroy(g->w);
}

static int parse_mode(struct gp_opts *o, const char *s)
{
	o->mode_name = s;
	if (strcmp(s, "sync") == 0) {
		o->mode = XP_CC_PCM_SYNC;
		return 0;
	}
	o->mode = XP_CC_PCM_ASYNC;
	if (strncmp(s, "async-", 6) == 0 && pcm_async_mode_parse(s + 6, &o->async_mode) == 0)
		return 0;
	fprintf(stderr, "pcm-bench: --mode: '%s' is not one of sync, async-relaxed, "
			"async-locked, async-bounded\n", s);
	return -EINVAL;
}

static int parse_gp(int argc, char **argv, struct gp_opts *o)
{
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		uint64_t x;
		int rc = 0;

		if (strcmp(a, "--json") == 0) {
			o->json = true;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "pcm-bench: %s needs a value\n", a);
			return -EINVAL;
		}
		i++;
		if (strcmp(a, "--datapath") == 0)
			o->datapath = v;
		else if (strcmp(a, "--policy") == 0)
			o->policy = v;
		else if (strcmp(a, "--mode") == 0)
			rc = parse_mode(o, v);
		else if (strcmp(a, "--flows") == 0)
			rc = bench_parse_u64(a, v, 1, MAX_FLOWS, &x), o->flows = (uint32_t)x;
		else if (strcmp(a, "--paths") == 0)
			rc = bench_parse_u64(a, v, 1, 8, &x), o->paths = (uint32_t)x;
		else if (strcmp(a, "--engines") == 0)
			rc = bench_parse_u64(a, v, 1, MAX_ENGINES / 2, &x), o->engines = (uint32_t)x;
		else if (strcmp(a, "--msg-size") == 0)
			rc = bench_parse_u64(a, v, 1, 1ull << 28, &o->msg_size);
		else if (strcmp(a, "--chunk-size") == 0)
			rc = bench_parse_u64(a, v, 64, XP_CHUNK_BYTES_MAX, &o->chunk_size);
		else if (strcmp(a, "--link-gbps") == 0)
			rc = bench_parse_u64(a, v, 1, 1600, &o->link_gbps);
		else if (strcmp(a, "--seconds") == 0) {
			o->seconds = atof(v);
			if (o->seconds <= 0 || o->seconds > 600) {
				fprintf(stderr, "pcm-bench: --seconds: '%s' is not in (0, 600]\n", v);
				rc = -EINVAL;
			}
		} else {
			fprintf(stderr, "pcm-bench goodput: unknown option '%s'\n", a);
			rc = -EINVAL;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

int bench_goodput(int argc, char **argv)
{
	struct gp g = { .o = { .datapath = "null", .flows = 1, .engines = 1, .msg_size = 1 << 20,
			       .chunk_size = 65536, .link_gbps = 400, .seconds = 1.0,
			       .mode_name = "sync", .paths = 1 } };
	struct pcm_diag diag = { { 0 } };
	int rc;

	if (parse_gp(argc, argv, &g.o) < 0)
		return 2;
	g.dp = xp_dp_find(g.o.datapath);
	if (!g.dp) {
		fprintf(stderr, "pcm-bench goodput: --datapath '%s': not one of %s\n", g.o.datapath,
			xp_dp_names());
		return 2;
	}
	if (g.o.flows > MAX_ENGINES && g.dp == &xp_dp_softnic_ops) {
		fprintf(stderr, "pcm-bench goodput: softnic: at most %d flows\n", MAX_ENGINES);
		return 2;
	}
	g.f = calloc(g.o.flows, sizeof(*g.f));
	if (!g.f)
		return 1;
	if (g.dp == &xp_dp_softnic_ops) {
		g.o.seconds /= 100; /* emulated time: --seconds 1 is 10 ms of the fabric */
		rc = softnic_world(&g, &diag);
	} else {
		rc = 0;
	}
	if (rc == 0)
		rc = gp_setup(&g, &diag);
	if (rc < 0)
		fprintf(stderr, "pcm-bench goodput: %s (%s)\n", diag.msg, strerror(-rc));
	else
		rc = gp_run(&g);
	gp_free(&g);
	return rc < 0 ? 1 : 0;
}

/* ---- latency ---------------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One ping-pong of @size bytes: A sends to B, B answers; the round trip in ns. */
static int ping_pong(struct gp *g, uint64_t size, uint64_t *rtt_ns)
{
	struct flow *f = &g->f[0];
	struct xp_cmd ra = { .op = XP_CMD_RECV, .conn = f->conn[0], .mr = f->mr[0],
			     .addr = (uint64_t)(uintptr_t)f->buf[0], .len = size, .cookie = 1 };
	struct xp_cmd rb = { .op = XP_CMD_RECV, .conn = f->conn[1], .mr = f->mr[1],
			     .addr = (uint64_t)(uintptr_t)f->buf[1], .len = size, .cookie = 2 };
	struct xp_cmd sa = { .op = XP_CMD_SEND, .conn = f->conn[0], .mr = f->mr[0],
			     .addr = (uint64_t)(uintptr_t)f->buf[0], .len = size, .cookie = 3 };
	struct xp_cmd sb = sa;
	struct xp_engine_comp c[8];
	bool b_got = false, a_got = false;
	int sends = 0;
	double t0;

	sb.conn = f->conn[1];
	sb.mr = f->mr[1];
	sb.addr = (uint64_t)(uintptr_t)f->buf[1];
	sb.cookie = 4;
	/* receives pre-posted, as a ping-pong application does */
	if (xp_engine_submit(g->e[0], &ra) < 0 || xp_engine_submit(g->e[1], &rb) < 0)
		return -EAGAIN;
	t0 = bench_now_s();
	if (xp_engine_submit(g->e[0], &sa) < 0)
		return -EAGAIN;
	while (!a_got) {
		drive(g);
		for (uint32_t n = xp_engine_poll(g->e[1], c, 8), k = 0; k < n; k++) {
			sends += c[k].kind == XP_ECOMP_SEND;
			if (c[k].kind == XP_ECOMP_RECV && !b_got) {
				b_got = true;
				if (xp_engine_submit(g->e[1], &sb) < 0)
					return -EAGAIN;
			}
		}
		for (uint32_t n = xp_engine_poll(g->e[0], c, 8), k = 0; k < n; k++) {
			sends += c[k].kind == XP_ECOMP_SEND;
			a_got |= c[k].kind == XP_ECOMP_RECV;
		}
	}
	*rtt_ns = (uint64_t)((bench_now_s() - t0) * 1e9);
	/* the two sends complete on their ACKs: take them before the next round */
	for (uint64_t spins = 0; sends < 2; spins++) {
		if (spins > 100000000ull)
			return -ETIMEDOUT;
		drive(g);
		for (uint32_t n = xp_engine_poll(g->e[0], c, 8), k = 0; k < n; k++)
			sends += c[k].kind == XP_ECOMP_SEND;
		for (uint32_t n = xp_engine_poll(g->e[1], c, 8), k = 0; k < n; k++)
			sends += c[k].kind == XP_ECOMP_SEND;
	}
	return 0;
}

int bench_latency(int argc, char **argv)
{
	struct gp g = { .o = { .datapath = "null", .flows = 1, .engines = 1, .msg_size = 65536,
			       .chunk_size = 65536, .mode_name = "sync", .copy = true } };
	struct xp_conn_opts opts = { .paths = 1 };
	struct pcm_diag diag = { { 0 } };
	uint64_t iters = 20000, *rtt;
	int rc = 0;

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			continue;
		if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
			if (bench_parse_u64("--iters", argv[++i], 10, 10000000, &iters) < 0)
				return 2;
		} else if (strcmp(argv[i], "--datapath") == 0 && i + 1 < argc) {
			g.o.datapath = argv[++i];
		} else {
			fprintf(stderr, "pcm-bench latency: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	g.dp = xp_dp_find(g.o.datapath);
	if (!g.dp || g.dp == &xp_dp_softnic_ops) {
		fprintf(stderr, "pcm-bench latency: --datapath '%s': one of null, verbs\n",
			g.o.datapath);
		return 2;
	}
	g.f = calloc(1, sizeof(*g.f));
	rtt = calloc(iters, sizeof(*rtt));
	if (!g.f || !rtt) {
		free(g.f);
		free(rtt);
		return 1;
	}
	g.n_e = 2;
	g.f[0].tx = 0;
	g.f[0].rx = 1;
	for (uint32_t i = 0; i < 2 && rc == 0; i++)
		rc = engine_open(&g, i, &diag);
	if (rc == 0)
		rc = flow_open(&g, &g.f[0], &opts);
	for (uint64_t size = 64; size <= 65536 && rc == 0; size *= 4) {
		for (uint64_t i = 0; i < iters / 10 && rc == 0; i++) /* warm-up */
			rc = ping_pong(&g, size, &rtt[0]);
		for (uint64_t i = 0; i < iters && rc == 0; i++)
			rc = ping_pong(&g, size, &rtt[i]);
		qsort(rtt, iters, sizeof(*rtt), cmp_u64);
		if (rc == 0)
			printf("{\"bench\":\"latency\",\"datapath\":\"%s\",\"msg_size\":%" PRIu64
			       ",\"engines\":2,\"progress\":\"inline\",\"iters\":%" PRIu64
			       ",\"rtt_p50_ns\":%" PRIu64 ",\"rtt_p99_ns\":%" PRIu64 "}\n",
			       g.o.datapath, size, iters, rtt[iters / 2], rtt[iters * 99 / 100]);
	}
	if (rc < 0)
		fprintf(stderr, "pcm-bench latency: %s (%s)\n", diag.msg, strerror(-rc));
	free(rtt);
	gp_free(&g);
	return rc < 0 ? 1 : 0;
}
