// SPDX-License-Identifier: MIT
/*
 * fabric.c - links, switch ports and topologies of the UET emulation.
 *
 * A port serializes one packet at a time at its link's rate and hands it to
 * the node at the other end after the link's delay. Each port has one FIFO per
 * traffic class, served by strict priority (control > trimmed > data), with a
 * byte limit per class. Under the UET policy a switch takes the class from
 * the codepoint; a data packet that does not fit is trimmed to its headers,
 * re-marked (trimmed, or trimmed on the last hop when the port faces a NIC)
 * and offered to the trimmed class if its codepoint is trimmable, and dropped
 * otherwise; a trimmable retransmission may fill 1.5 times the limit. Data is
 * ECN-marked with probability (q - kmin) / (kmax - kmin) on the data queue's
 * bytes at arrival. ECMP hashes the entropy value with the flow's addresses
 * and a per-switch salt over the equal-cost ports.
 *
 * Routing is closed-form per topology (no tables): up/down in a fat tree and
 * a leaf-spine, direct in the single-switch incast. A failed link loses every
 * packet whose serialization onto it starts while it is down, those queued on
 * it before the failure included (a packet already on the wire arrives); with
 * `reroute` ECMP stops choosing it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uet_int.h"

static inline uint64_t fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

static uint32_t ecmp(const struct uet_sim *s, const struct uet_switch *sw,
		     const struct uet_pkt *pkt, uint32_t first, uint32_t n)
{
	uint64_t h = fmix64(((uint64_t)pkt->entropy << 40) ^ ((uint64_t)pkt->src << 20) ^
			    pkt->dst ^ ((uint64_t)sw->salt << 56));
	uint32_t i = (uint32_t)(((h >> 32) * n) >> 32);

	if (!s->any_reroute)
		return first + i;
	for (uint32_t tries = 0; tries < n; tries++) {
		const struct uet_port *p = &s->ports[first + i];

		if (!(p->failed && p->reroute_away))
			return first + i;
		i = i + 1 == n ? 0 : i + 1;
	}
	return first + (uint32_t)(((h >> 32) * n) >> 32);
}

static uint32_t route(const struct uet_sim *s, const struct uet_switch *sw,
		      const struct uet_pkt *pkt)
{
	const struct uet_topo_cfg *t = &s->scn->topo;
	uint32_t dst = pkt->dst;

	switch (sw->kind) {
	case UET_SW_STAR:
		return sw->port_base + dst;
	case UET_SW_LEAF: {
		uint32_t h = t->hosts_per_leaf;

		if (dst / h == sw->idx)
			return sw->port_base + dst % h;
		return ecmp(s, sw, pkt, sw->port_base + h, t->spines);
	}
	case UET_SW_SPINE:
		return sw->port_base + dst / t->hosts_per_leaf;
	case UET_SW_EDGE: {
		uint32_t half = t->k / 2, pod = dst / (half * half), edge = (dst / half) % half;

		if (pod == sw->pod && edge == sw->idx)
			return sw->port_base + dst % half;
		return ecmp(s, sw, pkt, sw->port_base + half, half);
	}
	case UET_SW_AGG: {
		uint32_t half = t->k / 2, pod = dst / (half * half), edge = (dst / half) % half;

		if (pod == sw->pod)
			return sw->port_base + edge;
		return ecmp(s, sw, pkt, sw->port_base + half, half);
	}
	case UET_SW_CORE:
	default:
		return sw->port_base + dst / ((t->k / 2) * (t->k / 2));
	}
}

/*
 * Serialize @pkt onto @p's link. A failed link still takes the packet (the
 * port does not know), and loses it: a NIC's packet releases its egress
 * reservation and starts its timer as usual.
 */
static void transmit(struct uet_sim *s, struct uet_port *p, struct uet_pkt *pkt, uint64_t now)
{
	uint64_t end = now + uet_ser_ps(p->ps_per_byte_q16, pkt->wire);

	p->busy_until = end;
	p->tx_pkts++;
	p->tx_bytes += pkt->wire;
	if (p->is_nic)
		uet_nic_tx_start(s, &s->nics[p->owner], pkt, end);
	if (__builtin_expect(p->failed, 0)) {
		p->drops++;
		s->link_drops++;
		uet_pkt_free(s, pkt);
		return;
	}
	pkt->node = p->peer;
	uet_des_arm(&s->des, &pkt->ev, end + p->delay_ps, UET_EV_ARRIVE, pkt);
}

static void drop(struct uet_sim *s, struct uet_port *p, struct uet_pkt *pkt)
{
	p->drops++;
	s->sw_drops++;
	uet_pkt_free(s, pkt);
}

static void trim(struct uet_port *p, struct uet_pkt *pkt)
{
	pkt->wire = UET_TRIMMED_WIRE_BYTES;
	pkt->payload = 0;
	pkt->dscp = p->faces_nic ? UET_DSCP_TRIMMED_LAST_HOP : UET_DSCP_TRIMMED;
}

static inline unsigned classify(const struct uet_port *p, const struct uet_pkt *pkt)
{
	if (p->is_nic)
		return pkt->kind == UET_PKT_DATA ? UET_TC_DATA : UET_TC_CONTROL;
	if (!p->uet_policy)
		return UET_TC_DATA;
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
static int admit(struct uet_sim *s, struct uet_port *p, struct uet_pkt *pkt)
{
	unsigned tc = classify(p, pkt);

	if (tc == UET_TC_DATA) {
		uint64_t limit = p->limit, q = p->qbytes[UET_TC_DATA];

		if (pkt->dscp == UET_DSCP_TRIMMABLE_RETX && p->uet_policy)
			limit += limit / 2;
		if (q + pkt->wire > limit) {
			if (p->trimming && (pkt->dscp == UET_DSCP_TRIMMABLE ||
					    pkt->dscp == UET_DSCP_TRIMMABLE_RETX)) {
				trim(p, pkt);
				p->trims++;
				s->sw_trims++;
				tc = UET_TC_TRIMMED;
			} else {
				drop(s, p, pkt);
				return -1;
			}
		} else if (p->ecn_kmax && q > p->ecn_kmin) {
			uint32_t span = (uint32_t)(p->ecn_kmax - p->ecn_kmin);
			bool mark = q >= p->ecn_kmax;

			if (!mark)
				mark = uet_rng_below(&s->rng, span) < q - p->ecn_kmin;
			if (mark) {
				pkt->flags |= UET_PF_CE;
				p->marks++;
				s->sw_marks++;
			}
		}
	}
	if (tc != UET_TC_DATA && p->qbytes[tc] + pkt->wire > p->limit) {
		drop(s, p, pkt);
		return -1;
	}
	return (int)tc;
}

void uet_port_send(struct uet_sim *s, struct uet_port *p, struct uet_pkt *pkt)
{
	uint64_t now = s->des.now_ps;
	int tc;

	if (!p->free_pending && p->busy_until <= now) {
		transmit(s, p, pkt, now);
		return;
	}
	if (p->is_nic) {
		tc = (int)classify(p, pkt);
	} else {
		tc = admit(s, p, pkt);
		if (tc < 0)
			return;
	}
	pkt->ev.next = NULL;
	if (p->qtail[tc])
		p->qtail[tc]->ev.next = &pkt->ev;
	else
		p->qhead[tc] = pkt;
	p->qtail[tc] = pkt;
	p->qbytes[tc] += pkt->wire;
	if (p->qbytes[tc] > p->max_qbytes)
		p->max_qbytes = p->qbytes[tc];
	if (!p->free_pending) {
		p->free_pending = true;
		uet_des_arm(&s->des, &p->free_ev, p->busy_until, UET_EV_PORT_FREE, p);
	}
}

void uet_port_free_event(struct uet_sim *s, struct uet_port *p)
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
	if (!p->qhead[tc])
		p->qtail[tc] = NULL;
	p->qbytes[tc] -= pkt->wire;
	transmit(s, p, pkt, s->des.now_ps);
	if (p->qhead[0] || p->qhead[1] || p->qhead[2]) {
		p->free_pending = true;
		uet_des_arm(&s->des, &p->free_ev, p->busy_until, UET_EV_PORT_FREE, p);
	}
}

void uet_switch_receive(struct uet_sim *s, struct uet_pkt *pkt)
{
	const struct uet_switch *sw = &s->sw[pkt->node - s->n_hosts];
	struct uet_port *out;

	if (__builtin_expect(s->hooks.at_switch != NULL, 0)) {
		struct uet_pkt_view v;
		enum uet_filter_verdict verdict;

		uet_pkt_view(s, pkt, pkt->node, true, &v);
		verdict = s->hooks.at_switch(s->hooks.ctx, &v);
		if (verdict == UET_FILTER_DROP) {
			s->filter_drops++;
			uet_pkt_free(s, pkt);
			return;
		}
		out = &s->ports[route(s, sw, pkt)];
		if (verdict == UET_FILTER_TRIM &&
		    (pkt->kind == UET_PKT_DATA || pkt->kind == UET_PKT_RAW) &&
		    pkt->dscp != UET_DSCP_TRIMMED && pkt->dscp != UET_DSCP_TRIMMED_LAST_HOP) {
			trim(out, pkt);
			out->trims++;
			s->sw_trims++;
		}
		if (verdict == UET_FILTER_MARK && pkt->kind == UET_PKT_DATA &&
		    !(pkt->flags & UET_PF_CE)) {
			pkt->flags |= UET_PF_CE;
			out->marks++;
			s->sw_marks++;
		}
		uet_port_send(s, out, pkt);
		return;
	}
	uet_port_send(s, &s->ports[route(s, sw, pkt)], pkt);
}

/* Topology construction. */

struct builder {
	struct uet_sim *s;
	uint32_t next_port;
};

static uint32_t add_switch(struct builder *b, uint32_t i, uint8_t kind, uint32_t pod,
			   uint32_t idx, uint32_t n_ports, const char *name)
{
	struct uet_switch *sw = &b->s->sw[i];
	size_t len = strlen(name);

	sw->kind = kind;
	sw->pod = pod;
	sw->idx = idx;
	sw->n_ports = n_ports;
	sw->port_base = b->next_port;
	sw->salt = (uint32_t)(fmix64(b->s->seed * 1000003u + i) >> 32);
	if (len >= sizeof(sw->name))
		len = sizeof(sw->name) - 1;
	memcpy(sw->name, name, len);
	sw->name[len] = '\0';
	b->next_port += n_ports;
	return sw->port_base;
}

static void init_port(struct uet_sim *s, struct uet_port *p, uint32_t owner, uint32_t peer,
		      uint64_t rate_bps)
{
	const struct uet_topo_cfg *t = &s->scn->topo;

	p->owner = owner;
	p->peer = peer;
	p->ps_per_byte_q16 = uet_ps_per_byte_q16(rate_bps);
	p->delay_ps = t->link_delay_ps;
	p->is_nic = owner < s->n_hosts;
	p->faces_nic = !p->is_nic && peer < s->n_hosts;
	p->uet_policy = t->uet_policy;
	p->trimming = t->uet_policy && t->switch_trimming;
}

static void link_ports(struct uet_sim *s, uint32_t pa, uint32_t na, uint32_t pb, uint32_t nb,
		       uint64_t rate_bps)
{
	init_port(s, &s->ports[pa], na, nb, rate_bps);
	init_port(s, &s->ports[pb], nb, na, rate_bps);
}

static int count_nodes(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_topo_cfg *t = &s->scn->topo;
	uint64_t hosts, sws, ports;

	switch (t->kind) {
	case UET_TOPO_INCAST:
		if (t->senders < 1 || t->senders > 65535)
			goto bad;
		hosts = t->senders + 1;
		sws = 1;
		ports = hosts * 2;
		break;
	case UET_TOPO_LEAF_SPINE:
		if (!t->leaves || !t->spines || !t->hosts_per_leaf)
			goto bad;
		hosts = (uint64_t)t->leaves * t->hosts_per_leaf;
		sws = (uint64_t)t->leaves + t->spines;
		ports = hosts * 2 + 2ull * t->leaves * t->spines;
		break;
	case UET_TOPO_FAT_TREE:
		if (t->k < 2 || t->k % 2 || t->k > 64)
			goto bad;
		hosts = (uint64_t)t->k * t->k * t->k / 4;
		sws = (uint64_t)t->k * t->k + (uint64_t)t->k * t->k / 4;
		ports = hosts * 2 + hosts * 2 * 2;
		break;
	default:
		goto bad;
	}
	if (hosts > (1u << 20) || hosts < 2)
		goto bad;
	s->n_hosts = (uint32_t)hosts;
	s->n_switches = (uint32_t)sws;
	s->n_nodes = (uint32_t)(hosts + sws);
	s->n_ports = (uint32_t)ports;
	return 0;
bad:
	uet_diag_set(diag,
		 "%s: topology: sizes out of range (incast senders 1..65535, leaf-spine counts "
		 ">= 1, fat-tree k even in 2..64, 2 .. 2^20 hosts)",
		 s->scn->path[0] ? s->scn->path : s->scn->name);
	return -EINVAL;
}

int uet_fabric_build(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_topo_cfg *t = &s->scn->topo;
	struct builder b = { .s = s };
	uint64_t host_rate, up_rate = t->link_rate_bps;
	uint32_t links_max = 2, H = 0;
	char name[32];
	int rc;

	rc = count_nodes(s, diag);
	if (rc < 0)
		return rc;
	s->nics = calloc(s->n_hosts, sizeof(*s->nics));
	s->sw = calloc(s->n_switches, sizeof(*s->sw));
	s->ports = calloc(s->n_ports, sizeof(*s->ports));
	if (!s->nics || !s->sw || !s->ports)
		return -ENOMEM;
	host_rate = s->cfg.data_rate_bps < t->link_rate_bps ? s->cfg.data_rate_bps
							    : t->link_rate_bps;
	s->host_rate_bps = host_rate;
	b.next_port = s->n_hosts; /* ports [0, hosts) are the NICs' */
	for (uint32_t h = 0; h < s->n_hosts; h++) {
		s->nics[h].id = h;
		s->nics[h].ip = (10u << 24) | (h & 0xffffff); /* 10.0.0.0/8 by host index */
		s->nics[h].port = &s->ports[h];
	}
	switch (t->kind) {
	case UET_TOPO_INCAST: {
		uint32_t base;

		snprintf(name, sizeof(name), "sw0");
		base = add_switch(&b, 0, UET_SW_STAR, 0, 0, s->n_hosts, name);

		for (uint32_t h = 0; h < s->n_hosts; h++)
			link_ports(s, h, h, base + h, s->n_hosts, host_rate);
		links_max = 2;
		break;
	}
	case UET_TOPO_LEAF_SPINE: {
		H = t->hosts_per_leaf;
		if (t->uplink_rate_bps)
			up_rate = t->uplink_rate_bps;
		else
			up_rate = (uint64_t)((double)H * (double)host_rate /
					     ((double)t->spines * t->oversubscription));
		if (up_rate < 1000000) {
			uet_diag_set(diag,
				 "%s: topology: uplink rate below 1 Mbit/s; check oversubscription",
				 s->scn->path);
			return -EINVAL;
		}
		for (uint32_t l = 0; l < t->leaves; l++) {
			snprintf(name, sizeof(name), "leaf%u", l);
			add_switch(&b, l, UET_SW_LEAF, 0, l, H + t->spines, name);
		}
		for (uint32_t sp = 0; sp < t->spines; sp++) {
			snprintf(name, sizeof(name), "spine%u", sp);
			add_switch(&b, t->leaves + sp, UET_SW_SPINE, 0, sp, t->leaves, name);
		}
		for (uint32_t h = 0; h < s->n_hosts; h++) {
			const struct uet_switch *leaf = &s->sw[h / H];

			link_ports(s, h, h, leaf->port_base + h % H, s->n_hosts + h / H, host_rate);
		}
		for (uint32_t l = 0; l < t->leaves; l++)
			for (uint32_t sp = 0; sp < t->spines; sp++)
				link_ports(s, s->sw[l].port_base + H + sp, s->n_hosts + l,
					   s->sw[t->leaves + sp].port_base + l,
					   s->n_hosts + t->leaves + sp, up_rate);
		links_max = 4;
		break;
	}
	case UET_TOPO_FAT_TREE: {
		uint32_t k = t->k, half = k / 2, n_edge = k * half, n_agg = k * half;

		for (uint32_t p = 0; p < k; p++)
			for (uint32_t e = 0; e < half; e++) {
				snprintf(name, sizeof(name), "edge%u.%u", p, e);
				add_switch(&b, p * half + e, UET_SW_EDGE, p, e, k, name);
			}
		for (uint32_t p = 0; p < k; p++)
			for (uint32_t a = 0; a < half; a++) {
				snprintf(name, sizeof(name), "agg%u.%u", p, a);
				add_switch(&b, n_edge + p * half + a, UET_SW_AGG, p, a, k, name);
			}
		for (uint32_t c = 0; c < half * half; c++) {
			snprintf(name, sizeof(name), "core%u", c);
			add_switch(&b, n_edge + n_agg + c, UET_SW_CORE, 0, c, k, name);
		}
		for (uint32_t h = 0; h < s->n_hosts; h++) {
			uint32_t e = h / half; /* global edge index = pod * half + edge */

			link_ports(s, h, h, s->sw[e].port_base + h % half, s->n_hosts + e,
				   host_rate);
		}
		for (uint32_t p = 0; p < k; p++)
			for (uint32_t e = 0; e < half; e++)
				for (uint32_t a = 0; a < half; a++) {
					uint32_t ei = p * half + e, ai = n_edge + p * half + a;

					link_ports(s, s->sw[ei].port_base + half + a,
						   s->n_hosts + ei, s->sw[ai].port_base + e,
						   s->n_hosts + ai, t->link_rate_bps);
				}
		for (uint32_t p = 0; p < k; p++)
			for (uint32_t a = 0; a < half; a++)
				for (uint32_t j = 0; j < half; j++) {
					uint32_t ai = n_edge + p * half + a;
					uint32_t ci = n_edge + n_agg + a * half + j;

					link_ports(s, s->sw[ai].port_base + half + j,
						   s->n_hosts + ai, s->sw[ci].port_base + p,
						   s->n_hosts + ci, t->link_rate_bps);
				}
		links_max = 6;
		break;
	}
	}
	if (b.next_port != s->n_ports) {
		uet_diag_set(diag, "internal: %u ports built, %u expected",
			 b.next_port, s->n_ports);
		return -EINVAL;
	}
	/* unloaded RTT of the longest path: propagation both ways, an MTU and an ACK per hop */
	{
		uint64_t mtu = s->cfg.rdma_data_mss + UET_WIRE_HDR_BYTES;
		uint64_t rtt = 2ull * links_max * t->link_delay_ps +
			       links_max * (uet_ser_ps(uet_ps_per_byte_q16(host_rate), mtu) +
					    uet_ser_ps(uet_ps_per_byte_q16(host_rate),
						       UET_ACK_WIRE_BYTES));

		s->bdp_bytes = (uint64_t)((double)host_rate / 8e12 * (double)rtt);
	}
	for (uint32_t i = 0; i < s->n_ports; i++) {
		struct uet_port *p = &s->ports[i];

		p->limit = t->queue_bytes ? t->queue_bytes : s->bdp_bytes;
		if (p->limit < 2ull * (s->cfg.rdma_data_mss + UET_WIRE_HDR_BYTES))
			p->limit = 2ull * (s->cfg.rdma_data_mss + UET_WIRE_HDR_BYTES);
		p->ecn_kmin = t->ecn_kmin_bytes == UINT64_MAX ? p->limit / 5 : t->ecn_kmin_bytes;
		p->ecn_kmax = t->ecn_kmax_bytes;
		if (p->ecn_kmax == UINT64_MAX)
			p->ecn_kmax = p->limit * 4 / 5;
		if (p->ecn_kmax <= p->ecn_kmin)
			p->ecn_kmax = p->ecn_kmax ? p->ecn_kmin + 1 : 0;
	}
	return 0;
}

void uet_fabric_free(struct uet_sim *s)
{
	free(s->nics);
	free(s->sw);
	free(s->ports);
}

int uet_node_find(const struct uet_sim *s, const char *name)
{
	unsigned h;
	char tail;

	if (sscanf(name, "host%u%c", &h, &tail) == 1)
		return h < s->n_hosts ? (int)h : -1;
	for (uint32_t i = 0; i < s->n_switches; i++)
		if (strcmp(s->sw[i].name, name) == 0)
			return (int)(s->n_hosts + i);
	return -1;
}

static struct uet_port *port_between(struct uet_sim *s, uint32_t a, uint32_t b)
{
	uint32_t base, n;

	if (a < s->n_hosts) {
		base = a;
		n = 1;
	} else {
		base = s->sw[a - s->n_hosts].port_base;
		n = s->sw[a - s->n_hosts].n_ports;
	}
	for (uint32_t i = 0; i < n; i++)
		if (s->ports[base + i].peer == b)
			return &s->ports[base + i];
	return NULL;
}

void uet_link_set(struct uet_sim *s, const struct uet_link_failure *f, bool down)
{
	int a = uet_node_find(s, f->a), b = uet_node_find(s, f->b);
	struct uet_port *pa, *pb;

	if (a < 0 || b < 0)
		return;
	pa = port_between(s, (uint32_t)a, (uint32_t)b);
	pb = port_between(s, (uint32_t)b, (uint32_t)a);
	if (!pa || !pb)
		return;
	pa->failed = pb->failed = down;
	pa->reroute_away = pb->reroute_away = down && f->reroute;
}

/* Are @a and @b directly linked? For checking a scenario's failures. */
bool uet_nodes_linked(struct uet_sim *s, uint32_t a, uint32_t b)
{
	return port_between(s, a, b) != NULL;
}

int uet_fabric_audit(struct uet_sim *s, struct pcm_diag *diag)
{
	for (uint32_t i = 0; i < s->n_ports; i++) {
		const struct uet_port *p = &s->ports[i];

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
