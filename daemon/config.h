/* SPDX-License-Identifier: MIT */
/*
 * config.h - pcmd's configuration: the YAML file (libyaml), command-line
 * overrides on top of it, defaults, and the checks that make a bad file fail
 * with file:line:col and the dotted key, before anything of it is used.
 *
 * Every scalar key is one row of a table in config.c; the YAML reader and the
 * command-line `--set key=value` go through the same row, so a key's type,
 * range and error text are written once. The keys are documented in
 * pcmd.conf(5) (docs/pcmd.conf.5.md).
 */
#ifndef PCMD_CONFIG_H
#define PCMD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pcmd_proto.h"

#define PCMD_CFG_ERR_MAX 512
#define PCMD_CFG_MAX_IDS 64
#define PCMD_CFG_MAX_CPUS 256
#define PCMD_CFG_MAX_DEVICES 16
#define PCMD_CFG_MAX_LOADS 64
#define PCMD_CFG_MAX_RULES 256
#define PCMD_CFG_MAX_NAME_RULES 64
#define PCMD_CFG_MAX_OVERRIDES 64
#define PCMD_CFG_PATH_MAX 4096
#define PCMD_CFG_MAX_KEYS 96 /* scalar keys with a remembered location */
#ifndef PCMD_DEFAULT_CONFIG /* meson sets it: SYSCONFDIR/pcm/pcmd.yaml */
#define PCMD_DEFAULT_CONFIG "/etc/pcm/pcmd.yaml"
#endif

enum pcmd_log_level {
	PCMD_LOG_ERROR = 0,
	PCMD_LOG_WARN = 1,
	PCMD_LOG_INFO = 2,
	PCMD_LOG_DEBUG = 3,
};

enum pcmd_datapath_kind {
	PCMD_DATAPATH_AUTO = 0, /* verbs if an RDMA device is present, else softnic */
	PCMD_DATAPATH_SOFTNIC = 1,
	PCMD_DATAPATH_VERBS = 2,
	PCMD_DATAPATH_NULL = 3, /* the in-process loopback: every client on this machine */
};

enum pcmd_shutdown_mode {
	PCMD_SHUTDOWN_DRAIN = 0, /* let posted sends finish, up to drain_timeout_ms */
	PCMD_SHUTDOWN_ABORT = 1, /* fail everything outstanding at once */
};

/* Where a value came from, for messages: "pcmd.yaml:12:7" or "command line". */
struct pcmd_cfg_loc {
	unsigned line; /* 0: not from the file */
	unsigned col;
	bool cli; /* set by a command-line override */
};

struct pcmd_cfg_device {
	char name[64];
	uint32_t port;
	int32_t gid_index;
};

enum pcmd_peer_match {
	PCMD_MATCH_EXACT = 0,  /* the address string, exactly */
	PCMD_MATCH_PREFIX = 1, /* "name*": the address starts with "name" */
	PCMD_MATCH_CIDR = 2,   /* "10.1.0.0/16", "fd00::/8": the host part of "host:port" */
};

struct pcmd_rule {
	char peer[PCMD_ADDR_MAX];
	uint32_t match;	 /* enum pcmd_peer_match */
	uint8_t net[16]; /* CIDR: network address (IPv4 in the first 4 bytes) */
	uint32_t prefix_bits;
	uint32_t family;	       /* CIDR: AF_INET or AF_INET6 */
	char policy[PCMD_PATH_MAX];    /* built-in name or .so path; "" the default */
	char lb_policy[PCMD_PATH_MAX]; /* "" the default LB; "none" no LB package */
	uint32_t mode;		       /* enum pcmd_shell_mode */
	uint32_t skew_bound;
	uint32_t no_progress_ms;       /* its flows' no-progress limit; 0: the default (5 s) */
	struct pcmd_cfg_loc loc;
	struct pcmd_cfg_loc policy_loc;
	struct pcmd_cfg_loc lb_loc;
};

/*
 * A shared_names rule: listening names of user @owner that other users may
 * dial. @name is a name, or a prefix ending in '*'. A dialer is let in when
 * its uid is in @dial_uids or its gid or a supplementary group in @dial_gids
 * (access.h); a dial of the bare name by such a user reaches @owner's
 * listener (names.h).
 */
struct pcmd_name_rule {
	char name[PCMD_ADDR_MAX];
	uint32_t owner;
	bool has_owner;
	uint32_t n_dial_uids, n_dial_gids;
	uint32_t dial_uids[PCMD_CFG_MAX_IDS];
	uint32_t dial_gids[PCMD_CFG_MAX_IDS];
	struct pcmd_cfg_loc loc;
};

struct pcmd_config {
	char path[PCMD_CFG_PATH_MAX];			 /* the file read; "" when none */
	struct pcmd_cfg_loc key_locs[PCMD_CFG_MAX_KEYS]; /* per row of config.c's key table */
	uint32_t log_level;				 /* enum pcmd_log_level */

	struct {
		char path[108]; /* sun_path */
		char group[64]; /* "" keep the daemon's group */
		uint32_t mode;	/* file mode of the socket */
		uint32_t n_allow_uids, n_allow_gids, n_admin_uids, n_admin_gids;
		uint32_t allow_uids[PCMD_CFG_MAX_IDS];
		uint32_t allow_gids[PCMD_CFG_MAX_IDS];
		uint32_t admin_uids[PCMD_CFG_MAX_IDS];
		uint32_t admin_gids[PCMD_CFG_MAX_IDS];
		struct pcmd_cfg_loc allow_uids_loc, allow_gids_loc;
	} socket;

	struct {
		uint32_t kind;	   /* enum pcmd_datapath_kind, as configured */
		uint32_t resolved; /* after pcmd_config_resolve(): never AUTO */
		uint32_t n_devices;
		struct pcmd_cfg_device devices[PCMD_CFG_MAX_DEVICES];
		char softnic_topology[PCMD_CFG_PATH_MAX]; /* scenario file; "" built-in */
		uint32_t softnic_hosts; /* hosts of the built-in single-switch fabric */
		uint32_t softnic_link_gbps; /* its links and NICs */
		uint32_t softnic_seed;	    /* the emulation's and the impairments' draws */
		uint32_t softnic_dup_ppm;   /* data messages delivered twice */
		uint32_t softnic_delay_ppm; /* data messages held back by delay_us */
		uint32_t softnic_delay_us;
		uint32_t chunk_bytes;
		uint32_t paths;
	} datapath;

	struct {
		uint32_t count;
		int32_t numa_node; /* -1: the NIC's node */
		uint32_t n_cpus;
		uint32_t cpus[PCMD_CFG_MAX_CPUS];
		uint32_t spin_ns; /* engines only: busy polling after the last work */
	} engines, workers;

	struct {
		char default_policy[PCMD_PATH_MAX];
		char default_lb[PCMD_PATH_MAX];
		uint32_t mode;
		uint32_t skew_bound;
		uint32_t n_load;
		char load[PCMD_CFG_MAX_LOADS][PCMD_PATH_MAX];
		struct pcmd_cfg_loc load_loc[PCMD_CFG_MAX_LOADS];
		struct pcmd_cfg_loc default_loc;
		uint32_t n_rules;
		struct pcmd_rule rules[PCMD_CFG_MAX_RULES];
	} policies;

	struct {
		uint32_t max_clients;
		uint32_t flows_per_client;
		uint64_t memory_per_client_bytes;
		uint64_t memory_total_bytes;
		uint32_t outstanding_per_client;
		uint32_t sq_entries; /* default ring sizes when a client asks for 0 */
		uint32_t cq_entries;
		uint64_t max_message_bytes;
		uint32_t listeners_per_client;
		uint32_t backlog;
		uint32_t admin_clients;	   /* client slots beyond max_clients for admins only */
		uint32_t hello_timeout_ms; /* a connection's time to say HELLO */
		/* Each user's (uid's) share; an admin has none. 0 in the file's stead: derived from
		 * the totals at load (hosts: by pcmd from the fabric's size, pcmd.conf(5)). */
		struct {
			uint32_t clients;
			uint32_t regions;
			uint64_t region_bytes;
			uint32_t hosts;
			uint32_t flows;
			uint32_t listeners;
		} user;
	} limits;

	uint32_t n_shared_names;
	struct pcmd_name_rule shared_names[PCMD_CFG_MAX_NAME_RULES];

	struct {
		char stats_path[PCMD_CFG_PATH_MAX]; /* "" off: JSON lines */
		uint32_t stats_interval_ms;
		char records_path[PCMD_CFG_PATH_MAX]; /* "" off: one CSV row per closed flow */
		uint32_t status_interval_ms;	      /* sd_notify STATUS and goodput window */
		char group[64]; /* "" stats and records 0600, else 0640 with this group */
		char metrics_path[PCMD_CFG_PATH_MAX]; /* "" off: Prometheus text, replaced */
		uint32_t metrics_per_flow;	      /* 1: with the per-flow series */
	} output;

	struct {
		uint32_t mode; /* enum pcmd_shutdown_mode */
		uint32_t drain_timeout_ms;
	} shutdown;
};

/* Command-line overrides, applied over the file (and again on every reload). */
struct pcmd_overrides {
	uint32_t n;
	char kv[PCMD_CFG_MAX_OVERRIDES][PCMD_PATH_MAX + 128]; /* "key=value" */
};

/**
 * pcmd_config_defaults() - fill @cfg with the built-in defaults: each key's
 * default is a column of config.c's key table, read through the key's own
 * parser and range, as pcmd_config_load() starts from them.
 * @cfg: the config.
 * @err: on failure, "(defaults): key: what is wrong".
 * @err_len: its size.
 *
 * Return: 0, or -EINVAL when a default of the table does not parse (a bug
 * the unit test catches).
 */
int pcmd_config_defaults(struct pcmd_config *cfg, char *err, size_t err_len);

/**
 * pcmd_config_load() - defaults, then the file at @path (if not NULL), then
 * @ovr, then the cross-key checks.
 * @path: YAML file, or NULL for defaults only.
 * @ovr: command-line overrides, or NULL.
 * @cfg: the result (unspecified on failure).
 * @err: on failure, "file:line:col: key: what is wrong" (or "command line: ...").
 * @err_len: its size.
 *
 * Return: 0, -ENOENT/-EACCES (file), -EINVAL (bad content), -ENOMEM.
 */
int pcmd_config_load(const char *path, const struct pcmd_overrides *ovr, struct pcmd_config *cfg,
		     char *err, size_t err_len);

/**
 * pcmd_config_load_buffer() - as pcmd_config_load() from memory (fuzzing, tests).
 * @name: the name used in messages.
 * @buf: YAML text.
 * @len: its length.
 * @ovr: overrides, or NULL.
 * @cfg: the result.
 * @err: the message.
 * @err_len: its size.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int pcmd_config_load_buffer(const char *name, const char *buf, size_t len,
			    const struct pcmd_overrides *ovr, struct pcmd_config *cfg, char *err,
			    size_t err_len);

/**
 * pcmd_overrides_add() - record one `--set key=value` (checked at load).
 * @ovr: the list.
 * @kv: "key=value".
 *
 * Return: 0, -EINVAL (no '=' or too long), -E2BIG (too many).
 */
int pcmd_overrides_add(struct pcmd_overrides *ovr, const char *kv);

/**
 * pcmd_config_resolve() - settle choices that depend on the machine: AUTO
 * becomes VERBS when @sysfs_ib holds an RDMA device, else SOFTNIC.
 * @cfg: the config.
 * @sysfs_ib: the directory of RDMA devices (normally /sys/class/infiniband).
 */
void pcmd_config_resolve(struct pcmd_config *cfg, const char *sysfs_ib);

/**
 * pcmd_rule_match() - does @addr fall under @rule?
 * @rule: the rule.
 * @addr: a peer address ("name", "host:port", "[v6]:port").
 *
 * Return: true if it matches.
 */
bool pcmd_rule_match(const struct pcmd_rule *rule, const char *addr);

/**
 * pcmd_config_find_rule() - the first rule matching @addr.
 * @cfg: the config.
 * @addr: the peer address.
 *
 * Return: the rule's index, or -1.
 */
int pcmd_config_find_rule(const struct pcmd_config *cfg, const char *addr);

/**
 * pcmd_config_key_loc() - where the file set a scalar key.
 * @cfg: the config.
 * @key: the dotted key.
 *
 * Return: its location (line 0 when the key kept its default or came from
 * the command line).
 */
struct pcmd_cfg_loc pcmd_config_key_loc(const struct pcmd_config *cfg, const char *key);

/**
 * pcmd_config_id() - a uid or gid as the config writes them: a number or a
 * user (group) name.
 * @s: the text.
 * @group: a group (else a user).
 * @out: the id.
 *
 * Return: 0, -ENOENT (no such name), -ERANGE.
 */
int pcmd_config_id(const char *s, bool group, uint32_t *out);

/**
 * pcmd_config_group_id() - the group a key names (socket.group, output.group),
 * by name or number, as the id lists read them.
 * @name: the group.
 * @gid: its id.
 *
 * Return: 0, -ENOENT (no such group), -ERANGE.
 */
int pcmd_config_group_id(const char *name, uint32_t *gid);

/* Names for messages and output. */
const char *pcmd_log_level_name(uint32_t level);
const char *pcmd_datapath_name(uint32_t kind);

/**
 * pcmd_datapath_target() - the PCM target whose signals datapath @kind gives
 * policies: its own name, but "softnic" for null (the CPU transport's
 * signals, as the null datapath reports them; there is no "null" target).
 * @kind: a resolved PCMD_DATAPATH_* kind.
 *
 * Return: the target's name, for pcm_target_find().
 */
const char *pcmd_datapath_target(uint32_t kind);
const char *pcmd_shell_mode_name(uint32_t mode);

/**
 * pcmd_shell_mode_parse() - "sync", "async_relaxed", "async_locked", "async_bounded".
 * @s: the text.
 * @out: the mode.
 *
 * Return: 0, -EINVAL.
 */
int pcmd_shell_mode_parse(const char *s, uint32_t *out);

/**
 * pcmd_config_where() - "file:line:col" for @loc, or "command line".
 * @cfg: the config (for its path).
 * @loc: the location.
 * @buf: output.
 * @len: its size.
 *
 * Return: @buf.
 */
const char *pcmd_config_where(const struct pcmd_config *cfg, const struct pcmd_cfg_loc *loc,
			      char *buf, size_t len);

#endif /* PCMD_CONFIG_H */
