/* SPDX-License-Identifier: MIT */
/*
 * uet.h - the in-process UET emulation: a discrete-event fabric and a model of
 * a UET NIC whose congestion control and load balancing are PCM handler
 * packages.
 *
 * A run is described by a scenario (a YAML file, see pcm-sim(1), or a struct
 * filled in code), creates one NIC per host, posts messages, and runs until
 * every message has completed or a stop time passes. It is deterministic for
 * a given scenario and seed: the same inputs give byte-identical records.
 *
 * NIC attributes keep the names and defaults of the Scala UET NIC document
 * (seeds/uet-nic-datapath.txt); where that document leaves a default unstated
 * the value pcm picked is marked "(pcm)" below. Units are in the names.
 */
#ifndef PCM_UET_H
#define PCM_UET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "package.h"
#include "spec.h"

/* Wire bytes besides the payload: 44 semantic + 16 PDS + 8 UDP + 20 IPv4 + 14 Eth + 4 FCS. */
#define UET_WIRE_HDR_BYTES 106
/* The IP datagram's headers: a packet counts payload + 88 against the window. */
#define UET_NOMINAL_HDR_BYTES 88
/* A trimmed packet keeps its IPv4, UDP and PDS request headers: 44 B, 62 on the wire. */
#define UET_TRIMMED_IP_BYTES 44
#define UET_TRIMMED_WIRE_BYTES 62
/* Control packets (pcm's sizes, IP datagram + 18 B of Ethernet framing). */
#define UET_ACK_WIRE_BYTES 82   /* PDS ACK with cumulative ACK, 64-bit SACK bitmap, service time */
#define UET_NACK_WIRE_BYTES 66
#define UET_PROBE_WIRE_BYTES 66
#define UET_CREDIT_WIRE_BYTES 66
#define UET_CNP_WIRE_BYTES 66    /* congestion notification (DCQCN's NP to its RP) */
/* The ACK's service time is reported in steps of this many ps. */
#define UET_SERVICE_STEP_PS 128000
#define UET_SACK_BITS 64

/* ScalaUETPdsManager and NIC attributes. Times in ps, rates in bit/s. */
struct uet_nic_cfg {
	uint32_t rdma_data_mss;          /* RdmaDataMSS: 4096 */
	uint32_t ack_every_nth;          /* AckRequestEveryNthPacket: 1 */
	uint64_t ack_coalesce_bytes;     /* AckCoalesceBytes (pcm extension): 0, off; else the
					  * receiver coalesces ACKs up to this many payload
					  * bytes, as uet-htsim's does (nic/coalesce.c) */
	bool ack_first;                  /* AckRequestFirstPacket: true (pcm) */
	bool ack_last;                   /* AckRequestLastPacket: true (pcm) */
	uint64_t initial_rto_ps;         /* InitialRetransmitTimeout: 100 us (pcm) */
	uint32_t max_rto_backoff;        /* MaxExponentialRTOBackoffCount: 5 (pcm) */
	bool fixed_rexmit_enable;        /* FixedRexmitTimeEnable: false */
	uint64_t fixed_rexmit_ps;        /* FixedRexmitTimeout: 100 us (pcm) */
	bool pdc_groups;                 /* PDCGroupsEnabled: true */
	bool prefetch_enable;            /* PrefetchBufferEnable: false */
	uint32_t prefetch_bytes;         /* PrefetchBufferSize: 131072 (pcm) */
	bool trimming;                   /* TrimmingEnabled: false; first transmissions no-trim */
	bool trimmable_retx;             /* TrimmableRetransmission (pcm name): true */
	uint64_t data_rate_bps;          /* DataRate: 400 Gbit/s */
	uint64_t initial_base_rtt_ps;    /* InitialBaseRTT: 14 us (pcm) */
	bool transport_stats;            /* EnableTransportStats: true */
	uint64_t stats_interval_ps;      /* NDStatsReportInterval: 10 us (pcm) */
	bool event_logging;              /* EnableEventLogging: false (pcm) */
	bool uet_monitor;                /* EnableUETMonitor: false (pcm) */
	uint64_t lane_bps;               /* LaneBps: 31.52 Gbit/s */
	uint32_t lane_count;             /* LaneCount: 16 */
	uint32_t egress_pool_bytes;      /* EgressBufferSize (pcm): 32768, data class */
	uint32_t rx_pool_bytes;          /* IngressBufferSize (pcm): 1 MiB, data class */
	uint64_t doorbell_ps;            /* doorbell to transmit process: 15 ns */
	uint64_t initial_cwnd_bytes;     /* InitialCwnd (pcm): window if no CWND control, 175284 */
	uint64_t credit_speculative_bytes; /* CreditSpeculativeBytes (pcm): bytes a sender sends
					    * before receiver credit; UINT64_MAX: one BDP */
	uint64_t cnp_interval_ps;        /* CnpInterval (pcm): the receiver's notification point
					  * sends <= one CNP per group per 50 us; marks inside
					  * the interval are remembered and sent at its end */
	uint32_t tx_event_burst;         /* TxEventBurst (pcm): one TX event per this many data
					  * packets of a group (DOCA-style coalescing), 16 */
	uint64_t tick_ps;                /* PcmTickInterval (pcm): timer ticks for ELAPSED_TIME
					  * triggers, 1 us */
	uint64_t credit_tick_ps;         /* CreditTickInterval (pcm): receiver credit pacing tick;
					  * 0: one RdmaDataMSS at the link rate */
};

enum uet_topo_kind {
	UET_TOPO_INCAST = 0,     /* N senders and one receiver on one switch */
	UET_TOPO_LEAF_SPINE = 1,
	UET_TOPO_FAT_TREE = 2,   /* k-ary fat tree, k^3/4 hosts */
};

struct uet_topo_cfg {
	enum uet_topo_kind kind;
	uint32_t senders;            /* incast: N (hosts 0..N-1 send to host N) */
	uint32_t leaves, spines, hosts_per_leaf; /* leaf-spine */
	double oversubscription;     /* leaf-spine: host bandwidth / uplink bandwidth per leaf */
	uint32_t k;                  /* fat tree */
	uint64_t link_rate_bps;      /* switch ports facing hosts, and fabric links */
	uint64_t uplink_rate_bps;    /* leaf-spine uplinks (0: from oversubscription) */
	uint64_t link_delay_ps;      /* every link */
	uint64_t queue_bytes;        /* per-port, per-class byte limit (0: 1 BDP) */
	uint64_t ecn_kmin_bytes;     /* UINT64_MAX: default (20% of the limit) */
	uint64_t ecn_kmax_bytes;     /* UINT64_MAX: default (80% of the limit); 0 disables */
	bool uet_policy;             /* UETPolicyEnabled: classes from codepoints */
	bool switch_trimming;        /* trim instead of drop (needs uet_policy) */
};

enum uet_traffic_kind {
	UET_TRAFFIC_NONE = 0,
	UET_TRAFFIC_INCAST,       /* every sender to the receiver */
	UET_TRAFFIC_PERMUTATION,  /* a random derangement of the hosts, drawn from the seed */
};

/* Where a key of a scenario file was (for messages about it after parsing). */
struct uet_scenario_mark {
	char key[48];             /* "nic.EgressBufferSize", "failures[2]", ... */
	uint32_t line, col;       /* 1-based */
};

struct uet_flow_spec {
	uint32_t src, dst;
	uint64_t bytes;
	uint64_t start_ps;
	int32_t policy;           /* index into policies, -1: by rule */
};

struct uet_link_failure {
	char a[32], b[32];        /* node names, e.g. "agg0.1" and "core2" */
	uint64_t at_ps;
	uint64_t until_ps;        /* UINT64_MAX: never recovers */
	bool reroute;             /* each switch's ECMP stops choosing the link while it is down
				   * (no global recomputation: a hop without choice still drops) */
	uint32_t loss_ppm;        /* 0: the link is down, everything sent onto it is lost;
				   * otherwise each packet is lost with this probability
				   * (parts per million), drawn from the run's seed */
};

struct uet_policy_rule {
	int64_t src, dst;         /* host index or -1 for any */
	uint32_t policy;
};

enum uet_shell_mode {
	UET_SHELL_SYNC = 0,
	UET_SHELL_ASYNC = 1,      /* controls take effect delay_events handler feeds later */
};

#define UET_MAX_POLICIES 8
#define UET_MAX_RULES 64
#define UET_MAX_FAILURES 32

struct uet_scenario {
	char name[64];
	char description[256];
	char path[256];
	uint64_t seed;
	struct uet_topo_cfg topo;
	struct uet_nic_cfg nic;
	char policies[UET_MAX_POLICIES][256]; /* [0] is the default policy; "none": fixed window */
	uint32_t n_policies;
	/*
	 * A second package run beside every group's policy (a load balancer,
	 * typically): policies[lb_policy], when has_lb. It is no group's policy
	 * itself, and its controls must not overlap any policy's.
	 */
	bool has_lb;
	uint32_t lb_policy;
	struct uet_policy_rule rules[UET_MAX_RULES];
	uint32_t n_rules;
	enum uet_shell_mode shell_mode;
	uint32_t delay_events;
	enum uet_traffic_kind traffic;
	uint64_t traffic_bytes;
	uint64_t traffic_start_ps;
	uint64_t traffic_stagger_ps; /* start of flow i: start + i * stagger */
	struct uet_flow_spec *flows;
	uint32_t n_flows;
	struct uet_link_failure failures[UET_MAX_FAILURES];
	uint32_t n_failures;
	uint64_t stop_ps;            /* give up at this simulated time */
	uint64_t flow_sample_ps;     /* cwnd/rate time series interval (0: NDStatsReportInterval) */
	struct uet_scenario_mark *marks; /* keys read from a file, and where */
	uint32_t n_marks, cap_marks;
};

/**
 * uet_nic_cfg_defaults() - fill @nic with the document's defaults (and pcm's
 * where the document states none).
 * @nic: the attributes to fill.
 */
void uet_nic_cfg_defaults(struct uet_nic_cfg *nic);

/**
 * uet_scenario_defaults() - a scenario with every default and no traffic: an
 * 8:1 incast fabric at 100 Gbit/s with 1 us links, the UET policy and
 * trimming on the switch, NIC defaults, policy "swift", seed 1, stop at 1 s.
 * @scn: the scenario to fill.
 */
void uet_scenario_defaults(struct uet_scenario *scn);

/**
 * uet_scenario_parse() - read a scenario from YAML text.
 * @name: the file name used in messages.
 * @text: the YAML, @len bytes.
 * @out: the scenario (free with uet_scenario_free()).
 * @diag: "file:line:col: key: what is wrong" on failure.
 *
 * Return: 0, -EINVAL (bad input, described in @diag), -ENOMEM.
 */
int uet_scenario_parse(const char *name, const char *text, size_t len, struct uet_scenario **out,
		       struct pcm_diag *diag);

/**
 * uet_scenario_load() - uet_scenario_parse() on the file at @path. A policy
 * the file names by a relative path (one with a '/' or ending in ".so") is a
 * file beside the scenario: it is rewritten relative to the current
 * directory.
 * @path: the scenario file, also the name in messages.
 * @out: the scenario.
 * @diag: what is wrong, on failure.
 *
 * Return: as uet_scenario_parse(), or -errno from opening or reading the file
 * (-EFBIG above 64 MiB).
 */
int uet_scenario_load(const char *path, struct uet_scenario **out, struct pcm_diag *diag);

/*
 * A setting laid over a scenario file (pcm-sim --set, pcm-sim sweep's set:):
 * the value at a key path, as YAML text, and where it was written.
 */
struct uet_scenario_set {
	const char *key;          /* "topology.link_rate", "nic.DataRate", "failures[0].at" */
	const char *value;        /* YAML; its first character at line @line, column 1 */
	const char *file;         /* where it was written ("grid.yaml", "--set"), for messages */
	uint32_t line;            /* 1-based */
	uint32_t key_line, key_col; /* where the key was written, 1-based */
};

/**
 * uet_scenario_parse_set() - uet_scenario_parse() with @sets laid over the
 * text: each value replaces what the text has at its key path, or is added
 * with the keys the text lacks there, and is then read and checked as the
 * text is. A message about a setting's key or value names the setting's
 * file, line and column.
 * @name: the file name used in messages.
 * @text: the YAML, @len bytes.
 * @sets: the settings, in order (a later one wins), @n_sets of them.
 * @out: the scenario (free with uet_scenario_free()).
 * @diag: "file:line:col: key: what is wrong" on failure.
 *
 * Return: as uet_scenario_parse(); -EINVAL also for a malformed key path, a
 * path through something that is not a mapping, or a list item the text
 * lacks.
 */
int uet_scenario_parse_set(const char *name, const char *text, size_t len,
			   const struct uet_scenario_set *sets, size_t n_sets,
			   struct uet_scenario **out, struct pcm_diag *diag);

/**
 * uet_scenario_load_set() - uet_scenario_load() with @sets laid over the
 * file, as uet_scenario_parse_set() does.
 * @path: the scenario file, also the name in messages.
 * @sets: the settings, @n_sets of them.
 * @out: the scenario.
 * @diag: what is wrong, on failure.
 *
 * Return: as uet_scenario_load() and uet_scenario_parse_set().
 */
int uet_scenario_load_set(const char *path, const struct uet_scenario_set *sets, size_t n_sets,
			  struct uet_scenario **out, struct pcm_diag *diag);

/**
 * uet_scenario_set_lb() - run package @name beside every group's policy (the
 * scenario's `lb:`; pcm-sim --lb), replacing the scenario's own.
 * @scn: the scenario.
 * @name: a built-in package name or a .so path; "none" removes the LB.
 *
 * Return: 0, -ENAMETOOLONG, -ENOSPC (UET_MAX_POLICIES packages already).
 */
int uet_scenario_set_lb(struct uet_scenario *scn, const char *name);

/**
 * uet_scenario_free() - free a scenario from uet_scenario_parse(), _load() or
 * _dup().
 * @scn: the scenario, or NULL.
 */
void uet_scenario_free(struct uet_scenario *scn);

/**
 * uet_scenario_dup() - a deep copy of @scn (flows and marks included).
 * @scn: the scenario.
 *
 * Return: the copy (free with uet_scenario_free()), or NULL without memory.
 */
struct uet_scenario *uet_scenario_dup(const struct uet_scenario *scn);

/**
 * uet_scenario_write() - write @scn as a scenario file that
 * uet_scenario_parse() reads back to the same scenario: every setting
 * explicit, times in ps, rates in bps, sizes in bytes.
 * @scn: the scenario.
 * @f: the stream.
 *
 * Return: 0, -EIO.
 */
int uet_scenario_write(const struct uet_scenario *scn, FILE *f);

/**
 * uet_scenario_where() - where key @key was in @scn's file, for a message:
 * "file:line:col: key" if the file set it, "file: key" otherwise.
 * @scn: the scenario.
 * @key: a dotted key ("nic.NDStatsReportInterval", "topology.link_delay",
 *       "failures[1]").
 * @buf: the text, @len bytes.
 *
 * Return: @buf.
 */
const char *uet_scenario_where(const struct uet_scenario *scn, const char *key, char *buf,
			       size_t len);

/* Packet kinds and codepoints, as the records name them. */
enum uet_pkt_kind {
	UET_PKT_DATA = 0,
	UET_PKT_ACK,
	UET_PKT_NACK,
	UET_PKT_PROBE,
	UET_PKT_PROBE_ACK,
	UET_PKT_CREDIT_REQ,
	UET_PKT_CREDIT,
	UET_PKT_RAW,          /* a raw (UC-like) queue pair's packet */
	UET_PKT_CNP,          /* congestion notification, receiver to sender (DCQCN) */
	UET_PKT_KIND_COUNT,
};

/* A packet's codepoint: its role (uet_dscp_value() gives the DSCP value it carries). */
enum uet_dscp {
	UET_DSCP_NO_TRIM = 0,
	UET_DSCP_TRIMMABLE,
	UET_DSCP_TRIMMABLE_RETX,
	UET_DSCP_CONTROL,
	UET_DSCP_TRIMMED,
	UET_DSCP_TRIMMED_LAST_HOP,
	UET_DSCP_COUNT,
};

/*
 * The DSCP value each codepoint carries. The UET NIC document names the
 * roles, not their values; pcm's put the three data codepoints in 0..7,
 * the two trimmed ones in 8..15 and control (ACKs, NACKs, probes, credit,
 * CNPs) in 16..23, so that a switch without the UET policy, which takes
 * the traffic class from the DSCP value divided by 8 as the document says,
 * gives them the classes the UET policy does: TC0, TC1 and TC2.
 */
static inline unsigned uet_dscp_value(enum uet_dscp d)
{
	static const unsigned char value[UET_DSCP_COUNT] = {
		[UET_DSCP_NO_TRIM] = 0,
		[UET_DSCP_TRIMMABLE] = 1,
		[UET_DSCP_TRIMMABLE_RETX] = 2,
		[UET_DSCP_CONTROL] = 16,
		[UET_DSCP_TRIMMED] = 8,
		[UET_DSCP_TRIMMED_LAST_HOP] = 9,
	};

	return (unsigned)d < UET_DSCP_COUNT ? value[d] : 0;
}

enum uet_nack_code {
	UET_NACK_TRIMMED = 1,
	UET_NACK_TRIMMED_LAST_HOP = 2,
};

#define UET_PF_AR 0x01    /* ACK request */
#define UET_PF_RETX 0x02  /* retransmission */
#define UET_PF_CE 0x04    /* ECN congestion experienced */
#define UET_PF_EOM 0x08   /* last packet of its message */

/* What hooks and the monitor see of a packet. */
struct uet_pkt_view {
	uint64_t t_ps;
	uint32_t nic;             /* the NIC sending or receiving it, or the switch node */
	bool rx;                  /* received (true) or sent (false) */
	enum uet_pkt_kind kind;
	enum uet_dscp dscp;
	uint32_t flags;           /* UET_PF_* */
	uint32_t src, dst;        /* host indices */
	uint32_t pdc;             /* the sender's PDC (message) id */
	uint32_t psn;             /* DATA: PSN; ACK: PSN that requested it; NACK: trimmed PSN */
	int64_t cack;             /* ACK: highest in-order PSN received, -1 if none */
	uint32_t sack_base;
	uint64_t sack_bits;
	uint32_t service_ps;      /* ACK: reported receiver service time */
	uint32_t nack_code;
	uint32_t entropy;
	uint32_t wire_bytes;
	uint32_t payload_bytes;
};

enum uet_filter_verdict {
	UET_FILTER_PASS = 0,
	UET_FILTER_DROP,
	UET_FILTER_TRIM,
	UET_FILTER_MARK,          /* set ECN CE on a data packet (as if its queue were long) */
};

struct uet_hooks {
	void *ctx;
	/* every packet a NIC sends (at serialization start) or receives */
	void (*monitor)(void *ctx, const struct uet_pkt_view *p);
	/* every packet arriving at a switch: fault injection for tests */
	enum uet_filter_verdict (*at_switch)(void *ctx, const struct uet_pkt_view *p);
};

/* Where a run writes its records; NULL members are not written. */
struct uet_records {
	FILE *transport_stats; /* uet-transport-stats.csv */
	FILE *events;          /* uet-events.csv */
	FILE *monitor;         /* uet-monitor.csv */
	FILE *flows;           /* uet-flows.csv: per-flow cwnd/rate time series */
	FILE *queues;          /* uet-queues.csv: switch egress queues, sampled with the flows */
};

struct uet_msg_info {
	uint32_t id, src, dst;
	uint64_t bytes;
	uint64_t post_ps;
	uint64_t tx_done_ps;      /* last packet first sent; 0 if not yet */
	uint64_t rx_done_ps;      /* receiver: last byte with no gap */
	uint64_t done_ps;         /* sender: last ACK (the FCT end) */
	uint64_t delivered_bytes; /* receiver: payload written to host memory, each byte once */
	uint32_t policy;
};

struct uet_results {
	uint32_t hosts, flows, completed;
	uint64_t sim_time_ps;     /* last completion, or the stop time */
	double fct_min_us, fct_p50_us, fct_p99_us, fct_max_us;
	double jain;              /* Jain's index of per-flow goodput (bytes / FCT) */
	double goodput_gbps;      /* delivered payload over sim time */
	uint64_t data_packets;    /* data packets put on the wire, retransmissions included */
	uint64_t retransmits, nacks, trims, drops, timeouts, ecn_marks;
	uint64_t acks, probes, events, handler_calls, handler_errors;
	uint64_t bytes_delivered, dup_packets;
};

struct uet_sim;

/**
 * uet_sim_create() - build the fabric and NICs of @scn.
 * @scn: the scenario; it must outlive the sim.
 * @pkgs: one package per scenario policy (pkgs[i] for scn->policies[i]); a
 *        NULL entry runs a fixed window of InitialCwnd (a NULL LB: none).
 * @seed: the run's seed (usually scn->seed).
 * @out: the sim.
 * @diag: what is wrong with the scenario or a package, on failure.
 *
 * A group runs its policy's package and, with scn->has_lb, the LB package
 * beside it: each has its own record, both get the group's ACKs, NACKs and
 * timeouts, and each control is enforced from the one package that drives
 * it. Controls with no package keep the NIC's defaults (InitialCwnd, line
 * rate, oblivious spraying).
 *
 * Return: 0, -EINVAL (inconsistent scenario; an LB whose controls overlap a
 * policy's, named in @diag with the control; an LB driving receiver credit;
 * an LB used as a group's policy), -ENOTSUP (a package needs what the "uet"
 * target lacks), -ENOMEM.
 */
int uet_sim_create(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		   uint64_t seed, struct uet_sim **out, struct pcm_diag *diag);

/**
 * uet_sim_destroy() - free a sim and everything it holds.
 * @sim: the sim, or NULL.
 */
void uet_sim_destroy(struct uet_sim *sim);

/**
 * uet_sim_post() - post a message, before uet_sim_run().
 * @sim: the sim.
 * @src: the sending host.
 * @dst: the receiving host (not @src).
 * @bytes: the message size (0 sends one empty packet).
 * @at_ps: when the host rings the doorbell.
 * @policy: index into the scenario's policies (not the LB's), or -1 for the
 *          rules.
 *
 * Return: the message id (>= 0), -EINVAL (bad hosts or policy), -EBUSY
 * (the run has started, or failed to), -ENOMEM.
 */
int uet_sim_post(struct uet_sim *sim, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t at_ps,
		 int policy);

/**
 * uet_sim_set_hooks() - observe every packet a NIC sends or receives, and
 * decide the fate of every packet reaching a switch (tests).
 * @sim: the sim.
 * @hooks: the callbacks (copied); NULL members are not called.
 */
void uet_sim_set_hooks(struct uet_sim *sim, const struct uet_hooks *hooks);

/**
 * uet_sim_set_checks() - check the NIC's PSN and SACK invariants at every
 * ACK and data packet (a sender never sees an ACK for a PSN it did not send,
 * a receiver's cumulative ACK and bitmap agree with what arrived, a message
 * completes with every byte, ...); failures are reported by uet_sim_audit().
 * @sim: the sim.
 * @on: check or not (the default).
 */
void uet_sim_set_checks(struct uet_sim *sim, bool on);

/** enum uet_prefetch - whether a run prefetches in stages ahead of its events. */
enum uet_prefetch {
	UET_PREFETCH_AUTO = 0, /* on for fabrics of 1,024 hosts or more (the default) */
	UET_PREFETCH_ON,
	UET_PREFETCH_OFF,
};

/**
 * uet_sim_set_prefetch() - choose whether the run fetches into the cache,
 * a few events ahead, what each event's handler will touch (a switch's
 * egress port, a port's next packet, a NIC and its PDC). It changes no
 * result, only the speed: it pays where the fabric's state outgrows the
 * caches, and costs a few instructions per event where it does not.
 * @sim: the sim, before uet_sim_start().
 * @mode: UET_PREFETCH_*.
 */
void uet_sim_set_prefetch(struct uet_sim *sim, enum uet_prefetch mode);

/**
 * uet_sim_set_records() - write the records to these streams (before the run).
 * The library writes CSV rows and never opens, flushes or closes the streams.
 * @sim: the sim.
 * @rec: the streams (copied); NULL members are not written.
 */
void uet_sim_set_records(struct uet_sim *sim, const struct uet_records *rec);

/**
 * uet_sim_start() - start the run: the packages' shells, the messages' PDC
 * table, the traffic, failure and record events. uet_sim_run() and
 * uet_sim_run_until() start it themselves if it has not started; a start
 * happens once, and its result is kept.
 * @sim: the sim.
 * @diag: why the start failed (the same on every call after); may be NULL.
 *
 * Return: 0 (started now or before), -ENOMEM, -ENOSPC (more concurrent
 * groups than shell records), or a package shell's error, the same on every
 * call after a failure.
 */
int uet_sim_start(struct uet_sim *sim, struct pcm_diag *diag);

/**
 * uet_sim_run() - run until every message has completed or @stop_ps passes.
 * @sim: the sim.
 * @stop_ps: the simulated time to give up at.
 *
 * Return: 0 when every message completed (and every raw packet arrived or was
 * dropped), -ETIMEDOUT at the stop time, -EDEADLK when nothing is left to
 * happen but messages are open, -ENOMEM, or uet_sim_start()'s error (whose
 * diagnostic it gives).
 */
int uet_sim_run(struct uet_sim *sim, uint64_t stop_ps);

/**
 * uet_sim_audit() - after a run that completed every message, let what is
 * still moving finish (packets in flight, timers, late duplicates), then check
 * that nothing is held: no PDC or group alive, every egress-pool, prefetch and
 * receive-pool reservation released, no byte in flight or waiting, no packet
 * queued or allocated, no event pending.
 * @sim: the sim, after uet_sim_run() returned 0.
 * @diag: what was left, on failure.
 *
 * Return: 0, -EFAULT (something leaked, named in @diag), -EBUSY (messages
 * still open), -ETIMEDOUT (events kept coming for a simulated second).
 */
int uet_sim_audit(struct uet_sim *sim, struct pcm_diag *diag);

/**
 * uet_sim_results() - summarize the run so far.
 * @sim: the sim.
 * @r: the summary: FCT percentiles over completed messages, Jain's index of
 *     their goodput, and the NICs' and switches' counters.
 */
void uet_sim_results(const struct uet_sim *sim, struct uet_results *r);

/**
 * uet_sim_warnings() - settings of the scenario that run but are likely not
 * what was meant (a derived switch queue of a packet or two, ...), one per
 * line as "file:line:col: key: what", or "" if none.
 * @sim: the sim.
 *
 * Return: a string owned by the sim.
 */
const char *uet_sim_warnings(const struct uet_sim *sim);

/**
 * uet_sim_unloaded_rtt_ps() - the unloaded round trip of the fabric's
 * longest path: propagation both ways, and a full packet and an ACK
 * serialized per hop.
 * @sim: the sim.
 *
 * Return: ps.
 */
uint64_t uet_sim_unloaded_rtt_ps(const struct uet_sim *sim);

/**
 * uet_sim_n_msgs() - the number of messages posted (by the scenario or
 * uet_sim_post()).
 * @sim: the sim.
 *
 * Return: the count; message ids are 0 .. count - 1.
 */
uint32_t uet_sim_n_msgs(const struct uet_sim *sim);

/**
 * uet_sim_msg() - one message's times.
 * @sim: the sim.
 * @id: the message id.
 *
 * Return: the message, or NULL for an unknown id.
 */
const struct uet_msg_info *uet_sim_msg(const struct uet_sim *sim, uint32_t id);

/**
 * uet_sim_n_hosts() - the number of hosts (NICs) of the topology.
 * @sim: the sim.
 *
 * Return: the count; hosts are 0 .. count - 1.
 */
uint32_t uet_sim_n_hosts(const struct uet_sim *sim);

/**
 * uet_sim_now() - the simulated time.
 * @sim: the sim.
 *
 * Return: ps since the start of the run.
 */
uint64_t uet_sim_now(const struct uet_sim *sim);

/*
 * Raw UC-like queue pairs, for the softnic datapath. A message posted on a raw
 * QP waits in the QP's send queue and is cut into RdmaDataMSS packets; the
 * sending NIC serves its QPs round robin, one packet per turn. A data QP's
 * packet reserves its wire bytes in the NIC's egress pool (EgressBufferSize,
 * shared with the NIC's own traffic) until its serialization ends, so the
 * NIC holds at most that much and the rest waits in host memory; a QP with
 * a rate is paced by the NIC at that rate. Packets are fetched over PCIe and
 * queued on the NIC's port. A control QP's packets travel in the control
 * class (no pool reservation, never trimmed). There is no window, no ACK and
 * no retransmission. Every packet carries the QP's entropy, so a QP follows
 * one path and stays in order. The receiving NIC delivers a message whole
 * when all its packets arrived in PSN order, saying whether any was
 * CE-marked; a trimmed packet or a PSN gap drops it whole, as on UC. A
 * message whose last packets are lost is never reported: the transport
 * above times it out, as it must on UC.
 */
struct uet_raw_ops {
	void *ctx;
	/* a whole message arrived; @ce: one of its packets was CE-marked */
	void (*delivered)(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps, bool ce);
	void (*dropped)(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps);
	/* the message's last packet left the send queue for PCIe (may not post) */
	void (*sent)(void *ctx, uint32_t qp, uint64_t cookie, uint64_t t_ps);
};

struct uet_raw_qp_attr {
	uint16_t entropy;  /* the UDP source port of every packet: the QP's one path */
	bool control;      /* control class: small messages, no egress-pool reservation */
	uint64_t rate_bps; /* NIC pacing of the QP's packets (wire bytes); 0: none */
};

/**
 * uet_sim_set_raw_ops() - where raw queue pairs report delivered and dropped
 * messages. A delivered or dropped callback may post more raw messages.
 * @sim: the sim.
 * @ops: the callbacks (copied); NULL members are not called.
 */
void uet_sim_set_raw_ops(struct uet_sim *sim, const struct uet_raw_ops *ops);

/**
 * uet_sim_raw_qp() - a raw data queue pair from host @src to host @dst whose
 * packets carry @entropy, unpaced.
 * @sim: the sim.
 * @src: the sending host.
 * @dst: the receiving host.
 * @entropy: the UDP source port of every packet: the QP's one path.
 *
 * Return: the QP id (>= 0), -EINVAL, -ENOMEM.
 */
int uet_sim_raw_qp(struct uet_sim *sim, uint32_t src, uint32_t dst, uint16_t entropy);

/**
 * uet_sim_raw_qp_create() - a raw queue pair from host @src to host @dst.
 * @sim: the sim.
 * @src: the sending host.
 * @dst: the receiving host.
 * @attr: entropy, control class, pacing rate.
 *
 * Return: the QP id (>= 0), -EINVAL, -ENOMEM.
 */
int uet_sim_raw_qp_create(struct uet_sim *sim, uint32_t src, uint32_t dst,
			  const struct uet_raw_qp_attr *attr);

/**
 * uet_sim_raw_qp_set_rate() - pace raw QP @qp's packets at @rate_bps from now on (0: unpaced).
 *
 * Return: 0, -EINVAL (no such QP).
 */
int uet_sim_raw_qp_set_rate(struct uet_sim *sim, uint32_t qp, uint64_t rate_bps);

/**
 * uet_sim_raw_post() - send a message on a raw queue pair now (before the
 * run: at time 0; from a callback or between uet_sim_run_until() calls: at
 * that moment).
 * @sim: the sim.
 * @qp: from uet_sim_raw_qp().
 * @bytes: the message size (0 sends one empty packet).
 * @cookie: comes back in the receiver's callback.
 *
 * Return: 0, -EINVAL (no such QP, too large), -ENOMEM.
 */
int uet_sim_raw_post(struct uet_sim *sim, uint32_t qp, uint64_t bytes, uint64_t cookie);

/**
 * uet_sim_run_until() - serve every event at or before @t_ps (starting the
 * run first if it has not started), for a driver that interleaves its own
 * work (softnic's engines) with the emulation.
 * @sim: the sim.
 * @t_ps: the time to run to.
 *
 * Return: 0, -ENOMEM, or uet_sim_start()'s error (whose diagnostic it gives).
 */
int uet_sim_run_until(struct uet_sim *sim, uint64_t t_ps);

/**
 * uet_sim_next_event_ps() - the time of the next pending event.
 *
 * Return: ps, or UINT64_MAX when nothing is pending.
 */
uint64_t uet_sim_next_event_ps(struct uet_sim *sim);

/**
 * uet_pkt_kind_name() - a packet kind as the records spell it ("data", "ack", ...).
 * @k: the kind.
 *
 * Return: a static string, "?" if unknown.
 */
const char *uet_pkt_kind_name(enum uet_pkt_kind k);

/**
 * uet_dscp_name() - a codepoint as the records spell it ("trimmable_retx", ...).
 * @d: the codepoint.
 *
 * Return: a static string, "?" if unknown.
 */
const char *uet_dscp_name(enum uet_dscp d);

#endif /* PCM_UET_H */
