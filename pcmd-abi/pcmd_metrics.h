/* SPDX-License-Identifier: MIT */
/*
 * pcmd_metrics.h - pcmd's counters by name, as every reader of them shows
 * them: one table of the STATS reply's fields (struct pcmd_rep_stats) with
 * their JSON keys, Prometheus names, types and help, and the two forms built
 * from it, so that pcmd and pcmctl never disagree on a name:
 *
 *   JSON       the members of an object, "key":value,... (pcmd's stats file,
 *              `pcmctl stats --json`);
 *   Prometheus the text exposition format 0.0.4 (`pcmctl stats --prometheus`,
 *              and the file pcmd writes for node_exporter's textfile
 *              collector, output.metrics_path). Every series but the per-flow
 *              ones has no labels, so their number is fixed; the per-flow
 *              series (pcmd_flow_*, labelled by flow, peer, policy and mode)
 *              are one per open flow and only written when asked for.
 *
 * Text from outside (a peer's address, a policy's name) is written in its
 * visible form and escaped as each format says (pcm_text.h). Both functions
 * work as snprintf: they write what fits in @buf, always NUL-terminated, and
 * return the length the whole text needs.
 */
#ifndef PCMD_METRICS_H
#define PCMD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "pcmd_proto.h"

/* How the Prometheus form reads a field (its JSON form is always the raw value). */
enum pcmd_metric_scale {
	PCMD_METRIC_RAW = 0,
	PCMD_METRIC_NS_AS_S,	  /* nanoseconds shown in seconds */
	PCMD_METRIC_BITS_AS_BYTES /* bit/s shown in bytes per second */
};

struct pcmd_metric {
	const char *key;  /* JSON key and text label: the field's name */
	const char *name; /* Prometheus metric */
	const char *type; /* "counter" or "gauge" */
	const char *help;
	size_t off; /* of the uint64_t in struct pcmd_rep_stats */
	uint32_t scale; /* enum pcmd_metric_scale */
};

extern const struct pcmd_metric pcmd_metrics[];
extern const size_t pcmd_metrics_count;

/* "RUN-N": a flow's id across restarts (pcmd's run id, then its flow id), 16 + 1 + 10 chars. */
#define PCMD_FLOW_UID_MAX 32

/**
 * pcmd_flow_uid() - a flow's id across restarts, as the records file, `pcmctl
 * flows --json` and the per-flow series write it: pcmd's run id in 16 hex
 * digits, a dash, the flow id pcmd gave it in that run (9f2c4e1a0b3d5f60-17).
 * @buf: output, PCMD_FLOW_UID_MAX bytes.
 * @run_id: pcmd's run id.
 * @flow_id: the flow's id in that run.
 */
void pcmd_flow_uid(char *buf, uint64_t run_id, uint32_t flow_id);

/* The value of field @m in @s. */
uint64_t pcmd_metric_value(const struct pcmd_rep_stats *s, const struct pcmd_metric *m);

/**
 * pcmd_metrics_json() - every field of @s as JSON object members, in the
 * table's order, without the braces: "uptime_ns":12,"clients":3,...
 * @s: the counters.
 * @buf: output.
 * @len: its size.
 *
 * Return: the length of the whole text.
 */
size_t pcmd_metrics_json(const struct pcmd_rep_stats *s, char *buf, size_t len);

/**
 * pcmd_metrics_prometheus() - @s in the Prometheus text exposition format,
 * then, when @flows is not NULL, the per-flow series of each of @flows.
 * @s: the counters.
 * @flows: the open flows, or NULL: none of the per-flow series.
 * @n_flows: their count.
 * @run_id: pcmd's run id (status), the first part of each flow's label.
 * @buf: output.
 * @len: its size.
 *
 * Return: the length of the whole text.
 */
size_t pcmd_metrics_prometheus(const struct pcmd_rep_stats *s, const struct pcmd_flow_info *flows,
			       uint32_t n_flows, uint64_t run_id, char *buf, size_t len);

#endif /* PCMD_METRICS_H */
