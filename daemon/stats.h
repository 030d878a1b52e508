/* SPDX-License-Identifier: MIT */
/*
 * stats.h - pcmd's counters, kept in the fields of the snapshot every reader
 * gets (struct pcmd_rep_stats: the STATS reply, the stats file, the metrics
 * file; their names are pcmd-abi/pcmd_metrics.h's), which adds the live
 * clients and flows to them (client.c), and the outputs: the stats file (one JSON line
 * per output.stats_interval_ms), the flow records (one CSV row per closed
 * flow, columns in PCMD_RECORDS_HEADER) and the metrics file (the Prometheus
 * text, replaced at each stats interval).
 */
#ifndef PCMD_STATS_H
#define PCMD_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "pcmd_proto.h"
#include "writer.h"

/*
 * The daemon's counters, and each user's (struct pcmd_tenant), counted
 * straight into the snapshot's fields (@snap), which the snapshot starts from
 * whole (pcmd_clients_totals()): the counters since start (clients_accepted,
 * flows_opened, control_requests, reloads, ...), goodput_bps, and what closed
 * flows and clients left of the totals (tx/rx bytes and messages, descriptors,
 * completions), so that the totals never go back. The rest (clients, flows,
 * listeners, ...) stays 0 here: the snapshot sums it over the live clients.
 */
struct pcmd_counters {
	struct pcmd_rep_stats snap; /* its st: 0 */
	/* Where the goodput's interval began. */
	uint64_t goodput_last_bytes;
	uint64_t goodput_last_ns;
};

struct pcmd_output {
	struct pcmd_writer stats;
	struct pcmd_writer records;
	struct pcmd_replacer metrics;
};

/*
 * The records file's columns. flow_id is pcmd_flow_uid()'s (unique across
 * restarts); opened_unix_ns is the wall clock (CLOCK_REALTIME) when the flow
 * opened, opened_ns the monotonic clock's (pcmd's own, for durations).
 */
#define PCMD_RECORDS_HEADER                                                                        \
	"flow_id,client_id,pid,uid,peer,policy,lb_policy,mode,opened_unix_ns,opened_ns,"          \
	"duration_ns,tx_bytes,rx_bytes,tx_msgs,rx_msgs\n"

/* Room for any row: four text fields of at most 64 bytes, each 4x in its CSV form, and numbers. */
#define PCMD_RECORD_LINE_MAX 2048

/* One closed flow, as its record row says it (PCMD_RECORDS_HEADER's columns, in order). */
struct pcmd_flow_record {
	uint64_t run_id;
	uint32_t flow_id, client_id, pid, uid;
	const char *peer, *policy, *lb_policy, *mode; /* "" when none */
	uint64_t opened_unix_ns, opened_ns, duration_ns;
	uint64_t tx_bytes, rx_bytes, tx_msgs, rx_msgs;
};

/**
 * pcmd_stats_record_line() - the records file's row for one closed flow: text
 * fields in their RFC 4180 form (pcm_text.h), so that no peer name can add a
 * column or a row.
 * @r: the flow.
 * @buf: output, newline-terminated.
 * @len: its size (PCMD_RECORD_LINE_MAX).
 */
void pcmd_stats_record_line(const struct pcmd_flow_record *r, char *buf, size_t len);

/**
 * pcmd_stats_fill() - complete a snapshot of the counters and totals
 * (pcmd_clients_totals()) with what neither holds.
 * @o: the outputs (their dropped lines and errors).
 * @uptime_ns: since start.
 * @s: the snapshot.
 */
void pcmd_stats_fill(const struct pcmd_output *o, uint64_t uptime_ns, struct pcmd_rep_stats *s);

/**
 * pcmd_stats_json_line() - the stats file's line for one interval: the
 * clocks, then every counter (pcmd_metrics_json()).
 * @s: the snapshot.
 * @now_ns: CLOCK_MONOTONIC.
 * @unix_ns: CLOCK_REALTIME.
 * @buf: output, newline-terminated.
 * @len: its size.
 */
void pcmd_stats_json_line(const struct pcmd_rep_stats *s, uint64_t now_ns, uint64_t unix_ns,
			  char *buf, size_t len);

/**
 * pcmd_stats_goodput_update() - goodput over the time since the last update
 * (received bytes of every flow, in bits per second).
 * @k: the counters.
 * @rx_bytes: total received bytes now.
 * @now_ns: CLOCK_MONOTONIC.
 */
void pcmd_stats_goodput_update(struct pcmd_counters *k, uint64_t rx_bytes, uint64_t now_ns);

#endif /* PCMD_STATS_H */
