// SPDX-License-Identifier: MIT
/*
 * config.c - reading pcmd.yaml (libyaml's document API, whose node marks give
 * every message its line and column) and `--set key=value` overrides through
 * one table of keys, which holds each key's name, parser, range and default,
 * then checking what only makes sense across keys.
 *
 * A value is checked where it is read; the first problem stops the load and
 * is reported as "file:line:col: dotted.key: what is wrong (what is allowed)".
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <yaml.h>

#include "config.h"
#include "pcm_units.h"
#include "pcmd_region.h"

#define CFG_MAX_FILE_BYTES (1u << 20)
#define CFG_MAX_DEPTH 8

enum key_type {
	T_SECTION, /* a mapping of further keys */
	T_STR,
	T_U32,
	T_I32,
	T_SIZE,	   /* u64 bytes: a size (pcm_units.h), in bytes when bare */
	T_TIME,	   /* u32: a duration (pcm_units.h) in the unit the key ends in (_ms) */
	T_RATE,	   /* u32: a rate (pcm_units.h) in the unit the key ends in (_gbps) */
	T_OCTAL,   /* a file mode */
	T_ENUM,	   /* a name from @names, stored as its index (u32) */
	T_MODE,	   /* a shell mode name (u32) */
	T_IDS,	   /* a list of uids or gids: numbers or names */
	T_UID,	   /* one user: a uid or a user name (u32) */
	T_CPUS,	   /* a list of CPU numbers */
	T_PATHS,   /* policies.load */
	T_DEVICES, /* datapath.verbs.devices: list of maps */
	T_RULES,   /* policies.rules: list of maps */
	T_NAMES,   /* shared_names: list of maps */
};

enum id_kind { ID_USER, ID_GROUP };

struct key_row {
	const char *key; /* dotted, relative to the table's base */
	uint8_t type;
	size_t off;  /* of the value in the base struct */
	size_t size; /* T_STR: buffer size; T_IDS/T_CPUS: offset of the count */
	uint64_t min, max;
	const char *const *names; /* T_ENUM */
	size_t loc_off;		  /* offset of a struct pcmd_cfg_loc to fill, or NO_LOC */
	uint8_t id_kind;	  /* T_IDS */
	/*
	 * The default, as a file or --set would write it (a list comma-separated),
	 * read through the same parser at every load; NULL: zero, empty.
	 */
	const char *def;
};

#define NO_LOC ((size_t)-1)
#define CFG(m) offsetof(struct pcmd_config, m)
#define RULE(m) offsetof(struct pcmd_rule, m)
#define DEV(m) offsetof(struct pcmd_cfg_device, m)
#define NAME(m) offsetof(struct pcmd_name_rule, m)

static const char *const log_names[] = {"error", "warn", "info", "debug", NULL};
static const char *const datapath_names[] = {"auto", "softnic", "verbs", "null", NULL};
static const char *const shutdown_names[] = {"drain", "abort", NULL};
static const char *const bool_names[] = {"false", "true", NULL};
static const char *const mode_names[] = {"sync", "async_relaxed", "async_locked", "async_bounded",
					 NULL};

#define STR(k, m, def)                                                                             \
	{                                                                                          \
		k, T_STR, CFG(m), sizeof(((struct pcmd_config *)0)->m), 0, 0, NULL, NO_LOC, 0, def \
	}
#define U32(k, m, lo, hi, def)                                                                     \
	{                                                                                          \
		k, T_U32, CFG(m), 0, lo, hi, NULL, NO_LOC, 0, def                                  \
	}
#define DUR(k, m, lo, hi, def)                                                                     \
	{                                                                                          \
		k, T_TIME, CFG(m), 0, lo, hi, NULL, NO_LOC, 0, def                                 \
	}
#define SEC(k)                                                                                     \
	{                                                                                          \
		k, T_SECTION, 0, 0, 0, 0, NULL, NO_LOC, 0, NULL                                    \
	}

static const struct key_row config_rows[] = {
    {"log_level", T_ENUM, CFG(log_level), 0, 0, 0, log_names, NO_LOC, 0, "info"},
    SEC("socket"),
    STR("socket.path", socket.path, PCMD_DEFAULT_SOCKET),
    STR("socket.group", socket.group, "pcm"),
    {"socket.mode", T_OCTAL, CFG(socket.mode), 0, 0, 0777, NULL, NO_LOC, 0, "0660"},
    {"socket.allow_uids", T_IDS, CFG(socket.allow_uids), CFG(socket.n_allow_uids), 0, 0, NULL,
     CFG(socket.allow_uids_loc), ID_USER, NULL},
    {"socket.allow_gids", T_IDS, CFG(socket.allow_gids), CFG(socket.n_allow_gids), 0, 0, NULL,
     CFG(socket.allow_gids_loc), ID_GROUP, NULL},
    {"socket.admin_uids", T_IDS, CFG(socket.admin_uids), CFG(socket.n_admin_uids), 0, 0, NULL,
     NO_LOC, ID_USER, "0"},
    {"socket.admin_gids", T_IDS, CFG(socket.admin_gids), CFG(socket.n_admin_gids), 0, 0, NULL,
     NO_LOC, ID_GROUP, NULL},
    SEC("datapath"),
    {"datapath.kind", T_ENUM, CFG(datapath.kind), 0, 0, 0, datapath_names, NO_LOC, 0, "auto"},
    U32("datapath.chunk_bytes", datapath.chunk_bytes, 4096, 1u << 24, "65536"),
    U32("datapath.paths", datapath.paths, 1, 64, "4"),
    SEC("datapath.verbs"),
    {"datapath.verbs.devices", T_DEVICES, 0, 0, 0, 0, NULL, NO_LOC, 0, NULL},
    SEC("datapath.softnic"),
    STR("datapath.softnic.topology", datapath.softnic_topology, NULL),
    U32("datapath.softnic.hosts", datapath.softnic_hosts, 2, 4096, "16"),
    {"datapath.softnic.link_gbps", T_RATE, CFG(datapath.softnic_link_gbps), 0, 1, 1600, NULL,
     NO_LOC, 0, "100"},
    U32("datapath.softnic.seed", datapath.softnic_seed, 0, UINT32_MAX, "1"),
    U32("datapath.softnic.dup_ppm", datapath.softnic_dup_ppm, 0, 1000000, NULL),
    U32("datapath.softnic.delay_ppm", datapath.softnic_delay_ppm, 0, 1000000, NULL),
    DUR("datapath.softnic.delay_us", datapath.softnic_delay_us, 0, 1000000, NULL),
    SEC("engines"),
    U32("engines.count", engines.count, 1, 256, "1"),
    DUR("engines.spin_ns", engines.spin_ns, 0, 10000000, "20000"),
    {"engines.numa_node", T_I32, CFG(engines.numa_node), 0, (uint64_t)-1, 1023, NULL, NO_LOC, 0,
     "-1"},
    {"engines.cpus", T_CPUS, CFG(engines.cpus), CFG(engines.n_cpus), 0, 0, NULL, NO_LOC, 0, NULL},
    SEC("workers"),
    U32("workers.count", workers.count, 0, 256, "1"),
    {"workers.numa_node", T_I32, CFG(workers.numa_node), 0, (uint64_t)-1, 1023, NULL, NO_LOC, 0,
     "-1"},
    {"workers.cpus", T_CPUS, CFG(workers.cpus), CFG(workers.n_cpus), 0, 0, NULL, NO_LOC, 0, NULL},
    SEC("policies"),
    {"policies.default", T_STR, CFG(policies.default_policy),
     sizeof(((struct pcmd_config *)0)->policies.default_policy), 0, 0, NULL,
     CFG(policies.default_loc), 0, "swift"},
    STR("policies.default_lb", policies.default_lb, NULL),
    {"policies.mode", T_MODE, CFG(policies.mode), 0, 0, 0, NULL, NO_LOC, 0, "sync"},
    U32("policies.skew_bound", policies.skew_bound, 1, 1u << 20, "4"),
    {"policies.load", T_PATHS, 0, 0, 0, 0, NULL, NO_LOC, 0, NULL},
    {"policies.rules", T_RULES, 0, 0, 0, 0, NULL, NO_LOC, 0, NULL},
    SEC("limits"),
    U32("limits.max_clients", limits.max_clients, 1, 65535, "256"),
    U32("limits.flows_per_client", limits.flows_per_client, 1, 65535, "1024"),
    {"limits.memory_per_client_bytes", T_SIZE, CFG(limits.memory_per_client_bytes), 0,
     PCMD_REGION_ALIGN, 1ull << 46, NULL, NO_LOC, 0, "256MiB"},
    {"limits.memory_total_bytes", T_SIZE, CFG(limits.memory_total_bytes), 0, PCMD_REGION_ALIGN,
     1ull << 50, NULL, NO_LOC, 0, "4GiB"},
    U32("limits.outstanding_per_client", limits.outstanding_per_client, 1, PCMD_RING_MAX_ENTRIES,
	"4096"),
    U32("limits.sq_entries", limits.sq_entries, PCMD_RING_MIN_ENTRIES, PCMD_RING_MAX_ENTRIES,
	"4096"),
    U32("limits.cq_entries", limits.cq_entries, PCMD_RING_MIN_ENTRIES, PCMD_RING_MAX_ENTRIES,
	"4096"),
    {"limits.max_message_bytes", T_SIZE, CFG(limits.max_message_bytes), 0, 1, 1ull << 40, NULL,
     NO_LOC, 0, "256MiB"},
    U32("limits.listeners_per_client", limits.listeners_per_client, 1, 256, "16"),
    U32("limits.backlog", limits.backlog, 1, 4096, "64"),
    U32("limits.admin_clients", limits.admin_clients, 0, 4096, "8"),
    DUR("limits.hello_timeout_ms", limits.hello_timeout_ms, 10, 600000, "5000"),
    /* limits.user.*: NULL, derived from the totals when the file gives none (check_config()) */
    SEC("limits.user"),
    U32("limits.user.clients", limits.user.clients, 1, 65535, NULL),
    U32("limits.user.regions", limits.user.regions, 1, 65535, NULL),
    {"limits.user.region_bytes", T_SIZE, CFG(limits.user.region_bytes), 0, PCMD_REGION_ALIGN,
     1ull << 50, NULL, NO_LOC, 0, NULL},
    U32("limits.user.hosts", limits.user.hosts, 1, 4096, NULL),
    U32("limits.user.flows", limits.user.flows, 1, 1u << 24, NULL),
    U32("limits.user.listeners", limits.user.listeners, 1, 65535, NULL),
    SEC("output"),
    STR("output.stats_path", output.stats_path, NULL),
    DUR("output.stats_interval_ms", output.stats_interval_ms, 10, 3600000, "1000"),
    STR("output.records_path", output.records_path, NULL),
    DUR("output.status_interval_ms", output.status_interval_ms, 10, 3600000, "1000"),
    STR("output.group", output.group, NULL),
    STR("output.metrics_path", output.metrics_path, NULL),
    {"output.metrics_per_flow", T_ENUM, CFG(output.metrics_per_flow), 0, 0, 0, bool_names, NO_LOC,
     0, NULL},
    SEC("shutdown"),
    {"shutdown.mode", T_ENUM, CFG(shutdown.mode), 0, 0, 0, shutdown_names, NO_LOC, 0, "drain"},
    DUR("shutdown.drain_timeout_ms", shutdown.drain_timeout_ms, 0, 600000, "5000"),
    {"shared_names", T_NAMES, 0, 0, 0, 0, NULL, NO_LOC, 0, NULL},
};

/* A rule's mode and skew_bound, when not given, are policies.*'s (check_rules()). */
static const struct key_row rule_rows[] = {
    {"peer", T_STR, RULE(peer), sizeof(((struct pcmd_rule *)0)->peer), 0, 0, NULL, NO_LOC, 0, NULL},
    {"policy", T_STR, RULE(policy), sizeof(((struct pcmd_rule *)0)->policy), 0, 0, NULL,
     RULE(policy_loc), 0, NULL},
    {"lb", T_STR, RULE(lb_policy), sizeof(((struct pcmd_rule *)0)->lb_policy), 0, 0, NULL,
     RULE(lb_loc), 0, NULL},
    {"mode", T_MODE, RULE(mode), 0, 0, 0, NULL, NO_LOC, 0, NULL},
    {"skew_bound", T_U32, RULE(skew_bound), 0, 1, 1u << 20, NULL, NO_LOC, 0, NULL},
    {"no_progress_ms", T_TIME, RULE(no_progress_ms), 0, 1, PCMD_NO_PROGRESS_MS_MAX, NULL, NO_LOC, 0,
     NULL},
};

static const struct key_row device_rows[] = {
    {"name", T_STR, DEV(name), sizeof(((struct pcmd_cfg_device *)0)->name), 0, 0, NULL, NO_LOC, 0,
     NULL},
    {"port", T_U32, DEV(port), 0, 1, 255, NULL, NO_LOC, 0, "1"},
    {"gid_index", T_I32, DEV(gid_index), 0, (uint64_t)-1, 255, NULL, NO_LOC, 0, "-1"},
};

static const struct key_row name_rows[] = {
    {"name", T_STR, NAME(name), sizeof(((struct pcmd_name_rule *)0)->name), 0, 0, NULL, NO_LOC, 0,
     NULL},
    {"owner", T_UID, NAME(owner), 0, 0, 0, NULL, NO_LOC, 0, NULL},
    {"dial_uids", T_IDS, NAME(dial_uids), NAME(n_dial_uids), 0, 0, NULL, NO_LOC, ID_USER, NULL},
    {"dial_gids", T_IDS, NAME(dial_gids), NAME(n_dial_gids), 0, 0, NULL, NO_LOC, ID_GROUP, NULL},
};

#define N_ROWS(t) (sizeof(t) / sizeof((t)[0]))

_Static_assert(N_ROWS(config_rows) <= PCMD_CFG_MAX_KEYS, "raise PCMD_CFG_MAX_KEYS");

/* One load in progress: where messages point and where values go. */
struct loader {
	struct pcmd_config *cfg;
	const char *name; /* file name for messages */
	yaml_document_t *doc;
	bool from_cli; /* an override: messages say "command line" */
	char *err;
	size_t err_len;
};

static int fail_at(struct loader *ld, const yaml_node_t *node, const char *key, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct loader *ld, const yaml_node_t *node, const char *key, const char *fmt,
		   ...)
{
	char what[PCMD_CFG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (ld->from_cli)
		snprintf(ld->err, ld->err_len, "command line: --set %s: %s", key, what);
	else if (node)
		snprintf(ld->err, ld->err_len, "%s:%u:%u: %s: %s", ld->name,
			 (unsigned)node->start_mark.line + 1, (unsigned)node->start_mark.column + 1,
			 key, what);
	else
		snprintf(ld->err, ld->err_len, "%s: %s: %s", ld->name, key, what);
	return -EINVAL;
}

static struct pcmd_cfg_loc node_loc(const struct loader *ld, const yaml_node_t *node)
{
	struct pcmd_cfg_loc loc = {0, 0, ld->from_cli};

	if (!ld->from_cli && node) {
		loc.line = (unsigned)node->start_mark.line + 1;
		loc.col = (unsigned)node->start_mark.column + 1;
	}
	return loc;
}

/* ---- scalar parsers -------------------------------------------------------------------- */

/* Decimal digits and nothing else (no sign, no white space), within 64 bits. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

/* parse_u64() after an optional sign, within int64. */
static int parse_i64(const char *s, int64_t *out)
{
	bool negative = *s == '-';
	uint64_t magnitude;

	if (*s == '-' || *s == '+')
		s++;
	if (parse_u64(s, &magnitude) < 0 || magnitude > (uint64_t)INT64_MAX + negative)
		return -EINVAL;
	/* -(m - 1) - 1 reaches INT64_MIN without overflowing */
	*out = negative && magnitude ? -(int64_t)(magnitude - 1) - 1 : (int64_t)magnitude;
	return 0;
}

static int parse_octal(const char *s, uint64_t *out)
{
	char *end;

	if (strncmp(s, "0o", 2) == 0)
		s += 2;
	if (!*s || strspn(s, "01234567") != strlen(s))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 8);
	return errno ? -EINVAL : 0;
}

static int parse_enum(const char *s, const char *const *names, uint32_t *out)
{
	for (uint32_t i = 0; names[i]; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void join_names(const char *const *names, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; names[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

static int resolve_id(const char *s, uint8_t kind, uint32_t *out)
{
	char buf[4096];
	uint64_t v;

	if (parse_u64(s, &v) == 0) {
		if (v >= UINT32_MAX)
			return -ERANGE;
		*out = (uint32_t)v;
		return 0;
	}
	if (kind == ID_USER) {
		struct passwd pw, *res = NULL;

		if (getpwnam_r(s, &pw, buf, sizeof(buf), &res) != 0 || !res)
			return -ENOENT;
		*out = res->pw_uid;
	} else {
		struct group gr, *res = NULL;

		if (getgrnam_r(s, &gr, buf, sizeof(buf), &res) != 0 || !res)
			return -ENOENT;
		*out = res->gr_gid;
	}
	return 0;
}

int pcmd_config_id(const char *s, bool group, uint32_t *out)
{
	return resolve_id(s, group ? ID_GROUP : ID_USER, out);
}

int pcmd_config_group_id(const char *name, uint32_t *gid)
{
	return resolve_id(name, ID_GROUP, gid);
}

/* ---- rows ------------------------------------------------------------------------------ */

static const struct key_row *find_row(const struct key_row *rows, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].key, key) == 0)
			return &rows[i];
	return NULL;
}

/* "a, b, c": the keys directly under @prefix ("" the top level). */
static void list_children(const struct key_row *rows, size_t n, const char *prefix, char *buf,
			  size_t len)
{
	size_t plen = strlen(prefix), used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const char *k = rows[i].key;

		if (plen && (strncmp(k, prefix, plen) != 0 || k[plen] != '.'))
			continue;
		k += plen ? plen + 1 : 0;
		if (strchr(k, '.'))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", k);
	}
}

/*
 * A T_TIME or T_RATE value: a duration or a rate (pcm_units.h) in the unit
 * the key's name ends in (stats_interval_ms, link_gbps), which is also the
 * unit of a bare number, stored as a whole number of that unit.
 */
/* @v (read from @text) within @row's min..max; the message names @unit ("": none). */
static int check_range(struct loader *ld, const struct key_row *row, const char *key,
		       const char *text, const yaml_node_t *node, uint64_t v, const char *unit)
{
	if (v >= row->min && v <= row->max)
		return 0;
	return fail_at(ld, node, key, "%s is outside %llu..%llu%s%s", text,
		       (unsigned long long)row->min, (unsigned long long)row->max, *unit ? " " : "",
		       unit);
}

static int set_unit_value(struct loader *ld, const struct key_row *row, uint8_t *dst,
			  const char *key, const char *text, const yaml_node_t *node)
{
	enum pcm_unit_kind kind = row->type == T_TIME ? PCM_UNIT_TIME : PCM_UNIT_RATE;
	const char *unit = strrchr(row->key, '_') + 1;
	char why[PCM_UNITS_WHY_MAX];
	uint64_t v;

	if (pcm_units_parse_in(kind, text, unit, &v, why, sizeof(why)) < 0)
		return fail_at(ld, node, key, "%s", why);
	if (check_range(ld, row, key, text, node, v, unit) < 0)
		return -EINVAL;
	*(uint32_t *)dst = (uint32_t)v;
	return 0;
}

static int set_scalar(struct loader *ld, const struct key_row *row, void *base, const char *key,
		      const char *text, const yaml_node_t *node)
{
	uint8_t *dst = (uint8_t *)base + row->off;
	char names[256];
	uint64_t u;
	int64_t i;

	switch (row->type) {
	case T_STR:
		if (strlen(text) >= row->size)
			return fail_at(ld, node, key, "'%.40s...' is longer than %zu characters",
				       text, row->size - 1);
		memcpy(dst, text, strlen(text) + 1);
		break;
	case T_U32:
		if (parse_u64(text, &u) < 0)
			return fail_at(ld, node, key, "'%s' is not a non-negative integer", text);
		if (check_range(ld, row, key, text, node, u, "") < 0)
			return -EINVAL;
		*(uint32_t *)dst = (uint32_t)u;
		break;
	case T_I32:
		if (parse_i64(text, &i) < 0)
			return fail_at(ld, node, key, "'%s' is not an integer", text);
		if (i < (int64_t)row->min || i > (int64_t)row->max)
			return fail_at(ld, node, key, "%s is outside %lld..%lld", text,
				       (long long)(int64_t)row->min, (long long)row->max);
		*(int32_t *)dst = (int32_t)i;
		break;
	case T_SIZE: {
		char why[PCM_UNITS_WHY_MAX];

		if (pcm_units_parse(PCM_UNIT_SIZE, text, "B", &u, why, sizeof(why)) < 0)
			return fail_at(ld, node, key, "%s", why);
		if (check_range(ld, row, key, text, node, u, "bytes") < 0)
			return -EINVAL;
		*(uint64_t *)dst = u;
		break;
	}
	case T_TIME:
	case T_RATE: {
		int rc = set_unit_value(ld, row, dst, key, text, node);

		if (rc < 0)
			return rc;
		break;
	}
	case T_OCTAL:
		if (parse_octal(text, &u) < 0 || u > row->max)
			return fail_at(ld, node, key, "'%s' is not an octal file mode such as 0660",
				       text);
		*(uint32_t *)dst = (uint32_t)u;
		break;
	case T_ENUM:
	case T_MODE: {
		const char *const *choices = row->type == T_MODE ? mode_names : row->names;

		if (parse_enum(text, choices, (uint32_t *)dst) < 0) {
			join_names(choices, names, sizeof(names));
			return fail_at(ld, node, key, "'%s' is not one of: %s", text, names);
		}
		break;
	}
	case T_UID: {
		int rc = resolve_id(text, ID_USER, (uint32_t *)dst);

		if (rc == -ENOENT)
			return fail_at(ld, node, key, "no user named '%s' on this system", text);
		if (rc < 0)
			return fail_at(ld, node, key, "'%s' is not a valid uid", text);
		break;
	}
	default:
		return fail_at(ld, node, key, "needs a %s, not a scalar",
			       row->type == T_SECTION ? "mapping" : "list");
	}
	if (row->loc_off != NO_LOC)
		*(struct pcmd_cfg_loc *)((uint8_t *)base + row->loc_off) = node_loc(ld, node);
	if (base == ld->cfg && row >= config_rows && row < config_rows + N_ROWS(config_rows))
		ld->cfg->key_locs[row - config_rows] = node_loc(ld, node);
	return 0;
}

/* One element of a T_IDS, T_CPUS or T_PATHS list (T_IDS and T_CPUS in @base). */
static int add_list_item(struct loader *ld, const struct key_row *row, void *base, const char *key,
			 const char *text, const yaml_node_t *node, uint32_t index)
{
	struct pcmd_config *cfg = ld->cfg;
	uint32_t *count, *vals;
	uint64_t u;
	int rc;

	if (row->type == T_PATHS) {
		if (index >= PCMD_CFG_MAX_LOADS)
			return fail_at(ld, node, key, "more than %d packages", PCMD_CFG_MAX_LOADS);
		if (!*text || strlen(text) >= PCMD_PATH_MAX)
			return fail_at(ld, node, key, "a package path of 1..%d characters",
				       PCMD_PATH_MAX - 1);
		memcpy(cfg->policies.load[index], text, strlen(text) + 1);
		cfg->policies.load_loc[index] = node_loc(ld, node);
		cfg->policies.n_load = index + 1;
		return 0;
	}
	count = (uint32_t *)((uint8_t *)base + row->size);
	vals = (uint32_t *)((uint8_t *)base + row->off);
	if (row->type == T_IDS) {
		if (index >= PCMD_CFG_MAX_IDS)
			return fail_at(ld, node, key, "more than %d entries", PCMD_CFG_MAX_IDS);
		rc = resolve_id(text, row->id_kind, &vals[index]);
		if (rc == -ENOENT)
			return fail_at(ld, node, key, "no %s named '%s' on this system",
				       row->id_kind == ID_USER ? "user" : "group", text);
		if (rc < 0)
			return fail_at(ld, node, key, "'%s' is not a valid id", text);
	} else {
		if (index >= PCMD_CFG_MAX_CPUS)
			return fail_at(ld, node, key, "more than %d CPUs", PCMD_CFG_MAX_CPUS);
		if (parse_u64(text, &u) < 0 || u >= 4096)
			return fail_at(ld, node, key, "'%s' is not a CPU number 0..4095", text);
		vals[index] = (uint32_t)u;
	}
	*count = index + 1;
	return 0;
}

/* ---- YAML walking ---------------------------------------------------------------------- */

static const char *scalar_text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* libyaml scalars may hold NULs; a config value never does. */
static bool scalar_ok(const yaml_node_t *n)
{
	return strlen(scalar_text(n)) == n->data.scalar.length;
}

static int walk_items(struct loader *ld, const struct key_row *rows, size_t n_rows, void *base,
		      const yaml_node_t *map, const char *prefix);

/* Does mapping @map set @key? */
static bool has_key(struct loader *ld, const yaml_node_t *map, const char *key)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(ld->doc, p->key);

		if (k && k->type == YAML_SCALAR_NODE && strcmp(scalar_text(k), key) == 0)
			return true;
	}
	return false;
}

/*
 * The lists of mappings: the array of struct pcmd_config each one fills, its
 * count, where an entry keeps its location (NO_LOC: nowhere) and its keys.
 */
struct map_list {
	uint8_t type;
	const char *noun; /* "more than MAX NOUN" */
	uint32_t max;
	size_t count_off, array_off, entry_size, loc_off;
	const struct key_row *rows;
	size_t n_rows;
};

#define MAP_LIST(t, noun, count, array, loc_off, rows)                                           \
	{ t, noun, N_ROWS(((struct pcmd_config *)0)->array), CFG(count), CFG(array),              \
	  sizeof(((struct pcmd_config *)0)->array[0]), loc_off, rows, N_ROWS(rows) }

static const struct map_list map_lists[] = {
    MAP_LIST(T_DEVICES, "devices", datapath.n_devices, datapath.devices, NO_LOC, device_rows),
    MAP_LIST(T_NAMES, "rules", n_shared_names, shared_names, NAME(loc), name_rows),
    MAP_LIST(T_RULES, "rules", policies.n_rules, policies.rules, RULE(loc), rule_rows),
};

/* The list of mappings of type @t, or NULL (@t is another type). */
static const struct map_list *map_list_of(uint8_t t)
{
	for (size_t i = 0; i < N_ROWS(map_lists); i++) {
		if (map_lists[i].type == t)
			return &map_lists[i];
	}
	return NULL;
}

static uint32_t *map_list_count(struct pcmd_config *cfg, const struct map_list *l)
{
	return (uint32_t *)((uint8_t *)cfg + l->count_off);
}

static int set_defaults(struct loader *ld, const struct key_row *rows, size_t n_rows, void *base);

/* Entry @n of @l, zeroed, with the defaults of its rows (and a rule's mode to inherit). */
static int map_list_entry(struct loader *ld, const struct map_list *l, uint32_t n, uint8_t **out)
{
	uint8_t *e = (uint8_t *)ld->cfg + l->array_off + n * l->entry_size;

	memset(e, 0, l->entry_size);
	if (l->type == T_RULES)
		((struct pcmd_rule *)e)->mode = PCMD_SHELL_DEFAULT; /* no name a file could give */
	*out = e;
	return set_defaults(ld, l->rows, l->n_rows, e);
}

static int read_list_of_maps(struct loader *ld, const struct map_list *l, const char *key,
			     const yaml_node_t *seq)
{
	uint32_t *count = map_list_count(ld->cfg, l);
	uint32_t n = 0;

	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, n++) {
		yaml_node_t *item = yaml_document_get_node(ld->doc, *it);
		char ikey[256];
		uint8_t *e;
		int rc;

		snprintf(ikey, sizeof(ikey), "%s[%u]", key, n);
		if (!item || item->type != YAML_MAPPING_NODE)
			return fail_at(ld, item, ikey, "each entry is a mapping");
		if (n >= l->max)
			return fail_at(ld, item, ikey, "more than %u %s", l->max, l->noun);
		rc = map_list_entry(ld, l, n, &e);
		if (rc < 0)
			return rc;
		if (l->loc_off != NO_LOC)
			*(struct pcmd_cfg_loc *)(e + l->loc_off) = node_loc(ld, item);
		*count = n + 1;
		rc = walk_items(ld, l->rows, l->n_rows, e, item, ikey);
		if (l->type == T_NAMES)
			((struct pcmd_name_rule *)e)->has_owner = rc == 0 && has_key(ld, item, "owner");
		if (rc < 0)
			return rc;
	}
	*count = n;
	return 0;
}

/* Empty the list @row names (T_IDS and T_CPUS in @base, the others in @cfg). */
static void clear_list(struct pcmd_config *cfg, void *base, const struct key_row *row)
{
	const struct map_list *l = map_list_of(row->type);

	if (l)
		*map_list_count(cfg, l) = 0;
	else if (row->type == T_PATHS)
		cfg->policies.n_load = 0;
	else
		*(uint32_t *)((uint8_t *)base + row->size) = 0;
}

static bool is_map_list(uint8_t t)
{
	return map_list_of(t) != NULL;
}

static int read_list(struct loader *ld, const struct key_row *row, void *base, const char *key,
		     const yaml_node_t *seq)
{
	uint32_t n = 0;

	if (is_map_list(row->type))
		return read_list_of_maps(ld, map_list_of(row->type), key, seq);
	clear_list(ld->cfg, base, row);
	if (row->loc_off != NO_LOC)
		*(struct pcmd_cfg_loc *)((uint8_t *)base + row->loc_off) = node_loc(ld, seq);
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, n++) {
		yaml_node_t *item = yaml_document_get_node(ld->doc, *it);
		int rc;

		if (!item || item->type != YAML_SCALAR_NODE || !scalar_ok(item))
			return fail_at(ld, item ? item : seq, key, "entry %u is not a plain value",
				       n);
		rc = add_list_item(ld, row, base, key, scalar_text(item), item, n);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static bool is_list_type(uint8_t t)
{
	return t == T_IDS || t == T_CPUS || t == T_PATHS || is_map_list(t);
}

static int walk_value(struct loader *ld, const struct key_row *rows, size_t n_rows, void *base,
		      const char *rel, const char *shown, const yaml_node_t *key_node,
		      const yaml_node_t *val)
{
	const struct key_row *row = find_row(rows, n_rows, rel);
	char children[512];

	if (!row) {
		char parent[128];
		const char *dot = strrchr(rel, '.');

		snprintf(parent, sizeof(parent), "%.*s", dot ? (int)(dot - rel) : 0, rel);
		list_children(rows, n_rows, parent, children, sizeof(children));
		return fail_at(ld, key_node, shown, "unknown key (valid here: %s)", children);
	}
	if (row->type == T_SECTION) {
		if (val->type != YAML_MAPPING_NODE)
			return fail_at(ld, val, shown, "needs a mapping of keys");
		return walk_items(ld, rows, n_rows, base, val, rel);
	}
	if (is_list_type(row->type)) {
		/* "key:" with nothing after it is an empty list. */
		if (val->type == YAML_SCALAR_NODE && val->data.scalar.length == 0 &&
		    val->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
			clear_list(ld->cfg, base, row);
			return 0;
		}
		if (val->type != YAML_SEQUENCE_NODE)
			return fail_at(ld, val, shown, "needs a list ([a, b] or '- a' lines)");
		return read_list(ld, row, base, shown, val);
	}
	if (val->type != YAML_SCALAR_NODE || !scalar_ok(val))
		return fail_at(ld, val, shown, "needs a plain value");
	return set_scalar(ld, row, base, shown, scalar_text(val), val);
}

/* Walk a mapping whose keys are @prefix.<key> in @rows (prefix "" at the top). */
static int walk_items(struct loader *ld, const struct key_row *rows, size_t n_rows, void *base,
		      const yaml_node_t *map, const char *prefix)
{
	bool item_table = rows != config_rows;

	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(ld->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(ld->doc, p->value);
		char rel[128], shown[192];
		int rc;

		if (!k || !v)
			return fail_at(ld, map, prefix[0] ? prefix : "(top)", "broken mapping");
		if (k->type != YAML_SCALAR_NODE || !scalar_ok(k) || !*scalar_text(k) ||
		    strlen(scalar_text(k)) > 64)
			return fail_at(ld, k, prefix[0] ? prefix : "(top)",
				       "keys must be plain names");
		if (item_table) {
			snprintf(rel, sizeof(rel), "%s", scalar_text(k));
			snprintf(shown, sizeof(shown), "%s.%s", prefix, scalar_text(k));
		} else {
			snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "." : "",
				 scalar_text(k));
			snprintf(shown, sizeof(shown), "%s", rel);
		}
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
			yaml_node_t *qk = yaml_document_get_node(ld->doc, q->key);

			if (qk && qk->type == YAML_SCALAR_NODE &&
			    strcmp(scalar_text(qk), scalar_text(k)) == 0)
				return fail_at(ld, k, shown, "given twice");
		}
		rc = walk_value(ld, rows, n_rows, base, rel, shown, k, v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- defaults, checks ------------------------------------------------------------------ */

/*
 * A key's value from text, as a file's scalar or list or --set gives it (a
 * list comma-separated): the key table's defaults and the overrides.
 */
static int set_text(struct loader *ld, const struct key_row *row, void *base, const char *key,
		    char *text)
{
	uint32_t n = 0;

	if (!is_list_type(row->type))
		return set_scalar(ld, row, base, key, text, NULL);
	clear_list(ld->cfg, base, row);
	for (char *save, *tok = strtok_r(text, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), n++) {
		int rc = add_list_item(ld, row, base, key, tok, NULL, n);

		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The defaults of @rows (their def column) in @base, which is zeroed already. */
static int set_defaults(struct loader *ld, const struct key_row *rows, size_t n_rows, void *base)
{
	for (size_t i = 0; i < n_rows; i++) {
		char text[PCMD_PATH_MAX];
		int rc;

		if (!rows[i].def)
			continue;
		snprintf(text, sizeof(text), "%s", rows[i].def);
		rc = set_text(ld, &rows[i], base, rows[i].key, text);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int load_defaults(struct loader *ld)
{
	memset(ld->cfg, 0, sizeof(*ld->cfg));
	ld->cfg->datapath.resolved = PCMD_DATAPATH_SOFTNIC;
	return set_defaults(ld, config_rows, N_ROWS(config_rows), ld->cfg);
}

int pcmd_config_defaults(struct pcmd_config *cfg, char *err, size_t err_len)
{
	struct loader ld = {.cfg = cfg, .name = "(defaults)", .err = err, .err_len = err_len};

	return load_defaults(&ld);
}

const char *pcmd_config_where(const struct pcmd_config *cfg, const struct pcmd_cfg_loc *loc,
			      char *buf, size_t len)
{
	if (loc && loc->line)
		snprintf(buf, len, "%s:%u:%u", cfg->path[0] ? cfg->path : "(config)", loc->line,
			 loc->col);
	else if (loc && loc->cli)
		snprintf(buf, len, "command line");
	else
		snprintf(buf, len, "%s", cfg->path[0] ? cfg->path : "(defaults)");
	return buf;
}

static int check_fail(const struct pcmd_config *cfg, const struct pcmd_cfg_loc *loc,
		      const char *key, char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int check_fail(const struct pcmd_config *cfg, const struct pcmd_cfg_loc *loc,
		      const char *key, char *err, size_t err_len, const char *fmt, ...)
{
	char where[PCMD_CFG_PATH_MAX + 32], what[PCMD_CFG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, err_len, "%s: %s: %s", pcmd_config_where(cfg, loc, where, sizeof(where)), key,
		 what);
	return -EINVAL;
}

struct pcmd_cfg_loc pcmd_config_key_loc(const struct pcmd_config *cfg, const char *key)
{
	const struct key_row *row = find_row(config_rows, N_ROWS(config_rows), key);
	struct pcmd_cfg_loc none = {0, 0, false};

	return row ? cfg->key_locs[row - config_rows] : none;
}

/* A problem between two keys: point at the one the file set (the first if both). */
static int pair_fail(const struct pcmd_config *cfg, const char *a, const char *b, char *err,
		     size_t err_len, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int pair_fail(const struct pcmd_config *cfg, const char *a, const char *b, char *err,
		     size_t err_len, const char *fmt, ...)
{
	struct pcmd_cfg_loc la = pcmd_config_key_loc(cfg, a), lb = pcmd_config_key_loc(cfg, b);
	bool use_b = !la.line && !la.cli && (lb.line || lb.cli);
	char what[PCMD_CFG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return check_fail(cfg, use_b ? &lb : &la, use_b ? b : a, err, err_len, "%s", what);
}

static int parse_rule_peer(struct pcmd_rule *r, char *why, size_t len)
{
	char net[PCMD_ADDR_MAX], *slash;
	size_t n = strlen(r->peer);
	uint64_t bits;
	unsigned max_bits;

	if (n == 0) {
		snprintf(why, len, "a peer address, prefix ('name*') or network ('10.0.0.0/8')");
		return -EINVAL;
	}
	slash = strchr(r->peer, '/');
	if (!slash) {
		r->match = r->peer[n - 1] == '*' ? PCMD_MATCH_PREFIX : PCMD_MATCH_EXACT;
		if (r->match == PCMD_MATCH_PREFIX && strchr(r->peer, '*') != r->peer + n - 1) {
			snprintf(why, len, "'%s': '*' may only end a prefix", r->peer);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(net, sizeof(net), "%.*s", (int)(slash - r->peer), r->peer);
	memset(r->net, 0, sizeof(r->net));
	if (inet_pton(AF_INET, net, r->net) == 1) {
		r->family = AF_INET;
		max_bits = 32;
	} else if (inet_pton(AF_INET6, net, r->net) == 1) {
		r->family = AF_INET6;
		max_bits = 128;
	} else {
		snprintf(why, len, "'%s' is not an IPv4 or IPv6 network", net);
		return -EINVAL;
	}
	if (parse_u64(slash + 1, &bits) < 0 || bits > max_bits) {
		snprintf(why, len, "'/%s' is not a prefix length 0..%u", slash + 1, max_bits);
		return -EINVAL;
	}
	for (unsigned b = (unsigned)bits; b < max_bits; b++) {
		if (r->net[b / 8] & (0x80 >> (b % 8))) {
			snprintf(why, len, "'%s' has host bits set beyond /%u", r->peer,
				 (unsigned)bits);
			return -EINVAL;
		}
	}
	r->prefix_bits = (uint32_t)bits;
	r->match = PCMD_MATCH_CIDR;
	return 0;
}

static int check_rules(struct pcmd_config *cfg, char *err, size_t err_len)
{
	for (uint32_t i = 0; i < cfg->policies.n_rules; i++) {
		struct pcmd_rule *r = &cfg->policies.rules[i];
		char key[48], why[160];

		snprintf(key, sizeof(key), "policies.rules[%u].peer", i);
		if (parse_rule_peer(r, why, sizeof(why)) < 0)
			return check_fail(cfg, &r->loc, key, err, err_len, "%s", why);
		if (r->mode == PCMD_SHELL_DEFAULT)
			r->mode = cfg->policies.mode;
		if (r->skew_bound == 0)
			r->skew_bound = cfg->policies.skew_bound;
	}
	return 0;
}

/* A listening name as a rule gives it: no '@' (it separates a dial's owner), '*' only last. */
static int check_name_rules(struct pcmd_config *cfg, char *err, size_t err_len)
{
	for (uint32_t i = 0; i < cfg->n_shared_names; i++) {
		const struct pcmd_name_rule *r = &cfg->shared_names[i];
		const char *star = strchr(r->name, '*');
		char key[48];

		snprintf(key, sizeof(key), "shared_names[%u]", i);
		if (!r->name[0] || strchr(r->name, '@') || (star && star[1]))
			return check_fail(cfg, &r->loc, key, err, err_len,
					  "name '%s': a listening name (no '@'), or a prefix "
					  "ending in '*'",
					  r->name);
		if (!r->has_owner)
			return check_fail(
			    cfg, &r->loc, key, err, err_len,
			    "owner: the user whose listeners the rule opens is missing");
		if (!r->n_dial_uids && !r->n_dial_gids)
			return check_fail(
			    cfg, &r->loc, key, err, err_len,
			    "lists neither dial_uids nor dial_gids: it lets nobody in");
	}
	return 0;
}

static uint32_t at_least_one(uint64_t v)
{
	return v ? (v < UINT32_MAX ? (uint32_t)v : UINT32_MAX) : 1;
}

/* Each user's share where the file gave none: a quarter of the totals (pcmd.conf(5)). */
static int derive_user_limits(struct pcmd_config *cfg, char *err, size_t err_len)
{
	if (!cfg->limits.user.clients)
		cfg->limits.user.clients = at_least_one(cfg->limits.max_clients / 4);
	if (!cfg->limits.user.regions)
		cfg->limits.user.regions = at_least_one(cfg->limits.max_clients / 4);
	if (!cfg->limits.user.region_bytes)
		cfg->limits.user.region_bytes = cfg->limits.memory_total_bytes / 4;
	if (!cfg->limits.user.flows)
		cfg->limits.user.flows = at_least_one(4ull * cfg->limits.flows_per_client);
	if (!cfg->limits.user.listeners)
		cfg->limits.user.listeners = at_least_one(4ull * cfg->limits.listeners_per_client);
	if (cfg->limits.user.clients > cfg->limits.max_clients) {
		return pair_fail(cfg, "limits.user.clients", "limits.max_clients", err, err_len,
				 "limits.user.clients (%u) is above limits.max_clients (%u): one "
				 "user could take every client slot",
				 cfg->limits.user.clients, cfg->limits.max_clients);
	}
	return 0;
}

static int check_ring_sizes(struct pcmd_config *cfg, char *err, size_t err_len)
{
	struct pcmd_cfg_loc sq = pcmd_config_key_loc(cfg, "limits.sq_entries");
	struct pcmd_cfg_loc cq = pcmd_config_key_loc(cfg, "limits.cq_entries");

	if (!pcmd_ring_entries_ok(cfg->limits.sq_entries))
		return check_fail(cfg, &sq, "limits.sq_entries", err, err_len,
				  "%u is not a power of two", cfg->limits.sq_entries);
	if (!pcmd_ring_entries_ok(cfg->limits.cq_entries))
		return check_fail(cfg, &cq, "limits.cq_entries", err, err_len,
				  "%u is not a power of two", cfg->limits.cq_entries);
	if (cfg->limits.cq_entries < cfg->limits.sq_entries) {
		return pair_fail(
		    cfg, "limits.cq_entries", "limits.sq_entries", err, err_len,
		    "limits.cq_entries (%u) is below limits.sq_entries (%u): every submission "
		    "needs a completion slot",
		    cfg->limits.cq_entries, cfg->limits.sq_entries);
	}
	return 0;
}

/* A thread pool's cpus list, when given, names one CPU per thread. */
static int check_placement(struct pcmd_config *cfg, char *err, size_t err_len)
{
	const struct {
		const char *section, *thread;
		uint32_t n_cpus, count;
	} pools[] = {
		{ "engines", "engine", cfg->engines.n_cpus, cfg->engines.count },
		{ "workers", "worker", cfg->workers.n_cpus, cfg->workers.count },
	};
	char count_key[32], cpus_key[32];

	for (size_t i = 0; i < N_ROWS(pools); i++) {
		if (!pools[i].n_cpus || pools[i].n_cpus == pools[i].count)
			continue;
		snprintf(count_key, sizeof(count_key), "%s.count", pools[i].section);
		snprintf(cpus_key, sizeof(cpus_key), "%s.cpus", pools[i].section);
		return pair_fail(cfg, count_key, cpus_key, err, err_len,
				 "%u CPUs listed in %s for %s = %u (list one per %s, or none)",
				 pools[i].n_cpus, cpus_key, count_key, pools[i].count,
				 pools[i].thread);
	}
	return 0;
}

static int check_sizes(struct pcmd_config *cfg, char *err, size_t err_len)
{
	if (cfg->limits.memory_per_client_bytes > cfg->limits.memory_total_bytes) {
		return pair_fail(
		    cfg, "limits.memory_per_client_bytes", "limits.memory_total_bytes", err,
		    err_len,
		    "limits.memory_per_client_bytes (%llu) is above limits.memory_total_bytes "
		    "(%llu)",
		    (unsigned long long)cfg->limits.memory_per_client_bytes,
		    (unsigned long long)cfg->limits.memory_total_bytes);
	}
	if (cfg->limits.max_message_bytes > cfg->limits.memory_per_client_bytes) {
		return pair_fail(
		    cfg, "limits.max_message_bytes", "limits.memory_per_client_bytes", err, err_len,
		    "limits.max_message_bytes (%llu) is above limits.memory_per_client_bytes "
		    "(%llu): a message must fit in a client's region",
		    (unsigned long long)cfg->limits.max_message_bytes,
		    (unsigned long long)cfg->limits.memory_per_client_bytes);
	}
	return 0;
}

static int check_config(struct pcmd_config *cfg, char *err, size_t err_len)
{
	struct pcmd_cfg_loc loc;
	int rc;

	if (cfg->socket.path[0] != '/') {
		loc = pcmd_config_key_loc(cfg, "socket.path");
		return check_fail(cfg, &loc, "socket.path", err, err_len,
				  "'%s' is not an absolute path", cfg->socket.path);
	}
	if (!cfg->policies.default_policy[0])
		return check_fail(cfg, &cfg->policies.default_loc, "policies.default", err, err_len,
				  "must name a policy (a built-in name or a .so path)");
	if (cfg->datapath.n_devices && cfg->datapath.kind == PCMD_DATAPATH_SOFTNIC) {
		loc = pcmd_config_key_loc(cfg, "datapath.kind");
		return check_fail(cfg, &loc, "datapath.kind", err, err_len,
				  "softnic, but datapath.verbs.devices lists devices");
	}
	if (cfg->datapath.softnic_delay_ppm && !cfg->datapath.softnic_delay_us) {
		loc = pcmd_config_key_loc(cfg, "datapath.softnic.delay_ppm");
		return check_fail(
		    cfg, &loc, "datapath.softnic.delay_ppm", err, err_len,
		    "%u, but datapath.softnic.delay_us is 0 (hold messages back how long?)",
		    cfg->datapath.softnic_delay_ppm);
	}
	rc = check_sizes(cfg, err, err_len);
	if (rc == 0)
		rc = check_ring_sizes(cfg, err, err_len);
	if (rc == 0)
		rc = check_placement(cfg, err, err_len);
	if (rc == 0)
		rc = check_rules(cfg, err, err_len);
	if (rc == 0)
		rc = check_name_rules(cfg, err, err_len);
	if (rc == 0)
		rc = derive_user_limits(cfg, err, err_len);
	cfg->datapath.resolved =
	    cfg->datapath.kind == PCMD_DATAPATH_AUTO ? PCMD_DATAPATH_SOFTNIC : cfg->datapath.kind;
	return rc;
}

/* ---- overrides ------------------------------------------------------------------------- */

int pcmd_overrides_add(struct pcmd_overrides *ovr, const char *kv)
{
	if (!strchr(kv, '=') || kv[0] == '=' || strlen(kv) >= sizeof(ovr->kv[0]))
		return -EINVAL;
	if (ovr->n >= PCMD_CFG_MAX_OVERRIDES)
		return -E2BIG;
	memcpy(ovr->kv[ovr->n++], kv, strlen(kv) + 1);
	return 0;
}

static int apply_override(struct loader *ld, const char *kv)
{
	char key[128], val[PCMD_PATH_MAX + 128];
	const char *eq = strchr(kv, '=');
	const struct key_row *row;
	char children[512];

	snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
	snprintf(val, sizeof(val), "%s", eq + 1);
	row = find_row(config_rows, N_ROWS(config_rows), key);
	if (!row || row->type == T_SECTION) {
		list_children(config_rows, N_ROWS(config_rows), row ? key : "", children,
			      sizeof(children));
		return fail_at(ld, NULL, key, "unknown key (valid here: %s)", children);
	}
	if (is_map_list(row->type))
		return fail_at(ld, NULL, key, "set lists of mappings in the file");
	return set_text(ld, row, ld->cfg, key, val);
}

static int apply_overrides(struct loader *ld, const struct pcmd_overrides *ovr)
{
	ld->from_cli = true;
	for (uint32_t i = 0; ovr && i < ovr->n; i++) {
		int rc = apply_override(ld, ovr->kv[i]);

		if (rc < 0)
			return rc;
	}
	ld->from_cli = false;
	return 0;
}

/* ---- loading --------------------------------------------------------------------------- */

static int yaml_error(struct loader *ld, const yaml_parser_t *p)
{
	snprintf(ld->err, ld->err_len, "%s:%u:%u: not valid YAML: %s", ld->name,
		 (unsigned)p->problem_mark.line + 1, (unsigned)p->problem_mark.column + 1,
		 p->problem ? p->problem : "parse error");
	return -EINVAL;
}

static int load_document(struct loader *ld, const char *buf, size_t len)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	int rc = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = yaml_error(ld, &parser);
		yaml_parser_delete(&parser);
		return rc;
	}
	ld->doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root && !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
		if (root->type != YAML_MAPPING_NODE)
			rc = fail_at(ld, root, "(top)", "the file must be a mapping of keys");
		else
			rc = walk_items(ld, config_rows, N_ROWS(config_rows), ld->cfg, root, "");
	}
	if (rc == 0) {
		yaml_document_t extra;

		/* A second document would be silently ignored: refuse it. */
		if (yaml_parser_load(&parser, &extra)) {
			if (yaml_document_get_root_node(&extra))
				rc = fail_at(ld, yaml_document_get_root_node(&extra), "(top)",
					     "more than one YAML document");
			yaml_document_delete(&extra);
		} else {
			rc = yaml_error(ld, &parser);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	ld->doc = NULL;
	return rc;
}

int pcmd_config_load_buffer(const char *name, const char *buf, size_t len,
			    const struct pcmd_overrides *ovr, struct pcmd_config *cfg, char *err,
			    size_t err_len)
{
	struct loader ld = {.cfg = cfg, .name = name, .err = err, .err_len = err_len};
	int rc;

	err[0] = '\0';
	ld.name = "(defaults)";
	rc = load_defaults(&ld);
	if (rc < 0)
		return rc;
	snprintf(cfg->path, sizeof(cfg->path), "%s", name ? name : "");
	ld.name = cfg->path[0] ? cfg->path : "(config)";
	if (buf) {
		rc = load_document(&ld, buf, len);
		if (rc < 0)
			return rc;
	}
	rc = apply_overrides(&ld, ovr);
	if (rc < 0)
		return rc;
	return check_config(cfg, err, err_len);
}

int pcmd_config_load(const char *path, const struct pcmd_overrides *ovr, struct pcmd_config *cfg,
		     char *err, size_t err_len)
{
	char *buf;
	size_t n;
	FILE *f;
	int rc;

	if (!path)
		return pcmd_config_load_buffer(NULL, NULL, 0, ovr, cfg, err, err_len);
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	buf = malloc(CFG_MAX_FILE_BYTES + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, CFG_MAX_FILE_BYTES + 1, f);
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (rc == 0 && n > CFG_MAX_FILE_BYTES) {
		snprintf(err, err_len, "%s: larger than %u bytes", path, CFG_MAX_FILE_BYTES);
		rc = -EINVAL;
	} else if (rc < 0) {
		snprintf(err, err_len, "%s: read error", path);
	}
	if (rc == 0)
		rc = pcmd_config_load_buffer(path, buf, n, ovr, cfg, err, err_len);
	free(buf);
	return rc;
}

void pcmd_config_resolve(struct pcmd_config *cfg, const char *sysfs_ib)
{
	bool have_rdma = false;
	struct dirent *e;
	DIR *d;

	if (cfg->datapath.kind != PCMD_DATAPATH_AUTO) {
		cfg->datapath.resolved = cfg->datapath.kind;
		return;
	}
	d = opendir(sysfs_ib);
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			have_rdma = true;
	if (d)
		closedir(d);
	cfg->datapath.resolved = have_rdma ? PCMD_DATAPATH_VERBS : PCMD_DATAPATH_SOFTNIC;
}

/* ---- rules ----------------------------------------------------------------------------- */

/* The host part of "host", "host:port", "[v6]:port" or a bare IPv6 address. */
static void addr_host(const char *addr, char *host, size_t len)
{
	const char *colon = strrchr(addr, ':');

	if (addr[0] == '[') {
		const char *end = strchr(addr, ']');

		snprintf(host, len, "%.*s", end ? (int)(end - addr - 1) : 0, addr + 1);
	} else if (colon && strchr(addr, ':') == colon) {
		snprintf(host, len, "%.*s", (int)(colon - addr), addr);
	} else {
		snprintf(host, len, "%s", addr);
	}
}

bool pcmd_rule_match(const struct pcmd_rule *rule, const char *addr)
{
	char host[PCMD_ADDR_MAX];
	uint8_t ip[16] = {0};

	switch (rule->match) {
	case PCMD_MATCH_EXACT:
		return strcmp(rule->peer, addr) == 0;
	case PCMD_MATCH_PREFIX:
		return strncmp(rule->peer, addr, strlen(rule->peer) - 1) == 0;
	case PCMD_MATCH_CIDR:
		addr_host(addr, host, sizeof(host));
		if (inet_pton((int)rule->family, host, ip) != 1)
			return false;
		for (uint32_t b = 0; b < rule->prefix_bits; b++) {
			uint8_t m = (uint8_t)(0x80 >> (b % 8));

			if ((ip[b / 8] & m) != (rule->net[b / 8] & m))
				return false;
		}
		return true;
	default:
		return false;
	}
}

int pcmd_config_find_rule(const struct pcmd_config *cfg, const char *addr)
{
	for (uint32_t i = 0; i < cfg->policies.n_rules; i++)
		if (pcmd_rule_match(&cfg->policies.rules[i], addr))
			return (int)i;
	return -1;
}

/* ---- names ----------------------------------------------------------------------------- */

static const char *name_of(const char *const *names, size_t n, uint32_t v)
{
	return v < n - 1 ? names[v] : "?";
}

const char *pcmd_log_level_name(uint32_t level)
{
	return name_of(log_names, N_ROWS(log_names), level);
}

const char *pcmd_datapath_name(uint32_t kind)
{
	return name_of(datapath_names, N_ROWS(datapath_names), kind);
}

const char *pcmd_datapath_target(uint32_t kind)
{
	return kind == PCMD_DATAPATH_NULL ? "softnic" : pcmd_datapath_name(kind);
}

const char *pcmd_shell_mode_name(uint32_t mode)
{
	return name_of(mode_names, N_ROWS(mode_names), mode);
}

int pcmd_shell_mode_parse(const char *s, uint32_t *out)
{
	return parse_enum(s, mode_names, out);
}
