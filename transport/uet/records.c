// SPDX-License-Identifier: MIT
/*
 * records.c - the CSV records of a run:
 * - uet-transport-stats: one row per NIC every NDStatsReportInterval, each
 *   counter twice: ivl_<name> for the interval and <name> since the start;
 * - uet-events: PDC created and closed, message posted, and the three
 *   completions (send_complete: the last packet first went on the wire;
 *   recv_complete: the receiver has every byte; msg_complete: the sender has
 *   the last ACK);
 * - uet-monitor: one row per packet a NIC sends or receives;
 * - uet-flows: per-flow (PDC group) cwnd, rate and in-flight bytes every
 *   sample interval;
 * - uet-queues: every switch port's queued bytes per class, each sample
 *   interval in which it changed (a step function: a port absent from a
 *   sample kept its last value).
 * Every value is an integer (times in ps), so equal runs give equal bytes.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "records.h"

const char *const uet_stat_names[UET_ST_COUNT] = {
	[UET_ST_TX_DATA_PKTS] = "tx_data_pkts",
	[UET_ST_TX_DATA_BYTES] = "tx_data_bytes",
	[UET_ST_TX_RETX_PKTS] = "tx_retx_pkts",
	[UET_ST_TX_ACKS] = "tx_acks",
	[UET_ST_TX_NACKS] = "tx_nacks",
	[UET_ST_TX_PROBES] = "tx_probes",
	[UET_ST_RX_DATA_PKTS] = "rx_data_pkts",
	[UET_ST_RX_DATA_BYTES] = "rx_data_bytes",
	[UET_ST_RX_DUP_PKTS] = "rx_dup_pkts",
	[UET_ST_RX_OOO_PKTS] = "rx_ooo_pkts",
	[UET_ST_RX_TRIMMED] = "rx_trimmed",
	[UET_ST_RX_POOL_DROPS] = "rx_pool_drops",
	[UET_ST_RX_ACKS] = "rx_acks",
	[UET_ST_RX_NACKS] = "rx_nacks",
	[UET_ST_RX_ECN] = "rx_ecn",
	[UET_ST_TIMEOUTS] = "timeouts",
	[UET_ST_MSGS_POSTED] = "msgs_posted",
	[UET_ST_MSGS_SENT] = "msgs_completed",
	[UET_ST_MSGS_RECEIVED] = "msgs_received",
	[UET_ST_HANDLER_CALLS] = "handler_calls",
};

static const char *const kind_names[UET_PKT_KIND_COUNT] = {
	"data", "ack", "nack", "probe", "probe_ack", "credit_req", "credit", "raw", "cnp",
};

static const char *const dscp_names[UET_DSCP_COUNT] = {
	"no_trim", "trimmable", "trimmable_retx", "control", "trimmed", "trimmed_last_hop",
};

const char *uet_pkt_kind_name(enum uet_pkt_kind k)
{
	return (unsigned)k < UET_PKT_KIND_COUNT ? kind_names[k] : "?";
}

const char *uet_dscp_name(enum uet_dscp d)
{
	return (unsigned)d < UET_DSCP_COUNT ? dscp_names[d] : "?";
}

static void put_ip(FILE *f, uint32_t ip)
{
	fprintf(f, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

void uet_rec_headers(const struct uet_records *r, bool stats, bool events, bool monitor)
{
	if (r->transport_stats && stats) {
		fputs("time_ps,nic,ip", r->transport_stats);
		for (int i = 0; i < UET_ST_COUNT; i++)
			fprintf(r->transport_stats, ",ivl_%s,%s", uet_stat_names[i],
				uet_stat_names[i]);
		fputc('\n', r->transport_stats);
	}
	if (r->events && events)
		fputs("time_ps,nic,ip,event,pdc,peer_ip,bytes\n", r->events);
	if (r->monitor && monitor)
		fputs("time_ps,nic,dir,kind,src_ip,dst_ip,pdc,psn,ar,retx,eom,ce,codepoint,"
		      "entropy,wire_bytes,payload_bytes,cack,sack_base,sack_bitmap,service_ps,"
		      "nack_code\n",
		      r->monitor);
	if (r->flows)
		fputs("time_ps,nic,peer,group,policy,cwnd_bytes,rate,inflight_bytes,"
		      "backlog_bytes,base_rtt_ps,last_rtt_ps,feeds\n",
		      r->flows);
	if (r->queues)
		fputs("time_ps,port,switch,peer,data_bytes,trimmed_bytes,control_bytes,limit_bytes\n",
		      r->queues);
}

void uet_rec_queue_row(FILE *f, uint64_t t_ps, uint32_t port, const char *sw, uint32_t peer,
		       const uint64_t *qbytes, uint64_t limit)
{
	fprintf(f, "%" PRIu64 ",%u,%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", t_ps,
		port, sw, peer, qbytes[0], qbytes[1], qbytes[2], limit);
}

void uet_rec_stats_row(FILE *f, uint64_t t_ps, uint32_t nic, uint32_t ip, const uint64_t *st,
		       uint64_t *st_last)
{
	fprintf(f, "%" PRIu64 ",%u,", t_ps, nic);
	put_ip(f, ip);
	for (int i = 0; i < UET_ST_COUNT; i++) {
		fprintf(f, ",%" PRIu64 ",%" PRIu64, st[i] - st_last[i], st[i]);
		st_last[i] = st[i];
	}
	fputc('\n', f);
}

void uet_rec_flow_row(FILE *f, const struct uet_flow_row *r)
{
	fprintf(f,
		"%" PRIu64 ",%u,%u,%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 "\n",
		r->t_ps, r->nic, r->peer, r->group, r->policy, r->cwnd_bytes, r->rate,
		r->inflight_bytes, r->backlog_bytes, r->base_rtt_ps, r->last_rtt_ps, r->feeds);
}

void uet_rec_event_row(FILE *f, uint64_t t_ps, uint32_t nic, uint32_t ip, const char *what,
		       uint32_t pdc, uint32_t peer_ip, uint64_t bytes)
{
	fprintf(f, "%" PRIu64 ",%u,", t_ps, nic);
	put_ip(f, ip);
	fprintf(f, ",%s,%u,", what, pdc);
	put_ip(f, peer_ip);
	fprintf(f, ",%" PRIu64 "\n", bytes);
}

void uet_rec_monitor_row(FILE *f, const struct uet_pkt_view *v, uint32_t src_ip, uint32_t dst_ip)
{
	bool ack = v->kind == UET_PKT_ACK;

	fprintf(f, "%" PRIu64 ",%u,%s,%s,", v->t_ps, v->nic, v->rx ? "rx" : "tx",
		uet_pkt_kind_name(v->kind));
	put_ip(f, src_ip);
	fputc(',', f);
	put_ip(f, dst_ip);
	fprintf(f, ",%u,%u,%u,%u,%u,%u,%s,%u,%u,%u,", v->pdc, v->psn, !!(v->flags & UET_PF_AR),
		!!(v->flags & UET_PF_RETX), !!(v->flags & UET_PF_EOM), !!(v->flags & UET_PF_CE),
		uet_dscp_name(v->dscp), v->entropy, v->wire_bytes, v->payload_bytes);
	if (ack)
		fprintf(f, "%" PRId64 ",%u,%016" PRIx64 ",%u,", v->cack, v->sack_base,
			v->sack_bits, v->service_ps);
	else
		fputs(",,,,", f);
	if (v->kind == UET_PKT_NACK)
		fprintf(f, "%u\n", v->nack_code);
	else
		fputc('\n', f);
}
