// SPDX-License-Identifier: MIT
/*
 * fabric.c - what happens to a packet between two nodes: switch egress
 * admission, per-class queues, serialization, links and their failures.
 *
 * A port serializes one packet at a time at its link's rate and hands it to
 * the node at the other end after the link's delay. Each port has one FIFO per
 * traffic class, served by strict priority (control > trimmed > data), with a
 * byte limit per class. Under the UET policy a switch takes the class from
 * the codepoint, and without it from the DSCP value divided by 8, which for
 * pcm's values (uet_dscp_value()) gives the same classes: ACKs and NACKs never
 * queue behind data. Under the UET policy a data packet that does not fit is
 * trimmed to its headers, re-marked (trimmed, or trimmed on the last hop when
 * the port faces a NIC) and offered to the trimmed class if its codepoint is
 * trimmable, and dropped otherwise; a trimmable retransmission may fill 1.5
 * times the limit. Data is ECN-marked with probability (q - kmin) / (kmax -
 * kmin) on the data queue's bytes at arrival. ECMP hashes the entropy value
 * with the flow's addresses and a per-switch salt over the equal-cost ports.
 *
 * Routing is closed-form per topology (no tables): up/down in a fat tree and
 * a leaf-spine, direct in the single-switch incast. A failed link loses every
 * packet whose serialization onto it starts while it is down, those queued on
 * it before the failure included (a packet already on the wire arrives); a
 * lossy link loses each such packet with its probability. With `reroute`
 * ECMP stops choosing a failed link.
 *
 * Hosts are reached only through the ops table (fabric.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

static uint32_t ecmp(const struct uet_fabric *f, const struct uet_switch *sw,
		     const struct uet_pkt *pkt, uint32_t first, uint32_t n)
{
	uint64_t h = uet_mix64(((uint64_t)pkt->entropy << 40) ^ ((uint64_t)pkt->src << 20) ^
			    pkt->dst ^ ((uint64_t)sw->salt << 56));
	uint32_t i = (uint32_t)(((h >> 32) * n) >> 32);

	if (!f->any_reroute)
		return first + i;
	for (uint32_t tries = 0; tries < n; tries++) {
		const struct uet_port *p = &f->ports[first + i];

		if (!(p->failed && p->reroute_away))
			return first + i;
		i = i + 1 == n ? 0 : i + 1;
	}
	return first + (uint32_t)(((h >> 32) * n) >> 32);
}

static inline uint32_t route(const struct uet_fabric *f, const struct uet_switch *sw,
		      const struct uet_pkt *pkt)
{
	const struct uet_topo_cfg *t = f->topo;
	uint32_t dst = pkt->dst;

	switch (sw->kind) {
	case UET_SW_STAR:
		return sw->port_base + dst;
	case UET_SW_LEAF: {
		uint32_t h = t->hosts_per_leaf;

		if (uet_div(&f->per_leaf, dst) == sw->idx)
			return sw->port_base + uet_mod(&f->per_leaf, dst);
		return ecmp(f, sw, pkt, sw->port_base + h, t->spines);
	}
	case UET_SW_SPINE:
		return sw->port_base + uet_div(&f->per_leaf, dst);
	case UET_SW_EDGE: {
		uint32_t half = f->half.d, edge = uet_div(&f->half, dst); /* pod * half + edge in pod */

		if (edge == sw->pod * half + sw->idx)
			return sw->port_base + uet_mod(&f->half, dst);
		return ecmp(f, sw, pkt, sw->port_base + half, half);
	}
	case UET_SW_AGG: {
		uint32_t half = f->half.d;

		if (uet_div(&f->per_pod, dst) == sw->pod)
			return sw->port_base + uet_mod(&f->half, uet_div(&f->half, dst));
		return ecmp(f, sw, pkt, sw->port_base + half, half);
	}
	case UET_SW_CORE:
	default:
		return sw->port_base + uet_div(&f->per_pod, dst);
	}
}

/* Is @pkt, starting serialization onto failed port @p, lost? */
static bool lost_on_failed_link(struct uet_fabric *f, const struct uet_port *p)
{
	return p->loss_ppm >= UET_LOSS_ALL_PPM || uet_rng_below(f->rng, UET_LOSS_ALL_PPM) < p->loss_ppm;
}

/*
 * Serialize @pkt onto @p's link. A failed link still takes the packet (the
 * port does not know) and loses it: a host's packet still tells its host
 * that serialization started, so that its reservations and timer go on.
 */
static void transmit(struct uet_fabric *f, struct uet_port *p, struct uet_pkt *pkt, uint64_t now)
{
	uint64_t end = now + uet_ser_ps(uet_port_ps_per_byte_q16(f, p), pkt->wire);

	p->busy_until = end;
	if (p->is_nic)
		f->ops->tx_start(f->ops_ctx, p->owner, pkt, end);
	if (__builtin_expect(p->failed, 0) && lost_on_failed_link(f, p)) {
		f->link_drops++;
		uet_pkt_free(f->pkts, pkt);
		return;
	}
	pkt->node = p->peer;
	uet_des_arm(f->des, pkt, end + f->link_delay_ps, UET_EV_ARRIVE);
}

static void drop(struct uet_fabric *f, struct uet_pkt *pkt)
{
	f->sw_drops++;
	uet_pkt_free(f->pkts, pkt);
}

static void trim(struct uet_port *p, struct uet_pkt *pkt)
{
	pkt->wire = UET_TRIMMED_WIRE_BYTES;
	/* a data packet's payload follows from its codepoint (uet_pkt_payload()) */
	if (pkt->kind != UET_PKT_DATA)
		pkt->raw_payload = 0;
	pkt->dscp = p->faces_nic ? UET_DSCP_TRIMMED_LAST_HOP : UET_DSCP_TRIMMED;
}

static inline unsigned classify(const struct uet_port *p, const struct uet_pkt *pkt)
{
	if (p->is_nic)
		return pkt->kind == UET_PKT_DATA ||
				       (pkt->kind == UET_PKT_RAW && pkt->dscp != UET_DSCP_CONTROL)
			       ? UET_TC_DATA
			       : UET_TC_CONTROL;
	if (!p->uet_policy) {
		/* as for any traffic: the DSCP value over 8, within the port's classes */
		unsigned tc = uet_dscp_value(pkt->dscp) / 8;

		return tc < UET_NTC ? tc : UET_NTC - 1;
	}
	switch (pkt->dscp) {
	case UET_DSCP_CONTROL:
		return UET_TC_CONTROL;
	case UET_DSCP_TRIMMED:
	case UET_DSCP_TRIMMED_LAST_HOP:
		return UET_TC_TRIMMED;
	default:
		return UET_TC_DATA;
	}
}

/* Switch egress admission. Return: the class to queue in, or -1 if dropped. */
static int admit(struct uet_fabric *f, struct uet_port *p, struct uet_pkt *pkt)
{
	unsigned tc = classify(p, pkt);

	if (tc == UET_TC_DATA) {
		uint64_t limit = f->q_limit, q = p->qbytes[UET_TC_DATA];

		if (pkt->dscp == UET_DSCP_TRIMMABLE_RETX && p->uet_policy)
			limit += limit / 2;
		if (q + pkt->wire > limit) {
			if (p->trimming && (pkt->dscp == UET_DSCP_TRIMMABLE ||
					    pkt->dscp == UET_DSCP_TRIMMABLE_RETX)) {
				trim(p, pkt);
				f->sw_trims++;
				tc = UET_TC_TRIMMED;
			} else {
				drop(f, pkt);
				return -1;
			}
		} else if (f->ecn_kmax && q > f->ecn_kmin) {
			uint32_t span = (uint32_t)(f->ecn_kmax - f->ecn_kmin);
			bool mark = q >= f->ecn_kmax;

			if (!mark)
				mark = uet_rng_below(f->rng, span) < q - f->ecn_kmin;
			if (mark) {
				pkt->flags |= UET_PF_CE;
				f->sw_marks++;
			}
		}
	}
	if (tc != UET_TC_DATA && p->qbytes[tc] + pkt->wire > f->q_limit) {
		drop(f, pkt);
		return -1;
	}
	return (int)tc;
}

void uet_port_send(struct uet_fabric *f, struct uet_port *p, struct uet_pkt *pkt)
{
	uint64_t now = f->des->now_ps;
	int tc;

	if (!p->free_pending && p->busy_until <= now) {
		transmit(f, p, pkt, now);
		return;
	}
	if (p->is_nic) {
		tc = (int)classify(p, pkt);
	} else {
		tc = admit(f, p, pkt);
		if (tc < 0)
			return;
	}
	pkt->next = NULL;
	if (p->qhead[tc])
		p->qtail[tc]->next = pkt;
	else
		p->qhead[tc] = pkt;
	p->qtail[tc] = pkt;
	p->qbytes[tc] += pkt->wire;
	if (!p->free_pending) {
		p->free_pending = true;
		uet_des_arm(f->des, p, p->busy_until, UET_EV_PORT_FREE);
	}
}

void uet_port_free_event(struct uet_fabric *f, struct uet_port *p)
{
	struct uet_pkt *pkt = NULL;
	int tc;

	p->free_pending = false;
	for (tc = UET_NTC - 1; tc >= 0; tc--) {
		pkt = p->qhead[tc];
		if (pkt)
			break;
	}
	if (!pkt)
		return;
	p->qhead[tc] = UET_PKT_NEXT(pkt);
	p->qbytes[tc] -= pkt->wire;
	transmit(f, p, pkt, f->des->now_ps);
	if (p->qhead[0] || p->qhead[1] || p->qhead[2]) {
		p->free_pending = true;
		uet_des_arm(f->des, p, p->busy_until, UET_EV_PORT_FREE);
	}
}

/* The egress port of @pkt at switch @sw: routed ahead by uet_fabric_warm_arrival(), or now. */
static inline uint32_t egress(const struct uet_fabric *f, const struct uet_switch *sw,
			      struct uet_pkt *pkt)
{
	uint32_t hint;

	if (pkt->kind == UET_PKT_DATA)
		return route(f, sw, pkt);
	hint = pkt->egress_hint;
	pkt->egress_hint = 0;
	return hint ? hint - 1 : route(f, sw, pkt);
}

static void switch_receive(struct uet_fabric *f, struct uet_pkt *pkt)
{
	const struct uet_switch *sw = &f->sw[pkt->node - f->n_hosts];
	struct uet_port *out;

	if (__builtin_expect(f->at_switch != NULL, 0)) {
		struct uet_pkt_view v;
		enum uet_filter_verdict verdict;

		uet_pkt_view(pkt, f->des->now_ps, pkt->node, true, &v);
		verdict = f->at_switch(f->at_switch_ctx, &v);
		if (verdict == UET_FILTER_DROP) {
			f->filter_drops++;
			uet_pkt_free(f->pkts, pkt);
			return;
		}
		out = &f->ports[egress(f, sw, pkt)];
		if (verdict == UET_FILTER_TRIM &&
		    (pkt->kind == UET_PKT_DATA || pkt->kind == UET_PKT_RAW) &&
		    !uet_dscp_is_trimmed(pkt->dscp)) {
			trim(out, pkt);
			f->sw_trims++;
		}
		if (verdict == UET_FILTER_MARK &&
		    (pkt->kind == UET_PKT_DATA || pkt->kind == UET_PKT_RAW) &&
		    !(pkt->flags & UET_PF_CE)) {
			pkt->flags |= UET_PF_CE;
			f->sw_marks++;
		}
		uet_port_send(f, out, pkt);
		return;
	}
	uet_port_send(f, &f->ports[egress(f, sw, pkt)], pkt);
}

void uet_fabric_arrive(struct uet_fabric *f, struct uet_pkt *pkt)
{
	if (pkt->node < f->n_hosts)
		f->ops->deliver(f->ops_ctx, pkt->node, pkt);
	else
		switch_receive(f, pkt);
}

void uet_fabric_warm_arrival(const struct uet_fabric *f, struct uet_pkt *pkt)
{
	uint32_t out;

	if (pkt->node < f->n_hosts)
		return;
	out = route(f, &f->sw[pkt->node - f->n_hosts], pkt);
	__builtin_prefetch(&f->ports[out]);
	/*
	 * without rerouting the route is a function of the packet alone: a
	 * whole packet keeps it (a data packet has no room)
	 */
	if (!f->any_reroute && pkt->kind != UET_PKT_DATA)
		pkt->egress_hint = out + 1;
}

void uet_port_warm(const struct uet_port *p)
{
	for (int tc = UET_NTC - 1; tc >= 0; tc--) {
		if (p->qhead[tc]) {
			__builtin_prefetch(p->qhead[tc]);
			return;
		}
	}
}

int uet_fabric_audit(const struct uet_fabric *f, struct pcm_diag *diag)
{
	for (uint32_t i = 0; i < f->n_ports; i++) {
		const struct uet_port *p = &f->ports[i];

		for (unsigned tc = 0; tc < UET_NTC; tc++) {
			if (p->qhead[tc] || p->qbytes[tc]) {
				uet_diag_set(diag, "port %u (node %u to %u): class %u holds %llu bytes",
					     i, p->owner, p->peer, tc,
					     (unsigned long long)p->qbytes[tc]);
				return -EFAULT;
			}
		}
		if (p->free_pending) {
			uet_diag_set(diag, "port %u (node %u to %u): a pending serializer event", i,
				     p->owner, p->peer);
			return -EFAULT;
		}
	}
	return 0;
}
