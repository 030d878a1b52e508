// SPDX-License-Identifier: MIT
/*
 * coalesce.c - receiver ACK coalescing, a pcm extension (off by default:
 * AckCoalesceBytes 0), for comparisons with simulators whose receivers
 * coalesce, such as uet-htsim's (UecSink). The UET NIC document's receiver
 * ACKs every packet that carries the ACK-request flag and has no
 * threshold or timer; at AckRequestEveryNthPacket 1 that is every packet.
 *
 * With AckCoalesceBytes B > 0, as htsim's sender and receiver do:
 *   - the sender flags (AR) a retransmission, the last packet of a
 *     message, and a packet after which the window (or the receiver
 *     credit) has no room for another full packet; AckRequestEveryNthPacket
 *     and AckRequestFirstPacket do not apply. A full window always asks,
 *     so no packet waits for an ACK that nothing will request (raising
 *     AckRequestEveryNthPacket instead stalls a full window until its
 *     timers fire);
 *   - the receiver ACKs a packet that is flagged, CE-marked, a duplicate,
 *     the PDC's first, or that brings the payload received since the PDC's
 *     last ACK to B or more; a flagged packet that arrives out of order is
 *     ACKed at once and again when the gap before it fills.
 */
#include "nic.h"

bool uet_coalesce_ar(const struct uet_nics *ns, const struct uet_group *g,
		     const struct uet_pdc *pdc, uint32_t psn, bool retx)
{
	uint64_t full = ns->cfg.rdma_data_mss + UET_NOMINAL_HDR_BYTES, window = g->cc.ctl.cwnd;

	if (retx || psn + 1 == pdc->npkts)
		return true;
	if (window < full)
		window = full;
	if (g->inflight + full > window)
		return true;
	return uet_group_credit_gated(g) &&
	       g->credit_used + ns->cfg.rdma_data_mss + UET_WIRE_HDR_BYTES > g->credit_granted;
}

bool uet_coalesce_ack_due(const struct uet_nics *ns, struct uet_rxpdc *rx,
			  const struct uet_pkt *pkt, bool first, bool dup)
{
	bool due = first || dup || (pkt->flags & (UET_PF_AR | UET_PF_CE));

	if (pkt->flags & UET_PF_AR)
		rx->ack_request = true;
	/* a flagged packet's gap has filled: every packet up to the highest arrived */
	if (rx->ack_request && rx->expected == rx->max_psn) {
		rx->ack_request = false;
		due = true;
	}
	rx->unacked_bytes += uet_pkt_payload(pkt);
	if (rx->unacked_bytes >= ns->cfg.ack_coalesce_bytes)
		due = true;
	if (due)
		rx->unacked_bytes = 0;
	return due;
}
