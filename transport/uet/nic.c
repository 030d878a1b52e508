// SPDX-License-Identifier: MIT
/*
 * nic.c - the UET NIC model, following seeds/uet-nic-datapath.txt point by
 * point.
 *
 * Sender: a posted message gets its own PDC (the Chakra workload's PDC per
 * message), joins the group of PDCs to its peer (PDCGroupsEnabled), and the
 * group joins the NIC's ready queue; the transmit process starts 15 ns after
 * the doorbell. The scheduler serves the queue in turns: one packet from one
 * PDC of the head group (PDCs of a group take turns), then the group goes to
 * the tail if it has more. Within a PDC the oldest waiting retransmission goes
 * first, then a prefetched payload, then a new segment, and a PDC never skips
 * to a later kind. A new segment needs room in the group's window (payload +
 * 88 B) and in the egress pool (payload + 106 B, held until its serialization
 * ends); its payload then crosses PCIe (a 64 B read request one way, the
 * completion the other, both serialized) and it joins the data class queue
 * of the NIC's port. Retransmissions are rebuilt without PCIe traffic. With
 * the prefetch buffer on, the fetch is gated by the NIC-wide prefetch buffer
 * instead, and the window and egress pool are checked when the prefetched
 * payload is committed to the wire. A group whose window is full leaves the
 * queue (an ACK, NACK or timeout brings it back at the head; a new message or
 * a prefetched payload at the tail); when the egress pool is full the pass
 * stops with the group at the head and retries on each ACK, NACK or timeout
 * and when the pool has drained to half.
 *
 * Each packet's retransmission timer starts when its serialization ends and
 * runs InitialRetransmitTimeout * 2^min(retransmissions,
 * MaxExponentialRTOBackoffCount), or FixedRexmitTimeout; there is no retry
 * limit. A timeout or a trim NACK for an outstanding packet takes its bytes
 * out of flight, feeds the policy, and queues the packet for retransmission
 * ahead of new data with a new entropy value, the retransmit flag and the
 * trimmable-retransmission codepoint.
 *
 * Receiver: a data packet is charged to the ingress pool, creates the
 * receiving side of its PDC if new, is NACKed at once if trimmed (code
 * trimmed or trimmed on the last hop), else written to host memory over PCIe
 * as it arrives (no reorder buffer). An ACK-requesting packet draws one ACK,
 * held for the receiver's PCIe service time (bytes waiting in the ingress
 * pool plus this packet at LaneBps x LaneCount) and reporting it in 128 ns
 * steps; ACKs leave in generation order. An ACK carries the cumulative ACK
 * and a 64-PSN SACK bitmap; with more out-of-order packets than one bitmap
 * covers, successive ACKs report successive blocks. The receiver completes a
 * message at its last byte with no gap; the sender at its last ACK. The first
 * data ACK of each message draws one base-RTT probe, answered without a hold.
 *
 * Policies: each group is one PCM flow of its policy's package and, when the
 * scenario names one, of an LB package run beside it (disjoint controls).
 * ACKs, NACKs and timeouts are fed to both, other events to the package that
 * reads them; the controls CWND (window), RATE (pacing), EV (entropy of the
 * next packet) and CUMULATIVE_CREDIT (receiver credit) are enforced, each
 * from the package that drives it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uet_int.h"

enum try_result {
	TRY_NOTHING = 0,
	TRY_SENT,
	TRY_BLOCKED,   /* window or credit */
	TRY_PACED,
	TRY_POOL_FULL,
	TRY_PREFETCH_FULL,
};

#define PCIE_READ_REQ_BYTES 98 /* 64 B request + TLP/DLLP framing: 1.55 ns at 16 x 31.52 Gbit/s */
#define PCIE_TLP_PAYLOAD 256
#define PCIE_TLP_OVERHEAD 17   /* per TLP: a 4,096 B completion takes 69.29 ns */

#define BIT(t) ((pcm_uint)1 << (t))

static inline uint64_t now_ps(const struct uet_sim *s)
{
	return s->des.now_ps;
}

static inline uint32_t pkt_payload(const struct uet_sim *s, const struct uet_pdc *pdc,
				   uint32_t psn)
{
	return psn + 1 == pdc->npkts ? pdc->last_payload : s->cfg.rdma_data_mss;
}

static inline uint64_t pcie_bytes(uint64_t payload)
{
	uint64_t tlps = payload ? (payload + PCIE_TLP_PAYLOAD - 1) / PCIE_TLP_PAYLOAD : 1;

	return payload + tlps * PCIE_TLP_OVERHEAD;
}

static void monitor(struct uet_sim *s, const struct uet_pkt *pkt, uint32_t at, bool rx)
{
	struct uet_pkt_view v;

	uet_pkt_view(s, pkt, at, rx, &v);
	if (s->hooks.monitor)
		s->hooks.monitor(s->hooks.ctx, &v);
	if (s->rec.monitor && s->cfg.uet_monitor)
		uet_rec_monitor(s, &v);
}

static void log_event(struct uet_sim *s, uint32_t nic, const char *what, uint32_t pdc,
		      uint32_t peer, uint64_t bytes)
{
	if (s->rec.events && s->cfg.event_logging)
		uet_rec_event(s, nic, what, pdc, peer, bytes);
}

static struct uet_ev *schedule(struct uet_sim *s, uint64_t t, uint16_t type, void *obj,
			       uint64_t arg)
{
	struct uet_ev *ev = uet_des_schedule(&s->des, t, type, obj, arg);

	if (!ev)
		s->oom = true;
	return ev;
}

/* The ready queue of groups. */

static void rq_remove(struct uet_nic *nic, struct uet_group *g)
{
	if (!g->in_rq)
		return;
	if (g->rq_prev)
		g->rq_prev->rq_next = g->rq_next;
	else
		nic->rq_head = g->rq_next;
	if (g->rq_next)
		g->rq_next->rq_prev = g->rq_prev;
	else
		nic->rq_tail = g->rq_prev;
	g->rq_next = g->rq_prev = NULL;
	g->in_rq = false;
}

static void rq_push_tail(struct uet_nic *nic, struct uet_group *g)
{
	if (g->in_rq)
		return;
	g->rq_next = NULL;
	g->rq_prev = nic->rq_tail;
	if (nic->rq_tail)
		nic->rq_tail->rq_next = g;
	else
		nic->rq_head = g;
	nic->rq_tail = g;
	g->in_rq = true;
}

static void rq_push_head(struct uet_nic *nic, struct uet_group *g)
{
	if (g->in_rq)
		return;
	g->rq_prev = NULL;
	g->rq_next = nic->rq_head;
	if (nic->rq_head)
		nic->rq_head->rq_prev = g;
	else
		nic->rq_tail = g;
	nic->rq_head = g;
	g->in_rq = true;
}

static bool pdc_has_work(const struct uet_pdc *pdc)
{
	return pdc->retx_head != UET_NONE || pdc->pf_head || pdc->next_psn < pdc->npkts;
}

static bool group_has_work(const struct uet_group *g)
{
	const struct uet_pdc *pdc = g->turn;

	for (uint32_t i = 0; i < g->n_tx && pdc; i++, pdc = pdc->ring_next)
		if (pdc_has_work(pdc))
			return true;
	return false;
}

/* Groups. */

uint32_t uet_policy_for(const struct uet_sim *s, uint32_t src, uint32_t dst)
{
	const struct uet_scenario *scn = s->scn;

	for (uint32_t i = 0; i < scn->n_rules; i++) {
		const struct uet_policy_rule *r = &scn->rules[i];

		if ((r->src < 0 || (uint32_t)r->src == src) &&
		    (r->dst < 0 || (uint32_t)r->dst == dst))
			return r->policy;
	}
	return 0;
}

static struct uet_group *group_find(struct uet_nic *nic, uint32_t peer)
{
	for (uint32_t i = 0; i < nic->n_groups; i++)
		if (nic->groups[i]->peer == peer)
			return nic->groups[i];
	return NULL;
}

/* A group's PCM_SIG_FLOW_SEED: the run's seed and the group's identity, mixed; never 0. */
static uint64_t flow_seed(const struct uet_sim *s, uint32_t nic, uint32_t peer, uint32_t id)
{
	uint64_t x = s->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)nic << 40) ^
		     ((uint64_t)peer << 20) ^ id;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x ? x : 1;
}

static struct uet_group *group_get(struct uet_sim *s, struct uet_nic *nic, uint32_t peer,
				   int policy)
{
	struct uet_group *g = NULL;

	if (s->cfg.pdc_groups)
		g = group_find(nic, peer);
	if (g)
		return g;
	if (nic->n_groups == nic->cap_groups) {
		uint32_t cap = nic->cap_groups ? nic->cap_groups * 2 : 4;
		struct uet_group **a = realloc(nic->groups, cap * sizeof(*a));

		if (!a)
			goto oom;
		nic->groups = a;
		nic->cap_groups = cap;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		goto oom;
	g->nic = nic;
	g->peer = peer;
	g->id = s->next_group_id++;
	g->base_rtt_ps = s->cfg.initial_base_rtt_ps;
	g->ctl.cwnd = s->cfg.initial_cwnd_bytes;
	g->ctl.rate = PCM_RATE_ONE;
	g->credit_granted = s->cfg.credit_speculative_bytes;
	g->last_cnp_ps = UINT64_MAX;
	g->flow_seed = flow_seed(s, nic->id, peer, g->id);
	if (uet_cc_attach(s, g, policy >= 0 ? (uint32_t)policy : uet_policy_for(s, nic->id, peer)) <
	    0) {
		free(g);
		goto oom;
	}
	nic->groups[nic->n_groups++] = g;
	return g;
oom:
	s->oom = true;
	return NULL;
}

/* Free @g if no PDC uses it any more. Return: true if it is still alive. */
static bool group_release_if_dead(struct uet_sim *s, struct uet_group *g)
{
	struct uet_nic *nic = g->nic;

	if (g->n_tx || g->n_rx || g->n_doorbell)
		return true;
	if (g->inflight || g->backlog_bytes || g->backlog_pkts) {
		s->leaked_groups++;
		s->leaked_inflight += g->inflight;
		s->leaked_backlog += g->backlog_bytes;
	}
	rq_remove(nic, g);
	if (g->pace_ev)
		uet_des_cancel(&s->des, g->pace_ev);
	if (g->tick_ev)
		uet_des_cancel(&s->des, g->tick_ev);
	if (g->in_crr) {
		struct uet_group **pp = &nic->crr_head;

		nic->crr_tail = NULL;
		while (*pp) {
			if (*pp == g)
				*pp = g->crr_next;
			else
				nic->crr_tail = *pp, pp = &(*pp)->crr_next;
		}
	}
	uet_cc_detach(s, g);
	for (uint32_t i = 0; i < nic->n_groups; i++) {
		if (nic->groups[i] == g) {
			nic->groups[i] = nic->groups[--nic->n_groups];
			break;
		}
	}
	free(g);
	return false;
}

/* Feeding the policy. */

/*
 * Feed @g's packages in @which (UET_FEED_*; ACKs, NACKs and timeouts go to
 * both). Return: 1 if a handler ran.
 */
static int feed_to(struct uet_sim *s, struct uet_group *g, unsigned which, struct pcm_event *ev)
{
	int n;

	if (!(uet_cc_live(g) & which))
		return 0;
	ev->valid |= BIT(PCM_SIG_IN_FLIGHT) | BIT(PCM_SIG_TX_BACKLOG_BYTES) |
		     BIT(PCM_SIG_FLOW_SEED) | BIT(PCM_SIG_BASE_RTT);
	ev->values[PCM_SIG_IN_FLIGHT] = g->inflight;
	ev->values[PCM_SIG_TX_BACKLOG_BYTES] = g->backlog_bytes;
	ev->values[PCM_SIG_FLOW_SEED] = g->flow_seed;
	ev->values[PCM_SIG_BASE_RTT] = g->base_rtt_ps;
	n = uet_cc_feed(s, g, which, ev);
	g->nic->st[UET_ST_HANDLER_CALLS] += (uint64_t)n;
	return n > 0;
}

static int feed(struct uet_sim *s, struct uet_group *g, struct pcm_event *ev)
{
	return feed_to(s, g, UET_FEED_ALL, ev);
}

/* UET_FEED_* of the group's packages (with a record) that @pred holds for. */
static unsigned packages_where(const struct uet_group *g, bool (*pred)(const struct uet_cc *))
{
	unsigned live = uet_cc_live(g), which = 0;

	if ((live & UET_FEED_POL) && pred(g->pol.cc))
		which |= UET_FEED_POL;
	if ((live & UET_FEED_LB) && pred(g->lb.cc))
		which |= UET_FEED_LB;
	return which;
}

static bool has_timer(const struct uet_cc *cc)
{
	return cc->has_timer;
}

static bool drives_ev(const struct uet_cc *cc)
{
	return cc->ev_slot >= 0;
}

static bool wants_tx_event(const struct uet_cc *cc)
{
	return cc->wants_tx_event;
}

static void start_tick(struct uet_sim *s, struct uet_group *g)
{
	if (packages_where(g, has_timer) && !g->tick_ev && s->cfg.tick_ps)
		g->tick_ev = schedule(s, now_ps(s) + s->cfg.tick_ps, UET_EV_TICK, g, 0);
}

static uint16_t next_entropy(struct uet_sim *s, struct uet_group *g)
{
	unsigned which = packages_where(g, drives_ev);

	if (which) {
		const struct uet_cc *cc = which & UET_FEED_POL ? g->pol.cc : g->lb.cc;

		if (cc->wants_tx_ready) {
			struct pcm_event ev;

			ev.valid = BIT(PCM_SIG_TX_READY_PKTS);
			ev.values[PCM_SIG_TX_READY_PKTS] = 1;
			feed_to(s, g, which, &ev);
		}
		return (uint16_t)g->ctl.ev;
	}
	return (uint16_t)(uet_rng_next(&s->rng) >> 48);
}

static bool rate_limited(const struct uet_group *g)
{
	return ((g->pol.cc && g->pol.cc->rate_slot >= 0) ||
		(g->lb.cc && g->lb.cc->rate_slot >= 0)) &&
	       g->ctl.rate < PCM_RATE_ONE;
}

static bool credit_gated(const struct uet_group *g)
{
	return g->pol.cc && g->pol.cc->receiver_credit;
}

/* Egress pool: reserved at fetch (or commit), released when serialization ends. */

/* When the pool is full, wake the scheduler once it has drained to half. */
static void arm_pool_wake(struct uet_sim *s, struct uet_nic *nic)
{
	uint64_t t;

	if (nic->pool_ev)
		return;
	t = uet_bytepool_time_at_or_below(&nic->egress, s->cfg.egress_pool_bytes / 2);
	/* not reachable from packets already on the wire: re-armed at the next start */
	if (t != UINT64_MAX)
		nic->pool_ev = schedule(s, t, UET_EV_POOL_WAKE, nic, 0);
}

/* PCIe: payload fetch. Return: when the payload has arrived at the NIC. */
uint64_t uet_pcie_fetch(struct uet_sim *s, struct uet_nic *nic, uint32_t payload)
{
	uint64_t now = now_ps(s), q = s->pcie_ps_per_byte_q16;
	uint64_t rs = nic->n2h_free > now ? nic->n2h_free : now;
	uint64_t re = rs + uet_ser_ps(q, PCIE_READ_REQ_BYTES);
	uint64_t cs = nic->h2n_free > re ? nic->h2n_free : re;

	nic->n2h_free = re;
	nic->h2n_free = cs + uet_ser_ps(q, pcie_bytes(payload));
	return nic->h2n_free;
}

static uint64_t rto_ps(const struct uet_nic_cfg *c, uint32_t retransmissions)
{
	uint32_t k = retransmissions < c->max_rto_backoff ? retransmissions : c->max_rto_backoff;

	if (c->fixed_rexmit_enable)
		return c->fixed_rexmit_ps;
	if (k > 40)
		k = 40;
	return c->initial_rto_ps << k;
}

/* Build (or finish, for a prefetched payload) a data packet and account for it. */
static void commit_data(struct uet_sim *s, struct uet_nic *nic, struct uet_group *g,
			struct uet_pdc *pdc, struct uet_pkt *pkt, uint32_t psn, bool retx)
{
	const struct uet_nic_cfg *c = &s->cfg;
	struct uet_txpkt *t = &pdc->tx[psn];
	uint32_t payload = pkt_payload(s, pdc, psn);
	uint32_t count = pdc->n_sent++;
	bool ar;

	ar = c->ack_first ? count % c->ack_every_nth == 0 : (count + 1) % c->ack_every_nth == 0;
	if (c->ack_last && psn + 1 == pdc->npkts)
		ar = true;
	pkt->kind = UET_PKT_DATA;
	pkt->src = nic->id;
	pkt->dst = pdc->peer;
	pkt->pdc = pdc->id;
	pkt->psn = psn;
	pkt->payload = (uint16_t)payload;
	pkt->wire = (uint16_t)(payload + UET_WIRE_HDR_BYTES);
	pkt->flags = (uint8_t)((ar ? UET_PF_AR : 0) | (retx ? UET_PF_RETX : 0) |
			       (psn + 1 == pdc->npkts ? UET_PF_EOM : 0));
	pkt->nack_code = 0;
	pkt->ce = 0;
	pkt->dscp = c->trimming ? UET_DSCP_TRIMMABLE : UET_DSCP_NO_TRIM;
	if (retx && c->trimmable_retx)
		pkt->dscp = UET_DSCP_TRIMMABLE_RETX;
	pkt->retx_level = t->tx_count;
	pkt->entropy = next_entropy(s, g);
	t->entropy = pkt->entropy;
	t->state = UET_TX_OUT;
	if (t->tx_count < UINT8_MAX)
		t->tx_count++;
	g->inflight += payload + UET_NOMINAL_HDR_BYTES;
	nic->egress.used += pkt->wire;
	if (rate_limited(g)) {
		uint64_t rate = g->ctl.rate ? g->ctl.rate : 1;
		uint64_t ser = uet_ser_ps(nic->port->ps_per_byte_q16, pkt->wire);
		uint64_t start = g->next_send_ps > now_ps(s) ? g->next_send_ps : now_ps(s);

		g->next_send_ps = start + (uint64_t)((double)ser * PCM_RATE_ONE / (double)rate);
	}
	if (packages_where(g, wants_tx_event)) {
		struct pcm_event ev;

		ev.valid = BIT(PCM_SIG_TX_EVENT);
		ev.values[PCM_SIG_TX_EVENT] = 1;
		feed_to(s, g, packages_where(g, wants_tx_event), &ev);
	}
}

/* Try to send one packet of @pdc. */
static enum try_result pdc_try(struct uet_sim *s, struct uet_nic *nic, struct uet_group *g,
			       struct uet_pdc *pdc)
{
	const struct uet_nic_cfg *c = &s->cfg;
	enum { K_RETX, K_PREFETCHED, K_NEW } kind;
	uint32_t psn, payload, wire;
	uint64_t now = now_ps(s);
	struct uet_pkt *pkt;

	while (pdc->retx_head != UET_NONE && pdc->tx[pdc->retx_head].state != UET_TX_RTXQ) {
		uint32_t next = pdc->tx[pdc->retx_head].retx_next;

		pdc->retx_head = next;
		if (next == UET_NONE)
			pdc->retx_tail = UET_NONE;
	}
	if (pdc->retx_head != UET_NONE) {
		kind = K_RETX;
		psn = pdc->retx_head;
	} else if (pdc->pf_head) {
		kind = K_PREFETCHED;
		psn = pdc->pf_head->psn;
	} else if (pdc->next_psn < pdc->npkts) {
		kind = K_NEW;
		psn = pdc->next_psn;
	} else {
		return TRY_NOTHING;
	}
	payload = pkt_payload(s, pdc, psn);
	wire = payload + UET_WIRE_HDR_BYTES;

	/* under receiver credit every byte put on the wire, new or again, spends credit */
	if (kind != K_PREFETCHED && credit_gated(g) && g->credit_used + wire > g->credit_granted)
		return TRY_BLOCKED;
	if (kind == K_NEW && c->prefetch_enable) {
		if (nic->prefetch_used + wire > c->prefetch_bytes)
			return TRY_PREFETCH_FULL;
		pkt = uet_pkt_alloc(s);
		if (!pkt)
			return TRY_BLOCKED;
		pdc->next_psn++;
		g->backlog_bytes -= payload;
		g->backlog_pkts--;
		g->credit_used += wire;
		nic->prefetch_used += wire;
		pkt->kind = UET_PKT_DATA;
		pkt->src = nic->id;
		pkt->dst = pdc->peer;
		pkt->pdc = pdc->id;
		pkt->psn = psn;
		uet_des_arm(&s->des, &pkt->ev, uet_pcie_fetch(s, nic, payload), UET_EV_FETCH_DONE,
			    pkt);
		return TRY_SENT;
	}
	if (g->inflight && g->inflight + payload + UET_NOMINAL_HDR_BYTES > g->ctl.cwnd)
		return TRY_BLOCKED;
	if (rate_limited(g) && now < g->next_send_ps)
		return TRY_PACED;
	uet_bytepool_drain(&nic->egress, now);
	if (nic->egress.used + wire > c->egress_pool_bytes)
		return TRY_POOL_FULL;

	switch (kind) {
	case K_RETX:
		pkt = uet_pkt_alloc(s);
		if (!pkt)
			return TRY_BLOCKED;
		pdc->retx_head = pdc->tx[psn].retx_next;
		if (pdc->retx_head == UET_NONE)
			pdc->retx_tail = UET_NONE;
		g->backlog_bytes -= payload;
		g->backlog_pkts--;
		g->credit_used += wire;
		commit_data(s, nic, g, pdc, pkt, psn, true);
		uet_port_send(s, nic->port, pkt);
		break;
	case K_PREFETCHED:
		pkt = pdc->pf_head;
		pdc->pf_head = UET_PKT_NEXT(pkt);
		if (!pdc->pf_head)
			pdc->pf_tail = NULL;
		nic->prefetch_used -= wire;
		commit_data(s, nic, g, pdc, pkt, psn, false);
		uet_port_send(s, nic->port, pkt);
		if (nic->prefetch_blocked && nic->prefetch_used <= c->prefetch_bytes / 2) {
			nic->prefetch_blocked = false;
			if (!nic->pass_ev)
				nic->pass_ev = schedule(s, now, UET_EV_TX_PASS, nic, 0);
		}
		break;
	case K_NEW:
		pkt = uet_pkt_alloc(s);
		if (!pkt)
			return TRY_BLOCKED;
		pdc->next_psn++;
		g->backlog_bytes -= payload;
		g->backlog_pkts--;
		g->credit_used += wire;
		commit_data(s, nic, g, pdc, pkt, psn, false);
		uet_des_arm(&s->des, &pkt->ev, uet_pcie_fetch(s, nic, payload), UET_EV_FETCH_DONE,
			    pkt);
		break;
	}
	return TRY_SENT;
}

static enum try_result group_try(struct uet_sim *s, struct uet_nic *nic, struct uet_group *g)
{
	struct uet_pdc *pdc = g->turn;

	for (uint32_t i = 0; i < g->n_tx && pdc; i++, pdc = pdc->ring_next) {
		enum try_result r = pdc_try(s, nic, g, pdc);

		if (r == TRY_NOTHING)
			continue;
		if (r == TRY_SENT)
			g->turn = pdc->ring_next;
		return r;
	}
	return TRY_NOTHING;
}

void uet_nic_tx_pass(struct uet_sim *s, struct uet_nic *nic)
{
	struct uet_group *g;

	nic->pool_blocked = false;
	while ((g = nic->rq_head)) {
		switch (group_try(s, nic, g)) {
		case TRY_SENT:
			rq_remove(nic, g);
			if (group_has_work(g))
				rq_push_tail(nic, g);
			break;
		case TRY_POOL_FULL:
			nic->pool_blocked = true;
			arm_pool_wake(s, nic);
			return;
		case TRY_PREFETCH_FULL:
			nic->prefetch_blocked = true;
			return;
		case TRY_PACED:
			rq_remove(nic, g);
			if (!g->pace_ev)
				g->pace_ev = schedule(s, g->next_send_ps, UET_EV_PACE, g, 0);
			break;
		case TRY_BLOCKED:
		case TRY_NOTHING:
			rq_remove(nic, g);
			break;
		}
	}
}

/* Bring a group back after an ACK, NACK or timeout and restart the transmit process. */
static void kick(struct uet_sim *s, struct uet_group *g)
{
	if (!g->in_rq && group_has_work(g))
		rq_push_head(g->nic, g);
	uet_nic_tx_pass(s, g->nic);
}

void uet_nic_pool_wake(struct uet_sim *s, struct uet_nic *nic)
{
	nic->pool_ev = NULL;
	uet_nic_tx_pass(s, nic);
}

void uet_nic_pace(struct uet_sim *s, struct uet_group *g)
{
	g->pace_ev = NULL;
	if (!g->in_rq && group_has_work(g))
		rq_push_tail(g->nic, g);
	uet_nic_tx_pass(s, g->nic);
}

void uet_nic_fetch_done(struct uet_sim *s, struct uet_pkt *pkt)
{
	struct uet_nic *nic = &s->nics[pkt->src];
	struct uet_pdc *pdc;

	if (!s->cfg.prefetch_enable || pkt->kind == UET_PKT_RAW) {
		uet_port_send(s, nic->port, pkt);
		return;
	}
	pdc = s->pdcs[pkt->pdc];
	pkt->ev.next = NULL;
	if (pdc->pf_tail)
		pdc->pf_tail->ev.next = &pkt->ev;
	else
		pdc->pf_head = pkt;
	pdc->pf_tail = pkt;
	pdc->tx[pkt->psn].state = UET_TX_PREFETCHED;
	rq_push_tail(nic, pdc->grp);
	uet_nic_tx_pass(s, nic);
}

static uint32_t rto_levels(const struct uet_nic_cfg *c)
{
	return c->fixed_rexmit_enable ? 1 : c->max_rto_backoff + 1;
}

static void pdc_free(struct uet_sim *s, struct uet_pdc *pdc)
{
	if (pdc->rtoq) {
		for (uint32_t l = 0; l < rto_levels(&s->cfg); l++) {
			free(pdc->rtoq[l].deadline);
			free(pdc->rtoq[l].psn);
		}
		free(pdc->rtoq);
	}
	free(pdc->rx.bits);
	free(pdc->tx);
	free(pdc);
}

/* Schedule the PDC's timer event at its earliest live deadline, dropping stale heads. */
static void rto_rearm(struct uet_sim *s, struct uet_pdc *pdc)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t l = 0; pdc->rtoq && l < rto_levels(&s->cfg); l++) {
		struct uet_rtoq *q = &pdc->rtoq[l];

		while (q->len) {
			const struct uet_txpkt *t = &pdc->tx[q->psn[q->head]];

			if (t->state == UET_TX_OUT && t->rto_ps == q->deadline[q->head])
				break;
			q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
			q->len--;
		}
		if (q->len && q->deadline[q->head] < next)
			next = q->deadline[q->head];
	}
	if (pdc->rto_ev && pdc->rto_ev->t_ps == next)
		return;
	if (pdc->rto_ev) {
		uet_des_cancel(&s->des, pdc->rto_ev);
		pdc->rto_ev = NULL;
	}
	if (next != UINT64_MAX)
		pdc->rto_ev = schedule(s, next, UET_EV_RTO, pdc, 0);
}

/* Start @psn's retransmission timer at backoff level @level. */
static void rto_arm(struct uet_sim *s, struct uet_pdc *pdc, uint32_t psn, uint32_t level,
		    uint64_t deadline)
{
	uint32_t levels = rto_levels(&s->cfg);
	uint32_t l = s->cfg.fixed_rexmit_enable ? 0 : (level < levels - 1 ? level : levels - 1);
	struct uet_rtoq *q;

	if (!pdc->rtoq) {
		pdc->rtoq = calloc(levels, sizeof(*pdc->rtoq));
		if (!pdc->rtoq) {
			s->oom = true;
			return;
		}
	}
	q = &pdc->rtoq[l];
	if (q->len == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 16;
		uint64_t *d = malloc(cap * sizeof(*d));
		uint32_t *p = malloc(cap * sizeof(*p));

		if (!d || !p) {
			free(d);
			free(p);
			s->oom = true;
			return;
		}
		for (uint32_t i = 0; i < q->len; i++) {
			d[i] = q->deadline[(q->head + i) % q->cap];
			p[i] = q->psn[(q->head + i) % q->cap];
		}
		free(q->deadline);
		free(q->psn);
		q->deadline = d;
		q->psn = p;
		q->head = 0;
		q->cap = cap;
	}
	q->deadline[(q->head + q->len) % q->cap] = deadline;
	q->psn[(q->head + q->len) % q->cap] = psn;
	q->len++;
	pdc->tx[psn].rto_ps = deadline;
	if (!pdc->rto_ev || deadline < pdc->rto_ev->t_ps) {
		if (pdc->rto_ev)
			uet_des_cancel(&s->des, pdc->rto_ev);
		pdc->rto_ev = schedule(s, deadline, UET_EV_RTO, pdc, 0);
	}
}

void uet_nic_tx_start(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt,
		      uint64_t end_ps)
{
	struct uet_pdc *pdc;
	struct uet_txpkt *t;

	if (s->monitor_on)
		monitor(s, pkt, nic->id, false);
	switch (pkt->kind) {
	case UET_PKT_DATA:
		break;
	case UET_PKT_ACK:
	case UET_PKT_PROBE_ACK:
		nic->st[UET_ST_TX_ACKS]++;
		return;
	case UET_PKT_NACK:
		nic->st[UET_ST_TX_NACKS]++;
		return;
	case UET_PKT_PROBE:
		nic->st[UET_ST_TX_PROBES]++;
		return;
	case UET_PKT_RAW:
		nic->st[UET_ST_TX_DATA_PKTS]++;
		nic->st[UET_ST_TX_DATA_BYTES] += pkt->payload;
		return;
	default:
		return;
	}
	nic->st[UET_ST_TX_DATA_PKTS]++;
	nic->st[UET_ST_TX_DATA_BYTES] += pkt->payload;
	if (pkt->flags & UET_PF_RETX)
		nic->st[UET_ST_TX_RETX_PKTS]++;
	if (uet_bytepool_release_at(&nic->egress, end_ps, pkt->wire) < 0) {
		s->oom = true;
		nic->egress.used -= pkt->wire;
	}
	if (nic->pool_blocked)
		arm_pool_wake(s, nic);
	pdc = s->pdcs[pkt->pdc];
	if (!pdc)
		return;
	t = &pdc->tx[pkt->psn];
	t->tx_ps = now_ps(s);
	/*
	 * Copies of one PSN leave in commit order, so the last copy serialized
	 * is the latest: its timer replaces any an older copy started (a queue
	 * entry whose deadline is not the packet's is stale).
	 */
	if (t->state == UET_TX_OUT)
		rto_arm(s, pdc, pkt->psn, pkt->retx_level,
			end_ps + rto_ps(&s->cfg, pkt->retx_level));
	if (!pdc->tx_done_logged && pkt->psn + 1 == pdc->npkts) {
		pdc->tx_done_logged = true;
		pdc->msg->tx_done_ps = now_ps(s);
		log_event(s, nic->id, "send_complete", pdc->id, pdc->peer, pdc->msg->bytes);
	}
}

static void send_control(struct uet_sim *s, struct uet_nic *nic, uint32_t peer, uint32_t pdc_id,
			 enum uet_pkt_kind kind, uint64_t value, uint16_t wire);

/* Sender: losing a packet to a trim NACK or a timeout. */
static void requeue(struct uet_sim *s, struct uet_pdc *pdc, uint32_t psn)
{
	struct uet_txpkt *t = &pdc->tx[psn];
	struct uet_group *g = pdc->grp;
	uint32_t payload = pkt_payload(s, pdc, psn);

	t->rto_ps = 0;
	t->state = UET_TX_RTXQ;
	t->retx_next = UET_NONE;
	if (pdc->retx_tail != UET_NONE)
		pdc->tx[pdc->retx_tail].retx_next = psn;
	else
		pdc->retx_head = psn;
	pdc->retx_tail = psn;
	g->inflight -= payload + UET_NOMINAL_HDR_BYTES;
	g->backlog_bytes += payload;
	g->backlog_pkts++;
	if (credit_gated(g)) {
		/* the lost packet must be pulled again */
		g->credit_requested += payload + UET_WIRE_HDR_BYTES;
		send_control(s, g->nic, pdc->peer, pdc->id, UET_PKT_CREDIT_REQ,
			     payload + UET_WIRE_HDR_BYTES, UET_CREDIT_WIRE_BYTES);
	}
}

void uet_nic_rto(struct uet_sim *s, struct uet_pdc *pdc)
{
	struct uet_group *g = pdc->grp;
	uint64_t now = now_ps(s);
	uint32_t fired = 0, last_ev = 0;

	pdc->rto_ev = NULL;
	for (uint32_t l = 0; l < rto_levels(&s->cfg); l++) {
		struct uet_rtoq *q = &pdc->rtoq[l];

		while (q->len && q->deadline[q->head] <= now) {
			uint64_t deadline = q->deadline[q->head];
			uint32_t psn = q->psn[q->head];
			struct uet_txpkt *t = &pdc->tx[psn];

			q->head = q->head + 1 == q->cap ? 0 : q->head + 1;
			q->len--;
			if (t->state != UET_TX_OUT || t->rto_ps != deadline)
				continue; /* acknowledged, NACKed or retransmitted since */
			g->nic->st[UET_ST_TIMEOUTS]++;
			last_ev = t->entropy;
			requeue(s, pdc, psn);
			fired++;
		}
	}
	rto_rearm(s, pdc);
	if (!fired)
		return;
	{
		struct pcm_event ev;

		/* the entropy of the (last) packet that timed out, as for a NACK: path feedback */
		ev.valid = BIT(PCM_SIG_RTO) | BIT(PCM_SIG_NACK_EV);
		ev.values[PCM_SIG_RTO] = fired;
		ev.values[PCM_SIG_NACK_EV] = last_ev;
		feed(s, g, &ev);
	}
	kick(s, g);
}

static void send_control(struct uet_sim *s, struct uet_nic *nic, uint32_t peer, uint32_t pdc_id,
			 enum uet_pkt_kind kind, uint64_t value, uint16_t wire)
{
	struct uet_pkt *pkt = uet_pkt_alloc(s);

	if (!pkt)
		return;
	memset((char *)pkt + sizeof(pkt->ev), 0, sizeof(*pkt) - sizeof(pkt->ev));
	pkt->kind = (uint8_t)kind;
	pkt->src = nic->id;
	pkt->dst = peer;
	pkt->pdc = pdc_id;
	pkt->wire = wire;
	pkt->dscp = UET_DSCP_CONTROL;
	pkt->value = value;
	pkt->entropy = (uint16_t)(uet_rng_next(&s->rng) >> 48);
	uet_port_send(s, nic->port, pkt);
}

/* The sender's completion: close @pdc. Return: true if its group lives on. */
static bool close_pdc(struct uet_sim *s, struct uet_pdc *pdc)
{
	struct uet_group *g = pdc->grp;
	struct uet_nic *nic = g->nic;
	struct uet_pkt *pf;

	pdc->msg->done_ps = now_ps(s);
	s->n_done++;
	s->last_done_ps = now_ps(s);
	nic->st[UET_ST_MSGS_SENT]++;
	log_event(s, nic->id, "msg_complete", pdc->id, pdc->peer, pdc->msg->bytes);
	log_event(s, nic->id, "pdc_closed", pdc->id, pdc->peer, 0);
	if (g->turn == pdc)
		g->turn = pdc->ring_next != pdc ? pdc->ring_next : NULL;
	pdc->ring_prev->ring_next = pdc->ring_next;
	pdc->ring_next->ring_prev = pdc->ring_prev;
	g->n_tx--;
	if (!g->n_tx)
		g->turn = NULL;
	if (pdc->rx_open) {
		struct uet_group *rg = pdc->rx.grp;

		log_event(s, pdc->peer, "pdc_closed", pdc->id, pdc->nic, 0);
		rg->n_rx--;
		group_release_if_dead(s, rg);
	}
	for (pf = pdc->pf_head; pf;) {
		struct uet_pkt *next = UET_PKT_NEXT(pf);

		uet_pkt_free(s, pf);
		pf = next;
	}
	if (pdc->rto_ev)
		uet_des_cancel(&s->des, pdc->rto_ev);
	s->pdcs[pdc->id] = NULL;
	pdc_free(s, pdc);
	return group_release_if_dead(s, g);
}

/* Retire one PSN on an ACK or a SACK bit. Return: payload bytes newly acknowledged. */
static uint32_t retire(struct uet_sim *s, struct uet_pdc *pdc, uint32_t psn)
{
	struct uet_txpkt *t = &pdc->tx[psn];
	struct uet_group *g = pdc->grp;
	uint32_t payload;

	if (t->state != UET_TX_OUT && t->state != UET_TX_RTXQ)
		return 0;
	payload = pkt_payload(s, pdc, psn);
	if (t->state == UET_TX_OUT) {
		g->inflight -= payload + UET_NOMINAL_HDR_BYTES;
		t->rto_ps = 0;
	} else {
		g->backlog_bytes -= payload;
		g->backlog_pkts--;
	}
	t->state = UET_TX_ACKED;
	pdc->n_acked++;
	return payload;
}

static void sender_ack(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = s->pdcs[pkt->pdc];
	struct uet_group *g;
	struct pcm_event ev;
	uint64_t bytes = 0, svc = (uint64_t)pkt->service_units * UET_SERVICE_STEP_PS;
	uint64_t bits = pkt->sack_bits;
	uint32_t end;

	nic->st[UET_ST_RX_ACKS]++;
	if (!pdc)
		return;
	g = pdc->grp;
	end = pkt->cack < pdc->npkts ? pkt->cack : pdc->npkts;
	for (uint32_t psn = pdc->una; psn < end; psn++)
		bytes += retire(s, pdc, psn);
	while (bits) {
		uint32_t psn = pkt->sack_base + (uint32_t)__builtin_ctzll(bits);

		if (psn < pdc->npkts)
			bytes += retire(s, pdc, psn);
		bits &= bits - 1;
	}
	while (pdc->una < pdc->npkts && pdc->tx[pdc->una].state == UET_TX_ACKED)
		pdc->una++;

	ev.valid = BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX) | BIT(PCM_SIG_ACK_EV) |
		   BIT(PCM_SIG_QUEUE_DELAY);
	ev.values[PCM_SIG_ACK] = 1;
	ev.values[PCM_SIG_DATA_TX] = bytes;
	ev.values[PCM_SIG_ACK_EV] = pkt->entropy;
	ev.values[PCM_SIG_QUEUE_DELAY] = svc;
	/* Karn: an ACK of a packet sent more than once cannot say which copy it acknowledges */
	if (pkt->psn < pdc->npkts && pdc->tx[pkt->psn].tx_ps && pdc->tx[pkt->psn].tx_count == 1) {
		uint64_t raw = now_ps(s) - pdc->tx[pkt->psn].tx_ps;

		ev.valid |= BIT(PCM_SIG_RTT);
		ev.values[PCM_SIG_RTT] = raw > svc ? raw - svc : 0;
		g->last_rtt_ps = ev.values[PCM_SIG_RTT];
	}
	if (pkt->ce) {
		ev.valid |= BIT(PCM_SIG_ECN) | BIT(PCM_SIG_ECN_EV);
		ev.values[PCM_SIG_ECN] = pkt->ce;
		ev.values[PCM_SIG_ECN_EV] = pkt->entropy;
		nic->st[UET_ST_RX_ECN] += pkt->ce;
		/* as a DCQCN notification point: at most one CNP per CnpInterval */
		if (g->last_cnp_ps == UINT64_MAX ||
		    now_ps(s) - g->last_cnp_ps >= s->cfg.cnp_interval_ps) {
			g->last_cnp_ps = now_ps(s);
			ev.valid |= BIT(PCM_SIG_CNP);
			ev.values[PCM_SIG_CNP] = 1;
		}
	}
	feed(s, g, &ev);
	if (!pdc->probe_sent) {
		pdc->probe_sent = true;
		send_control(s, nic, pdc->peer, pdc->id, UET_PKT_PROBE, now_ps(s),
			     UET_PROBE_WIRE_BYTES);
	}
	/* the ACK frees window room: the group's other PDCs may send again */
	if (pdc->n_acked == pdc->npkts && !close_pdc(s, pdc)) {
		uet_nic_tx_pass(s, nic);
		return;
	}
	kick(s, g);
}

static void sender_nack(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = s->pdcs[pkt->pdc];
	struct pcm_event ev;
	uint32_t payload;

	nic->st[UET_ST_RX_NACKS]++;
	if (!pdc || pkt->psn >= pdc->npkts || pdc->tx[pkt->psn].state != UET_TX_OUT)
		return;
	payload = pkt_payload(s, pdc, pkt->psn);
	requeue(s, pdc, pkt->psn);
	ev.valid = BIT(PCM_SIG_NACK) | BIT(PCM_SIG_DATA_NACKED) | BIT(PCM_SIG_NACK_EV);
	ev.values[PCM_SIG_NACK] = 1;
	ev.values[PCM_SIG_DATA_NACKED] = payload;
	/* bit 16 tells a last-hop trim from one on the way (REPS recycles only the former) */
	ev.values[PCM_SIG_NACK_EV] = pkt->entropy |
				     (pkt->nack_code == UET_NACK_TRIMMED_LAST_HOP ? 1u << 16 : 0);
	feed(s, pdc->grp, &ev);
	kick(s, pdc->grp);
}

static void sender_credit(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_group *g = group_find(nic, pkt->src);
	uint64_t granted = s->cfg.credit_speculative_bytes + pkt->value;

	if (!g)
		return;
	if (granted > g->credit_granted)
		g->credit_granted = granted;
	kick(s, g);
}

/* Receiver. */

static bool rx_open(struct uet_sim *s, struct uet_nic *nic, struct uet_pdc *pdc)
{
	if (pdc->rx_open)
		return true;
	pdc->rx.bits = calloc((pdc->npkts + 63) / 64 + 1, sizeof(uint64_t));
	if (!pdc->rx.bits) {
		s->oom = true;
		return false;
	}
	pdc->rx.grp = group_get(s, nic, pdc->nic, (int)pdc->msg->policy);
	if (!pdc->rx.grp) {
		free(pdc->rx.bits);
		pdc->rx.bits = NULL;
		return false;
	}
	pdc->rx.grp->n_rx++;
	pdc->rx_open = true;
	log_event(s, nic->id, "pdc_created", pdc->id, pdc->nic, 0);
	return true;
}

static inline bool rx_has(const struct uet_rxpdc *rx, uint32_t psn)
{
	return rx->bits[psn >> 6] >> (psn & 63) & 1;
}

/* 64 bits of the received bitmap starting at @base. */
static uint64_t rx_window(const struct uet_rxpdc *rx, uint32_t base, uint32_t npkts)
{
	uint32_t w = base >> 6, sh = base & 63, words = (npkts + 63) / 64;
	uint64_t lo = w < words ? rx->bits[w] : 0, hi = w + 1 < words ? rx->bits[w + 1] : 0;

	return sh ? (lo >> sh) | (hi << (64 - sh)) : lo;
}

/*
 * Receiver credit (EQDS): one instance per receiving NIC sums every sender's
 * requests and grants cumulative credit at its pace; the NIC hands that credit
 * to the peers with demand round-robin, one full packet (RdmaDataMSS + 106 B)
 * at a time, each grant a CREDIT packet carrying that peer's cumulative
 * credit. Credit counts bytes on the wire, so credit paced at the link rate
 * fills the link and no more; a sender asks for its messages' wire bytes
 * beyond CreditSpeculativeBytes, and again for every packet it loses.
 */
static void credit_distribute(struct uet_sim *s, struct uet_nic *nic)
{
	const pcm_uint *rec = pcm_shell_record(nic->credit_cc->shell, nic->credit_slot);
	uint64_t total = rec[nic->credit_cc->credit_slot];
	uint64_t avail = total > nic->credit_distributed ? total - nic->credit_distributed : 0;
	struct uet_group *g;

	while ((g = nic->crr_head) && avail) {
		uint64_t quantum = s->cfg.rdma_data_mss + UET_WIRE_HDR_BYTES;
		uint64_t q = g->rx_demand < quantum ? g->rx_demand : quantum;

		if (q > avail)
			break;
		avail -= q;
		nic->credit_distributed += q;
		g->rx_demand -= q;
		g->credit_sent += q;
		send_control(s, nic, g->peer, UET_NONE, UET_PKT_CREDIT, g->credit_sent,
			     UET_CREDIT_WIRE_BYTES);
		nic->crr_head = g->crr_next;
		if (!nic->crr_head)
			nic->crr_tail = NULL;
		g->crr_next = NULL;
		g->in_crr = false;
		if (g->rx_demand) {
			if (nic->crr_tail)
				nic->crr_tail->crr_next = g;
			else
				nic->crr_head = g;
			nic->crr_tail = g;
			g->in_crr = true;
		}
	}
	if (nic->crr_head && !nic->credit_tick_ev) {
		uint64_t dt = s->cfg.credit_tick_ps;

		if (!dt)
			dt = uet_ser_ps(nic->port->ps_per_byte_q16, s->cfg.rdma_data_mss);

		nic->credit_tick_ev = schedule(s, now_ps(s) + dt, UET_EV_CREDIT_TICK, nic, 0);
	}
}

void uet_nic_credit_tick(struct uet_sim *s, struct uet_nic *nic)
{
	static const struct pcm_event none;

	nic->credit_tick_ev = NULL;
	if (!nic->crr_head)
		return;
	uet_cc_credit_feed(s, nic, &none);
	credit_distribute(s, nic);
}

void uet_nic_tick(struct uet_sim *s, struct uet_group *g)
{
	struct pcm_event ev = { .valid = 0 };

	g->tick_ev = NULL;
	if (!g->n_tx)
		return; /* restarted by the next message */
	if (feed_to(s, g, packages_where(g, has_timer), &ev))
		kick(s, g);
	start_tick(s, g);
}

static void receiver_data(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt)
{
	const struct uet_nic_cfg *c = &s->cfg;
	struct uet_pdc *pdc = s->pdcs[pkt->pdc];
	uint64_t now = now_ps(s), q = s->pcie_ps_per_byte_q16;
	uint64_t hold, ack_t;
	bool trimmed = pkt->dscp == UET_DSCP_TRIMMED || pkt->dscp == UET_DSCP_TRIMMED_LAST_HOP;
	uint32_t psn = pkt->psn;
	uint32_t ip_bytes = trimmed ? UET_TRIMMED_IP_BYTES : pkt->payload + UET_NOMINAL_HDR_BYTES;
	struct uet_rxpdc *rx;
	bool ce = pkt->flags & UET_PF_CE, ar = pkt->flags & UET_PF_AR;

	/* 1. the receive pool, at the packet's IP size, before anything else */
	uet_bytepool_drain(&nic->rx_pool, now);
	if (nic->rx_pool.used + ip_bytes > c->rx_pool_bytes) {
		nic->st[UET_ST_RX_POOL_DROPS]++;
		uet_pkt_free(s, pkt);
		return;
	}
	/* 2. the PDC, created by the first packet of a message that is let in */
	if (!pdc || !rx_open(s, nic, pdc)) {
		/* the sender has completed and closed the PDC: a late duplicate */
		nic->st[UET_ST_RX_DUP_PKTS]++;
		uet_pkt_free(s, pkt);
		return;
	}
	rx = &pdc->rx;
	/* 3. a trimmed packet: its pool space is released at once, a NACK goes back */
	if (trimmed) {
		nic->st[UET_ST_RX_TRIMMED]++;
		pkt->nack_code = pkt->dscp == UET_DSCP_TRIMMED ? UET_NACK_TRIMMED
							       : UET_NACK_TRIMMED_LAST_HOP;
		pkt->kind = UET_PKT_NACK;
		pkt->src = nic->id;
		pkt->dst = pdc->nic;
		pkt->wire = UET_NACK_WIRE_BYTES;
		pkt->payload = 0;
		pkt->dscp = UET_DSCP_CONTROL;
		pkt->flags = 0;
		uet_port_send(s, nic->port, pkt);
		return;
	}
	/* the ACK's hold: the bytes waiting in the pool plus this packet, at the PCIe rate */
	hold = uet_ser_ps(q, nic->rx_pool.used + ip_bytes);
	nic->st[UET_ST_RX_DATA_PKTS]++;
	if (psn < pdc->npkts && !rx_has(rx, psn)) {
		/* 4. a new packet is written to host memory; its pool space is held until then */
		uint64_t ws = nic->n2h_free > now ? nic->n2h_free : now;

		rx->bits[psn >> 6] |= (uint64_t)1 << (psn & 63);
		nic->st[UET_ST_RX_DATA_BYTES] += pkt->payload;
		pdc->msg->delivered_bytes += pkt->payload;
		nic->n2h_free = ws + uet_ser_ps(q, pcie_bytes(pkt->payload));
		nic->rx_pool.used += ip_bytes;
		if (uet_bytepool_release_at(&nic->rx_pool, nic->n2h_free, ip_bytes) < 0) {
			s->oom = true;
			nic->rx_pool.used -= ip_bytes;
		}
		if (psn == rx->expected) {
			while (rx->expected < pdc->npkts && rx_has(rx, rx->expected))
				rx->expected++;
		} else {
			nic->st[UET_ST_RX_OOO_PKTS]++;
		}
		if (psn + 1 > rx->max_psn)
			rx->max_psn = psn + 1;
	} else {
		/* a duplicate is not written: its pool space is released at once */
		nic->st[UET_ST_RX_DUP_PKTS]++;
	}
	if (ce)
		rx->ce_pending++;
	if (!rx->done && rx->expected == pdc->npkts) {
		rx->done = true;
		pdc->msg->rx_done_ps = now;
		nic->st[UET_ST_MSGS_RECEIVED]++;
		log_event(s, nic->id, "recv_complete", pdc->id, pdc->nic, pdc->msg->bytes);
	}
	if (!ar) {
		uet_pkt_free(s, pkt);
		return;
	}
	/* the data packet becomes its ACK */
	{
		uint32_t span = rx->max_psn > rx->expected ? rx->max_psn - rx->expected : 0;
		uint32_t blocks = (span + UET_SACK_BITS - 1) / UET_SACK_BITS;
		uint32_t base = rx->expected;
		uint64_t units = hold / UET_SERVICE_STEP_PS;

		if (blocks > 1)
			base += (rx->sack_cursor++ % blocks) * UET_SACK_BITS;
		pkt->kind = UET_PKT_ACK;
		pkt->cack = rx->expected;
		pkt->sack_base = base;
		pkt->sack_bits = span ? rx_window(rx, base, pdc->npkts) : 0;
		pkt->service_units = (uint16_t)(units > 0xffff ? 0xffff : units);
		pkt->ce = (uint8_t)(rx->ce_pending > 255 ? 255 : rx->ce_pending);
		rx->ce_pending = 0;
		pkt->src = nic->id;
		pkt->dst = pdc->nic;
		pkt->wire = UET_ACK_WIRE_BYTES;
		pkt->payload = 0;
		pkt->dscp = UET_DSCP_CONTROL;
		pkt->flags &= UET_PF_RETX;
		ack_t = now + hold;
		if (ack_t < nic->last_ack_ps)
			ack_t = nic->last_ack_ps;
		nic->last_ack_ps = ack_t;
		uet_des_arm(&s->des, &pkt->ev, ack_t, UET_EV_ACK_RELEASE, pkt);
	}
}

void uet_nic_ack_release(struct uet_sim *s, struct uet_pkt *pkt)
{
	uet_port_send(s, s->nics[pkt->src].port, pkt);
}

static void receiver_credit_request(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt)
{
	struct uet_pdc *pdc = s->pdcs[pkt->pdc];
	struct uet_group *g;
	struct pcm_event ev;

	if (!pdc || !rx_open(s, nic, pdc))
		return;
	g = pdc->rx.grp;
	if (!credit_gated(g))
		return;
	if (!nic->credit_cc && uet_cc_attach_receiver(s, nic, g->pol.cc) < 0) {
		s->oom = true;
		return;
	}
	g->rx_demand += pkt->value;
	if (!g->in_crr) {
		g->crr_next = NULL;
		if (nic->crr_tail)
			nic->crr_tail->crr_next = g;
		else
			nic->crr_head = g;
		nic->crr_tail = g;
		g->in_crr = true;
	}
	ev.valid = BIT(PCM_SIG_CREDIT_REQUEST);
	ev.values[PCM_SIG_CREDIT_REQUEST] = pkt->value;
	uet_cc_credit_feed(s, nic, &ev);
	credit_distribute(s, nic);
}

void uet_nic_receive(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt)
{
	if (s->monitor_on)
		monitor(s, pkt, nic->id, true);
	switch (pkt->kind) {
	case UET_PKT_DATA:
		receiver_data(s, nic, pkt);
		return;
	case UET_PKT_ACK:
		sender_ack(s, nic, pkt);
		break;
	case UET_PKT_NACK:
		sender_nack(s, nic, pkt);
		break;
	case UET_PKT_PROBE:
		/* answered at once, without the hold */
		pkt->kind = UET_PKT_PROBE_ACK;
		pkt->dst = pkt->src;
		pkt->src = nic->id;
		uet_port_send(s, nic->port, pkt);
		return;
	case UET_PKT_PROBE_ACK: {
		struct uet_pdc *pdc = s->pdcs[pkt->pdc];
		uint64_t rtt = now_ps(s) - pkt->value;

		if (pdc && rtt < pdc->grp->base_rtt_ps)
			pdc->grp->base_rtt_ps = rtt;
		break;
	}
	case UET_PKT_CREDIT_REQ:
		receiver_credit_request(s, nic, pkt);
		break;
	case UET_PKT_CREDIT:
		sender_credit(s, nic, pkt);
		break;
	case UET_PKT_RAW:
		uet_raw_receive(s, nic, pkt);
		return;
	default:
		break;
	}
	uet_pkt_free(s, pkt);
}

int uet_nic_post(struct uet_sim *s, struct uet_msg_info *m)
{
	struct uet_nic *nic = &s->nics[m->src];
	uint32_t mss = s->cfg.rdma_data_mss;
	struct uet_pdc *pdc;
	struct uet_group *g;
	uint64_t npkts = m->bytes ? (m->bytes + mss - 1) / mss : 1;

	if (npkts > UINT32_MAX - 2)
		return -EINVAL;
	pdc = calloc(1, sizeof(*pdc));
	if (!pdc)
		return -ENOMEM;
	pdc->tx = calloc(npkts, sizeof(*pdc->tx));
	if (!pdc->tx) {
		free(pdc);
		return -ENOMEM;
	}
	pdc->id = m->id;
	pdc->nic = m->src;
	pdc->peer = m->dst;
	pdc->msg = m;
	pdc->npkts = (uint32_t)npkts;
	pdc->last_payload = (uint32_t)(m->bytes - (npkts - 1) * mss);
	pdc->retx_head = pdc->retx_tail = UET_NONE;
	g = group_get(s, nic, m->dst, (int)m->policy);
	if (!g) {
		free(pdc->tx);
		free(pdc);
		return -ENOMEM;
	}
	pdc->grp = g;
	g->n_doorbell++;
	s->pdcs[m->id] = pdc;
	nic->st[UET_ST_MSGS_POSTED]++;
	log_event(s, nic->id, "pdc_created", pdc->id, pdc->peer, 0);
	log_event(s, nic->id, "msg_posted", pdc->id, pdc->peer, m->bytes);
	if (credit_gated(g)) {
		/* the first BDP goes speculatively; the rest is asked for */
		uint64_t spec = s->cfg.credit_speculative_bytes, want;

		g->posted_bytes += m->bytes + npkts * UET_WIRE_HDR_BYTES;
		want = g->posted_bytes > spec ? g->posted_bytes - spec : 0;
		if (want > g->credit_requested) {
			send_control(s, nic, m->dst, m->id, UET_PKT_CREDIT_REQ,
				     want - g->credit_requested, UET_CREDIT_WIRE_BYTES);
			g->credit_requested = want;
		}
	}
	/* the transmit process starts 15 ns after the doorbell: not sooner, even if it runs */
	if (!schedule(s, now_ps(s) + s->cfg.doorbell_ps, UET_EV_DOORBELL, pdc, 0))
		return -ENOMEM;
	return 0;
}

/* The doorbell delay is over: the message's PDC joins its group's turns. */
void uet_nic_doorbell(struct uet_sim *s, struct uet_pdc *pdc)
{
	struct uet_group *g = pdc->grp;
	struct uet_nic *nic = g->nic;

	g->n_doorbell--;
	if (g->turn) {
		pdc->ring_next = g->turn;
		pdc->ring_prev = g->turn->ring_prev;
		pdc->ring_prev->ring_next = pdc;
		g->turn->ring_prev = pdc;
	} else {
		pdc->ring_next = pdc->ring_prev = pdc;
		g->turn = pdc;
	}
	g->n_tx++;
	g->backlog_bytes += pdc->msg->bytes;
	g->backlog_pkts += pdc->npkts;
	start_tick(s, g);
	rq_push_tail(nic, g);
	uet_nic_tx_pass(s, nic);
}

void uet_nic_free_all(struct uet_sim *s)
{
	for (uint32_t i = 0; i < s->n_msgs; i++) {
		struct uet_pdc *pdc = s->pdcs ? s->pdcs[i] : NULL;
		if (!pdc)
			continue;
		pdc_free(s, pdc);
		s->pdcs[i] = NULL;
	}
	for (uint32_t h = 0; h < s->n_hosts && s->nics; h++) {
		struct uet_nic *nic = &s->nics[h];

		for (uint32_t i = 0; i < nic->n_groups; i++) {
			uet_cc_detach(s, nic->groups[i]);
			free(nic->groups[i]);
		}
		free(nic->groups);
		uet_bytepool_free(&nic->egress);
		uet_bytepool_free(&nic->rx_pool);
	}
}

int uet_nic_audit(struct uet_sim *s, struct pcm_diag *diag)
{
	if (s->leaked_groups) {
		uet_diag_set(diag,
			     "%u groups were freed holding %llu bytes in flight and %llu bytes of "
			     "backlog",
			     s->leaked_groups, (unsigned long long)s->leaked_inflight,
			     (unsigned long long)s->leaked_backlog);
		return -EFAULT;
	}
	for (uint32_t i = 0; s->pdcs && i < s->n_msgs; i++) {
		if (s->pdcs[i]) {
			uet_diag_set(diag, "PDC %u (host %u to %u) is still open", i,
				     s->pdcs[i]->nic, s->pdcs[i]->peer);
			return -EFAULT;
		}
	}
	for (uint32_t h = 0; h < s->n_hosts; h++) {
		struct uet_nic *nic = &s->nics[h];
		const char *what = NULL;

		uet_bytepool_drain(&nic->egress, now_ps(s));
		uet_bytepool_drain(&nic->rx_pool, now_ps(s));
		if (nic->egress.used)
			what = "egress pool bytes reserved";
		else if (nic->rx_pool.used)
			what = "receive pool bytes held";
		else if (nic->prefetch_used)
			what = "prefetch buffer bytes held";
		else if (nic->n_groups)
			what = "PDC groups alive";
		else if (nic->rq_head)
			what = "groups in the ready queue";
		else if (nic->pass_ev || nic->credit_tick_ev)
			what = "events pending";
		if (what) {
			uet_diag_set(diag,
				     "host %u: %s (egress %llu B, receive %llu B, prefetch %llu B, "
				     "%u groups)",
				     h, what, (unsigned long long)nic->egress.used,
				     (unsigned long long)nic->rx_pool.used,
				     (unsigned long long)nic->prefetch_used, nic->n_groups);
			return -EFAULT;
		}
	}
	return 0;
}
