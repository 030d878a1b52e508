// SPDX-License-Identifier: MIT
/*
 * nack.c - trimmed packets and NACKs ("Trimmed packets and NACKs").
 *
 * Receiver: a trimmed packet (codepoint trimmed, or trimmed on the last hop)
 * releases its receive-pool space, delivers nothing, records nothing for the
 * SACK bitmap and draws no ACK; a NACK naming its PSN goes back at once, not
 * held behind waiting ACKs, with the code for where it was trimmed.
 *
 * Sender: a NACK for a packet still outstanding takes its bytes out of
 * flight, feeds the policy (NACK, DATA_NACKED, NACK_EV with bit 16 set for a
 * last-hop trim: the path feedback REPS reads) and queues the packet for
 * retransmission ahead of new data. A NACK for a packet no longer outstanding
 * (acknowledged, or queued by its timer) does nothing. A gap draws no NACK.
 */
#include "nic.h"

void uet_nack_send(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc,
		   struct uet_pkt *pkt)
{
	nic->st[UET_ST_RX_TRIMMED]++;
	pkt = uet_pkt_lengthen(ns->pkts, pkt);
	if (!pkt)
		return;
	pkt->nack_code = pkt->dscp == UET_DSCP_TRIMMED ? UET_NACK_TRIMMED
						       : UET_NACK_TRIMMED_LAST_HOP;
	pkt->kind = UET_PKT_NACK;
	pkt->src = nic->id;
	pkt->dst = pdc->nic;
	pkt->wire = UET_NACK_WIRE_BYTES;
	pkt->dscp = UET_DSCP_CONTROL;
	pkt->flags = 0;
	uet_port_send(ns->fab, nic->port, pkt);
}

void uet_nack_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = ns->pdcs[pkt->pdc];
	struct pcm_event ev;
	uint32_t payload;

	nic->st[UET_ST_RX_NACKS]++;
	if (!pdc || pkt->psn >= pdc->npkts || uet_tx_state(pdc, pkt->psn) != UET_TX_OUT)
		return;
	payload = uet_pdc_payload(ns, pdc, pkt->psn);
	uet_requeue(ns, pdc, pkt->psn, false);
	ev.valid = UET_BIT(PCM_SIG_NACK) | UET_BIT(PCM_SIG_DATA_NACKED) | UET_BIT(PCM_SIG_NACK_EV);
	ev.values[PCM_SIG_NACK] = 1;
	ev.values[PCM_SIG_DATA_NACKED] = payload;
	/* bit 16 tells a last-hop trim from one on the way (REPS recycles only the former) */
	ev.values[PCM_SIG_NACK_EV] = pkt->entropy |
				     (pkt->nack_code == UET_NACK_TRIMMED_LAST_HOP ? PCM_EV_NACK_LAST_HOP
										  : 0);
	uet_group_feed(ns, pdc->grp, &ev);
	uet_nic_kick(ns, pdc->grp);
}
