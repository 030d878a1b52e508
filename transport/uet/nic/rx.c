// SPDX-License-Identifier: MIT
/*
 * rx.c - a packet arrives at the NIC ("Receiving a packet"); the fabric calls
 * this, through the run, for every packet but a raw queue pair's.
 *
 * A data packet takes this path:
 *   1. the receive pool, at the packet's IP size (4,184 B for a full packet,
 *      44 B for a trimmed one), or dropped if the pool cannot hold it;
 *   2. its PDC, whose receiving side its message's first admitted packet
 *      creates;
 *   3. a trimmed packet is NACKed and goes no further;
 *   4. a new packet's payload is written to host memory over PCIe as it
 *      arrives, in order or not (no reorder buffer); its pool space is held
 *      until the write is done; a duplicate's is released at once;
 *   5. an ACK-requesting packet is acknowledged (with AckCoalesceBytes, a
 *      pcm extension, the packets coalesce.c says).
 * The PDC tracks order: the next expected PSN advances past what already
 * arrived, a higher PSN is out of order (kept for the SACK bitmap), a lower
 * one a duplicate. When the message's last byte has arrived with no gap
 * before it, the receiver's completion (recv_complete).
 */
#include "nic.h"

/* A new packet: mark it, write it to host memory, advance the PDC's order. */
static void deliver(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc,
		    const struct uet_pkt *pkt, uint32_t ip_bytes)
{
	struct uet_rxpdc *rx = &pdc->rx;
	uint32_t psn = pkt->psn;
	uint32_t payload = uet_pkt_payload(pkt);
	uint64_t written;

	rx->bits[psn >> 6] |= (uint64_t)1 << (psn & 63);
	nic->st[UET_ST_RX_DATA_BYTES] += payload;
	pdc->msg->delivered_bytes += payload;
	written = uet_pcie_write(ns, nic, payload);
	nic->rx_pool.used += ip_bytes;
	UET_CHECK(ns, nic->rx_pool.used <= ns->cfg.rx_pool_bytes);
	if (uet_bytepool_release_at(&nic->rx_pool, ns->mem, written, ip_bytes) < 0) {
		ns->oom = true;
		nic->rx_pool.used -= ip_bytes;
	}
	if (psn == rx->expected) {
		while (rx->expected < pdc->npkts && uet_rx_has(rx, rx->expected))
			rx->expected++;
	} else {
		nic->st[UET_ST_RX_OOO_PKTS]++;
	}
	if (psn + 1 > rx->max_psn)
		rx->max_psn = psn + 1;
}

static void receive_data(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = ns->pdcs[pkt->pdc];
	bool trimmed = uet_dscp_is_trimmed(pkt->dscp);
	uint32_t ip_bytes =
		trimmed ? UET_TRIMMED_IP_BYTES : uet_pkt_payload(pkt) + UET_NOMINAL_HDR_BYTES;
	uint64_t hold;
	struct uet_rxpdc *rx;
	bool first, dup, ack;

	uet_bytepool_drain(&nic->rx_pool, uet_now(ns));
	if (nic->rx_pool.used + ip_bytes > ns->cfg.rx_pool_bytes) {
		nic->st[UET_ST_RX_POOL_DROPS]++;
		uet_pkt_free(ns->pkts, pkt);
		return;
	}
	if (!pdc || !uet_pdc_rx_open(ns, nic, pdc)) {
		/* the sender has completed and closed the PDC: a late duplicate */
		nic->st[UET_ST_RX_DUP_PKTS]++;
		uet_pkt_free(ns->pkts, pkt);
		return;
	}
	if (trimmed) {
		uet_nack_send(ns, nic, pdc, pkt);
		return;
	}
	rx = &pdc->rx;
	/* the ACK's hold: the bytes waiting in the pool plus this packet, at the PCIe rate */
	hold = uet_ser_ps(ns->pcie_ps_per_byte_q16, nic->rx_pool.used + ip_bytes);
	nic->st[UET_ST_RX_DATA_PKTS]++;
	UET_CHECK(ns, pkt->psn < pdc->npkts);
	first = !rx->max_psn;
	dup = pkt->psn >= pdc->npkts || uet_rx_has(rx, pkt->psn);
	if (!dup)
		deliver(ns, nic, pdc, pkt, ip_bytes);
	else
		nic->st[UET_ST_RX_DUP_PKTS]++;
	if (pkt->flags & UET_PF_CE) {
		rx->ce_pending++;
		if (ns->cnp_on)
			uet_cnp_marked(ns, nic, pdc);
	}
	if (!rx->done && rx->expected == pdc->npkts) {
		rx->done = true;
		UET_CHECK(ns, pdc->msg->delivered_bytes == pdc->msg->bytes);
		pdc->msg->rx_done_ps = uet_now(ns);
		nic->st[UET_ST_MSGS_RECEIVED]++;
		uet_nic_log(ns, nic->id, "recv_complete", pdc->id, pdc->nic, pdc->msg->bytes);
	}
	if (ns->cfg.ack_coalesce_bytes)
		ack = uet_coalesce_ack_due(ns, rx, pkt, first, dup);
	else
		ack = pkt->flags & UET_PF_AR;
	if (ack)
		uet_ack_send(ns, nic, pdc, pkt, hold);
	else
		uet_pkt_free(ns->pkts, pkt);
}

void uet_nic_warm_receive(const struct uet_nics *ns, const struct uet_nic *nic,
			  const struct uet_pkt *pkt, bool late)
{
	const struct uet_pdc *pdc;

	if (pkt->pdc >= ns->n_pdcs)
		return;
	if (!late) {
		__builtin_prefetch(nic);
		__builtin_prefetch(&nic->rx_pool);
		__builtin_prefetch(&ns->pdcs[pkt->pdc]);
		return;
	}
	pdc = ns->pdcs[pkt->pdc];
	if (!pdc)
		return;
	__builtin_prefetch(pdc);
	__builtin_prefetch(pkt->kind == UET_PKT_DATA ? (const void *)&pdc->rx : (const void *)&pdc->tx);
}

void uet_nic_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt)
{
	if (ns->monitor_on)
		uet_nic_monitor(ns, pkt, nic->id, true);
	switch (pkt->kind) {
	case UET_PKT_DATA:
		receive_data(ns, nic, pkt);
		return;
	case UET_PKT_ACK:
		uet_ack_receive(ns, nic, pkt);
		break;
	case UET_PKT_NACK:
		uet_nack_receive(ns, nic, pkt);
		break;
	case UET_PKT_PROBE:
		uet_probe_receive(ns, nic, pkt);
		return;
	case UET_PKT_PROBE_ACK:
		uet_probe_ack_receive(ns, pkt);
		break;
	case UET_PKT_CREDIT_REQ:
		uet_credit_request_receive(ns, nic, pkt);
		break;
	case UET_PKT_CREDIT: {
		struct uet_group *g = uet_credit_grant_receive(ns, nic, pkt);

		if (g)
			uet_nic_kick(ns, g);
		break;
	}
	case UET_PKT_CNP:
		uet_cnp_receive(ns, nic, pkt);
		break;
	default:
		break;
	}
	uet_pkt_free(ns->pkts, pkt);
}
