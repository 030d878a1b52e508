// SPDX-License-Identifier: MIT
/*
 * scenario.c - scenario files for the UET emulation, read with libyaml, and
 * the defaults of every setting.
 *
 * Every key is checked: an unknown key, a value of the wrong kind, a number
 * out of range or a missing unit is reported as "file:line:col: key: what is
 * wrong" and the scenario is not used. Sizes, rates and times are read as
 * everywhere in pcm (pcm_units.h, pcm-units(7)): times and rates need a
 * unit, sizes are bytes when bare. NIC attributes use the names of the UET
 * NIC document (RdmaDataMSS, AckRequestEveryNthPacket, ...).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "diag.h"
#include "pcm_units.h"
#include "scenario.h"

void uet_nic_cfg_defaults(struct uet_nic_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->rdma_data_mss = 4096;
	c->ack_every_nth = 1;
	c->ack_first = true;
	c->ack_last = true;
	c->initial_rto_ps = 100 * PCM_UNITS_PS_PER_US;
	c->max_rto_backoff = 5;
	c->fixed_rexmit_enable = false;
	c->fixed_rexmit_ps = 100 * PCM_UNITS_PS_PER_US;
	c->pdc_groups = true;
	c->prefetch_enable = false;
	c->prefetch_bytes = 131072;
	c->trimming = false;
	c->trimmable_retx = true;
	c->data_rate_bps = 400000000000ull;
	c->initial_base_rtt_ps = 14 * PCM_UNITS_PS_PER_US;
	c->transport_stats = true;
	c->stats_interval_ps = 10 * PCM_UNITS_PS_PER_US;
	c->event_logging = false;
	c->uet_monitor = false;
	c->lane_bps = 31520000000ull;
	c->lane_count = 16;
	c->egress_pool_bytes = 32768;
	c->rx_pool_bytes = 1u << 20;
	c->doorbell_ps = 15000;
	c->initial_cwnd_bytes = 175284;
	c->credit_speculative_bytes = UINT64_MAX;
	c->cnp_interval_ps = 50 * PCM_UNITS_PS_PER_US;
	c->tx_event_burst = 16;
	c->tick_ps = 1 * PCM_UNITS_PS_PER_US;
	c->credit_tick_ps = 0;
}

void uet_scenario_defaults(struct uet_scenario *scn)
{
	memset(scn, 0, sizeof(*scn));
	snprintf(scn->name, sizeof(scn->name), "unnamed");
	scn->seed = 1;
	scn->topo.kind = UET_TOPO_INCAST;
	scn->topo.senders = 8;
	scn->topo.k = 4;
	scn->topo.oversubscription = 1.0;
	scn->topo.link_rate_bps = 100000000000ull;
	scn->topo.link_delay_ps = 1 * PCM_UNITS_PS_PER_US;
	scn->topo.ecn_kmin_bytes = UINT64_MAX;
	scn->topo.ecn_kmax_bytes = UINT64_MAX;
	scn->topo.uet_policy = true;
	scn->topo.switch_trimming = true;
	uet_nic_cfg_defaults(&scn->nic);
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "swift");
	scn->n_policies = 1;
	scn->stop_ps = 1000000 * PCM_UNITS_PS_PER_US; /* 1 s */
}

int uet_scenario_set_lb(struct uet_scenario *scn, const char *name)
{
	bool none = strcmp(name, "none") == 0;

	if (strlen(name) >= sizeof(scn->policies[0]))
		return -ENAMETOOLONG;
	if (!scn->has_lb) {
		if (none)
			return 0;
		if (scn->n_policies >= UET_MAX_POLICIES)
			return -ENOSPC;
		scn->lb_policy = scn->n_policies++;
	}
	snprintf(scn->policies[scn->lb_policy], sizeof(scn->policies[0]), "%s", name);
	scn->has_lb = !none;
	return 0;
}

void uet_scenario_free(struct uet_scenario *scn)
{
	if (!scn)
		return;
	free(scn->flows);
	free(scn->marks);
	free(scn);
}

struct uet_scenario *uet_scenario_dup(const struct uet_scenario *scn)
{
	struct uet_scenario *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	*d = *scn;
	d->flows = NULL;
	d->marks = NULL;
	d->cap_marks = scn->n_marks;
	if (scn->n_flows) {
		d->flows = malloc(scn->n_flows * sizeof(*d->flows));
		if (!d->flows)
			goto err;
		memcpy(d->flows, scn->flows, scn->n_flows * sizeof(*d->flows));
	}
	if (scn->n_marks) {
		d->marks = malloc(scn->n_marks * sizeof(*d->marks));
		if (!d->marks)
			goto err;
		memcpy(d->marks, scn->marks, scn->n_marks * sizeof(*d->marks));
	}
	return d;
err:
	uet_scenario_free(d);
	return NULL;
}

const char *uet_scenario_where(const struct uet_scenario *scn, const char *key, char *buf,
			       size_t len)
{
	const char *file = scn->path[0] ? scn->path : scn->name;

	for (uint32_t i = 0; i < scn->n_marks; i++) {
		const struct uet_scenario_mark *m = &scn->marks[i];

		if (strcmp(m->key, key) == 0) {
			snprintf(buf, len, "%s:%u:%u: %s", file, m->line, m->col, key);
			return buf;
		}
	}
	snprintf(buf, len, "%s: %s", file, key);
	return buf;
}

/* Parsing. */

struct parser {
	yaml_document_t doc;
	const char *file;
	struct pcm_diag *diag;
	struct uet_scenario *scn;
	char key[128]; /* dotted path of the value being read */
	uint32_t hosts; /* of the topology, once it is read (0: unknown) */
	bool oom;
};

static int fail(struct parser *p, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parser *p, const yaml_node_t *n, const char *fmt, ...)
{
	char what[PCM_DIAG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	uet_diag_set(p->diag, "%s:%zu:%zu: %s: %s", p->file, n ? n->start_mark.line + 1 : 1,
		     n ? n->start_mark.column + 1 : 1, p->key[0] ? p->key : "(top)", what);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int want_scalar(struct parser *p, const yaml_node_t *n, const char **out)
{
	*out = scalar(n);
	if (!*out)
		return fail(p, n, "expected a single value, not a %s",
			    n && n->type == YAML_MAPPING_NODE ? "mapping" : "list");
	return 0;
}

/* A size, rate or time (pcm_units.h); @bare: the unit of a bare number, NULL for none. */
static int parse_units(struct parser *p, const yaml_node_t *n, enum pcm_unit_kind kind,
		       const char *bare, uint64_t *out)
{
	char why[PCM_UNITS_WHY_MAX];
	const char *s;
	int rc = want_scalar(p, n, &s);

	if (rc < 0)
		return rc;
	if (pcm_units_parse(kind, s, bare, out, why, sizeof(why)) < 0)
		return fail(p, n, "%s", why);
	return 0;
}

/* A time in ps: it needs a unit. */
static int parse_time(struct parser *p, const yaml_node_t *n, uint64_t *out)
{
	return parse_units(p, n, PCM_UNIT_TIME, NULL, out);
}

/* A rate in bit/s: it needs a unit. */
static int parse_rate(struct parser *p, const yaml_node_t *n, uint64_t *out)
{
	uint64_t v = 0;
	int rc = parse_units(p, n, PCM_UNIT_RATE, NULL, &v);

	if (rc < 0)
		return rc;
	if (v < 1000000 || v > 100000000000000)
		return fail(p, n, "rate must be between 1 Mbps and 100 Tbps");
	*out = v;
	return 0;
}

/* A size in bytes, in @lo..@hi: bytes when bare. */
static int parse_size(struct parser *p, const yaml_node_t *n, uint64_t lo, uint64_t hi,
		      uint64_t *out)
{
	uint64_t v = 0;
	int rc = parse_units(p, n, PCM_UNIT_SIZE, "B", &v);

	if (rc < 0)
		return rc;
	if (v < lo || v > hi)
		return fail(p, n, "must be in %llu..%llu", (unsigned long long)lo,
			    (unsigned long long)hi);
	*out = v;
	return 0;
}

static int parse_uint(struct parser *p, const yaml_node_t *n, uint64_t lo, uint64_t hi,
		      uint64_t *out)
{
	const char *s;
	char *end;
	unsigned long long v;
	int rc = want_scalar(p, n, &s);

	if (rc < 0)
		return rc;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (end == s || *end || errno || s[0] == '-')
		return fail(p, n, "'%s' is not a non-negative integer", s);
	if (v < lo || v > hi)
		return fail(p, n, "%llu is outside %llu..%llu", v, (unsigned long long)lo,
			    (unsigned long long)hi);
	*out = v;
	return 0;
}

static int parse_u32(struct parser *p, const yaml_node_t *n, uint32_t lo, uint32_t hi,
		     uint32_t *out)
{
	uint64_t v = 0;
	int rc = parse_uint(p, n, lo, hi, &v);

	if (rc == 0)
		*out = (uint32_t)v;
	return rc;
}

static int parse_bool(struct parser *p, const yaml_node_t *n, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	const char *s;
	int rc = want_scalar(p, n, &s);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return fail(p, n, "'%s' is not a boolean (true or false)", s);
}

static int parse_double(struct parser *p, const yaml_node_t *n, double lo, double hi, double *out)
{
	const char *s;
	char *end;
	double v;
	int rc = want_scalar(p, n, &s);

	if (rc < 0)
		return rc;
	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v))
		return fail(p, n, "'%s' is not a number", s);
	if (v < lo || v > hi)
		return fail(p, n, "%g is outside %g..%g", v, lo, hi);
	*out = v;
	return 0;
}

static int parse_string(struct parser *p, const yaml_node_t *n, char *buf, size_t len)
{
	const char *s;
	int rc = want_scalar(p, n, &s);

	if (rc < 0)
		return rc;
	if (!s[0])
		return fail(p, n, "must not be empty");
	if (strlen(s) >= len)
		return fail(p, n, "longer than %zu characters", len - 1);
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

static int want_mapping(struct parser *p, const yaml_node_t *n)
{
	if (!n || n->type != YAML_MAPPING_NODE)
		return fail(p, n, "expected a mapping of keys to values");
	return 0;
}

static int want_list(struct parser *p, const yaml_node_t *n)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return fail(p, n, "expected a list");
	return 0;
}

#define for_each_pair(p, map, kn, vn)                                                              \
	for (yaml_node_pair_t *pair_ = (map)->data.mapping.pairs.start;                            \
	     pair_ < (map)->data.mapping.pairs.top &&                                              \
	     ((kn) = yaml_document_get_node(&(p)->doc, pair_->key),                                \
	     (vn) = yaml_document_get_node(&(p)->doc, pair_->value), 1);                           \
	     pair_++)

/*
 * Remember where key @key of the file is. A flow's keys are checked as they
 * are read, so only its policy is kept (a package that fails to open later).
 */
static void mark(struct parser *p, const char *key, const yaml_node_t *n)
{
	struct uet_scenario *scn = p->scn;
	struct uet_scenario_mark *m;
	size_t len = strlen(key);

	if (!n || len >= sizeof(m->key) ||
	    (strncmp(key, "flows[", 6) == 0 && (len < 7 || strcmp(key + len - 7, ".policy"))))
		return;
	for (uint32_t i = 0; i < scn->n_marks; i++)
		if (strcmp(scn->marks[i].key, key) == 0)
			return;
	if (scn->n_marks == scn->cap_marks) {
		uint32_t cap = scn->cap_marks ? scn->cap_marks * 2 : 32;
		struct uet_scenario_mark *a = realloc(scn->marks, cap * sizeof(*a));

		if (!a) {
			p->oom = true;
			return;
		}
		scn->marks = a;
		scn->cap_marks = cap;
	}
	m = &scn->marks[scn->n_marks++];
	snprintf(m->key, sizeof(m->key), "%s", key);
	m->line = (uint32_t)n->start_mark.line + 1;
	m->col = (uint32_t)n->start_mark.column + 1;
}

/* Set p->key to prefix.key; return the key text or NULL if it is not a scalar. */
static const char *enter_key(struct parser *p, const char *prefix, const yaml_node_t *kn)
{
	const char *k = scalar(kn);

	snprintf(p->key, sizeof(p->key), "%s%s%s", prefix, prefix[0] ? "." : "", k ? k : "?");
	if (k)
		mark(p, p->key, kn);
	return k;
}

static int unknown_key(struct parser *p, const yaml_node_t *kn, const char *valid)
{
	return fail(p, kn, "unknown key (valid here: %s)", valid);
}

#define NIC(f) offsetof(struct uet_nic_cfg, f)

/* NIC attributes, by the document's names (scenario.h). */
const struct uet_nic_attr uet_nic_attrs[] = {
	{ "AckRequestEveryNthPacket", UET_ATTR_U32, NIC(ack_every_nth), 1, 1u << 20 },
	{ "AckRequestFirstPacket", UET_ATTR_BOOL, NIC(ack_first), 0, 0 },
	{ "AckRequestLastPacket", UET_ATTR_BOOL, NIC(ack_last), 0, 0 },
	{ "CnpInterval", UET_ATTR_TIME, NIC(cnp_interval_ps), 0, 0 },
	{ "CreditTickInterval", UET_ATTR_TIME, NIC(credit_tick_ps), 0, 0 },
	{ "CreditSpeculativeBytes", UET_ATTR_SIZE, NIC(credit_speculative_bytes), 0, 1ull << 40 },
	{ "DataRate", UET_ATTR_RATE, NIC(data_rate_bps), 0, 0 },
	{ "DoorbellDelay", UET_ATTR_TIME, NIC(doorbell_ps), 0, 0 },
	{ "EgressBufferSize", UET_ATTR_U32, NIC(egress_pool_bytes), 64, 1u << 30 },
	{ "EnableEventLogging", UET_ATTR_BOOL, NIC(event_logging), 0, 0 },
	{ "EnableTransportStats", UET_ATTR_BOOL, NIC(transport_stats), 0, 0 },
	{ "EnableUETMonitor", UET_ATTR_BOOL, NIC(uet_monitor), 0, 0 },
	{ "FixedRexmitTimeEnable", UET_ATTR_BOOL, NIC(fixed_rexmit_enable), 0, 0 },
	{ "FixedRexmitTimeout", UET_ATTR_TIME, NIC(fixed_rexmit_ps), 0, 0 },
	{ "IngressBufferSize", UET_ATTR_U32, NIC(rx_pool_bytes), 64, 1u << 30 },
	{ "InitialBaseRTT", UET_ATTR_TIME, NIC(initial_base_rtt_ps), 0, 0 },
	{ "InitialCwnd", UET_ATTR_SIZE, NIC(initial_cwnd_bytes), 1, 1ull << 40 },
	{ "InitialRetransmitTimeout", UET_ATTR_TIME, NIC(initial_rto_ps), 0, 0 },
	{ "LaneBps", UET_ATTR_RATE, NIC(lane_bps), 0, 0 },
	{ "LaneCount", UET_ATTR_U32, NIC(lane_count), 1, 64 },
	{ "MaxExponentialRTOBackoffCount", UET_ATTR_U32, NIC(max_rto_backoff), 0, 40 },
	{ "NDStatsReportInterval", UET_ATTR_TIME, NIC(stats_interval_ps), 0, 0 },
	{ "PcmTickInterval", UET_ATTR_TIME, NIC(tick_ps), 0, 0 },
	{ "PDCGroupsEnabled", UET_ATTR_BOOL, NIC(pdc_groups), 0, 0 },
	{ "PrefetchBufferEnable", UET_ATTR_BOOL, NIC(prefetch_enable), 0, 0 },
	{ "PrefetchBufferSize", UET_ATTR_U32, NIC(prefetch_bytes), 1, 1u << 30 },
	{ "RdmaDataMSS", UET_ATTR_U32, NIC(rdma_data_mss), 1, 65535 - UET_WIRE_HDR_BYTES },
	{ "TrimmableRetransmission", UET_ATTR_BOOL, NIC(trimmable_retx), 0, 0 },
	{ "TrimmingEnabled", UET_ATTR_BOOL, NIC(trimming), 0, 0 },
	{ "TxEventBurst", UET_ATTR_U32, NIC(tx_event_burst), 1, 1u << 20 },
};

const size_t uet_n_nic_attrs = sizeof(uet_nic_attrs) / sizeof(uet_nic_attrs[0]);

static int parse_nic(struct parser *p, const yaml_node_t *map)
{
	yaml_node_t *kn, *vn;
	int rc = want_mapping(p, map);

	if (rc < 0)
		return rc;
	for_each_pair(p, map, kn, vn) {
		const char *k = enter_key(p, "nic", kn);
		const struct uet_nic_attr *a = NULL;
		char *base = (char *)&p->scn->nic;
		uint64_t v = 0;

		for (size_t i = 0; k && i < uet_n_nic_attrs; i++)
			if (strcmp(k, uet_nic_attrs[i].name) == 0)
				a = &uet_nic_attrs[i];
		if (!a)
			return fail(p, kn,
				    "unknown NIC attribute (the UET NIC document's names, e.g. "
				    "RdmaDataMSS, AckRequestEveryNthPacket, TrimmingEnabled; see "
				    "pcm-sim(1))");
		switch (a->type) {
		case UET_ATTR_BOOL:
			rc = parse_bool(p, vn, (bool *)(base + a->off));
			break;
		case UET_ATTR_U32:
			rc = parse_u32(p, vn, (uint32_t)a->lo, (uint32_t)a->hi,
				       (uint32_t *)(base + a->off));
			break;
		case UET_ATTR_SIZE:
			rc = parse_size(p, vn, a->lo, a->hi, (uint64_t *)(base + a->off));
			break;
		case UET_ATTR_TIME:
			rc = parse_time(p, vn, &v);
			if (rc == 0)
				*(uint64_t *)(base + a->off) = v;
			break;
		case UET_ATTR_RATE:
			rc = parse_rate(p, vn, &v);
			if (rc == 0)
				*(uint64_t *)(base + a->off) = v;
			break;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * A scalar that must be one of @names (NULL-terminated); *out is its index.
 * The error lists the choices, @expect, as "a, b or c".
 */
static int parse_choice(struct parser *p, const yaml_node_t *n, const char *const *names,
			const char *expect, unsigned *out)
{
	const char *s;
	int rc = want_scalar(p, n, &s);

	if (rc < 0)
		return rc;
	for (unsigned i = 0; names[i]; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return fail(p, n, "'%s' is not %s", s, expect);
}

static int parse_topology(struct parser *p, const yaml_node_t *map)
{
	struct uet_topo_cfg *t = &p->scn->topo;
	yaml_node_t *kn, *vn;
	int rc = want_mapping(p, map);

	if (rc < 0)
		return rc;
	for_each_pair(p, map, kn, vn) {
		const char *k = enter_key(p, "topology", kn);

		if (!k)
			return fail(p, kn, "keys must be plain names");
		if (strcmp(k, "type") == 0) {
			static const char *const names[] = { "incast", "leaf_spine", "fat_tree",
							     NULL };
			static const enum uet_topo_kind kinds[] = { UET_TOPO_INCAST, UET_TOPO_LEAF_SPINE,
						     UET_TOPO_FAT_TREE };
			unsigned i;

			rc = parse_choice(p, vn, names, "incast, leaf_spine or fat_tree", &i);
			if (rc == 0)
				t->kind = kinds[i];
		} else if (strcmp(k, "senders") == 0) {
			rc = parse_u32(p, vn, 1, 65535, &t->senders);
		} else if (strcmp(k, "leaves") == 0) {
			rc = parse_u32(p, vn, 1, 4096, &t->leaves);
		} else if (strcmp(k, "spines") == 0) {
			rc = parse_u32(p, vn, 1, 4096, &t->spines);
		} else if (strcmp(k, "hosts_per_leaf") == 0) {
			rc = parse_u32(p, vn, 1, 4096, &t->hosts_per_leaf);
		} else if (strcmp(k, "oversubscription") == 0) {
			rc = parse_double(p, vn, 0.01, 1000, &t->oversubscription);
		} else if (strcmp(k, "k") == 0) {
			rc = parse_u32(p, vn, 2, 64, &t->k);
			if (rc == 0 && t->k % 2)
				return fail(p, vn, "k must be even");
		} else if (strcmp(k, "link_rate") == 0) {
			rc = parse_rate(p, vn, &t->link_rate_bps);
		} else if (strcmp(k, "uplink_rate") == 0) {
			rc = parse_rate(p, vn, &t->uplink_rate_bps);
		} else if (strcmp(k, "link_delay") == 0) {
			rc = parse_time(p, vn, &t->link_delay_ps);
		} else if (strcmp(k, "queue_bytes") == 0) {
			rc = parse_size(p, vn, 1, 1ull << 34, &t->queue_bytes);
		} else if (strcmp(k, "ecn_kmin_bytes") == 0) {
			rc = parse_size(p, vn, 0, 1ull << 34, &t->ecn_kmin_bytes);
		} else if (strcmp(k, "ecn_kmax_bytes") == 0) {
			rc = parse_size(p, vn, 0, 1ull << 34, &t->ecn_kmax_bytes);
		} else if (strcmp(k, "uet_policy") == 0) {
			rc = parse_bool(p, vn, &t->uet_policy);
		} else if (strcmp(k, "trimming") == 0) {
			rc = parse_bool(p, vn, &t->switch_trimming);
		} else {
			return unknown_key(p, kn,
					   "type, senders, leaves, spines, hosts_per_leaf, "
					   "oversubscription, k, link_rate, uplink_rate, "
					   "link_delay, queue_bytes, ecn_kmin_bytes, "
					   "ecn_kmax_bytes, uet_policy, trimming");
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Index of policy @name, adding it to the scenario's list if new (never the LB's entry). */
static int policy_index(struct parser *p, const yaml_node_t *n, const char *name)
{
	struct uet_scenario *scn = p->scn;

	for (uint32_t i = 0; i < scn->n_policies; i++)
		if (strcmp(scn->policies[i], name) == 0 && !(scn->has_lb && i == scn->lb_policy))
			return (int)i;
	if (scn->n_policies == UET_MAX_POLICIES)
		return fail(p, n, "more than %d different policies", UET_MAX_POLICIES);
	if (strlen(name) >= sizeof(scn->policies[0]))
		return fail(p, n, "policy name or path too long");
	snprintf(scn->policies[scn->n_policies], sizeof(scn->policies[0]), "%s", name);
	return (int)scn->n_policies++;
}

static int parse_host(struct parser *p, const yaml_node_t *n, int64_t *out)
{
	const char *s = scalar(n);
	uint64_t v = 0;
	int rc;

	if (s && (strcmp(s, "any") == 0 || strcmp(s, "*") == 0)) {
		*out = -1;
		return 0;
	}
	rc = parse_uint(p, n, 0, (1u << 20) - 1, &v);
	if (rc == 0 && p->hosts && v >= p->hosts)
		return fail(p, n, "host %llu does not exist: the topology has %u hosts (0..%u)",
			    (unsigned long long)v, p->hosts, p->hosts - 1);
	if (rc == 0)
		*out = (int64_t)v;
	return rc;
}

static int parse_rules(struct parser *p, const yaml_node_t *list)
{
	struct uet_scenario *scn = p->scn;
	int rc = want_list(p, list);

	if (rc < 0)
		return rc;
	for (yaml_node_item_t *it = list->data.sequence.items.start;
	     it < list->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(&p->doc, *it), *kn, *vn;
		struct uet_policy_rule r = { .src = -1, .dst = -1, .policy = UINT32_MAX };
		unsigned idx = (unsigned)(it - list->data.sequence.items.start);
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "rules[%u]", idx);
		snprintf(p->key, sizeof(p->key), "%s", prefix);
		if (scn->n_rules == UET_MAX_RULES)
			return fail(p, item, "more than %d rules", UET_MAX_RULES);
		rc = want_mapping(p, item);
		if (rc < 0)
			return rc;
		for_each_pair(p, item, kn, vn) {
			const char *k = enter_key(p, prefix, kn);

			if (k && strcmp(k, "src") == 0) {
				rc = parse_host(p, vn, &r.src);
			} else if (k && strcmp(k, "dst") == 0) {
				rc = parse_host(p, vn, &r.dst);
			} else if (k && strcmp(k, "policy") == 0) {
				const char *s;

				rc = want_scalar(p, vn, &s);
				if (rc == 0)
					rc = policy_index(p, vn, s);
				if (rc >= 0)
					r.policy = (uint32_t)rc;
			} else {
				return unknown_key(p, kn, "src, dst, policy");
			}
			if (rc < 0)
				return rc;
		}
		if (r.policy == UINT32_MAX) {
			snprintf(p->key, sizeof(p->key), "%s", prefix);
			return fail(p, item, "missing 'policy'");
		}
		scn->rules[scn->n_rules++] = r;
	}
	return 0;
}

static int parse_shell(struct parser *p, const yaml_node_t *map)
{
	struct uet_scenario *scn = p->scn;
	yaml_node_t *kn, *vn, *mode_n = NULL, *delay_n = NULL;
	int rc = want_mapping(p, map);

	if (rc < 0)
		return rc;
	for_each_pair(p, map, kn, vn) {
		const char *k = enter_key(p, "shell", kn);

		if (k && strcmp(k, "mode") == 0) {
			mode_n = vn;
			static const char *const names[] = { "sync", "async", NULL };
			static const enum uet_shell_mode modes[] = { UET_SHELL_SYNC, UET_SHELL_ASYNC };
			unsigned i;

			rc = parse_choice(p, vn, names, "sync or async", &i);
			if (rc == 0)
				scn->shell_mode = modes[i];
		} else if (k && strcmp(k, "delay_events") == 0) {
			delay_n = vn;
			rc = parse_u32(p, vn, 0, 1u << 16, &scn->delay_events);
		} else {
			return unknown_key(p, kn, "mode, delay_events");
		}
		if (rc < 0)
			return rc;
	}
	if (scn->shell_mode == UET_SHELL_ASYNC && !scn->delay_events) {
		snprintf(p->key, sizeof(p->key), "shell.%s", delay_n ? "delay_events" : "mode");
		return fail(p, delay_n ? delay_n : mode_n,
			    "async mode needs delay_events >= 1 (the feeds before a handler's "
			    "controls apply)");
	}
	return 0;
}

static int parse_traffic(struct parser *p, const yaml_node_t *map)
{
	struct uet_scenario *scn = p->scn;
	yaml_node_t *kn, *vn;
	int rc = want_mapping(p, map);

	if (rc < 0)
		return rc;
	for_each_pair(p, map, kn, vn) {
		const char *k = enter_key(p, "traffic", kn);

		if (k && strcmp(k, "type") == 0) {
			static const char *const names[] = { "incast", "permutation", "none",
							     NULL };
			static const enum uet_traffic_kind kinds[] = { UET_TRAFFIC_INCAST, UET_TRAFFIC_PERMUTATION,
						     UET_TRAFFIC_NONE };
			unsigned i;

			rc = parse_choice(p, vn, names, "incast, permutation or none", &i);
			if (rc == 0)
				scn->traffic = kinds[i];
		} else if (k && strcmp(k, "bytes") == 0) {
			rc = parse_size(p, vn, 0, 1ull << 44, &scn->traffic_bytes);
		} else if (k && strcmp(k, "start") == 0) {
			rc = parse_time(p, vn, &scn->traffic_start_ps);
		} else if (k && strcmp(k, "stagger") == 0) {
			rc = parse_time(p, vn, &scn->traffic_stagger_ps);
		} else {
			return unknown_key(p, kn, "type, bytes, start, stagger");
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_flows(struct parser *p, const yaml_node_t *list)
{
	struct uet_scenario *scn = p->scn;
	size_t n;
	int rc = want_list(p, list);

	if (rc < 0)
		return rc;
	n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	if (n > (1u << 24))
		return fail(p, list, "more than 2^24 flows");
	free(scn->flows);
	scn->flows = calloc(n ? n : 1, sizeof(*scn->flows));
	if (!scn->flows)
		return -ENOMEM;
	scn->n_flows = 0;
	for (yaml_node_item_t *it = list->data.sequence.items.start;
	     it < list->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(&p->doc, *it), *kn, *vn;
		struct uet_flow_spec f = { .policy = -1 };
		bool have_src = false, have_dst = false, have_bytes = false;
		char prefix[32];
		int64_t h = 0;

		snprintf(prefix, sizeof(prefix), "flows[%u]", scn->n_flows);
		snprintf(p->key, sizeof(p->key), "%s", prefix);
		rc = want_mapping(p, item);
		if (rc < 0)
			return rc;
		for_each_pair(p, item, kn, vn) {
			const char *k = enter_key(p, prefix, kn);

			if (k && strcmp(k, "src") == 0) {
				rc = parse_host(p, vn, &h);
				if (rc == 0 && h < 0)
					return fail(p, vn, "a flow needs one source host");
				f.src = (uint32_t)h;
				have_src = true;
			} else if (k && strcmp(k, "dst") == 0) {
				rc = parse_host(p, vn, &h);
				if (rc == 0 && h < 0)
					return fail(p, vn, "a flow needs one destination host");
				f.dst = (uint32_t)h;
				have_dst = true;
			} else if (k && strcmp(k, "bytes") == 0) {
				rc = parse_size(p, vn, 0, 1ull << 44, &f.bytes);
				have_bytes = true;
			} else if (k && strcmp(k, "start") == 0) {
				rc = parse_time(p, vn, &f.start_ps);
			} else if (k && strcmp(k, "policy") == 0) {
				const char *s;

				rc = want_scalar(p, vn, &s);
				if (rc == 0)
					rc = policy_index(p, vn, s);
				if (rc >= 0) {
					f.policy = rc;
					rc = 0;
				}
			} else {
				return unknown_key(p, kn, "src, dst, bytes, start, policy");
			}
			if (rc < 0)
				return rc;
		}
		snprintf(p->key, sizeof(p->key), "%s", prefix);
		if (!have_src || !have_dst || !have_bytes)
			return fail(p, item, "a flow needs src, dst and bytes");
		if (f.src == f.dst)
			return fail(p, item, "src and dst are both host %u", f.src);
		scn->flows[scn->n_flows++] = f;
	}
	return 0;
}

static int parse_failures(struct parser *p, const yaml_node_t *list)
{
	struct uet_scenario *scn = p->scn;
	int rc = want_list(p, list);

	if (rc < 0)
		return rc;
	for (yaml_node_item_t *it = list->data.sequence.items.start;
	     it < list->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(&p->doc, *it), *kn, *vn;
		struct uet_link_failure f = { .until_ps = UINT64_MAX };
		bool have_link = false;
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "failures[%u]", scn->n_failures);
		snprintf(p->key, sizeof(p->key), "%s", prefix);
		mark(p, prefix, item);
		if (scn->n_failures == UET_MAX_FAILURES)
			return fail(p, item, "more than %d failures", UET_MAX_FAILURES);
		rc = want_mapping(p, item);
		if (rc < 0)
			return rc;
		for_each_pair(p, item, kn, vn) {
			const char *k = enter_key(p, prefix, kn);

			if (k && strcmp(k, "link") == 0) {
				yaml_node_item_t *ends;
				yaml_node_t *a, *b;

				if (!vn || vn->type != YAML_SEQUENCE_NODE ||
				    vn->data.sequence.items.top - vn->data.sequence.items.start !=
					    2)
					return fail(p, vn,
						    "expected [node, node], e.g. [agg0.0, core0]");
				ends = vn->data.sequence.items.start;
				a = yaml_document_get_node(&p->doc, ends[0]);
				b = yaml_document_get_node(&p->doc, ends[1]);
				rc = parse_string(p, a, f.a, sizeof(f.a));
				if (rc == 0)
					rc = parse_string(p, b, f.b, sizeof(f.b));
				have_link = true;
			} else if (k && strcmp(k, "at") == 0) {
				rc = parse_time(p, vn, &f.at_ps);
			} else if (k && strcmp(k, "until") == 0) {
				rc = parse_time(p, vn, &f.until_ps);
			} else if (k && strcmp(k, "reroute") == 0) {
				rc = parse_bool(p, vn, &f.reroute);
			} else if (k && strcmp(k, "loss") == 0) {
				double loss = 1;

				rc = parse_double(p, vn, 1e-6, 1, &loss);
				/* 1 is a link down; below it, the share of packets lost */
				f.loss_ppm = loss >= 1 ? 0 : (uint32_t)llround(loss * 1e6);
				if (rc == 0 && loss < 1 && !f.loss_ppm)
					f.loss_ppm = 1;
			} else {
				return unknown_key(p, kn, "link, at, until, reroute, loss");
			}
			if (rc < 0)
				return rc;
		}
		snprintf(p->key, sizeof(p->key), "%s", prefix);
		if (!have_link)
			return fail(p, item, "missing 'link'");
		if (f.until_ps <= f.at_ps)
			return fail(p, item, "'until' must be after 'at'");
		scn->failures[scn->n_failures++] = f;
	}
	return 0;
}

static int parse_records(struct parser *p, const yaml_node_t *map)
{
	yaml_node_t *kn, *vn;
	int rc = want_mapping(p, map);

	if (rc < 0)
		return rc;
	for_each_pair(p, map, kn, vn) {
		const char *k = enter_key(p, "records", kn);

		if (k && strcmp(k, "flow_sample_interval") == 0)
			rc = parse_time(p, vn, &p->scn->flow_sample_ps);
		else
			return unknown_key(p, kn, "flow_sample_interval");
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The topology's host count, or 0 if its sizes are incomplete or out of range. */
static uint32_t topology_hosts(const struct uet_topo_cfg *t)
{
	uint64_t h = 0;

	switch (t->kind) {
	case UET_TOPO_INCAST:
		h = (uint64_t)t->senders + 1;
		break;
	case UET_TOPO_LEAF_SPINE:
		h = (uint64_t)t->leaves * t->hosts_per_leaf;
		break;
	case UET_TOPO_FAT_TREE:
		h = (uint64_t)t->k * t->k * t->k / 4;
		break;
	}
	return h >= 2 && h <= (1u << 20) ? (uint32_t)h : 0;
}

/* After the topology: complete and of a size the fabric can build. */
static int check_topology(struct parser *p, const yaml_node_t *root)
{
	const struct uet_topo_cfg *t = &p->scn->topo;
	const yaml_node_t *at = root;
	yaml_node_t *kn, *vn;

	for_each_pair(p, root, kn, vn)
		if (scalar(kn) && strcmp(scalar(kn), "topology") == 0 && vn)
			at = kn;
	snprintf(p->key, sizeof(p->key), "topology");
	if (t->kind == UET_TOPO_LEAF_SPINE && (!t->leaves || !t->spines || !t->hosts_per_leaf))
		return fail(p, at, "leaf_spine needs leaves, spines and hosts_per_leaf");
	p->hosts = topology_hosts(t);
	if (!p->hosts)
		return fail(p, at, "%s of more than 2^20 hosts (or fewer than 2)",
			    t->kind == UET_TOPO_FAT_TREE ? "a fat tree" : "a topology");
	return 0;
}

static int parse_root(struct parser *p, const yaml_node_t *root)
{
	struct uet_scenario *scn = p->scn;
	yaml_node_t *kn, *vn;
	int rc;

	p->key[0] = '\0';
	if (!root)
		return fail(p, NULL, "the scenario is empty");
	rc = want_mapping(p, root);
	if (rc < 0)
		return rc;
	/*
	 * The default policy and the LB first, so that rules and flows add
	 * theirs after them; the topology too, so that hosts can be checked.
	 */
	for_each_pair(p, root, kn, vn) {
		const char *k = enter_key(p, "", kn);

		if (k && strcmp(k, "policy") == 0)
			rc = parse_string(p, vn, scn->policies[0], sizeof(scn->policies[0]));
		else if (k && strcmp(k, "topology") == 0)
			rc = parse_topology(p, vn);
		if (rc < 0)
			return rc;
	}
	rc = check_topology(p, root);
	if (rc < 0)
		return rc;
	for_each_pair(p, root, kn, vn) {
		const char *k = enter_key(p, "", kn);
		char lb[sizeof(scn->policies[0])];

		if (k && strcmp(k, "lb") == 0) {
			rc = parse_string(p, vn, lb, sizeof(lb));
			if (rc < 0)
				return rc;
			if (uet_scenario_set_lb(scn, lb) < 0)
				return fail(p, vn, "cannot add the LB package");
		}
	}
	for_each_pair(p, root, kn, vn) {
		const char *k = enter_key(p, "", kn);

		if (!k)
			return fail(p, kn, "keys must be plain names");
		if (strcmp(k, "name") == 0)
			rc = parse_string(p, vn, scn->name, sizeof(scn->name));
		else if (strcmp(k, "description") == 0)
			rc = parse_string(p, vn, scn->description, sizeof(scn->description));
		else if (strcmp(k, "seed") == 0)
			rc = parse_uint(p, vn, 0, UINT64_MAX, &scn->seed);
		else if (strcmp(k, "nic") == 0)
			rc = parse_nic(p, vn);
		else if (strcmp(k, "policy") == 0 || strcmp(k, "lb") == 0 ||
			 strcmp(k, "topology") == 0)
			rc = 0;
		else if (strcmp(k, "rules") == 0)
			rc = parse_rules(p, vn);
		else if (strcmp(k, "shell") == 0)
			rc = parse_shell(p, vn);
		else if (strcmp(k, "traffic") == 0)
			rc = parse_traffic(p, vn);
		else if (strcmp(k, "flows") == 0)
			rc = parse_flows(p, vn);
		else if (strcmp(k, "failures") == 0)
			rc = parse_failures(p, vn);
		else if (strcmp(k, "stop") == 0)
			rc = parse_time(p, vn, &scn->stop_ps);
		else if (strcmp(k, "records") == 0)
			rc = parse_records(p, vn);
		else
			rc = unknown_key(p, kn,
					 "name, description, seed, topology, nic, policy, lb, "
					 "rules, shell, traffic, flows, failures, stop, records");
		if (rc < 0)
			return rc;
	}
	p->key[0] = '\0';
	return p->oom ? -ENOMEM : 0;
}

int uet_scenario_parse(const char *name, const char *text, size_t len, struct uet_scenario **out,
		       struct pcm_diag *diag)
{
	struct parser p = { .file = name, .diag = diag };
	yaml_parser_t parser;
	int rc;

	diag->msg[0] = '\0';
	p.scn = malloc(sizeof(*p.scn));
	if (!p.scn)
		return -ENOMEM;
	uet_scenario_defaults(p.scn);
	snprintf(p.scn->path, sizeof(p.scn->path), "%s", name);
	if (!yaml_parser_initialize(&parser)) {
		free(p.scn);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &p.doc)) {
		uet_diag_set(diag, "%s:%zu:%zu: YAML: %s", name,
			 parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "cannot parse");
		yaml_parser_delete(&parser);
		free(p.scn);
		return -EINVAL;
	}
	rc = parse_root(&p, yaml_document_get_root_node(&p.doc));
	yaml_document_delete(&p.doc);
	yaml_parser_delete(&parser);
	if (rc < 0) {
		uet_scenario_free(p.scn);
		return rc;
	}
	*out = p.scn;
	return 0;
}

static bool is_path(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') || (n > 3 && strcmp(name + n - 3, ".so") == 0);
}

/*
 * A policy given as a relative path (it has a '/' or ends in ".so") names a
 * file beside the scenario, as a spec's includes do: make it relative to the
 * current directory. Return: 0, -ENAMETOOLONG.
 */
static int resolve_policy_paths(struct uet_scenario *scn, const char *path, struct pcm_diag *diag)
{
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".";

	for (uint32_t i = 0; i < scn->n_policies; i++) {
		char *name = scn->policies[i], buf[sizeof(scn->policies[0])];
		const char *rel = name;
		int n;

		if (!is_path(name) || name[0] == '/')
			continue;
		while (rel[0] == '.' && rel[1] == '/')
			rel += 2;
		n = snprintf(buf, sizeof(buf), "%.*s/%s", dir_len, dir, rel);
		if (n < 0 || (size_t)n >= sizeof(buf)) {
			uet_diag_set(diag, "%s: policy '%s': the path beside the scenario is too long",
				     path, name);
			return -ENAMETOOLONG;
		}
		memcpy(name, buf, (size_t)n + 1);
	}
	return 0;
}

int uet_scenario_load(const char *path, struct uet_scenario **out, struct pcm_diag *diag)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc;

	diag->msg[0] = '\0';
	if (!f) {
		rc = -errno;
		uet_diag_set(diag, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *b;

			cap = cap ? cap * 2 : 65536;
			if (cap > (64u << 20)) {
				uet_diag_set(diag, "%s: larger than 64 MiB", path);
				free(buf);
				fclose(f);
				return -EFBIG;
			}
			b = realloc(buf, cap);
			if (!b) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = b;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		uet_diag_set(diag, "%s: read error", path);
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	rc = uet_scenario_parse(path, buf ? buf : "", len, out, diag);
	free(buf);
	if (rc == 0) {
		rc = resolve_policy_paths(*out, path, diag);
		if (rc < 0) {
			uet_scenario_free(*out);
			*out = NULL;
		}
	}
	return rc;
}
