// SPDX-License-Identifier: MIT
/*
 * stats.c - what the snapshot of pcmd's counters adds to them, its stats
 * file line, a closed flow's row for the records file, and the goodput.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "pcm_text.h"
#include "pcmd_metrics.h"
#include "stats.h"

void pcmd_stats_fill(const struct pcmd_output *o, uint64_t uptime_ns, struct pcmd_rep_stats *s)
{
	s->uptime_ns = uptime_ns;
	s->records_dropped_lines = o->records.health.dropped_lines;
	s->stats_dropped_lines = o->stats.health.dropped_lines;
	s->output_write_errors =
	    o->records.health.errors + o->stats.health.errors + o->metrics.health.errors;
}

void pcmd_stats_json_line(const struct pcmd_rep_stats *s, uint64_t now_ns, uint64_t unix_ns,
			  char *buf, size_t len)
{
	int n = snprintf(buf, len, "{\"now_ns\":%" PRIu64 ",\"unix_ns\":%" PRIu64 ",", now_ns,
			 unix_ns);
	size_t at = n > 0 && (size_t)n < len ? (size_t)n : len;

	at += pcmd_metrics_json(s, buf + at, len - at);
	if (at + 3 <= len)
		memcpy(buf + at, "}\n", 3);
	else if (len)
		buf[0] = '\0'; /* never a cut line */
}

void pcmd_stats_record_line(const struct pcmd_flow_record *r, char *buf, size_t len)
{
	char uid[PCMD_FLOW_UID_MAX], peer[PCM_TEXT_CSV_MAX(PCMD_ADDR_MAX)],
	    policy[PCM_TEXT_CSV_MAX(PCMD_POLICY_MAX)], lb[PCM_TEXT_CSV_MAX(PCMD_POLICY_MAX)],
	    mode[PCM_TEXT_CSV_MAX(PCMD_POLICY_MAX)];
	int n;

	pcmd_flow_uid(uid, r->run_id, r->flow_id);
	pcm_text_csv(peer, sizeof(peer), r->peer);
	pcm_text_csv(policy, sizeof(policy), r->policy);
	pcm_text_csv(lb, sizeof(lb), r->lb_policy);
	pcm_text_csv(mode, sizeof(mode), r->mode);
	n = snprintf(buf, len,
		     "%s,%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%s,%s,%s,%s,%" PRIu64 ",%" PRIu64
		     ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
		     uid, r->client_id, r->pid, r->uid, peer, policy, lb, mode, r->opened_unix_ns,
		     r->opened_ns, r->duration_ns, r->tx_bytes, r->rx_bytes, r->tx_msgs, r->rx_msgs);
	if (n < 0 || (size_t)n >= len)
		buf[0] = '\0'; /* never a cut row */
}

void pcmd_stats_goodput_update(struct pcmd_counters *k, uint64_t rx_bytes, uint64_t now_ns)
{
	uint64_t dt = now_ns - k->goodput_last_ns;

	if (k->goodput_last_ns && dt > 0 && rx_bytes >= k->goodput_last_bytes)
		k->snap.goodput_bps =
		    (uint64_t)((double)(rx_bytes - k->goodput_last_bytes) * 8e9 / (double)dt);
	k->goodput_last_bytes = rx_bytes;
	k->goodput_last_ns = now_ns;
}
