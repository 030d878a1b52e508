// SPDX-License-Identifier: MIT
/*
 * wire.c - a packet starts serialization on the NIC's port ("Packets on the
 * wire"): the fabric calls this through its ops table.
 *
 * The port sends each frame at the link's rate; when its serialization ends,
 * the packet's egress reservation is released and a data packet's
 * retransmission timer starts. The first transmission of a message's last
 * packet is its send_complete.
 */
#include "nic.h"

static void count_tx(struct uet_nic *nic, const struct uet_pkt *pkt)
{
	switch (pkt->kind) {
	case UET_PKT_DATA:
		nic->st[UET_ST_TX_DATA_PKTS]++;
		nic->st[UET_ST_TX_DATA_BYTES] += uet_pkt_payload(pkt);
		if (pkt->flags & UET_PF_RETX)
			nic->st[UET_ST_TX_RETX_PKTS]++;
		break;
	case UET_PKT_ACK:
	case UET_PKT_PROBE_ACK:
		nic->st[UET_ST_TX_ACKS]++;
		break;
	case UET_PKT_NACK:
		nic->st[UET_ST_TX_NACKS]++;
		break;
	case UET_PKT_PROBE:
		nic->st[UET_ST_TX_PROBES]++;
		break;
	default:
		break;
	}
}

void uet_nic_tx_start(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt,
		      uint64_t end_ps)
{
	struct uet_pdc *pdc;
	struct uet_txpkt *t;

	if (ns->monitor_on)
		uet_nic_monitor(ns, pkt, nic->id, false);
	count_tx(nic, pkt);
	if (pkt->kind != UET_PKT_DATA)
		return;
	if (uet_bytepool_release_at(&nic->egress, ns->mem, end_ps, pkt->wire) < 0) {
		ns->oom = true;
		nic->egress.used -= pkt->wire;
	}
	if (nic->pool_blocked)
		uet_arm_pool_wake(ns, nic);
	pdc = ns->pdcs[pkt->pdc];
	if (!pdc)
		return;
	if (!uet_tx_kept(pdc, pkt->psn))
		return; /* a copy of a PSN acknowledged long ago */
	t = uet_tx(pdc, pkt->psn);
	t->tx_ps = uet_now(ns);
	/*
	 * Copies of one PSN leave in commit order, so the last copy serialized
	 * is the latest: its timer replaces any an older copy started (a queue
	 * entry whose deadline is not the packet's is stale).
	 */
	if (t->state == UET_TX_OUT)
		uet_rto_arm(ns, pdc, pkt->psn, pkt->retx_level,
			    end_ps + uet_rto_ps(&ns->cfg, pkt->retx_level));
	if (!pdc->tx_done_logged && pkt->psn + 1 == pdc->npkts) {
		pdc->tx_done_logged = true;
		pdc->msg->tx_done_ps = uet_now(ns);
		uet_nic_log(ns, nic->id, "send_complete", pdc->id, pdc->peer, pdc->msg->bytes);
	}
}
