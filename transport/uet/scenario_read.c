// SPDX-License-Identifier: MIT
/*
 * scenario_read.c - the scenario file reader (uet_scenario_parse(),
 * uet_scenario_load(), and their _set() forms, which lay settings over the
 * file first: scenario_set.c), with libyaml's document API, whose node marks
 * give every message its line and column (and its file: a setting's own); a
 * policy named by a relative path is made relative to the current
 * directory, as the file's neighbour.
 *
 * Every key is checked: an unknown key, a value of the wrong kind, a number
 * out of range or a missing unit is reported as "file:line:col: key: what is
 * wrong" and the scenario is not used. Each mapping is a table of its keys
 * (struct key): how a value is read and where it goes, read by one loop
 * (parse_map()); lists read their items with it, and what only makes sense
 * across keys (a flow's ends, a failure's times) is checked after. Sizes,
 * rates and times are read as everywhere in pcm (pcm_units.h,
 * pcm-units(7)): times and rates need a unit, sizes are bytes when bare. NIC
 * attributes use the names of the UET NIC document (RdmaDataMSS,
 * AckRequestEveryNthPacket, ...), in a table the writer shares
 * (scenario.h).
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
#include "scenario_set.h"

struct parser {
	yaml_document_t doc;
	const char *file;
	struct pcm_diag *diag;
	struct uet_scenario *scn;
	char key[128]; /* dotted path of the value being read */
	const char **node_file; /* by node index: the setting a node came from (scenario_set.c) */
	uint32_t hosts; /* of the topology, once it is read (0: unknown) */
	bool oom;
};

static int fail(struct parser *p, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The file node @n was written in: the scenario's, or a setting's laid over it. */
static const char *node_file(const struct parser *p, const yaml_node_t *n)
{
	const char *f = n && p->node_file ? p->node_file[n - p->doc.nodes.start] : NULL;

	return f ? f : p->file;
}

static int fail(struct parser *p, const yaml_node_t *n, const char *fmt, ...)
{
	char what[PCM_DIAG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	uet_diag_set(p->diag, "%s:%zu:%zu: %s: %s", node_file(p, n), n ? n->start_mark.line + 1 : 1,
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

	if (!n || len >= sizeof(m->key) || node_file(p, n) != p->file ||
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

/*
 * The keys of a mapping, in a table: how each value is read and where it
 * goes. The NIC's attributes (scenario.h, shared with the writer) are read
 * as keys of their own type; the reader adds the types below them.
 */
enum key_type {
	K_BOOL = UET_ATTR_BOOL,
	K_U32 = UET_ATTR_U32,
	K_SIZE = UET_ATTR_SIZE,
	K_TIME = UET_ATTR_TIME,
	K_RATE = UET_ATTR_RATE,
	K_U64,    /* an integer in lo..hi */
	K_STRING, /* a non-empty string, into a buffer of hi bytes */
	K_CHOICE, /* one of @choices, stored as its value (an int-sized enum) */
	K_HOST,   /* a host of the topology, or any (-1): int64_t */
	K_POLICY, /* a package, stored as its index in the scenario's list: uint32_t */
	K_MAP,    /* a mapping of the keys of @map, at @off */
	K_READ,   /* @read reads it */
};

struct choice {
	const char *name;
	int value;
};

struct section;

struct key {
	const char *name;
	uint8_t type; /* enum key_type */
	uint8_t pass; /* the top level's: the pass that reads it (parse_root()) */
	size_t off;   /* of the value in the mapping's struct */
	uint64_t lo, hi;
	const struct choice *choices;
	const struct section *map;
	int (*read)(struct parser *p, const yaml_node_t *vn, void *obj);
};

struct section {
	const struct key *keys;
	size_t n_keys;
	const struct uet_nic_attr *attrs; /* or these, each a key of its type */
	size_t n_attrs;
	const char *unknown; /* what an unknown key is told; NULL: the valid keys */
	bool plain_names;    /* a key that is no plain name is told so */
	unsigned passes;     /* the top level's (parse_root()); 1 elsewhere */
};

#define N_KEYS(t) (sizeof(t) / sizeof((t)[0]))

/* Key @k of @sec, as a key row, and its index. Return: false if there is none. */
static bool find_key(const struct section *sec, const char *k, struct key *row, size_t *index)
{
	for (size_t i = 0; k && i < sec->n_keys; i++) {
		if (strcmp(k, sec->keys[i].name) == 0) {
			*row = sec->keys[i];
			*index = i;
			return true;
		}
	}
	for (size_t i = 0; k && i < sec->n_attrs; i++) {
		const struct uet_nic_attr *a = &sec->attrs[i];

		if (strcmp(k, a->name) == 0) {
			*row = (struct key){
				.name = a->name, .type = (uint8_t)a->type, .off = a->off,
				.lo = a->lo, .hi = a->hi,
			};
			*index = i;
			return true;
		}
	}
	return false;
}

static int unknown_key(struct parser *p, const yaml_node_t *kn, const char *k,
		       const struct section *sec)
{
	char valid[256];
	size_t used = 0;

	if (!k && sec->plain_names)
		return fail(p, kn, "keys must be plain names");
	if (sec->unknown)
		return fail(p, kn, "%s", sec->unknown);
	valid[0] = '\0';
	for (size_t i = 0; i < sec->n_keys && used < sizeof(valid); i++)
		used += (size_t)snprintf(valid + used, sizeof(valid) - used, "%s%s",
					 i ? ", " : "", sec->keys[i].name);
	return fail(p, kn, "unknown key (valid here: %s)", valid);
}

/*
 * A scalar that must be one of @choices (NULL-terminated); *@out is its
 * value. The error lists the choices as "a, b or c".
 */
static int parse_choice(struct parser *p, const yaml_node_t *n, const struct choice *choices,
			int *out)
{
	char expect[128];
	size_t used = 0;
	const char *s;
	int rc = want_scalar(p, n, &s);

	if (rc < 0)
		return rc;
	for (const struct choice *c = choices; c->name; c++) {
		if (strcmp(s, c->name) == 0) {
			*out = c->value;
			return 0;
		}
	}
	expect[0] = '\0';
	for (const struct choice *c = choices; c->name && used < sizeof(expect); c++)
		used += (size_t)snprintf(expect + used, sizeof(expect) - used, "%s%s",
					 c == choices ? "" : c[1].name ? ", " : " or ", c->name);
	return fail(p, n, "'%s' is not %s", s, expect);
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

static int parse_policy(struct parser *p, const yaml_node_t *n, uint32_t *out)
{
	const char *s;
	int rc = want_scalar(p, n, &s);

	if (rc == 0)
		rc = policy_index(p, n, s);
	if (rc < 0)
		return rc;
	*out = (uint32_t)rc;
	return 0;
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

static int parse_map(struct parser *p, const yaml_node_t *map, const char *prefix,
		     const struct section *sec, void *obj, unsigned pass,
		     const yaml_node_t **seen);

/* The value of key @key (a row of a mapping of @obj) in @vn. */
static int read_key(struct parser *p, const struct key *key, const yaml_node_t *vn, void *obj)
{
	void *dst = (char *)obj + key->off;
	char prefix[sizeof(p->key)];

	switch ((enum key_type)key->type) {
	case K_BOOL:
		return parse_bool(p, vn, dst);
	case K_U32:
		return parse_u32(p, vn, (uint32_t)key->lo, (uint32_t)key->hi, dst);
	case K_SIZE:
		return parse_size(p, vn, key->lo, key->hi, dst);
	case K_TIME:
		return parse_time(p, vn, dst);
	case K_RATE:
		return parse_rate(p, vn, dst);
	case K_U64:
		return parse_uint(p, vn, key->lo, key->hi, dst);
	case K_STRING:
		return parse_string(p, vn, dst, key->hi);
	case K_CHOICE:
		return parse_choice(p, vn, key->choices, dst);
	case K_HOST:
		return parse_host(p, vn, dst);
	case K_POLICY:
		return parse_policy(p, vn, dst);
	case K_MAP:
		snprintf(prefix, sizeof(prefix), "%s", p->key);
		return parse_map(p, vn, prefix, key->map, dst, 0, NULL);
	case K_READ:
		return key->read(p, vn, obj);
	}
	return -EINVAL; /* not reached: every type is a case above */
}

/*
 * The keys of mapping @map, the dotted names of which start with @prefix,
 * read by @sec into @obj: those of pass @pass of @sec->passes (an unknown key
 * is an error in the last). @seen, if not NULL, records each key's value
 * node, by its index in @sec (NULL: not in the mapping).
 */
static int parse_map(struct parser *p, const yaml_node_t *map, const char *prefix,
		     const struct section *sec, void *obj, unsigned pass,
		     const yaml_node_t **seen)
{
	yaml_node_t *kn, *vn;
	int rc = want_mapping(p, map);

	if (rc < 0)
		return rc;
	for_each_pair(p, map, kn, vn) {
		const char *k = enter_key(p, prefix, kn);
		struct key row;
		size_t i;

		if (!find_key(sec, k, &row, &i)) {
			if (pass + 1 < sec->passes)
				continue;
			return unknown_key(p, kn, k, sec);
		}
		if (row.pass != pass)
			continue;
		if (seen)
			seen[i] = vn;
		rc = read_key(p, &row, vn, obj);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Each item of list @list, read by @item with its key ("rules[2]") in
 * p->key and @prefix; the first is number @first (a list that adds to what
 * an earlier key of the same name read goes on counting).
 */
static int parse_items(struct parser *p, const yaml_node_t *list, const char *name,
		       uint32_t first,
		       int (*item)(struct parser *p, const yaml_node_t *node, const char *prefix))
{
	int rc = want_list(p, list);

	if (rc < 0)
		return rc;
	for (yaml_node_item_t *it = list->data.sequence.items.start;
	     it < list->data.sequence.items.top; it++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "%s[%u]", name,
			 first + (unsigned)(it - list->data.sequence.items.start));
		snprintf(p->key, sizeof(p->key), "%s", prefix);
		rc = item(p, yaml_document_get_node(&p->doc, *it), prefix);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* nic: the NIC's attributes, by the document's names. */

#define NIC(f) offsetof(struct uet_nic_cfg, f)

/* NIC attributes, by the document's names (scenario.h). */
const struct uet_nic_attr uet_nic_attrs[] = {
	{ "AckCoalesceBytes", UET_ATTR_SIZE, .off = NIC(ack_coalesce_bytes),
	  .lo = 0, .hi = 1ull << 40 },
	{ "AckRequestEveryNthPacket", UET_ATTR_U32, .off = NIC(ack_every_nth),
	  .lo = 1, .hi = 1u << 20 },
	{ "AckRequestFirstPacket", UET_ATTR_BOOL, .off = NIC(ack_first) },
	{ "AckRequestLastPacket", UET_ATTR_BOOL, .off = NIC(ack_last) },
	{ "CnpInterval", UET_ATTR_TIME, .off = NIC(cnp_interval_ps) },
	{ "CreditTickInterval", UET_ATTR_TIME, .off = NIC(credit_tick_ps) },
	{ "CreditSpeculativeBytes", UET_ATTR_SIZE, .off = NIC(credit_speculative_bytes),
	  .lo = 0, .hi = 1ull << 40 },
	{ "DataRate", UET_ATTR_RATE, .off = NIC(data_rate_bps) },
	{ "DoorbellDelay", UET_ATTR_TIME, .off = NIC(doorbell_ps) },
	{ "EgressBufferSize", UET_ATTR_U32, .off = NIC(egress_pool_bytes),
	  .lo = 64, .hi = 1u << 30 },
	{ "EnableEventLogging", UET_ATTR_BOOL, .off = NIC(event_logging) },
	{ "EnableTransportStats", UET_ATTR_BOOL, .off = NIC(transport_stats) },
	{ "EnableUETMonitor", UET_ATTR_BOOL, .off = NIC(uet_monitor) },
	{ "FixedRexmitTimeEnable", UET_ATTR_BOOL, .off = NIC(fixed_rexmit_enable) },
	{ "FixedRexmitTimeout", UET_ATTR_TIME, .off = NIC(fixed_rexmit_ps) },
	{ "IngressBufferSize", UET_ATTR_U32, .off = NIC(rx_pool_bytes), .lo = 64, .hi = 1u << 30 },
	{ "InitialBaseRTT", UET_ATTR_TIME, .off = NIC(initial_base_rtt_ps) },
	{ "InitialCwnd", UET_ATTR_SIZE, .off = NIC(initial_cwnd_bytes), .lo = 1, .hi = 1ull << 40 },
	{ "InitialRetransmitTimeout", UET_ATTR_TIME, .off = NIC(initial_rto_ps) },
	{ "LaneBps", UET_ATTR_RATE, .off = NIC(lane_bps) },
	{ "LaneCount", UET_ATTR_U32, .off = NIC(lane_count), .lo = 1, .hi = 64 },
	{ "MaxExponentialRTOBackoffCount", UET_ATTR_U32, .off = NIC(max_rto_backoff),
	  .lo = 0, .hi = 40 },
	{ "NDStatsReportInterval", UET_ATTR_TIME, .off = NIC(stats_interval_ps) },
	{ "PcmTickInterval", UET_ATTR_TIME, .off = NIC(tick_ps) },
	{ "PDCGroupsEnabled", UET_ATTR_BOOL, .off = NIC(pdc_groups) },
	{ "PrefetchBufferEnable", UET_ATTR_BOOL, .off = NIC(prefetch_enable) },
	{ "PrefetchBufferSize", UET_ATTR_U32, .off = NIC(prefetch_bytes), .lo = 1, .hi = 1u << 30 },
	{ "RdmaDataMSS", UET_ATTR_U32, .off = NIC(rdma_data_mss),
	  .lo = 1, .hi = 65535 - UET_WIRE_HDR_BYTES },
	{ "TrimmableRetransmission", UET_ATTR_BOOL, .off = NIC(trimmable_retx) },
	{ "TrimmingEnabled", UET_ATTR_BOOL, .off = NIC(trimming) },
	{ "TxEventBurst", UET_ATTR_U32, .off = NIC(tx_event_burst), .lo = 1, .hi = 1u << 20 },
};

const size_t uet_n_nic_attrs = sizeof(uet_nic_attrs) / sizeof(uet_nic_attrs[0]);

static const struct section nic_section = {
	.attrs = uet_nic_attrs,
	.n_attrs = N_KEYS(uet_nic_attrs),
	.unknown = "unknown NIC attribute (the UET NIC document's names, e.g. RdmaDataMSS, "
		   "AckRequestEveryNthPacket, TrimmingEnabled; see pcm-sim(1))",
	.passes = 1,
};

/* topology */

#define TOPO(f) offsetof(struct uet_topo_cfg, f)

static int read_oversubscription(struct parser *p, const yaml_node_t *vn, void *obj)
{
	return parse_double(p, vn, 0.01, 1000, &((struct uet_topo_cfg *)obj)->oversubscription);
}

static int read_fat_tree_k(struct parser *p, const yaml_node_t *vn, void *obj)
{
	uint32_t *k = &((struct uet_topo_cfg *)obj)->k;
	int rc = parse_u32(p, vn, 2, 64, k);

	if (rc == 0 && *k % 2)
		return fail(p, vn, "k must be even");
	return rc;
}

static const struct choice topo_kinds[] = {
	{ "incast", UET_TOPO_INCAST },
	{ "leaf_spine", UET_TOPO_LEAF_SPINE },
	{ "fat_tree", UET_TOPO_FAT_TREE },
	{ NULL, 0 },
};

static const struct key topology_keys[] = {
	{ "type", K_CHOICE, .off = TOPO(kind), .choices = topo_kinds },
	{ "senders", K_U32, .off = TOPO(senders), .lo = 1, .hi = 65535 },
	{ "leaves", K_U32, .off = TOPO(leaves), .lo = 1, .hi = 4096 },
	{ "spines", K_U32, .off = TOPO(spines), .lo = 1, .hi = 4096 },
	{ "hosts_per_leaf", K_U32, .off = TOPO(hosts_per_leaf), .lo = 1, .hi = 4096 },
	{ "oversubscription", K_READ, .read = read_oversubscription },
	{ "k", K_READ, .read = read_fat_tree_k },
	{ "link_rate", K_RATE, .off = TOPO(link_rate_bps) },
	{ "uplink_rate", K_RATE, .off = TOPO(uplink_rate_bps) },
	{ "link_delay", K_TIME, .off = TOPO(link_delay_ps) },
	{ "queue_bytes", K_SIZE, .off = TOPO(queue_bytes), .lo = 1, .hi = 1ull << 34 },
	{ "ecn_kmin_bytes", K_SIZE, .off = TOPO(ecn_kmin_bytes), .hi = 1ull << 34 },
	{ "ecn_kmax_bytes", K_SIZE, .off = TOPO(ecn_kmax_bytes), .hi = 1ull << 34 },
	{ "uet_policy", K_BOOL, .off = TOPO(uet_policy) },
	{ "trimming", K_BOOL, .off = TOPO(switch_trimming) },
};

static const struct section topology_section = {
	.keys = topology_keys,
	.n_keys = N_KEYS(topology_keys),
	.plain_names = true,
	.passes = 1,
};

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

/* rules: which policy a (src, dst) pair's groups run */

#define RULE(f) offsetof(struct uet_policy_rule, f)

static const struct key rule_keys[] = {
	{ "src", K_HOST, .off = RULE(src) },
	{ "dst", K_HOST, .off = RULE(dst) },
	{ "policy", K_POLICY, .off = RULE(policy) },
};

static const struct section rule_section = { rule_keys, N_KEYS(rule_keys), .passes = 1 };

static int read_rule(struct parser *p, const yaml_node_t *item, const char *prefix)
{
	struct uet_scenario *scn = p->scn;
	struct uet_policy_rule r = { .src = -1, .dst = -1, .policy = UINT32_MAX };
	int rc;

	if (scn->n_rules == UET_MAX_RULES)
		return fail(p, item, "more than %d rules", UET_MAX_RULES);
	rc = parse_map(p, item, prefix, &rule_section, &r, 0, NULL);
	if (rc < 0)
		return rc;
	if (r.policy == UINT32_MAX) {
		snprintf(p->key, sizeof(p->key), "%s", prefix);
		return fail(p, item, "missing 'policy'");
	}
	scn->rules[scn->n_rules++] = r;
	return 0;
}

static int read_rules(struct parser *p, const yaml_node_t *vn, void *obj)
{
	return parse_items(p, vn, "rules", 0, read_rule);
}

/* shell */

#define SCN(f) offsetof(struct uet_scenario, f)

enum { SHELL_MODE, SHELL_DELAY_EVENTS, SHELL_KEYS };

static const struct choice shell_modes[] = {
	{ "sync", UET_SHELL_SYNC },
	{ "async", UET_SHELL_ASYNC },
	{ NULL, 0 },
};

static const struct key shell_keys[] = {
	[SHELL_MODE] = { "mode", K_CHOICE, .off = SCN(shell_mode), .choices = shell_modes },
	[SHELL_DELAY_EVENTS] = { "delay_events", K_U32, .off = SCN(delay_events), .hi = 1u << 16 },
};

static const struct section shell_section = { shell_keys, N_KEYS(shell_keys), .passes = 1 };

static int read_shell(struct parser *p, const yaml_node_t *vn, void *obj)
{
	const yaml_node_t *seen[SHELL_KEYS] = { NULL };
	const yaml_node_t *delay_n, *mode_n;
	struct uet_scenario *scn = obj;
	int rc = parse_map(p, vn, "shell", &shell_section, scn, 0, seen);

	if (rc < 0)
		return rc;
	delay_n = seen[SHELL_DELAY_EVENTS];
	mode_n = seen[SHELL_MODE];
	if (scn->shell_mode == UET_SHELL_ASYNC && !scn->delay_events) {
		snprintf(p->key, sizeof(p->key), "shell.%s", delay_n ? "delay_events" : "mode");
		return fail(p, delay_n ? delay_n : mode_n,
			    "async mode needs delay_events >= 1 (the feeds before a handler's "
			    "controls apply)");
	}
	return 0;
}

/* traffic */

static const struct choice traffic_kinds[] = {
	{ "incast", UET_TRAFFIC_INCAST },
	{ "permutation", UET_TRAFFIC_PERMUTATION },
	{ "none", UET_TRAFFIC_NONE },
	{ NULL, 0 },
};

static const struct key traffic_keys[] = {
	{ "type", K_CHOICE, .off = SCN(traffic), .choices = traffic_kinds },
	{ "bytes", K_SIZE, .off = SCN(traffic_bytes), .hi = 1ull << 44 },
	{ "start", K_TIME, .off = SCN(traffic_start_ps) },
	{ "stagger", K_TIME, .off = SCN(traffic_stagger_ps) },
};

static const struct section traffic_section = { traffic_keys, N_KEYS(traffic_keys), .passes = 1 };

/* flows: messages one by one */

#define FLOW(f) offsetof(struct uet_flow_spec, f)

/* A flow's end: one host, not any. */
static int parse_flow_end(struct parser *p, const yaml_node_t *vn, uint32_t *out,
			  const char *which)
{
	int64_t h = 0;
	int rc = parse_host(p, vn, &h);

	if (rc == 0 && h < 0)
		return fail(p, vn, "a flow needs one %s host", which);
	*out = (uint32_t)h;
	return rc;
}

static int read_flow_src(struct parser *p, const yaml_node_t *vn, void *obj)
{
	return parse_flow_end(p, vn, &((struct uet_flow_spec *)obj)->src, "source");
}

static int read_flow_dst(struct parser *p, const yaml_node_t *vn, void *obj)
{
	return parse_flow_end(p, vn, &((struct uet_flow_spec *)obj)->dst, "destination");
}

enum { FLOW_SRC, FLOW_DST, FLOW_BYTES, FLOW_START, FLOW_POLICY, FLOW_KEYS };

static const struct key flow_keys[] = {
	[FLOW_SRC] = { "src", K_READ, .read = read_flow_src },
	[FLOW_DST] = { "dst", K_READ, .read = read_flow_dst },
	[FLOW_BYTES] = { "bytes", K_SIZE, .off = FLOW(bytes), .hi = 1ull << 44 },
	[FLOW_START] = { "start", K_TIME, .off = FLOW(start_ps) },
	[FLOW_POLICY] = { "policy", K_POLICY, .off = FLOW(policy) },
};

static const struct section flow_section = { flow_keys, N_KEYS(flow_keys), .passes = 1 };

static int read_flow(struct parser *p, const yaml_node_t *item, const char *prefix)
{
	const yaml_node_t *seen[FLOW_KEYS] = { NULL };
	struct uet_scenario *scn = p->scn;
	struct uet_flow_spec f = { .policy = -1 };
	int rc = parse_map(p, item, prefix, &flow_section, &f, 0, seen);

	if (rc < 0)
		return rc;
	snprintf(p->key, sizeof(p->key), "%s", prefix);
	if (!seen[FLOW_SRC] || !seen[FLOW_DST] || !seen[FLOW_BYTES])
		return fail(p, item, "a flow needs src, dst and bytes");
	if (f.src == f.dst)
		return fail(p, item, "src and dst are both host %u", f.src);
	scn->flows[scn->n_flows++] = f;
	return 0;
}

static int read_flows(struct parser *p, const yaml_node_t *list, void *obj)
{
	struct uet_scenario *scn = obj;
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
	return parse_items(p, list, "flows", 0, read_flow);
}

/* failures: links that go down or lose packets for a while */

#define FAILURE(f) offsetof(struct uet_link_failure, f)

static int read_link(struct parser *p, const yaml_node_t *vn, void *obj)
{
	struct uet_link_failure *f = obj;
	yaml_node_item_t *ends;
	int rc;

	if (!vn || vn->type != YAML_SEQUENCE_NODE ||
	    vn->data.sequence.items.top - vn->data.sequence.items.start != 2)
		return fail(p, vn, "expected [node, node], e.g. [agg0.0, core0]");
	ends = vn->data.sequence.items.start;
	rc = parse_string(p, yaml_document_get_node(&p->doc, ends[0]), f->a, sizeof(f->a));
	if (rc == 0)
		rc = parse_string(p, yaml_document_get_node(&p->doc, ends[1]), f->b, sizeof(f->b));
	return rc;
}

static int read_loss(struct parser *p, const yaml_node_t *vn, void *obj)
{
	struct uet_link_failure *f = obj;
	double loss = 1;
	int rc = parse_double(p, vn, 1e-6, 1, &loss);

	/* 1 is a link down; below it, the share of packets lost */
	f->loss_ppm = loss >= 1 ? 0 : (uint32_t)llround(loss * 1e6);
	if (rc == 0 && loss < 1 && !f->loss_ppm)
		f->loss_ppm = 1;
	return rc;
}

enum { FAILURE_LINK, FAILURE_AT, FAILURE_UNTIL, FAILURE_REROUTE, FAILURE_LOSS, FAILURE_KEYS };

static const struct key failure_keys[] = {
	[FAILURE_LINK] = { "link", K_READ, .read = read_link },
	[FAILURE_AT] = { "at", K_TIME, .off = FAILURE(at_ps) },
	[FAILURE_UNTIL] = { "until", K_TIME, .off = FAILURE(until_ps) },
	[FAILURE_REROUTE] = { "reroute", K_BOOL, .off = FAILURE(reroute) },
	[FAILURE_LOSS] = { "loss", K_READ, .read = read_loss },
};

static const struct section failure_section = { failure_keys, N_KEYS(failure_keys), .passes = 1 };

static int read_failure(struct parser *p, const yaml_node_t *item, const char *prefix)
{
	const yaml_node_t *seen[FAILURE_KEYS] = { NULL };
	struct uet_scenario *scn = p->scn;
	struct uet_link_failure f = { .until_ps = UINT64_MAX };
	int rc;

	mark(p, prefix, item);
	if (scn->n_failures == UET_MAX_FAILURES)
		return fail(p, item, "more than %d failures", UET_MAX_FAILURES);
	rc = parse_map(p, item, prefix, &failure_section, &f, 0, seen);
	if (rc < 0)
		return rc;
	snprintf(p->key, sizeof(p->key), "%s", prefix);
	if (!seen[FAILURE_LINK])
		return fail(p, item, "missing 'link'");
	if (f.until_ps <= f.at_ps)
		return fail(p, item, "'until' must be after 'at'");
	scn->failures[scn->n_failures++] = f;
	return 0;
}

static int read_failures(struct parser *p, const yaml_node_t *vn, void *obj)
{
	return parse_items(p, vn, "failures", p->scn->n_failures, read_failure);
}

/* records */

static const struct key record_keys[] = {
	{ "flow_sample_interval", K_TIME, .off = SCN(flow_sample_ps) },
};

static const struct section record_section = { record_keys, N_KEYS(record_keys), .passes = 1 };

/* The top level: the default policy and the topology first, then the LB, then the rest. */

enum { PASS_FIRST, PASS_LB, PASS_REST, PASSES };

static int read_lb(struct parser *p, const yaml_node_t *vn, void *obj)
{
	struct uet_scenario *scn = obj;
	char lb[sizeof(scn->policies[0])];
	int rc = parse_string(p, vn, lb, sizeof(lb));

	if (rc < 0)
		return rc;
	if (uet_scenario_set_lb(scn, lb) < 0)
		return fail(p, vn, "cannot add the LB package");
	return 0;
}

#define SCN_SIZE(f) sizeof(((struct uet_scenario *)0)->f)

static const struct key top_keys[] = {
	{ "name", K_STRING, .pass = PASS_REST, .off = SCN(name), .hi = SCN_SIZE(name) },
	{ "description", K_STRING, .pass = PASS_REST, .off = SCN(description),
	  .hi = SCN_SIZE(description) },
	{ "seed", K_U64, .pass = PASS_REST, .off = SCN(seed), .hi = UINT64_MAX },
	{ "topology", K_MAP, .pass = PASS_FIRST, .off = SCN(topo), .map = &topology_section },
	{ "nic", K_MAP, .pass = PASS_REST, .off = SCN(nic), .map = &nic_section },
	{ "policy", K_STRING, .pass = PASS_FIRST, .off = SCN(policies),
	  .hi = SCN_SIZE(policies[0]) },
	{ "lb", K_READ, .pass = PASS_LB, .read = read_lb },
	{ "rules", K_READ, .pass = PASS_REST, .read = read_rules },
	{ "shell", K_READ, .pass = PASS_REST, .read = read_shell },
	{ "traffic", K_MAP, .pass = PASS_REST, .map = &traffic_section },
	{ "flows", K_READ, .pass = PASS_REST, .read = read_flows },
	{ "failures", K_READ, .pass = PASS_REST, .read = read_failures },
	{ "stop", K_TIME, .pass = PASS_REST, .off = SCN(stop_ps) },
	{ "records", K_MAP, .pass = PASS_REST, .map = &record_section },
};

static const struct section top_section = {
	.keys = top_keys,
	.n_keys = N_KEYS(top_keys),
	.plain_names = true,
	.passes = PASSES,
};

_Static_assert(sizeof(enum uet_topo_kind) == sizeof(int) &&
		       sizeof(enum uet_shell_mode) == sizeof(int) &&
		       sizeof(enum uet_traffic_kind) == sizeof(int),
	       "K_CHOICE stores an int");

/*
 * The default policy and the LB first, so that rules and flows add theirs
 * after them; the topology too, so that hosts can be checked.
 */
static int parse_root(struct parser *p, const yaml_node_t *root)
{
	int rc;

	p->key[0] = '\0';
	if (!root)
		return fail(p, NULL, "the scenario is empty");
	rc = parse_map(p, root, "", &top_section, p->scn, PASS_FIRST, NULL);
	if (rc == 0)
		rc = check_topology(p, root);
	if (rc == 0)
		rc = parse_map(p, root, "", &top_section, p->scn, PASS_LB, NULL);
	if (rc == 0)
		rc = parse_map(p, root, "", &top_section, p->scn, PASS_REST, NULL);
	if (rc < 0)
		return rc;
	p->key[0] = '\0';
	return p->oom ? -ENOMEM : 0;
}

int uet_scenario_parse_set(const char *name, const char *text, size_t len,
			   const struct uet_scenario_set *sets, size_t n_sets,
			   struct uet_scenario **out, struct pcm_diag *diag)
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
	rc = uet_scenario_overlay(&p.doc, sets, n_sets, &p.node_file, diag);
	if (rc == 0)
		rc = parse_root(&p, yaml_document_get_root_node(&p.doc));
	free(p.node_file);
	yaml_document_delete(&p.doc);
	yaml_parser_delete(&parser);
	if (rc < 0) {
		uet_scenario_free(p.scn);
		return rc;
	}
	*out = p.scn;
	return 0;
}

int uet_scenario_parse(const char *name, const char *text, size_t len, struct uet_scenario **out,
		       struct pcm_diag *diag)
{
	return uet_scenario_parse_set(name, text, len, NULL, 0, out, diag);
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

int uet_scenario_load_set(const char *path, const struct uet_scenario_set *sets, size_t n_sets,
			  struct uet_scenario **out, struct pcm_diag *diag)
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
	rc = uet_scenario_parse_set(path, buf ? buf : "", len, sets, n_sets, out, diag);
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

int uet_scenario_load(const char *path, struct uet_scenario **out, struct pcm_diag *diag)
{
	return uet_scenario_load_set(path, NULL, 0, out, diag);
}
