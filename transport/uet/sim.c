// SPDX-License-Identifier: MIT
/*
 * sim.c - one run of the UET emulation: building it from a scenario, the
 * traffic, the event loop, the periodic records, link failures, the leak
 * audit and the summary. The fabric reaches the hosts through host_ops
 * below, which hand raw queue pairs' packets to raw.c and all others to the
 * NIC model.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "target.h"

static void host_tx_start(void *ctx, uint32_t host, struct uet_pkt *pkt, uint64_t end_ps)
{
	struct uet_sim *s = ctx;

	if (pkt->kind == UET_PKT_RAW)
		uet_raw_tx_start(&s->raw, &s->ns, &s->ns.nics[host], pkt, end_ps);
	else
		uet_nic_tx_start(&s->ns, &s->ns.nics[host], pkt, end_ps);
}

static void host_deliver(void *ctx, uint32_t host, struct uet_pkt *pkt)
{
	struct uet_sim *s = ctx;

	if (pkt->kind == UET_PKT_RAW)
		uet_raw_receive(&s->raw, &s->ns, &s->ns.nics[host], pkt);
	else
		uet_nic_receive(&s->ns, &s->ns.nics[host], pkt);
}

static const struct uet_fabric_ops host_ops = {
	.tx_start = host_tx_start,
	.deliver = host_deliver,
};

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
	if (s->started || s->start_rc)
		return -EBUSY;
	if (src >= s->fab.n_hosts || dst >= s->fab.n_hosts || src == dst ||
	    (policy >= 0 && (uint32_t)policy >= s->scn->n_policies) ||
	    (policy >= 0 && s->scn->has_lb && (uint32_t)policy == s->scn->lb_policy) ||
	    bytes > (1ull << 44))
		return -EINVAL;
	return add_msg(s, src, dst, bytes, at_ps, policy);
}

/* A derangement of the hosts: nobody sends to itself. */
static void permutation(struct uet_sim *s, uint32_t *perm)
{
	uint32_t n = s->fab.n_hosts;

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
}

static int add_traffic(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_scenario *scn = s->scn;
	uint64_t t0 = scn->traffic_start_ps, dt = scn->traffic_stagger_ps;
	uint32_t hosts = s->fab.n_hosts;
	int rc = 0;

	switch (scn->traffic) {
	case UET_TRAFFIC_NONE:
		break;
	case UET_TRAFFIC_INCAST: {
		uint32_t recv = hosts - 1, i = 0;

		for (uint32_t h = 0; h < hosts && rc >= 0; h++)
			if (h != recv)
				rc = add_msg(s, h, recv, scn->traffic_bytes, t0 + dt * i++, -1);
		break;
	}
	case UET_TRAFFIC_PERMUTATION: {
		uint32_t *perm = malloc(hosts * sizeof(*perm));

		if (!perm)
			return -ENOMEM;
		permutation(s, perm);
		for (uint32_t h = 0; h < hosts && rc >= 0; h++)
			rc = add_msg(s, h, perm[h], scn->traffic_bytes, t0 + dt * h, -1);
		free(perm);
		break;
	}
	}
	for (uint32_t i = 0; i < scn->n_flows && rc >= 0; i++) {
		const struct uet_flow_spec *f = &scn->flows[i];

		if (f->src >= hosts || f->dst >= hosts || f->src == f->dst) {
			uet_diag_set(diag,
				     "%s: flows[%u]: src %u / dst %u: hosts are 0..%u and must differ",
				     scn->path, i, f->src, f->dst, hosts - 1);
			return -EINVAL;
		}
		rc = add_msg(s, f->src, f->dst, f->bytes, f->start_ps, f->policy);
	}
	return rc < 0 ? rc : 0;
}

/* A setting that cannot work: the key it came from (file:line:col when a file set it). */
static int reject(const struct uet_sim *s, struct pcm_diag *diag, const char *key,
		  const char *why)
{
	char where[PCM_DIAG_MAX / 2];

	uet_diag_set(diag, "%s: %s", uet_scenario_where(s->scn, key, where, sizeof(where)), why);
	return -EINVAL;
}

static int check_cfg(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_nic_cfg *c = &s->ns.cfg;
	const struct uet_scenario *scn = s->scn;
	uint64_t mtu_ps = uet_ser_ps(uet_ps_per_byte_q16(s->fab.host_rate_bps),
				     c->rdma_data_mss + UET_WIRE_HDR_BYTES);

	if (c->prefetch_enable && c->prefetch_bytes < c->rdma_data_mss + UET_WIRE_HDR_BYTES)
		return reject(s, diag, "nic.PrefetchBufferSize",
			      "must hold one packet on the wire (RdmaDataMSS + 106)");
	if (c->egress_pool_bytes < c->rdma_data_mss + UET_WIRE_HDR_BYTES)
		return reject(s, diag, "nic.EgressBufferSize",
			      "must hold one full packet on the wire (RdmaDataMSS + 106)");
	if (c->rx_pool_bytes < c->rdma_data_mss + UET_NOMINAL_HDR_BYTES)
		return reject(s, diag, "nic.IngressBufferSize",
			      "must hold one full packet at its IP size (RdmaDataMSS + 88)");
	if (!c->data_rate_bps || !c->lane_bps || !c->lane_count)
		return reject(s, diag, "nic", "DataRate, LaneBps and LaneCount must be positive");
	if (!c->fixed_rexmit_enable && !c->initial_rto_ps)
		return reject(s, diag, "nic.InitialRetransmitTimeout", "must be positive");
	if (c->fixed_rexmit_enable && !c->fixed_rexmit_ps)
		return reject(s, diag, "nic.FixedRexmitTimeout", "must be positive");
	/* a record interval below one packet time asks for rows faster than anything happens */
	if (c->transport_stats && c->stats_interval_ps < mtu_ps)
		return reject(s, diag, "nic.NDStatsReportInterval",
			      "below one packet time on the wire (RdmaDataMSS + 106 B at the host "
			      "rate): more rows than packets");
	if (scn->flow_sample_ps && scn->flow_sample_ps < mtu_ps)
		return reject(s, diag, "records.flow_sample_interval",
			      "below one packet time on the wire: more rows than packets");
	if (scn->topo.switch_trimming && !scn->topo.uet_policy)
		return reject(s, diag, "topology.trimming",
			      "trimming runs only under the UET policy (uet_policy: true)");
	for (uint32_t i = 0; i < scn->n_failures; i++) {
		const struct uet_link_failure *f = &scn->failures[i];
		int a = uet_node_find(&s->fab, f->a), b = uet_node_find(&s->fab, f->b);
		char key[32], why[160];

		if (a >= 0 && b >= 0 && uet_nodes_linked(&s->fab, (uint32_t)a, (uint32_t)b))
			continue;
		snprintf(key, sizeof(key), "failures[%u]", i);
		snprintf(why, sizeof(why), "no link between '%s' and '%s' in this topology", f->a,
			 f->b);
		return reject(s, diag, key, why);
	}
	return 0;
}

/* Append a warning about @key to the sim's list. */
static void warn(struct uet_sim *s, const char *key, const char *why)
{
	size_t len = strlen(s->warnings);
	char where[256];

	snprintf(s->warnings + len, sizeof(s->warnings) - len, "%s: %s\n",
		 uet_scenario_where(s->scn, key, where, sizeof(where)), why);
}

/* Derived values that run but are degenerate: queues of a packet or two. */
static void check_derived(struct uet_sim *s)
{
	const struct uet_topo_cfg *t = &s->scn->topo;
	uint64_t mtu = s->ns.cfg.rdma_data_mss + UET_WIRE_HDR_BYTES;
	char why[320];

	if (!t->queue_bytes && s->fab.bdp_bytes < 4 * mtu) {
		snprintf(why, sizeof(why),
			 "the derived switch queues (one BDP of the longest path, %llu B) hold "
			 "fewer than 4 full packets: expect a storm of trims or drops; set "
			 "topology.queue_bytes, or a link_delay that makes a real BDP",
			 (unsigned long long)s->fab.bdp_bytes);
		warn(s, "topology.link_delay", why);
	} else if (t->queue_bytes && t->queue_bytes < 2 * mtu) {
		snprintf(why, sizeof(why),
			 "below two full packets (RdmaDataMSS + 106 B each): raised to %llu B",
			 (unsigned long long)(2 * mtu));
		warn(s, "topology.queue_bytes", why);
	}
}

static int check_packages(struct uet_sim *s, const struct pcm_package *const *pkgs,
			  struct pcm_diag *diag)
{
	const struct uet_scenario *scn = s->scn;

	for (uint32_t i = 0; i < scn->n_policies; i++) {
		const struct pcm_package *pkg = pkgs ? pkgs[i] : NULL;
		const char *why;
		int rc;

		s->ns.cc.cc[i].pkg = pkg;
		if (!pkg)
			continue;
		rc = pcm_package_validate(pkg, &why);
		if (rc < 0) {
			uet_diag_set(diag, "policy '%s': %s", scn->policies[i], why);
			return rc;
		}
		rc = pcm_target_check_package(pcm_target_find("uet"), pkg, diag);
		if (rc < 0)
			return rc;
	}
	return uet_cc_check_lb(scn, pkgs, diag);
}

int uet_sim_create(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		   uint64_t seed, struct uet_sim **out, struct pcm_diag *diag)
{
	const char *where = scn->path[0] ? scn->path : scn->name;
	struct uet_sim *s;
	uint64_t host_rate;
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
	s->seed = seed;
	uet_rng_seed(&s->rng, seed);
	uet_mem_init(&s->mem);
	s->pkts.mem = &s->mem;
	rc = uet_des_init(&s->des, &s->mem);
	if (rc < 0) {
		uet_mem_fini(&s->mem);
		free(s);
		return rc;
	}
	s->fab = (struct uet_fabric){
		.topo = &scn->topo,
		.des = &s->des,
		.rng = &s->rng,
		.pkts = &s->pkts,
		.mem = &s->mem,
		.ops = &host_ops,
		.ops_ctx = s,
		.seed = seed,
	};
	s->ns = (struct uet_nics){
		.cfg = scn->nic,
		.scn = scn,
		.des = &s->des,
		.rng = &s->rng,
		.pkts = &s->pkts,
		.mem = &s->mem,
		.fab = &s->fab,
		.seed = seed,
	};
	host_rate = scn->nic.data_rate_bps < scn->topo.link_rate_bps ? scn->nic.data_rate_bps
								      : scn->topo.link_rate_bps;
	rc = uet_fabric_build(&s->fab, host_rate, scn->nic.rdma_data_mss + UET_WIRE_HDR_BYTES,
			      where, diag);
	if (rc < 0)
		goto err_destroy;
	rc = uet_nics_init(&s->ns, s->fab.n_hosts) < 0 ? -ENOMEM : 0;
	if (rc == 0)
		rc = uet_raw_init(&s->raw, s->fab.n_hosts);
	if (rc < 0)
		goto err_destroy;
	s->ns.pcie_ps_per_byte_q16 = uet_ps_per_byte_q16(s->ns.cfg.lane_bps * s->ns.cfg.lane_count);
	if (s->ns.cfg.credit_speculative_bytes == UINT64_MAX)
		s->ns.cfg.credit_speculative_bytes = s->fab.bdp_bytes;
	rc = check_cfg(s, diag);
	if (rc < 0)
		goto err_destroy;
	check_derived(s);
	rc = check_packages(s, pkgs, diag);
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
}

void uet_sim_destroy(struct uet_sim *s)
{
	if (!s)
		return;
	uet_nics_fini(&s->ns);
	uet_cc_fini(&s->ns.cc);
	uet_fabric_free(&s->fab);
	uet_raw_fini(&s->raw);
	uet_pkt_pool_fini(&s->pkts);
	free(s->msgs);
	uet_des_fini(&s->des);
	uet_mem_fini(&s->mem);
	free(s);
}

static void update_monitor(struct uet_sim *s)
{
	s->ns.monitor = s->hooks.monitor;
	s->ns.monitor_ctx = s->hooks.ctx;
	s->ns.monitor_on = s->hooks.monitor || (s->ns.rec.monitor && s->ns.cfg.uet_monitor);
	s->fab.at_switch = s->hooks.at_switch;
	s->fab.at_switch_ctx = s->hooks.ctx;
}

void uet_sim_set_hooks(struct uet_sim *s, const struct uet_hooks *hooks)
{
	s->hooks = *hooks;
	update_monitor(s);
}

void uet_sim_set_checks(struct uet_sim *s, bool on)
{
	s->ns.checking = on;
}

void uet_sim_set_prefetch(struct uet_sim *s, enum uet_prefetch mode)
{
	s->prefetch = mode;
}

void uet_sim_set_records(struct uet_sim *s, const struct uet_records *rec)
{
	s->ns.rec = *rec;
	update_monitor(s);
}

static int start(struct uet_sim *s, struct pcm_diag *diag)
{
	const struct uet_scenario *scn = s->scn;
	const struct pcm_package *pkgs[UET_MAX_POLICIES];
	uint32_t max_groups = 2 * s->n_msgs + 2;
	int rc;

	for (uint32_t i = 0; i < scn->n_policies; i++)
		pkgs[i] = s->ns.cc.cc[i].pkg;
	memset(&s->ns.cc, 0, sizeof(s->ns.cc));
	rc = uet_cc_init(&s->ns.cc, scn, pkgs, max_groups, s->fab.n_hosts, diag);
	if (rc < 0)
		return rc;
	uet_cnp_setup(&s->ns);
	for (uint32_t i = 0; i < s->n_msgs; i++) {
		struct uet_msg_info *m = &s->msgs[i];

		if (m->policy == UINT32_MAX)
			m->policy = uet_policy_for(scn, m->src, m->dst);
	}
	s->ns.pdcs = uet_mem_zalloc(&s->mem, (size_t)s->n_msgs * sizeof(*s->ns.pdcs));
	if (!s->ns.pdcs)
		return -ENOMEM;
	s->ns.n_pdcs = s->n_msgs;
	for (uint32_t i = 0; i < s->n_msgs; i++)
		if (!uet_des_schedule(&s->des, s->msgs[i].post_ps, UET_EV_MSG_POST, NULL, i))
			return -ENOMEM;
	for (uint32_t i = 0; i < scn->n_failures; i++) {
		const struct uet_link_failure *f = &scn->failures[i];

		s->fab.any_reroute |= f->reroute;
		uet_des_schedule(&s->des, f->at_ps, UET_EV_LINK, (void *)f, 1);
		if (f->until_ps != UINT64_MAX)
			uet_des_schedule(&s->des, f->until_ps, UET_EV_LINK, (void *)f, 0);
	}
	uet_rec_headers(&s->ns.rec, s->ns.cfg.transport_stats, s->ns.cfg.event_logging,
			s->ns.cfg.uet_monitor);
	if (s->ns.rec.transport_stats && s->ns.cfg.transport_stats)
		uet_des_schedule(&s->des, s->ns.cfg.stats_interval_ps, UET_EV_STATS, NULL, 0);
	if (s->ns.rec.flows || s->ns.rec.queues) {
		uint64_t dt = scn->flow_sample_ps ? scn->flow_sample_ps : s->ns.cfg.stats_interval_ps;

		if (!dt)
			dt = 10000000;
		s->flow_sample_ps = dt;
		uet_des_schedule(&s->des, 0, UET_EV_FLOW_SAMPLE, NULL, 0);
	}
	return 0;
}

/*
 * Prefetching in stages, on a fabric large enough for its state to outgrow
 * the caches (below WARM_MIN_HOSTS it costs instructions and saves
 * nothing). The DES fetches each event's object UET_DES_PREFETCH events
 * ahead; WARM_EARLY events ahead that object is cached and what its handler
 * touches first is fetched from it (a switch's egress port, a port's next
 * packet, a NIC and its PDC slot); WARM_LATE ahead, the PDC that slot
 * points to.
 */
#define WARM_MIN_HOSTS 1024
#define WARM_EARLY 3
#define WARM_LATE 1

static inline void warm(struct uet_sim *s, uintptr_t ref, bool late)
{
	void *obj = (void *)(ref & ~(uintptr_t)UET_DES_TAG_MASK);

	switch (ref & UET_DES_TAG_MASK) {
	case UET_EV_ARRIVE: {
		struct uet_pkt *pkt = obj;

		if (pkt->node >= s->fab.n_hosts) {
			if (!late)
				uet_fabric_warm_arrival(&s->fab, pkt);
		} else if (pkt->kind != UET_PKT_RAW) {
			uet_nic_warm_receive(&s->ns, &s->ns.nics[pkt->node], pkt, late);
		}
		break;
	}
	case UET_EV_PORT_FREE:
		if (!late)
			uet_port_warm(obj);
		break;
	default:
		break;
	}
}

static inline void warm_ahead(struct uet_sim *s)
{
	if (!s->warm)
		return;
	warm(s, uet_des_ahead(&s->des, WARM_EARLY), false);
	warm(s, uet_des_ahead(&s->des, WARM_LATE), true);
}

int uet_sim_start(struct uet_sim *s, struct pcm_diag *diag)
{
	if (!s->started && !s->start_rc) {
		s->start_rc = start(s, &s->start_diag);
		if (s->start_rc < 0 && !s->start_diag.msg[0])
			uet_diag_set(&s->start_diag, "%s", strerror(-s->start_rc));
		s->started = s->start_rc == 0;
		s->warm = s->prefetch == UET_PREFETCH_AUTO ? s->fab.n_hosts >= WARM_MIN_HOSTS
							    : s->prefetch == UET_PREFETCH_ON;
	}
	if (diag)
		*diag = s->start_diag;
	return s->start_rc;
}

static bool all_done(const struct uet_sim *s)
{
	return s->ns.n_done == s->n_msgs && !s->pkts.raw_live && !s->raw.queued_pkts;
}

static void fetch_done(struct uet_sim *s, struct uet_pkt *pkt)
{
	struct uet_nic *nic = &s->ns.nics[pkt->src];

	if (pkt->kind == UET_PKT_RAW)
		uet_port_send(&s->fab, nic->port, pkt);
	else if (uet_nic_fetch_done(&s->ns, pkt))
		uet_nic_tx_pass(&s->ns, nic);
}

static void dispatch(struct uet_sim *s, const struct uet_fired *ev)
{
	switch (ev->type) {
	case UET_EV_ARRIVE:
		uet_fabric_arrive(&s->fab, ev->obj);
		break;
	case UET_EV_PORT_FREE:
		uet_port_free_event(&s->fab, ev->obj);
		break;
	case UET_EV_FETCH_DONE:
		fetch_done(s, ev->obj);
		break;
	case UET_EV_ACK_RELEASE:
		uet_nic_ack_release(&s->ns, ev->obj);
		break;
	case UET_EV_RTO:
		uet_nic_rto(&s->ns, ev->obj);
		break;
	case UET_EV_TX_PASS: {
		struct uet_nic *nic = ev->obj;

		nic->pass_ev = NULL;
		uet_nic_tx_pass(&s->ns, nic);
		break;
	}
	case UET_EV_POOL_WAKE:
		uet_nic_pool_wake(&s->ns, ev->obj);
		break;
	case UET_EV_PACE:
		uet_nic_pace(&s->ns, ev->obj);
		break;
	case UET_EV_MSG_POST:
		if (uet_nic_post(&s->ns, &s->msgs[ev->arg]) < 0)
			s->ns.oom = true;
		break;
	case UET_EV_DOORBELL:
		uet_nic_doorbell(&s->ns, ev->obj);
		break;
	case UET_EV_CREDIT_RETRY:
		if (uet_nic_credit_retry(&s->ns, ev->obj))
			uet_nic_kick(&s->ns, ev->obj);
		break;
	case UET_EV_RAW_WAKE:
		uet_raw_wake(&s->raw, &s->ns, ev->obj);
		break;
	case UET_EV_RAW_PACE:
		uet_raw_pace(&s->raw, &s->ns, ev->obj);
		break;
	case UET_EV_STATS:
		uet_nic_stats_rows(&s->ns);
		s->last_stats_ps = s->des.now_ps;
		if (s->ns.n_done < s->n_msgs)
			uet_des_schedule(&s->des, s->des.now_ps + s->ns.cfg.stats_interval_ps,
					 UET_EV_STATS, NULL, 0);
		break;
	case UET_EV_FLOW_SAMPLE:
		uet_nic_flow_rows(&s->ns);
		if (s->ns.rec.queues)
			uet_fabric_queue_rows(&s->fab, s->ns.rec.queues);
		if (s->ns.n_done < s->n_msgs)
			uet_des_schedule(&s->des, s->des.now_ps + s->flow_sample_ps,
					 UET_EV_FLOW_SAMPLE, NULL, 0);
		break;
	case UET_EV_LINK:
		uet_link_set(&s->fab, ev->obj, ev->arg != 0);
		break;
	case UET_EV_TICK:
		uet_nic_tick(&s->ns, ev->obj);
		break;
	case UET_EV_CREDIT_TICK:
		uet_nic_credit_tick(&s->ns, ev->obj);
		break;
	case UET_EV_CNP:
		uet_nic_cnp_interval_end(&s->ns, ev->obj);
		break;
	default:
		break;
	}
}

static bool out_of_memory(const struct uet_sim *s)
{
	return s->ns.oom | s->pkts.oom | s->des.oom;
}

/* Serve one event. Return: false when nothing is left before @limit_ps. */
static inline __attribute__((always_inline)) bool step(struct uet_sim *s, uint64_t limit_ps)
{
	struct uet_fired ev;

	if (!uet_des_pop_until(&s->des, limit_ps, &ev))
		return false;
	warm_ahead(s);
	dispatch(s, &ev);
	/* an object that is its own event may re-arm it; a pooled event goes back */
	if (ev.ev)
		uet_des_free(&s->des, ev.ev);
	return true;
}

int uet_sim_run(struct uet_sim *s, uint64_t stop_ps)
{
	int rc = uet_sim_start(s, NULL);

	if (rc < 0)
		return rc;
	s->stop_ps = stop_ps;
	while (!all_done(s) && step(s, stop_ps))
		if (__builtin_expect(out_of_memory(s), 0))
			return -ENOMEM;
	if (s->ns.rec.transport_stats && s->ns.cfg.transport_stats &&
	    s->last_stats_ps != s->des.now_ps)
		uet_nic_stats_rows(&s->ns);
	if (s->ns.n_done < s->n_msgs) {
		if (s->des.now_ps < stop_ps && uet_des_peek_time(&s->des) == UINT64_MAX)
			return -EDEADLK;
		return -ETIMEDOUT;
	}
	return 0;
}

/* After the last completion nothing is left but packets on the wire and their timers. */
#define AUDIT_DRAIN_PS 1000000000000ull

int uet_sim_audit(struct uet_sim *s, struct pcm_diag *diag)
{
	uint64_t limit = s->des.now_ps + AUDIT_DRAIN_PS;
	int rc;

	diag->msg[0] = '\0';
	if (!all_done(s)) {
		uet_diag_set(diag, "%u of %u messages still open", s->n_msgs - s->ns.n_done,
			     s->n_msgs);
		return -EBUSY;
	}
	while (step(s, limit))
		if (out_of_memory(s))
			return -ENOMEM;
	if (s->des.n_pending) {
		uet_diag_set(diag, "%llu events still pending a simulated second after the run",
			     (unsigned long long)s->des.n_pending);
		return -ETIMEDOUT;
	}
	rc = uet_nic_audit(&s->ns, diag);
	if (rc == 0)
		rc = uet_fabric_audit(&s->fab, diag);
	if (rc == 0 && s->pkts.live) {
		uet_diag_set(diag, "%llu packets allocated and never freed",
			     (unsigned long long)s->pkts.live);
		rc = -EFAULT;
	}
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void fct_summary(const struct uet_sim *s, struct uet_results *r)
{
	uint64_t *fct = malloc((s->n_msgs ? s->n_msgs : 1) * sizeof(*fct));
	double sum = 0, sq = 0;
	uint32_t n = 0;

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
}

void uet_sim_results(const struct uet_sim *s, struct uet_results *r)
{
	double delivered = 0;

	memset(r, 0, sizeof(*r));
	r->hosts = s->fab.n_hosts;
	r->flows = s->n_msgs;
	fct_summary(s, r);
	r->sim_time_ps = s->ns.n_done == s->n_msgs ? s->ns.last_done_ps : s->des.now_ps;
	for (uint32_t h = 0; h < s->fab.n_hosts; h++) {
		const uint64_t *st = s->ns.nics[h].st;

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
	r->trims = s->fab.sw_trims;
	r->ecn_marks = s->fab.sw_marks;
	r->drops += s->fab.sw_drops + s->fab.link_drops + s->fab.filter_drops;
	r->events = s->des.n_processed;
	r->handler_calls = uet_cc_handler_calls(&s->ns.cc);
	r->handler_errors = uet_cc_handler_errors(&s->ns.cc);
	r->goodput_gbps = r->sim_time_ps ? delivered * 8 / (double)r->sim_time_ps * 1e3 : 0;
}

const char *uet_sim_warnings(const struct uet_sim *s)
{
	return s->warnings;
}

uint64_t uet_sim_unloaded_rtt_ps(const struct uet_sim *s)
{
	return s->fab.unloaded_rtt_ps;
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
	return s->fab.n_hosts;
}

uint64_t uet_sim_now(const struct uet_sim *s)
{
	return s->des.now_ps;
}

void uet_sim_set_raw_ops(struct uet_sim *s, const struct uet_raw_ops *ops)
{
	s->raw.ops = *ops;
}

int uet_sim_raw_qp(struct uet_sim *s, uint32_t src, uint32_t dst, uint16_t entropy)
{
	struct uet_raw_qp_attr attr = { .entropy = entropy };

	return uet_raw_qp_add(&s->raw, src, dst, &attr);
}

int uet_sim_raw_qp_create(struct uet_sim *s, uint32_t src, uint32_t dst,
			  const struct uet_raw_qp_attr *attr)
{
	return attr ? uet_raw_qp_add(&s->raw, src, dst, attr) : -EINVAL;
}

int uet_sim_raw_qp_set_rate(struct uet_sim *s, uint32_t qp, uint64_t rate_bps)
{
	return uet_raw_set_rate(&s->raw, qp, rate_bps);
}

int uet_sim_run_until(struct uet_sim *s, uint64_t t_ps)
{
	int rc = uet_sim_start(s, NULL);

	if (rc < 0)
		return rc;
	while (step(s, t_ps))
		if (__builtin_expect(out_of_memory(s), 0))
			return -ENOMEM;
	if (s->des.now_ps < t_ps)
		s->des.now_ps = t_ps;
	return 0;
}

uint64_t uet_sim_next_event_ps(struct uet_sim *s)
{
	return uet_des_peek_time(&s->des);
}

int uet_sim_raw_post(struct uet_sim *s, uint32_t qp, uint64_t bytes, uint64_t cookie)
{
	return uet_raw_post(&s->raw, &s->ns, qp, bytes, cookie);
}
