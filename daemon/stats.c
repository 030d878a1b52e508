// SPDX-License-Identifier: MIT
/*
 * stats.c - formatting pcmd's counters for its stats file and status line,
 * and a closed flow's row for the records file.
 */
#include <inttypes.h>
#include <stdio.h>

#include "stats.h"

void pcmd_stats_json_line(const struct pcmd_counters *k, const struct pcmd_totals *t,
			  uint64_t now_ns, uint64_t uptime_ns, char *buf, size_t len)
{
	snprintf(
	    buf, len,
	    "{\"now_ns\":%" PRIu64 ",\"uptime_ns\":%" PRIu64 ",\"clients\":%" PRIu64
	    ",\"flows\":%" PRIu64 ",\"listeners\":%" PRIu64 ",\"region_bytes\":%" PRIu64
	    ",\"tx_bytes\":%" PRIu64 ",\"rx_bytes\":%" PRIu64 ",\"tx_msgs\":%" PRIu64
	    ",\"rx_msgs\":%" PRIu64 ",\"goodput_bps\":%" PRIu64 ",\"clients_accepted\":%" PRIu64
	    ",\"clients_refused\":%" PRIu64 ",\"clients_reclaimed\":%" PRIu64
	    ",\"flows_opened\":%" PRIu64 ",\"descriptors_ok\":%" PRIu64
	    ",\"descriptors_rejected\":%" PRIu64 ",\"completions\":%" PRIu64
	    ",\"cq_full_waits\":%" PRIu64 ",\"control_requests\":%" PRIu64
	    ",\"control_errors\":%" PRIu64 ",\"policy_swaps\":%" PRIu64 ",\"reloads\":%" PRIu64
	    ",\"reload_failures\":%" PRIu64 "}\n",
	    now_ns, uptime_ns, t->clients, t->flows, t->listeners, t->region_bytes, t->tx_bytes,
	    t->rx_bytes, t->tx_msgs, t->rx_msgs, k->goodput_bps, k->clients_accepted,
	    k->clients_refused, k->clients_reclaimed, k->flows_opened, t->descriptors_ok,
	    t->descriptors_rejected, t->completions, t->cq_full_waits, k->control_requests,
	    k->control_errors, k->policy_swaps, k->reloads, k->reload_failures);
}

void pcmd_stats_record_line(const struct pcmd_flow_record *r, char *buf, size_t len)
{
	snprintf(buf, len,
		 "%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%s,%s,%s,%s,%" PRIu64 ",%" PRIu64
		 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
		 r->flow_id, r->client_id, r->pid, r->uid, r->peer, r->policy, r->lb_policy,
		 r->mode, r->opened_ns, r->duration_ns, r->tx_bytes, r->rx_bytes, r->tx_msgs,
		 r->rx_msgs);
}

void pcmd_stats_goodput_update(struct pcmd_counters *k, uint64_t rx_bytes, uint64_t now_ns)
{
	uint64_t dt = now_ns - k->goodput_last_ns;

	if (k->goodput_last_ns && dt > 0 && rx_bytes >= k->goodput_last_bytes)
		k->goodput_bps =
		    (uint64_t)((double)(rx_bytes - k->goodput_last_bytes) * 8e9 / (double)dt);
	k->goodput_last_bytes = rx_bytes;
	k->goodput_last_ns = now_ns;
}
