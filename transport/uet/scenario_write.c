// SPDX-License-Identifier: MIT
/*
 * scenario_write.c - a scenario back to a scenario file (uet.h,
 * uet_scenario_write()): every setting explicit, in the reader's units (times
 * in ps, rates in bps, sizes in bytes), so that the reader gives back the same
 * scenario. The randomized suite writes what its generator drew with this,
 * so that pcm-sim can run it again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void put_host(FILE *f, int64_t h)
{
	if (h < 0)
		fputs("any", f);
	else
		fprintf(f, "%" PRId64, h);
}

static const char *const topo_names[] = { "incast", "leaf_spine", "fat_tree" };

static void write_topology(FILE *f, const struct uet_topo_cfg *t)
{
	fprintf(f, "topology:\n  type: %s\n", topo_names[t->kind]);
	switch (t->kind) {
	case UET_TOPO_INCAST:
		fprintf(f, "  senders: %u\n", t->senders);
		break;
	case UET_TOPO_LEAF_SPINE:
		fprintf(f, "  leaves: %u\n  spines: %u\n  hosts_per_leaf: %u\n", t->leaves, t->spines,
			t->hosts_per_leaf);
		fprintf(f, "  oversubscription: %.17g\n", t->oversubscription);
		if (t->uplink_rate_bps)
			fprintf(f, "  uplink_rate: %" PRIu64 "bps\n", t->uplink_rate_bps);
		break;
	case UET_TOPO_FAT_TREE:
		fprintf(f, "  k: %u\n", t->k);
		break;
	}
	fprintf(f, "  link_rate: %" PRIu64 "bps\n  link_delay: %" PRIu64 "ps\n", t->link_rate_bps,
		t->link_delay_ps);
	if (t->queue_bytes)
		fprintf(f, "  queue_bytes: %" PRIu64 "\n", t->queue_bytes);
	if (t->ecn_kmin_bytes != UINT64_MAX)
		fprintf(f, "  ecn_kmin_bytes: %" PRIu64 "\n", t->ecn_kmin_bytes);
	if (t->ecn_kmax_bytes != UINT64_MAX)
		fprintf(f, "  ecn_kmax_bytes: %" PRIu64 "\n", t->ecn_kmax_bytes);
	fprintf(f, "  uet_policy: %s\n  trimming: %s\n", t->uet_policy ? "true" : "false",
		t->switch_trimming ? "true" : "false");
}

static void write_nic(FILE *f, const struct uet_nic_cfg *c)
{
	const char *base = (const char *)c;

	fputs("nic:\n", f);
	for (size_t i = 0; i < uet_n_nic_attrs; i++) {
		const struct uet_nic_attr *a = &uet_nic_attrs[i];
		const void *v = base + a->off;

		switch (a->type) {
		case UET_ATTR_BOOL:
			fprintf(f, "  %s: %s\n", a->name, *(const bool *)v ? "true" : "false");
			break;
		case UET_ATTR_U32:
			fprintf(f, "  %s: %u\n", a->name, *(const uint32_t *)v);
			break;
		case UET_ATTR_SIZE:
			/* UINT64_MAX is a derived default (one BDP): left to the reader */
			if (*(const uint64_t *)v != UINT64_MAX)
				fprintf(f, "  %s: %" PRIu64 "\n", a->name, *(const uint64_t *)v);
			break;
		case UET_ATTR_TIME:
			fprintf(f, "  %s: %" PRIu64 "ps\n", a->name, *(const uint64_t *)v);
			break;
		case UET_ATTR_RATE:
			fprintf(f, "  %s: %" PRIu64 "bps\n", a->name, *(const uint64_t *)v);
			break;
		}
	}
}

/* The policies in the reader's order: the default, the LB, then rules' and flows' names. */
static void write_policies(FILE *f, const struct uet_scenario *scn)
{
	fputs("policy: ", f);
	put_str(f, scn->policies[0]);
	fputc('\n', f);
	if (scn->has_lb) {
		fputs("lb: ", f);
		put_str(f, scn->policies[scn->lb_policy]);
		fputc('\n', f);
	}
	if (scn->n_rules)
		fputs("rules:\n", f);
	for (uint32_t i = 0; i < scn->n_rules; i++) {
		const struct uet_policy_rule *r = &scn->rules[i];

		fputs("  - {src: ", f);
		put_host(f, r->src);
		fputs(", dst: ", f);
		put_host(f, r->dst);
		fputs(", policy: ", f);
		put_str(f, scn->policies[r->policy]);
		fputs("}\n", f);
	}
	if (scn->shell_mode == UET_SHELL_ASYNC)
		fprintf(f, "shell: {mode: async, delay_events: %u}\n", scn->delay_events);
	else
		fputs("shell: {mode: sync}\n", f);
}

static void write_traffic(FILE *f, const struct uet_scenario *scn)
{
	static const char *const names[] = { "none", "incast", "permutation" };

	fprintf(f,
		"traffic: {type: %s, bytes: %" PRIu64 ", start: %" PRIu64 "ps, stagger: %" PRIu64
		"ps}\n",
		names[scn->traffic], scn->traffic_bytes, scn->traffic_start_ps,
		scn->traffic_stagger_ps);
	if (scn->n_flows)
		fputs("flows:\n", f);
	for (uint32_t i = 0; i < scn->n_flows; i++) {
		const struct uet_flow_spec *fl = &scn->flows[i];

		fprintf(f, "  - {src: %u, dst: %u, bytes: %" PRIu64 ", start: %" PRIu64 "ps", fl->src,
			fl->dst, fl->bytes, fl->start_ps);
		if (fl->policy >= 0) {
			fputs(", policy: ", f);
			put_str(f, scn->policies[fl->policy]);
		}
		fputs("}\n", f);
	}
}

static void write_failures(FILE *f, const struct uet_scenario *scn)
{
	if (scn->n_failures)
		fputs("failures:\n", f);
	for (uint32_t i = 0; i < scn->n_failures; i++) {
		const struct uet_link_failure *fl = &scn->failures[i];

		fputs("  - {link: [", f);
		put_str(f, fl->a);
		fputs(", ", f);
		put_str(f, fl->b);
		fprintf(f, "], at: %" PRIu64 "ps", fl->at_ps);
		if (fl->until_ps != UINT64_MAX)
			fprintf(f, ", until: %" PRIu64 "ps", fl->until_ps);
		fprintf(f, ", reroute: %s", fl->reroute ? "true" : "false");
		if (fl->loss_ppm)
			fprintf(f, ", loss: %.6f", (double)fl->loss_ppm / 1e6);
		fputs("}\n", f);
	}
}

int uet_scenario_write(const struct uet_scenario *scn, FILE *f)
{
	fputs("# SPDX-License-Identifier: MIT\n", f);
	fputs("name: ", f);
	put_str(f, scn->name);
	fputc('\n', f);
	if (scn->description[0]) {
		fputs("description: ", f);
		put_str(f, scn->description);
		fputc('\n', f);
	}
	fprintf(f, "seed: %" PRIu64 "\n", scn->seed);
	write_topology(f, &scn->topo);
	write_nic(f, &scn->nic);
	write_policies(f, scn);
	write_traffic(f, scn);
	write_failures(f, scn);
	fprintf(f, "stop: %" PRIu64 "ps\n", scn->stop_ps);
	if (scn->flow_sample_ps)
		fprintf(f, "records: {flow_sample_interval: %" PRIu64 "ps}\n", scn->flow_sample_ps);
	return ferror(f) ? -EIO : 0;
}
