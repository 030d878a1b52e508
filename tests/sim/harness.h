/* SPDX-License-Identifier: MIT */
/*
 * harness.h - shared helpers of the 'sim' tests: small scenarios built in
 * code, a monitor that keeps every packet row, and a switch filter that drops
 * or trims chosen packets.
 */
#ifndef PCM_TESTS_SIM_HARNESS_H
#define PCM_TESTS_SIM_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "uet.h"

struct capture {
	struct uet_pkt_view *rows;
	size_t n, cap;
	/* filter: act on the Nth packet (0-based) matching kind/psn/retx at any switch */
	int drop_kind;          /* -1: none */
	int drop_psn;           /* -1: any */
	int drop_first_tx_only; /* only packets without the retransmit flag */
	int drop_count;         /* how many matching packets to act on */
	int dropped;
	enum uet_filter_verdict verdict;
};

static inline void capture_monitor(void *ctx, const struct uet_pkt_view *p)
{
	struct capture *c = ctx;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 1024;
		c->rows = realloc(c->rows, c->cap * sizeof(*c->rows));
	}
	c->rows[c->n++] = *p;
}

static inline enum uet_filter_verdict capture_filter(void *ctx, const struct uet_pkt_view *p)
{
	struct capture *c = ctx;

	if (c->drop_kind < 0 || (int)p->kind != c->drop_kind || c->dropped >= c->drop_count)
		return UET_FILTER_PASS;
	if (c->drop_psn >= 0 && p->psn != (uint32_t)c->drop_psn)
		return UET_FILTER_PASS;
	if (c->drop_first_tx_only && (p->flags & UET_PF_RETX))
		return UET_FILTER_PASS;
	c->dropped++;
	return c->verdict;
}

static inline void capture_init(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->drop_kind = -1;
	c->drop_psn = -1;
	c->verdict = UET_FILTER_DROP;
}

/* Start capturing on @sim, acting (@verdict) on the first @count packets of @kind and @psn. */
static inline void capture_drop(struct capture *c, struct uet_sim *sim, int kind, int psn,
				int count, enum uet_filter_verdict verdict);

static inline void capture_attach(struct capture *c, struct uet_sim *sim)
{
	struct uet_hooks h = {
		.ctx = c,
		.monitor = capture_monitor,
		.at_switch = capture_filter,
	};

	uet_sim_set_hooks(sim, &h);
}

static inline void capture_drop(struct capture *c, struct uet_sim *sim, int kind, int psn,
				int count, enum uet_filter_verdict verdict)
{
	capture_init(c);
	c->drop_kind = kind;
	c->drop_psn = psn;
	c->drop_count = count;
	c->verdict = verdict;
	capture_attach(c, sim);
}

/* A two-host fabric (one sender, one receiver, one switch) at 100 Gbit/s, no policy. */
static inline struct uet_scenario *pair_scenario(void)
{
	struct uet_scenario *scn = calloc(1, sizeof(*scn));

	uet_scenario_defaults(scn);
	snprintf(scn->name, sizeof(scn->name), "test");
	snprintf(scn->path, sizeof(scn->path), "test");
	scn->topo.senders = 1;
	scn->nic.data_rate_bps = 100000000000ull;
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	scn->nic.initial_cwnd_bytes = 64ull * (4096 + UET_NOMINAL_HDR_BYTES);
	return scn;
}

static inline struct uet_sim *make_sim(const struct uet_scenario *scn,
				const struct pcm_package *const *pkgs)
{
	struct uet_sim *sim = NULL;
	struct pcm_diag diag;
	int rc = uet_sim_create(scn, pkgs, scn->seed, &sim, &diag);

	if (rc < 0) {
		fprintf(stderr, "uet_sim_create: %d: %s\n", rc, diag.msg);
		return NULL;
	}
	return sim;
}

/* Rows matching a predicate, in order. */
#define ROWS_FOREACH(c, r)                                                                         \
	for (const struct uet_pkt_view *r = (c)->rows; r < (c)->rows + (c)->n; r++)

#endif /* PCM_TESTS_SIM_HARNESS_H */
