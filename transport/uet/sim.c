// SPDX-License-Identifier: MIT
/*
 * sim.c - one run of the UET emulation: building it from a scenario, the
 * traffic, the event loop, the packet pool, the periodic records, link
 * failures and the summary.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"
#include "uet_int.h"

#define PKT_SLAB 4096

void uet_diag_set(struct pcm_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

struct uet_pkt *uet_pkt_alloc(struct uet_sim *s)
{
	struct uet_pkt *p = s->pkt_free;

	if (__builtin_expect(!p, 0)) {
		struct uet_pkt *slab;

		if (s->n_pkt_slabs == s->cap_pkt_slabs) {
			size_t cap = s->cap_pkt_slabs ? s->cap_pkt_slabs * 2 : 16;
			void **a = realloc(s->pkt_slabs, cap * sizeof(*a));

			if (!a) {
				s->oom = true;
				return NULL;
			}
			s->pkt_slabs = a;
			s->cap_pkt_slabs = cap;
		}
		slab = aligned_alloc(64, PKT_SLAB * sizeof(*slab));
		if (!slab) {
			s->oom = true;
			return NULL;
		}
		memset(slab, 0, PKT_SLAB * sizeof(*slab));
		s->pkt_slabs[s->n_pkt_slabs++] = slab;
		for (size_t i = 0; i < PKT_SLAB; i++) {
			slab[i].ev.next = (struct uet_ev *)s->pkt_free;
			s->pkt_free = &slab[i];
		}
		p = s->pkt_free;
	}
	s->pkt_free = UET_PKT_NEXT(p);
	s->pkts_live++;
	return p;
}

void uet_pkt_view(const struct uet_sim *s, const struct uet_pkt *p, uint32_t at, bool rx,
		  struct uet_pkt_view *v)
{
	v->t_ps = s->des.now_ps;
	v->nic = at;
	v->rx = rx;
	v->kind = (enum uet_pkt_kind)p->kind;
	v->dscp = (enum uet_dscp)p->dscp;
	v->flags = p->flags;
	v->src = p->src;
	v->dst = p->dst;
	v->pdc = p->pdc;
	v->psn = p->psn;
	v->cack = p->kind == UET_PKT_ACK ? (int64_t)p->cack - 1 : -1;
	v->sack_base = p->kind == UET_PKT_ACK ? p->sack_base : 0;
	v->sack_bits = p->kind == UET_PKT_ACK ? p->sack_bits : 0;
	v->service_ps = p->kind == UET_PKT_ACK ? (uint32_t)p->service_units * UET_SERVICE_STEP_PS
					       : 0;
	v->nack_code = p->nack_code;
	v->entropy = p->entropy;
	v->wire_bytes = p->wire;
	v->payload_bytes = p->payload;
}

static int add_msg(struct uet_sim *s, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t at,
		   int policy)
{
	struct uet_msg_info *m;

	if (s->n_msgs == s->cap_msgs) {
		uint32_t cap = s->cap_msgs ? s->cap_msgs * 2 : 64;
		struct uet_msg_info *a = realloc(s->msgs, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		s->msgs = a;
		s->cap_msgs = cap;
	}
	m = &s->msgs[s->n_msgs];
	memset(m, 0, sizeof(*m));
	m->id = s->n_msgs;
	m->src = src;
	m->dst = dst;
	m->bytes = bytes;
	m->post_ps = at;
	m->policy = policy >= 0 ? (uint32_t)policy : UINT32_MAX;
	return (int)s->n_msgs++;
}

int uet_sim_post(struct uet_sim *s, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t at_ps,
		 int policy)
{
	if (s->started)
		return -EBUSY;
	if (src >= s->n_hosts || dst >= s->n_hosts || src == dst ||
	    (policy >= 0 && (uint32_t)policy >= s->scn->n_policies) ||
	    (policy >= 0 && s->scn->has_lb && (uint32_t)policy == s->scn->lb_policy) ||
	    bytes > (1ull << 44))
		return -EINVAL;
	return add_msg(s, src, dst, bytes, at_ps, policy);
}

/* A derangement of the hosts: nobody sends to itself. */
static int permutation(struct uet_sim *s, uint32_t *perm)
{
	uint32_t n = s->n_hosts;

	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = uet_rng_below(&s->rng, i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (perm[i] == i) {
			uint32_t j = (i + 1) % n, t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
	}
	return 0;
}

static int add_traffic(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_scenario *scn = s->scn;
	uint64_t t0 = scn->traffic_start_ps, dt = scn->traffic_stagger_ps;
	int rc = 0;

	switch (scn->traffic) {
	case UET_TRAFFIC_NONE:
		break;
	case UET_TRAFFIC_INCAST: {
		uint32_t recv = s->n_hosts - 1, i = 0;

		for (uint32_t h = 0; h < s->n_hosts && rc >= 0; h++)
			if (h != recv)
				rc = add_msg(s, h, recv, scn->traffic_bytes, t0 + dt * i++, -1);
		break;
	}
	case UET_TRAFFIC_PERMUTATION: {
		uint32_t *perm = malloc(s->n_hosts * sizeof(*perm));

		if (!perm)
			return -ENOMEM;
		permutation(s, perm);
		for (uint32_t h = 0; h < s->n_hosts && rc >= 0; h++)
			rc = add_msg(s, h, perm[h], scn->traffic_bytes, t0 + dt * h, -1);
		free(perm);
		break;
	}
	}
	for (uint32_t i = 0; i < scn->n_flows && rc >= 0; i++) {
		const struct uet_flow_spec *f = &scn->flows[i];

		if (f->src >= s->n_hosts || f->dst >= s->n_hosts || f->src == f->dst) {
			uet_diag_set(diag,
				 "%s: flows[%u]: src %u / dst %u: hosts are 0..%u and must differ",
				 scn->path, i, f->src, f->dst, s->n_hosts - 1);
			return -EINVAL;
		}
		rc = add_msg(s, f->src, f->dst, f->bytes, f->start_ps, f->policy);
	}
	return rc < 0 ? rc : 0;
}

static int check_cfg(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_nic_cfg *c = &s->cfg;
	const char *path = s->scn->path[0] ? s->scn->path : s->scn->name;
	const char *why = NULL;

	if (c->rdma_data_mss < 1 || c->rdma_data_mss > 65535 - UET_WIRE_HDR_BYTES)
		why = "RdmaDataMSS must be in 1..65429";
	else if (!c->ack_every_nth)
		why = "AckRequestEveryNthPacket must be at least 1";
	else if (c->prefetch_enable && c->prefetch_bytes < c->rdma_data_mss + UET_WIRE_HDR_BYTES)
		why = "PrefetchBufferSize must hold one packet on the wire (RdmaDataMSS + 106)";
	else if (c->egress_pool_bytes < c->rdma_data_mss + UET_WIRE_HDR_BYTES)
		why = "EgressBufferSize must hold one full packet on the wire (RdmaDataMSS + 106)";
	else if (!c->data_rate_bps || !c->lane_bps || !c->lane_count)
		why = "DataRate, LaneBps and LaneCount must be positive";
	else if (!c->fixed_rexmit_enable && !c->initial_rto_ps)
		why = "InitialRetransmitTimeout must be positive";
	else if (c->fixed_rexmit_enable && !c->fixed_rexmit_ps)
		why = "FixedRexmitTimeout must be positive";
	else if (c->transport_stats && !c->stats_interval_ps)
		why = "NDStatsReportInterval must be positive";
	if (why) {
		uet_diag_set(diag, "%s: nic: %s", path, why);
		return -EINVAL;
	}
	if (s->scn->topo.switch_trimming && !s->scn->topo.uet_policy) {
		uet_diag_set(diag,
			 "%s: topology: trimming runs only under the UET policy (uet_policy: true)",
			 path);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < s->scn->n_failures; i++) {
		const struct uet_link_failure *f = &s->scn->failures[i];
		int a = uet_node_find(s, f->a), b = uet_node_find(s, f->b);

		if (a < 0 || b < 0 || !uet_nodes_linked(s, (uint32_t)a, (uint32_t)b)) {
			uet_diag_set(diag,
				 "%s: failures[%u]: no link between '%s' and '%s' in this topology",
				 path, i, f->a, f->b);
			return -EINVAL;
		}
	}
	return 0;
}

int uet_sim_create(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		   uint64_t seed, struct uet_sim **out, struct pcm_diag *diag)
{
	struct uet_sim *s;
	int rc;

	diag->msg[0] = '\0';
	if (!scn->n_policies || scn->n_policies > UET_MAX_POLICIES) {
		uet_diag_set(diag, "%s: policy: none given", scn->path);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->scn = scn;
	s->cfg = scn->nic;
	s->seed = seed;
	uet_rng_seed(&s->rng, seed);
	rc = uet_des_init(&s->des);
	if (rc < 0)
		goto err_free;
	rc = uet_fabric_build(s, diag);
	if (rc < 0)
		goto err_destroy;
	s->pcie_ps_per_byte_q16 = uet_ps_per_byte_q16(s->cfg.lane_bps * s->cfg.lane_count);
	if (s->cfg.credit_speculative_bytes == UINT64_MAX)
		s->cfg.credit_speculative_bytes = s->bdp_bytes;
	rc = check_cfg(s, diag);
	if (rc < 0)
		goto err_destroy;
	for (uint32_t i = 0; i < scn->n_policies; i++) {
		const struct pcm_package *pkg = pkgs ? pkgs[i] : NULL;
		const char *why;

		s->cc[i].pkg = pkg;
		if (!pkg)
			continue;
		rc = pcm_package_validate(pkg, &why);
		if (rc < 0) {
			uet_diag_set(diag, "policy '%s': %s", scn->policies[i],
				 why);
			goto err_destroy;
		}
		rc = pcm_target_check_package(pcm_target_find("uet"), pkg, diag);
		if (rc < 0)
			goto err_destroy;
	}
	rc = uet_cc_check_lb(scn, pkgs, diag);
	if (rc < 0)
		goto err_destroy;
	rc = add_traffic(s, diag);
	if (rc < 0)
		goto err_destroy;
	*out = s;
	return 0;
err_destroy:
	uet_sim_destroy(s);
	return rc;
err_free:
	free(s);
	return rc;
}

void uet_sim_destroy(struct uet_sim *s)
{
	if (!s)
		return;
	uet_nic_free_all(s);
	uet_cc_fini(s);
	uet_fabric_free(s);
	for (size_t i = 0; i < s->n_pkt_slabs; i++)
		free(s->pkt_slabs[i]);
	free(s->pkt_slabs);
	free(s->pdcs);
	free(s->msgs);
	free(s->rawqps);
	uet_des_fini(&s->des);
	free(s);
}

void uet_sim_set_hooks(struct uet_sim *s, const struct uet_hooks *hooks)
{
	s->hooks = *hooks;
	s->monitor_on = s->hooks.monitor || (s->rec.monitor && s->cfg.uet_monitor);
}

void uet_sim_set_records(struct uet_sim *s, const struct uet_records *rec)
{
	s->rec = *rec;
	s->monitor_on = s->hooks.monitor || (s->rec.monitor && s->cfg.uet_monitor);
}

static int start(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_scenario *scn = s->scn;
	const struct pcm_package *pkgs[UET_MAX_POLICIES];
	uint32_t max_groups = 2 * s->n_msgs + 2;
	int rc;

	for (uint32_t i = 0; i < scn->n_policies; i++)
		pkgs[i] = s->cc[i].pkg;
	memset(s->cc, 0, sizeof(s->cc));
	rc = uet_cc_init(s, pkgs, max_groups, diag);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < s->n_msgs; i++) {
		struct uet_msg_info *m = &s->msgs[i];

		if (m->policy == UINT32_MAX)
			m->policy = uet_policy_for(s, m->src, m->dst);
	}
	s->pdcs = calloc(s->n_msgs ? s->n_msgs : 1, sizeof(*s->pdcs));
	if (!s->pdcs)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_msgs; i++)
		if (!uet_des_schedule(&s->des, s->msgs[i].post_ps, UET_EV_MSG_POST, NULL, i))
			return -ENOMEM;
	for (uint32_t i = 0; i < scn->n_failures; i++) {
		const struct uet_link_failure *f = &scn->failures[i];

		s->any_reroute |= f->reroute;
		uet_des_schedule(&s->des, f->at_ps, UET_EV_LINK, (void *)f, 1);
		if (f->until_ps != UINT64_MAX)
			uet_des_schedule(&s->des, f->until_ps, UET_EV_LINK, (void *)f, 0);
	}
	uet_rec_headers(s);
	if (s->rec.transport_stats && s->cfg.transport_stats)
		uet_des_schedule(&s->des, s->cfg.stats_interval_ps, UET_EV_STATS, NULL, 0);
	if (s->rec.flows) {
		uint64_t dt = scn->flow_sample_ps ? scn->flow_sample_ps : s->cfg.stats_interval_ps;

		if (!dt)
			dt = 10000000;
		s->flow_sample_ps = dt;
		uet_des_schedule(&s->des, 0, UET_EV_FLOW_SAMPLE, NULL, 0);
	}
	s->started = true;
	return 0;
}

static void dispatch(struct uet_sim *s, struct uet_ev *ev)
{
	switch (ev->type) {
	case UET_EV_ARRIVE: {
		struct uet_pkt *pkt = ev->obj;

		if (pkt->node < s->n_hosts)
			uet_nic_receive(s, &s->nics[pkt->node], pkt);
		else
			uet_switch_receive(s, pkt);
		break;
	}
	case UET_EV_PORT_FREE:
		uet_port_free_event(s, ev->obj);
		break;
	case UET_EV_FETCH_DONE:
		uet_nic_fetch_done(s, ev->obj);
		break;
	case UET_EV_ACK_RELEASE:
		uet_nic_ack_release(s, ev->obj);
		break;
	case UET_EV_RTO:
		uet_nic_rto(s, ev->obj);
		break;
	case UET_EV_TX_PASS: {
		struct uet_nic *nic = ev->obj;

		nic->pass_ev = NULL;
		uet_nic_tx_pass(s, nic);
		break;
	}
	case UET_EV_POOL_WAKE:
		uet_nic_pool_wake(s, ev->obj);
		break;
	case UET_EV_PACE:
		uet_nic_pace(s, ev->obj);
		break;
	case UET_EV_MSG_POST:
		if (uet_nic_post(s, &s->msgs[ev->arg]) < 0)
			s->oom = true;
		break;
	case UET_EV_STATS:
		uet_rec_stats(s);
		s->last_stats_ps = s->des.now_ps;
		if (s->n_done < s->n_msgs)
			uet_des_schedule(&s->des, s->des.now_ps + s->cfg.stats_interval_ps,
					 UET_EV_STATS, NULL, 0);
		break;
	case UET_EV_FLOW_SAMPLE:
		uet_rec_flows(s);
		if (s->n_done < s->n_msgs)
			uet_des_schedule(&s->des, s->des.now_ps + s->flow_sample_ps,
					 UET_EV_FLOW_SAMPLE, NULL, 0);
		break;
	case UET_EV_LINK:
		uet_link_set(s, ev->obj, ev->arg != 0);
		break;
	case UET_EV_TICK:
		uet_nic_tick(s, ev->obj);
		break;
	case UET_EV_CREDIT_TICK:
		uet_nic_credit_tick(s, ev->obj);
		break;
	case UET_EV_DOORBELL:
		uet_nic_doorbell(s, ev->obj);
		break;
	default:
		break;
	}
}

int uet_sim_run(struct uet_sim *s, uint64_t stop_ps)
{
	struct uet_ev *ev;
	int rc;

	if (!s->started) {
		struct pcm_diag diag;

		rc = start(s, &diag);
		if (rc < 0)
			return rc;
	}
	s->stop_ps = stop_ps;
	while (s->n_done < s->n_msgs || s->raw_live) {
		ev = uet_des_pop_until(&s->des, stop_ps);
		if (!ev)
			break;
		if (ev->pooled) {
			dispatch(s, ev);
			uet_des_free(&s->des, ev);
		} else {
			dispatch(s, ev); /* embedded: the owner may re-arm or free it */
		}
		if (__builtin_expect(s->oom, 0))
			return -ENOMEM;
	}
	if (s->rec.transport_stats && s->cfg.transport_stats && s->last_stats_ps != s->des.now_ps)
		uet_rec_stats(s);
	if (s->n_done < s->n_msgs) {
		if (s->des.now_ps < stop_ps && uet_des_peek_time(&s->des) == UINT64_MAX)
			return -EDEADLK;
		return -ETIMEDOUT;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void uet_sim_results(const struct uet_sim *s, struct uet_results *r)
{
	uint64_t *fct = malloc((s->n_msgs ? s->n_msgs : 1) * sizeof(*fct));
	double sum = 0, sq = 0, delivered = 0;
	uint32_t n = 0;

	memset(r, 0, sizeof(*r));
	r->hosts = s->n_hosts;
	r->flows = s->n_msgs;
	for (uint32_t i = 0; i < s->n_msgs && fct; i++) {
		const struct uet_msg_info *m = &s->msgs[i];
		double gp;

		if (!m->done_ps)
			continue;
		fct[n++] = m->done_ps - m->post_ps;
		gp = m->done_ps > m->post_ps ? (double)m->bytes / (double)(m->done_ps - m->post_ps)
					     : 0;
		sum += gp;
		sq += gp * gp;
	}
	r->completed = n;
	if (n && fct) {
		qsort(fct, n, sizeof(*fct), cmp_u64);
		r->fct_min_us = (double)fct[0] / 1e6;
		r->fct_p50_us = (double)fct[(n - 1) / 2] / 1e6;
		r->fct_p99_us = (double)fct[(uint32_t)ceil(0.99 * n) - 1] / 1e6;
		r->fct_max_us = (double)fct[n - 1] / 1e6;
		r->jain = sq > 0 ? sum * sum / ((double)n * sq) : 0;
	}
	free(fct);
	r->sim_time_ps = s->n_done == s->n_msgs ? s->last_done_ps : s->des.now_ps;
	for (uint32_t h = 0; h < s->n_hosts; h++) {
		const uint64_t *st = s->nics[h].st;

		r->data_packets += st[UET_ST_TX_DATA_PKTS];
		r->retransmits += st[UET_ST_TX_RETX_PKTS];
		r->nacks += st[UET_ST_RX_NACKS];
		r->timeouts += st[UET_ST_TIMEOUTS];
		r->acks += st[UET_ST_RX_ACKS];
		r->probes += st[UET_ST_TX_PROBES];
		r->bytes_delivered += st[UET_ST_RX_DATA_BYTES];
		r->dup_packets += st[UET_ST_RX_DUP_PKTS];
		r->drops += st[UET_ST_RX_POOL_DROPS];
		delivered += (double)st[UET_ST_RX_DATA_BYTES];
	}
	r->trims = s->sw_trims;
	r->ecn_marks = s->sw_marks;
	r->drops += s->sw_drops + s->link_drops + s->filter_drops;
	r->events = s->des.n_processed;
	r->handler_calls = uet_cc_handler_calls(s);
	r->handler_errors = s->handler_errors;
	r->goodput_gbps = r->sim_time_ps ? delivered * 8 / (double)r->sim_time_ps * 1e3 : 0;
}

uint32_t uet_sim_n_msgs(const struct uet_sim *s)
{
	return s->n_msgs;
}

const struct uet_msg_info *uet_sim_msg(const struct uet_sim *s, uint32_t id)
{
	return id < s->n_msgs ? &s->msgs[id] : NULL;
}

uint32_t uet_sim_n_hosts(const struct uet_sim *s)
{
	return s->n_hosts;
}

uint64_t uet_sim_now(const struct uet_sim *s)
{
	return s->des.now_ps;
}

/* After the last completion nothing is left but packets on the wire and their timers. */
#define AUDIT_DRAIN_PS 1000000000000ull

int uet_sim_audit(struct uet_sim *s, struct pcm_diag *diag)
{
	uint64_t limit = s->des.now_ps + AUDIT_DRAIN_PS;
	struct uet_ev *ev;
	int rc;

	diag->msg[0] = '\0';
	if (s->n_done < s->n_msgs || s->raw_live) {
		uet_diag_set(diag, "%u of %u messages still open", s->n_msgs - s->n_done,
			     s->n_msgs);
		return -EBUSY;
	}
	while ((ev = uet_des_pop_until(&s->des, limit))) {
		bool pooled = ev->pooled;

		dispatch(s, ev);
		if (pooled)
			uet_des_free(&s->des, ev);
		if (s->oom)
			return -ENOMEM;
	}
	if (s->des.n_pending) {
		uet_diag_set(diag, "%llu events still pending a simulated second after the run",
			     (unsigned long long)s->des.n_pending);
		return -ETIMEDOUT;
	}
	rc = uet_nic_audit(s, diag);
	if (rc == 0)
		rc = uet_fabric_audit(s, diag);
	if (rc == 0 && s->pkts_live) {
		uet_diag_set(diag, "%llu packets allocated and never freed",
			     (unsigned long long)s->pkts_live);
		rc = -EFAULT;
	}
	return rc;
}
