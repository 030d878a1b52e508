/* SPDX-License-Identifier: MIT */
/*
 * records.h - the CSV records of a run, row by row (records.c): the columns
 * of each record and how a row is written. Who writes which row, and when,
 * is the NIC's and the run's business.
 */
#ifndef PCM_UET_RECORDS_H
#define PCM_UET_RECORDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "uet.h"

/* Transport statistics, one row per NIC per NDStatsReportInterval. */
enum uet_stat {
	UET_ST_TX_DATA_PKTS,
	UET_ST_TX_DATA_BYTES,
	UET_ST_TX_RETX_PKTS,
	UET_ST_TX_ACKS,
	UET_ST_TX_NACKS,
	UET_ST_TX_PROBES,
	UET_ST_RX_DATA_PKTS,
	UET_ST_RX_DATA_BYTES,
	UET_ST_RX_DUP_PKTS,
	UET_ST_RX_OOO_PKTS,
	UET_ST_RX_TRIMMED,
	UET_ST_RX_POOL_DROPS,
	UET_ST_RX_ACKS,
	UET_ST_RX_NACKS,
	UET_ST_RX_ECN,
	UET_ST_TIMEOUTS,
	UET_ST_MSGS_POSTED,
	UET_ST_MSGS_SENT,
	UET_ST_MSGS_RECEIVED,
	UET_ST_HANDLER_CALLS,
	UET_ST_COUNT,
};

extern const char *const uet_stat_names[UET_ST_COUNT];

/* The header lines of the records present in @r (uet-transport-stats only with @stats, ...). */
void uet_rec_headers(const struct uet_records *r, bool stats, bool events, bool monitor);

/* One uet-transport-stats row; @st_last becomes @st (the next interval's base). */
void uet_rec_stats_row(FILE *f, uint64_t t_ps, uint32_t nic, uint32_t ip, const uint64_t *st,
		       uint64_t *st_last);

/* One uet-flows row. */
struct uet_flow_row {
	uint64_t t_ps;
	uint32_t nic, peer, group;
	const char *policy;
	uint64_t cwnd_bytes, rate, inflight_bytes, backlog_bytes, base_rtt_ps, last_rtt_ps, feeds;
};

void uet_rec_flow_row(FILE *f, const struct uet_flow_row *r);

/* One uet-queues row: a switch port's queued bytes per class at @t_ps. */
void uet_rec_queue_row(FILE *f, uint64_t t_ps, uint32_t port, const char *sw, uint32_t peer,
		       const uint64_t *qbytes, uint64_t limit);

/* One uet-events row. */
void uet_rec_event_row(FILE *f, uint64_t t_ps, uint32_t nic, uint32_t ip, const char *what,
		       uint32_t pdc, uint32_t peer_ip, uint64_t bytes);

/* One uet-monitor row. */
void uet_rec_monitor_row(FILE *f, const struct uet_pkt_view *v, uint32_t src_ip, uint32_t dst_ip);

#endif /* PCM_UET_RECORDS_H */
