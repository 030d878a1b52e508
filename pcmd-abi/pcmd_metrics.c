// SPDX-License-Identifier: MIT
/*
 * pcmd_metrics.c - the table of pcmd's counters and its JSON and Prometheus
 * forms (pcmd_metrics.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pcm_text.h"
#include "pcmd_metrics.h"

#define M(k, n, t, h, sc) {#k, n, t, h, offsetof(struct pcmd_rep_stats, k), sc}
#define C(k, n, h) M(k, n, "counter", h, PCMD_METRIC_RAW)
#define G(k, n, h) M(k, n, "gauge", h, PCMD_METRIC_RAW)

const struct pcmd_metric pcmd_metrics[] = {
    M(uptime_ns, "pcmd_uptime_seconds", "gauge", "Seconds since pcmd started.",
      PCMD_METRIC_NS_AS_S),
    G(clients, "pcmd_clients", "Applications connected now (pcmctl's queries are not counted)."),
    C(clients_accepted, "pcmd_clients_accepted_total", "Clients accepted since start."),
    C(clients_refused, "pcmd_clients_refused_total",
      "Clients refused (credentials, version, limits)."),
    C(clients_reclaimed, "pcmd_clients_reclaimed_total",
      "Clients whose flows and memory were reclaimed."),
    G(flows, "pcmd_flows", "Flows open now."),
    C(flows_opened, "pcmd_flows_opened_total", "Flows opened since start."),
    G(listeners, "pcmd_listeners", "Listening addresses now."),
    G(region_bytes, "pcmd_region_bytes", "Shared memory mapped for clients."),
    C(tx_bytes, "pcmd_tx_bytes_total", "Bytes sent by all flows."),
    C(rx_bytes, "pcmd_rx_bytes_total", "Bytes received by all flows."),
    C(tx_msgs, "pcmd_tx_messages_total", "Messages sent by all flows."),
    C(rx_msgs, "pcmd_rx_messages_total", "Messages received by all flows."),
    G(retransmits, "pcmd_retransmits", "Retransmitted chunks of the open flows."),
    C(descriptors_ok, "pcmd_descriptors_accepted_total",
      "Descriptors accepted from clients' rings."),
    C(descriptors_rejected, "pcmd_descriptors_rejected_total",
      "Descriptors rejected with an error completion."),
    C(completions, "pcmd_completions_total", "Completions written to clients' rings."),
    C(cq_full_waits, "pcmd_completion_ring_full_total",
      "Times a full completion ring held a client's intake back."),
    C(control_requests, "pcmd_control_requests_total", "Control requests handled."),
    C(control_errors, "pcmd_control_errors_total", "Control requests refused."),
    C(policy_swaps, "pcmd_policy_swaps_total", "Policy changes on live flows."),
    C(reloads, "pcmd_reloads_total", "Successful configuration reloads."),
    C(reload_failures, "pcmd_reload_failures_total", "Rejected configuration reloads."),
    M(goodput_bps, "pcmd_goodput_bytes_per_second", "gauge",
      "Received bytes per second over the last status interval.", PCMD_METRIC_BITS_AS_BYTES),
    C(records_dropped_lines, "pcmd_records_dropped_lines_total",
      "Flow records not written (a full or failing disk, or a full buffer)."),
    C(stats_dropped_lines, "pcmd_stats_dropped_lines_total",
      "Stats file lines not written (a full or failing disk, or a full buffer)."),
    C(output_write_errors, "pcmd_output_write_errors_total",
      "Failed writes of the stats, records and metrics files."),
};
const size_t pcmd_metrics_count = sizeof(pcmd_metrics) / sizeof(pcmd_metrics[0]);

#undef G
#undef C
#undef M

void pcmd_flow_uid(char *buf, uint64_t run_id, uint32_t flow_id)
{
	snprintf(buf, PCMD_FLOW_UID_MAX, "%016" PRIx64 "-%" PRIu32, run_id, flow_id);
}

uint64_t pcmd_metric_value(const struct pcmd_rep_stats *s, const struct pcmd_metric *m)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)s + m->off, sizeof(v));
	return v;
}

/* Text built as snprintf builds it: what fits, and the length of the whole. */
struct out {
	char *buf;
	size_t len, at;
};

static void add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->at < o->len ? o->buf + o->at : NULL, o->at < o->len ? o->len - o->at : 0,
		      fmt, ap);
	va_end(ap);
	if (n > 0)
		o->at += (size_t)n;
}

static struct out out_of(char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	return (struct out){buf, len, 0};
}

size_t pcmd_metrics_json(const struct pcmd_rep_stats *s, char *buf, size_t len)
{
	struct out o = out_of(buf, len);

	for (size_t i = 0; i < pcmd_metrics_count; i++)
		add(&o, "%s\"%s\":%" PRIu64, i ? "," : "", pcmd_metrics[i].key,
		    pcmd_metric_value(s, &pcmd_metrics[i]));
	return o.at;
}

static void add_sample(struct out *o, uint32_t scale, uint64_t v)
{
	if (scale == PCMD_METRIC_NS_AS_S)
		add(o, "%.9f\n", (double)v / 1e9);
	else if (scale == PCMD_METRIC_BITS_AS_BYTES)
		add(o, "%" PRIu64 "\n", v / 8);
	else
		add(o, "%" PRIu64 "\n", v);
}

/* A label value: the visible form (no control character), then \ and " escaped. */
static void add_label(struct out *o, const char *name, const char *value, bool last)
{
	char shown[PCM_TEXT_VISIBLE_MAX(PCMD_POLICY_MAX > PCMD_ADDR_MAX ? PCMD_POLICY_MAX
									 : PCMD_ADDR_MAX)];

	pcm_text_visible(shown, sizeof(shown), value);
	add(o, "%s=\"", name);
	for (const char *p = shown; *p; p++)
		add(o, *p == '\\' || *p == '"' ? "\\%c" : "%c", *p);
	add(o, "\"%s", last ? "" : ",");
}

/* The per-flow series: each figure the datapath measures, one series per flow. */
static void add_flows(struct out *o, const struct pcmd_flow_info *f, uint32_t n, uint64_t run_id)
{
	static const char *const modes[PCMD_SHELL_MODE_COUNT] = {"sync", "async_relaxed",
								  "async_locked", "async_bounded"};
	static const struct {
		const char *metric, *help, *type;
		uint32_t valid; /* 0: always */
		size_t off;
		uint32_t scale;
		bool has_inf;
		uint64_t inf; /* with has_inf: the value that means no limit, shown as +Inf */
	} per_flow[] = {
#define F(m, h, t, v, x, sc) {m, h, t, v, offsetof(struct pcmd_flow_info, x), sc, false, 0}
#define F_INF(m, h, t, v, x, sc, inf) {m, h, t, v, offsetof(struct pcmd_flow_info, x), sc, true, inf}
	    F("pcmd_flow_tx_bytes_total", "Bytes the flow sent.", "counter", 0, tx_bytes,
	      PCMD_METRIC_RAW),
	    F("pcmd_flow_rx_bytes_total", "Bytes the flow received.", "counter", 0, rx_bytes,
	      PCMD_METRIC_RAW),
	    F_INF("pcmd_flow_cwnd_bytes", "The flow's congestion window (+Inf: no window).", "gauge",
	      PCMD_FIELD_CWND, m.cwnd_bytes, PCMD_METRIC_RAW, PCMD_CWND_UNLIMITED),
	    F_INF("pcmd_flow_rate_bytes_per_second", "The flow's pacing rate (+Inf: not paced).",
	      "gauge", PCMD_FIELD_RATE, m.rate_bps, PCMD_METRIC_BITS_AS_BYTES, 0),
	    F("pcmd_flow_srtt_seconds", "The flow's smoothed RTT.", "gauge", PCMD_FIELD_RTT,
	      m.srtt_ns, PCMD_METRIC_NS_AS_S),
	    F("pcmd_flow_rttvar_seconds", "The flow's RTT variation.", "gauge", PCMD_FIELD_RTT,
	      m.rttvar_ns, PCMD_METRIC_NS_AS_S),
	    F("pcmd_flow_in_flight_bytes", "The flow's bytes sent and not yet acknowledged.",
	      "gauge", PCMD_FIELD_INFLIGHT, m.in_flight_bytes, PCMD_METRIC_RAW),
	    F("pcmd_flow_retransmits_total", "The flow's retransmitted chunks.", "counter",
	      PCMD_FIELD_RETRANSMITS, m.retransmits, PCMD_METRIC_RAW),
	    F("pcmd_flow_rto_total", "The flow's retransmission timeouts.", "counter",
	      PCMD_FIELD_RTOS, m.rtos, PCMD_METRIC_RAW),
#undef F_INF
#undef F
	};

	for (size_t m = 0; m < sizeof(per_flow) / sizeof(per_flow[0]); m++) {
		bool any = false;

		for (uint32_t i = 0; i < n; i++)
			any |= !per_flow[m].valid || (f[i].m.valid & per_flow[m].valid);
		if (!any)
			continue;
		add(o, "# HELP %s %s\n# TYPE %s %s\n", per_flow[m].metric, per_flow[m].help,
		    per_flow[m].metric, per_flow[m].type);
		for (uint32_t i = 0; i < n; i++) {
			char uid[PCMD_FLOW_UID_MAX];
			uint64_t v;

			if (per_flow[m].valid && !(f[i].m.valid & per_flow[m].valid))
				continue;
			memcpy(&v, (const uint8_t *)&f[i] + per_flow[m].off, sizeof(v));
			pcmd_flow_uid(uid, run_id, f[i].flow_id);
			add(o, "%s{", per_flow[m].metric);
			add_label(o, "flow", uid, false);
			add_label(o, "peer", f[i].peer, false);
			add_label(o, "policy", f[i].policy, false);
			add_label(o, "mode", f[i].mode < PCMD_SHELL_MODE_COUNT ? modes[f[i].mode] : "?",
				  true);
			add(o, "} ");
			if (per_flow[m].has_inf && v == per_flow[m].inf)
				add(o, "+Inf\n");
			else
				add_sample(o, per_flow[m].scale, v);
		}
	}
}

size_t pcmd_metrics_prometheus(const struct pcmd_rep_stats *s, const struct pcmd_flow_info *flows,
			       uint32_t n_flows, uint64_t run_id, char *buf, size_t len)
{
	struct out o = out_of(buf, len);

	for (size_t i = 0; i < pcmd_metrics_count; i++) {
		const struct pcmd_metric *m = &pcmd_metrics[i];

		add(&o, "# HELP %s %s\n# TYPE %s %s\n%s ", m->name, m->help, m->name, m->type,
		    m->name);
		add_sample(&o, m->scale, pcmd_metric_value(s, m));
	}
	if (flows)
		add_flows(&o, flows, n_flows, run_id);
	return o.at;
}
