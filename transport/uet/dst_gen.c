// SPDX-License-Identifier: MIT
/*
 * dst_gen.c - the randomized suite's generator (uet_dst.h): a seed becomes a
 * whole scenario.
 *
 * Every choice comes from one xoshiro stream seeded by the seed, in a fixed
 * order, so a seed always gives the same scenario. Sizes stay within what a
 * CI runner does in milliseconds: at most 16 hosts, 64 messages and 24 MB
 * (one message may be 16 MB), outages of at most a few hundred timeouts.
 * The stop time is a bound after the last fault ends and the last message
 * is posted: long enough for every message at a small fraction of the
 * slowest link's rate, after the longest timeout many times over.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "des.h"
#include "uet_dst.h"

#define US 1000000ull
#define MS 1000000000ull
#define MAX_MSGS 64
#define MAX_BYTES (24ull << 20)
#define BIG_BYTES (16ull << 20)

struct gen {
	struct uet_rng rng;
	struct uet_scenario *scn;
	const struct uet_dst_policy *pols;
	uint32_t n_pols;
	uint32_t hosts;
	uint64_t bytes;        /* posted so far */
	bool big;              /* a message of several MB was drawn */
	uint64_t last_start_ps;
};

static uint32_t below(struct gen *g, uint32_t n)
{
	return n ? uet_rng_below(&g->rng, n) : 0;
}

static bool chance(struct gen *g, double p)
{
	return (double)(uet_rng_next(&g->rng) >> 11) * 0x1p-53 < p;
}

static uint32_t range(struct gen *g, uint32_t lo, uint32_t hi)
{
	return lo + below(g, hi - lo + 1);
}

/* Log-uniform in [lo, hi]. */
static uint64_t log_uniform(struct gen *g, uint64_t lo, uint64_t hi)
{
	double u = (double)(uet_rng_next(&g->rng) >> 11) * 0x1p-53;
	double v = exp(log((double)lo) + u * (log((double)hi) - log((double)lo)));

	return v < (double)lo ? lo : v > (double)hi ? hi : (uint64_t)v;
}

static uint64_t gbps(uint32_t n)
{
	return (uint64_t)n * 1000000000ull;
}

static void gen_topology(struct gen *g)
{
	static const uint32_t rates[] = { 25, 50, 100, 200, 400 };
	struct uet_topo_cfg *t = &g->scn->topo;
	uint32_t r = below(g, 10);

	if (r < 4) {
		t->kind = UET_TOPO_INCAST;
		t->senders = range(g, 1, 15);
		g->hosts = t->senders + 1;
	} else if (r < 7) {
		t->kind = UET_TOPO_LEAF_SPINE;
		t->leaves = range(g, 2, 4);
		t->spines = range(g, 1, 3);
		t->hosts_per_leaf = range(g, 1, 4);
		t->oversubscription = (double)(1u << below(g, 3));
		g->hosts = t->leaves * t->hosts_per_leaf;
	} else {
		t->kind = UET_TOPO_FAT_TREE;
		t->k = chance(g, 0.15) ? 2 : 4;
		g->hosts = t->k * t->k * t->k / 4;
	}
	t->link_rate_bps = gbps(rates[below(g, 5)]);
	t->link_delay_ps = chance(g, 0.3) ? US : log_uniform(g, 100000, 5 * US);
	if (chance(g, 0.5))
		t->queue_bytes = (uint64_t)range(g, 2, 64) * (4096 + 106);
	if (chance(g, 0.2))
		t->ecn_kmax_bytes = 0;
	t->uet_policy = chance(g, 0.9);
	t->switch_trimming = t->uet_policy && chance(g, 0.7);
}

static void gen_nic(struct gen *g)
{
	static const uint32_t msss[] = { 1024, 2048, 8192 };
	static const uint32_t rates[] = { 100, 200, 400 };
	struct uet_nic_cfg *c = &g->scn->nic;
	uint32_t wire, nominal;

	if (chance(g, 0.3))
		c->rdma_data_mss = chance(g, 0.5) ? msss[below(g, 3)] : range(g, 256, 9000);
	wire = c->rdma_data_mss + 106;
	nominal = c->rdma_data_mss + 88;
	c->data_rate_bps = gbps(rates[below(g, 3)]);
	if (chance(g, 0.4))
		c->ack_every_nth = range(g, 2, 8);
	c->ack_first = chance(g, 0.5);
	c->ack_last = chance(g, 0.5);
	if (chance(g, 0.3)) {
		c->fixed_rexmit_enable = true;
		c->fixed_rexmit_ps = log_uniform(g, 2 * US, 200 * US);
	} else {
		c->initial_rto_ps = log_uniform(g, 5 * US, 200 * US);
		c->max_rto_backoff = range(g, 0, 6);
	}
	if (chance(g, 0.25)) {
		c->prefetch_enable = true;
		c->prefetch_bytes = range(g, 1, 8) * wire;
	}
	if (chance(g, 0.5) || c->egress_pool_bytes < wire)
		c->egress_pool_bytes = range(g, 1, 16) * wire;
	if (chance(g, 0.5))
		c->rx_pool_bytes = range(g, 1, 256) * nominal;
	c->pdc_groups = chance(g, 0.8);
	c->trimming = chance(g, 0.5);
	c->trimmable_retx = chance(g, 0.8);
	if (chance(g, 0.3))
		c->initial_cwnd_bytes = log_uniform(g, 100, 512ull * nominal);
	if (chance(g, 0.2))
		c->lane_count = 1u << below(g, 4);
	c->transport_stats = true;
	c->stats_interval_ps = log_uniform(g, 10 * US, 200 * US);
	c->event_logging = true;
	/* coalescing receivers (a pcm extension) */
	if (chance(g, 0.2))
		c->ack_coalesce_bytes = range(g, 1, 16) * (uint64_t)c->rdma_data_mss;
}

/* The scenario's index of policy @name, added if new (never the LB's entry). */
static int32_t policy_index(struct uet_scenario *scn, const char *name)
{
	for (uint32_t i = 0; i < scn->n_policies; i++)
		if (strcmp(scn->policies[i], name) == 0 && !(scn->has_lb && i == scn->lb_policy))
			return (int32_t)i;
	if (scn->n_policies == UET_MAX_POLICIES)
		return 0;
	snprintf(scn->policies[scn->n_policies], sizeof(scn->policies[0]), "%s", name);
	return (int32_t)scn->n_policies++;
}

static bool is_lb(const struct uet_dst_policy *p)
{
	return p->controls == 1u << PCM_CTRL_EV;
}

/* A group policy: "none" or a package that is no LB (and drives no EV beside an LB). */
static const char *pick_group_policy(struct gen *g, bool with_lb)
{
	uint32_t n = 0, k;

	for (uint32_t i = 0; i < g->n_pols; i++)
		n += !is_lb(&g->pols[i]) && !(with_lb && (g->pols[i].controls & 1u << PCM_CTRL_EV));
	if (!n || chance(g, 0.15))
		return "none";
	k = below(g, n);
	for (uint32_t i = 0; i < g->n_pols; i++) {
		const struct uet_dst_policy *p = &g->pols[i];

		if (is_lb(p) || (with_lb && (p->controls & 1u << PCM_CTRL_EV)))
			continue;
		if (!k--)
			return p->name;
	}
	return "none";
}

static const char *pick_lb(struct gen *g)
{
	uint32_t n = 0, k;

	for (uint32_t i = 0; i < g->n_pols; i++)
		n += is_lb(&g->pols[i]);
	if (!n)
		return NULL;
	k = below(g, n);
	for (uint32_t i = 0; i < g->n_pols; i++)
		if (is_lb(&g->pols[i]) && !k--)
			return g->pols[i].name;
	return NULL;
}

static int64_t any_or_host(struct gen *g)
{
	return chance(g, 0.4) ? -1 : (int64_t)below(g, g->hosts);
}

static void gen_policies(struct gen *g, bool *with_lb)
{
	struct uet_scenario *scn = g->scn;
	const char *lb = NULL;

	*with_lb = chance(g, 0.3);
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "%s", pick_group_policy(g, *with_lb));
	if (*with_lb)
		lb = pick_lb(g);
	if (lb)
		uet_scenario_set_lb(scn, lb);
	*with_lb = lb != NULL;
	if (chance(g, 0.3)) {
		uint32_t n = range(g, 1, 3);

		for (uint32_t i = 0; i < n; i++) {
			struct uet_policy_rule *r = &scn->rules[scn->n_rules++];

			r->src = any_or_host(g);
			r->dst = any_or_host(g);
			r->policy = (uint32_t)policy_index(scn, pick_group_policy(g, *with_lb));
		}
	}
	if (chance(g, 0.3)) {
		scn->shell_mode = UET_SHELL_ASYNC;
		scn->delay_events = range(g, 1, 32);
	}
}

static uint64_t gen_bytes(struct gen *g)
{
	if (chance(g, 0.05))
		return 0;
	if (!g->big && chance(g, 0.02)) {
		g->big = true;
		return log_uniform(g, 4ull << 20, BIG_BYTES);
	}
	return log_uniform(g, 1, chance(g, 0.2) ? 2ull << 20 : 256ull << 10);
}

static bool add_message(struct gen *g, uint32_t src, uint32_t dst, bool with_lb)
{
	struct uet_scenario *scn = g->scn;
	struct uet_flow_spec *f;

	if (scn->n_flows == MAX_MSGS || src == dst)
		return false;
	f = &scn->flows[scn->n_flows];
	f->src = src;
	f->dst = dst;
	f->bytes = gen_bytes(g);
	if (g->bytes + f->bytes > MAX_BYTES)
		f->bytes = (MAX_BYTES - g->bytes) / 2;
	f->start_ps = chance(g, 0.6) ? log_uniform(g, 1000, 20 * US) : log_uniform(g, 1000, 200 * US);
	f->policy = chance(g, 0.1) ? policy_index(scn, pick_group_policy(g, with_lb)) : -1;
	g->bytes += f->bytes;
	if (f->start_ps > g->last_start_ps)
		g->last_start_ps = f->start_ps;
	scn->n_flows++;
	return true;
}

/* Several messages from @src to @dst, so that PDC groups carry more than one PDC. */
static void add_peer(struct gen *g, uint32_t src, uint32_t dst, bool with_lb)
{
	uint32_t n = chance(g, 0.5) ? 1 : range(g, 2, 4);

	for (uint32_t i = 0; i < n; i++)
		add_message(g, src, dst, with_lb);
}

static void gen_pattern(struct gen *g, bool with_lb)
{
	uint32_t h = g->hosts, kind = below(g, 4);

	switch (kind) {
	case 0: { /* incast */
		uint32_t r = below(g, h), k = range(g, 1, h - 1 < 8 ? h - 1 : 8);

		for (uint32_t i = 0; i < k; i++)
			add_peer(g, (r + 1 + below(g, h - 1)) % h, r, with_lb);
		break;
	}
	case 1: { /* permutation of a subset: host i sends to host i + shift */
		uint32_t shift = range(g, 1, h - 1), n = range(g, 2, h);

		for (uint32_t i = 0; i < n; i++)
			add_peer(g, i, (i + shift) % h, with_lb);
		break;
	}
	case 2: { /* all-to-all among a few hosts */
		uint32_t n = range(g, 2, h < 4 ? h : 4), base = below(g, h);

		for (uint32_t i = 0; i < n; i++)
			for (uint32_t j = 0; j < n; j++)
				if (i != j)
					add_peer(g, (base + i) % h, (base + j) % h, with_lb);
		break;
	}
	default: { /* random pairs */
		uint32_t n = range(g, 1, 8);

		for (uint32_t i = 0; i < n; i++) {
			uint32_t a = below(g, h), b = (a + 1 + below(g, h - 1)) % h;

			add_peer(g, a, b, with_lb);
		}
		break;
	}
	}
}

/* The link from host @h up to its switch, by the fabric's names. */
static void host_link(const struct gen *g, uint32_t h, char *a, char *b, size_t len)
{
	const struct uet_topo_cfg *t = &g->scn->topo;

	snprintf(a, len, "host%u", h);
	switch (t->kind) {
	case UET_TOPO_INCAST:
		snprintf(b, len, "sw0");
		break;
	case UET_TOPO_LEAF_SPINE:
		snprintf(b, len, "leaf%u", h / t->hosts_per_leaf);
		break;
	case UET_TOPO_FAT_TREE: {
		uint32_t half = t->k / 2, e = h / half;

		snprintf(b, len, "edge%u.%u", e / half, e % half);
		break;
	}
	}
}

/* A link between two switches, or a host link where there is none. */
static void fabric_link(struct gen *g, char *a, char *b, size_t len)
{
	const struct uet_topo_cfg *t = &g->scn->topo;

	switch (t->kind) {
	case UET_TOPO_LEAF_SPINE:
		snprintf(a, len, "leaf%u", below(g, t->leaves));
		snprintf(b, len, "spine%u", below(g, t->spines));
		return;
	case UET_TOPO_FAT_TREE: {
		uint32_t half = t->k / 2, p = below(g, t->k), x = below(g, half), y = below(g, half);

		if (chance(g, 0.5)) {
			snprintf(a, len, "edge%u.%u", p, x);
			snprintf(b, len, "agg%u.%u", p, y);
		} else {
			snprintf(a, len, "agg%u.%u", p, x);
			snprintf(b, len, "core%u", x * half + y);
		}
		return;
	}
	case UET_TOPO_INCAST:
		host_link(g, below(g, g->hosts), a, b, len);
		return;
	}
}

/* The first timeout of a packet, and the longest. */
static uint64_t first_rto(const struct uet_nic_cfg *c)
{
	return c->fixed_rexmit_enable ? c->fixed_rexmit_ps : c->initial_rto_ps;
}

static uint64_t longest_rto(const struct uet_nic_cfg *c)
{
	return c->fixed_rexmit_enable ? c->fixed_rexmit_ps : c->initial_rto_ps << c->max_rto_backoff;
}

static uint64_t gen_faults(struct gen *g)
{
	struct uet_scenario *scn = g->scn;
	uint64_t rto = first_rto(&scn->nic), last_end = 0;
	uint32_t r = below(g, 20), n = r < 8 ? 0 : r < 15 ? 1 : range(g, 2, 3);

	for (uint32_t i = 0; i < n && scn->n_flows; i++) {
		struct uet_link_failure *f = &scn->failures[scn->n_failures++];
		const struct uet_flow_spec *fl = &scn->flows[below(g, scn->n_flows)];
		uint64_t len;

		switch (below(g, 3)) {
		case 0: /* a sender's own link */
			host_link(g, fl->src, f->a, f->b, sizeof(f->a));
			break;
		case 1: /* a receiver's link */
			host_link(g, fl->dst, f->a, f->b, sizeof(f->a));
			break;
		default:
			fabric_link(g, f->a, f->b, sizeof(f->a));
			break;
		}
		f->at_ps = log_uniform(g, 1000, 100 * US);
		if (chance(g, 0.25)) {
			/* a lossy link for a while */
			f->loss_ppm = (uint32_t)log_uniform(g, 1000, 200000);
			len = log_uniform(g, US, MS);
		} else if (chance(g, 0.4)) {
			/* an outage many timeouts long */
			len = rto * range(g, 10, 60);
			if (scn->nic.fixed_rexmit_enable && len > 300 * rto)
				len = 300 * rto;
		} else {
			len = log_uniform(g, US, 5 * rto);
		}
		if (len > 20 * MS)
			len = 20 * MS;
		f->until_ps = f->at_ps + len;
		f->reroute = !f->loss_ppm && chance(g, 0.3);
		if (f->until_ps > last_end)
			last_end = f->until_ps;
	}
	return last_end;
}

/* The slowest rate any byte may cross. */
static uint64_t slowest_bps(const struct uet_scenario *scn)
{
	const struct uet_topo_cfg *t = &scn->topo;
	uint64_t r = scn->nic.data_rate_bps < t->link_rate_bps ? scn->nic.data_rate_bps
							       : t->link_rate_bps;

	if (t->kind == UET_TOPO_LEAF_SPINE) {
		uint64_t up = (uint64_t)((double)t->hosts_per_leaf * (double)r /
					 ((double)t->spines * t->oversubscription));

		if (up < r)
			r = up;
	}
	return r;
}

uint32_t uet_dst_policies(const struct pcm_package *const *pkgs, struct uet_dst_policy *out,
			  uint32_t max)
{
	uint32_t n = 0;

	for (; pkgs && pkgs[n] && n < max; n++) {
		out[n].name = pkgs[n]->name;
		out[n].controls = (uint32_t)pkgs[n]->control_types;
	}
	return n;
}

/* The unloaded round trip of the longest path: propagation and a full packet per hop, both ways. */
static uint64_t longest_rtt(const struct uet_scenario *scn)
{
	uint64_t links = scn->topo.kind == UET_TOPO_INCAST ? 2
			 : scn->topo.kind == UET_TOPO_LEAF_SPINE ? 4 : 6;
	double mtu_ps = (double)(scn->nic.rdma_data_mss + 106) * 8e12 / (double)slowest_bps(scn);

	return 2 * links * scn->topo.link_delay_ps + (uint64_t)(2.0 * (double)links * mtu_ps);
}

int uet_dst_generate(uint64_t seed, const struct uet_dst_policy *pols, uint32_t n_pols,
		     struct uet_scenario **out)
{
	struct gen g = { .pols = pols, .n_pols = pols ? n_pols : 0 };
	struct uet_scenario *scn = calloc(1, sizeof(*scn));
	uint64_t last_fault, from, transfer_ps;
	uint32_t patterns;
	bool with_lb;

	if (!scn)
		return -ENOMEM;
	uet_scenario_defaults(scn);
	scn->flows = calloc(MAX_MSGS, sizeof(*scn->flows));
	if (!scn->flows) {
		free(scn);
		return -ENOMEM;
	}
	g.scn = scn;
	uet_rng_seed(&g.rng, seed ^ 0x5deece66dull);
	snprintf(scn->name, sizeof(scn->name), "dst-%llu", (unsigned long long)seed);
	snprintf(scn->path, sizeof(scn->path), "dst-%llu.yaml", (unsigned long long)seed);
	scn->seed = seed;
	gen_topology(&g);
	gen_nic(&g);
	gen_policies(&g, &with_lb);
	patterns = range(&g, 1, 3);
	for (uint32_t i = 0; i < patterns; i++)
		gen_pattern(&g, with_lb);
	last_fault = gen_faults(&g);
	snprintf(scn->description, sizeof(scn->description),
		 "generated from seed %llu: %u hosts, %u messages, %llu bytes, %u faults",
		 (unsigned long long)seed, g.hosts, scn->n_flows, (unsigned long long)g.bytes,
		 scn->n_failures);
	/*
	 * The bound: every byte at 1/50 of the slowest rate, after 100 longest
	 * timeouts; and, for a window fallen to one packet, every packet one
	 * round trip plus a longest timeout apart (a fixed timeout below the
	 * round trip times every packet out), N times over with
	 * AckRequestEveryNthPacket N (a window below N packets draws no ACK).
	 */
	from = last_fault > g.last_start_ps ? last_fault : g.last_start_ps;
	transfer_ps = (uint64_t)((double)g.bytes * 8e12 / (double)slowest_bps(scn));
	scn->stop_ps = from + 50 * MS + 100 * longest_rto(&scn->nic) + 50 * transfer_ps;
	scn->stop_ps += (g.bytes / scn->nic.rdma_data_mss + scn->n_flows) *
			scn->nic.ack_every_nth * (longest_rtt(scn) + longest_rto(&scn->nic));
	*out = scn;
	return 0;
}
