// SPDX-License-Identifier: MIT
/*
 * dst_shrink.c - the randomized suite's shrinker (uet_dst.h): a failing
 * scenario becomes a smaller one that still fails.
 *
 * Each reduction is tried on a copy and kept only if the copy still fails a
 * check; passes repeat until none keeps anything or the budget of checks is
 * spent. In order: faults, runs of messages (halves, quarters, ... one), rules,
 * the LB and the async shell, hosts (the ones messages and faults use,
 * renumbered onto an incast of just those), message sizes and start times,
 * then every NIC attribute and topology setting back to its default.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "uet_dst.h"

struct shrink {
	const struct pcm_package *const *pkgs;
	bool twice;             /* the failure needs two runs to show (determinism) */
	unsigned budget, used;
	int kept;
	struct uet_dst_result *res;
};

/* A reduction: apply its @i-th variant to @s. Return: false if there is no such variant. */
typedef bool (*reduce_fn)(struct uet_scenario *s, uint32_t i);

static bool still_fails(struct shrink *sh, const struct uet_scenario *cand)
{
	struct uet_dst_result r;

	if (sh->used >= sh->budget)
		return false;
	sh->used++;
	if (uet_dst_check(cand, sh->pkgs, sh->twice, &r) != -EFAULT)
		return false;
	*sh->res = r;
	return true;
}

enum outcome { NO_VARIANT, REJECTED, KEPT, NO_MEMORY };

/* Do @a and @b read the same as files? A reduction that changes nothing is skipped. */
static bool same(const struct uet_scenario *a, const struct uet_scenario *b)
{
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	bool eq = false;

	if (fa && fb && uet_scenario_write(a, fa) == 0 && uet_scenario_write(b, fb) == 0) {
		fflush(fa);
		fflush(fb);
		eq = la == lb && memcmp(ta, tb, la) == 0;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	free(ta);
	free(tb);
	return eq;
}

static enum outcome attempt(struct shrink *sh, struct uet_scenario **scn, reduce_fn fn, uint32_t i)
{
	struct uet_scenario *cand = uet_scenario_dup(*scn);

	if (!cand)
		return NO_MEMORY;
	if (!fn(cand, i)) {
		uet_scenario_free(cand);
		return NO_VARIANT;
	}
	if (same(cand, *scn) || !still_fails(sh, cand)) {
		uet_scenario_free(cand);
		return REJECTED;
	}
	uet_scenario_free(*scn);
	*scn = cand;
	sh->kept++;
	return KEPT;
}

/* Try every variant of @fn once. Return: how many were kept, or -ENOMEM. */
static int sweep(struct shrink *sh, struct uet_scenario **scn, reduce_fn fn)
{
	int kept = 0;

	for (uint32_t i = 0; sh->used < sh->budget;) {
		enum outcome o = attempt(sh, scn, fn, i);

		if (o == NO_VARIANT)
			break;
		if (o == NO_MEMORY)
			return -ENOMEM;
		if (o == KEPT)
			kept++; /* the same index now names the next variant */
		else
			i++;
	}
	return kept;
}

static bool drop_failure(struct uet_scenario *s, uint32_t i)
{
	if (i >= s->n_failures)
		return false;
	memmove(&s->failures[i], &s->failures[i + 1],
		(s->n_failures - i - 1) * sizeof(s->failures[0]));
	s->n_failures--;
	return true;
}

static void drop_flows(struct uet_scenario *s, uint32_t from, uint32_t n)
{
	memmove(&s->flows[from], &s->flows[from + n],
		(s->n_flows - from - n) * sizeof(s->flows[0]));
	s->n_flows -= n;
}

/* Remove runs of messages, halves first: variant i is run i % parts of size n / parts. */
static bool drop_flow_run(struct uet_scenario *s, uint32_t i)
{
	uint32_t n = s->n_flows;

	for (uint32_t parts = 2; n > 1 && parts <= 2 * n; parts *= 2) {
		uint32_t size = (n + parts - 1) / parts;
		uint32_t runs = (n + size - 1) / size;

		if (i < runs) {
			uint32_t from = i * size, len = from + size > n ? n - from : size;

			drop_flows(s, from, len);
			return s->n_flows > 0;
		}
		i -= runs;
	}
	return false;
}

static bool drop_rule(struct uet_scenario *s, uint32_t i)
{
	if (i >= s->n_rules)
		return false;
	memmove(&s->rules[i], &s->rules[i + 1], (s->n_rules - i - 1) * sizeof(s->rules[0]));
	s->n_rules--;
	return true;
}

static bool simplify_policies(struct uet_scenario *s, uint32_t i)
{
	switch (i) {
	case 0:
		s->has_lb = false;
		return true;
	case 1:
		s->shell_mode = UET_SHELL_SYNC;
		s->delay_events = 0;
		return true;
	case 2:
		for (uint32_t k = 0; k < s->n_flows; k++)
			s->flows[k].policy = -1;
		return true;
	default:
		return false;
	}
}

static bool halve_message(struct uet_scenario *s, uint32_t i)
{
	if (i > s->n_flows)
		return false;
	if (i == s->n_flows) {
		/* all at once: every message at most one packet */
		for (uint32_t k = 0; k < s->n_flows; k++)
			if (s->flows[k].bytes > s->nic.rdma_data_mss)
				s->flows[k].bytes = s->nic.rdma_data_mss;
		return true;
	}
	s->flows[i].bytes /= 2;
	return true;
}

static bool start_at_zero(struct uet_scenario *s, uint32_t i)
{
	if (i >= s->n_flows)
		return false;
	s->flows[i].start_ps = 0;
	return true;
}

/* "host7" -> 7, or -1. */
static int host_of(const char *name)
{
	unsigned h;
	char tail;

	return sscanf(name, "host%u%c", &h, &tail) == 1 ? (int)h : -1;
}

/*
 * Renumber the hosts that messages and host-link faults use onto an incast
 * of just those (a star: every host on one switch); faults on switch-to-switch
 * links go. Variant 0 only.
 */
static bool to_small_incast(struct uet_scenario *s, uint32_t i)
{
	int32_t map[1u << 10];
	uint32_t n = 0;

	if (i)
		return false;
	memset(map, -1, sizeof(map));
	for (uint32_t k = 0; k < s->n_flows; k++) {
		uint32_t ends[2] = { s->flows[k].src, s->flows[k].dst };

		for (int e = 0; e < 2; e++) {
			if (ends[e] >= 1u << 10)
				return false;
			if (map[ends[e]] < 0)
				map[ends[e]] = (int32_t)n++;
		}
	}
	for (uint32_t k = 0; k < s->n_failures;) {
		int a = host_of(s->failures[k].a), b = host_of(s->failures[k].b);
		int h = a >= 0 ? a : b;

		if (h < 0 || h >= 1 << 10 || map[h] < 0) {
			drop_failure(s, k);
			continue;
		}
		snprintf(s->failures[k].a, sizeof(s->failures[k].a), "host%d", map[h]);
		snprintf(s->failures[k].b, sizeof(s->failures[k].b), "sw0");
		k++;
	}
	if (n < 2 || (s->topo.kind == UET_TOPO_INCAST && s->topo.senders + 1 == n))
		return false;
	for (uint32_t k = 0; k < s->n_flows; k++) {
		s->flows[k].src = (uint32_t)map[s->flows[k].src];
		s->flows[k].dst = (uint32_t)map[s->flows[k].dst];
	}
	for (uint32_t k = 0; k < s->n_rules; k++) {
		struct uet_policy_rule *r = &s->rules[k];

		r->src = r->src >= 0 && r->src < 1 << 10 ? map[r->src] : -1;
		r->dst = r->dst >= 0 && r->dst < 1 << 10 ? map[r->dst] : -1;
	}
	s->topo.kind = UET_TOPO_INCAST;
	s->topo.senders = n - 1;
	return true;
}

/* Variant i: NIC attribute i back to its default. */
static bool default_nic_attr(struct uet_scenario *s, uint32_t i)
{
	struct uet_nic_cfg def;
	const struct uet_nic_attr *a;
	size_t width;

	if (i >= uet_n_nic_attrs)
		return false;
	uet_nic_cfg_defaults(&def);
	a = &uet_nic_attrs[i];
	width = a->type == UET_ATTR_BOOL ? sizeof(bool)
		: a->type == UET_ATTR_U32 ? sizeof(uint32_t)
					  : sizeof(uint64_t);
	/* the records the checker reads stay on */
	if (strcmp(a->name, "EnableEventLogging") == 0)
		return true;
	memcpy((char *)&s->nic + a->off, (const char *)&def + a->off, width);
	return true;
}

static bool default_topology(struct uet_scenario *s, uint32_t i)
{
	struct uet_scenario def;

	uet_scenario_defaults(&def);
	switch (i) {
	case 0:
		s->topo.link_delay_ps = def.topo.link_delay_ps;
		return true;
	case 1:
		s->topo.link_rate_bps = def.topo.link_rate_bps;
		return true;
	case 2:
		s->topo.queue_bytes = 0;
		return true;
	case 3:
		s->topo.ecn_kmin_bytes = s->topo.ecn_kmax_bytes = UINT64_MAX;
		return true;
	default:
		return false;
	}
}

int uet_dst_shrink(struct uet_scenario **scn, const struct pcm_package *const *pkgs,
		   unsigned max_checks, struct uet_dst_result *res)
{
	static const reduce_fn steps[] = {
		drop_failure, drop_flow_run, drop_rule, simplify_policies, to_small_incast,
		halve_message, start_at_zero, default_nic_attr, default_topology,
	};
	struct shrink sh = { .pkgs = pkgs, .budget = max_checks, .res = res };
	int kept;

	sh.twice = strncmp(res->what, "not deterministic", 17) == 0;
	do {
		kept = 0;
		for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
			int n = sweep(&sh, scn, steps[k]);

			if (n < 0)
				return n;
			kept += n;
		}
	} while (kept && sh.used < sh.budget);
	return sh.kept;
}
