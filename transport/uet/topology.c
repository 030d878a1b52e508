// SPDX-License-Identifier: MIT
/*
 * topology.c - building the fabric of a scenario (N:1 incast, leaf-spine,
 * k-ary fat tree), its default queue limits, node names and link failures.
 *
 * Ports [0, hosts) are the hosts' egress ports; each switch then owns a
 * contiguous range. Queues default to one BDP of the longest path, and never
 * less than two full packets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "records.h"

struct builder {
	struct uet_fabric *f;
	uint32_t next_port;
};

static uint32_t add_switch(struct builder *b, uint32_t i, uint8_t kind, uint32_t pod,
			   uint32_t idx, uint32_t n_ports, const char *name)
{
	struct uet_switch *sw = &b->f->sw[i];
	size_t len = strlen(name);

	sw->kind = kind;
	sw->pod = pod;
	sw->idx = idx;
	sw->n_ports = n_ports;
	sw->port_base = b->next_port;
	sw->salt = (uint32_t)(uet_mix64(b->f->seed * 1000003u + i) >> 32);
	if (len >= sizeof(sw->name))
		len = sizeof(sw->name) - 1;
	memcpy(sw->name, name, len);
	sw->name[len] = '\0';
	b->next_port += n_ports;
	return sw->port_base;
}

/* The index of @rate_bps in the fabric's rate table, added if new. */
static uint8_t port_rate(struct uet_fabric *f, uint64_t rate_bps)
{
	uint64_t q16 = uet_ps_per_byte_q16(rate_bps);
	uint32_t i;

	for (i = 0; i < f->n_rates && i < UET_PORT_RATES; i++)
		if (f->rate_q16[i] == q16)
			return (uint8_t)i;
	/* hosts, links and leaf-spine uplinks: more is a bug, which the build reports */
	f->n_rates++;
	if (i == UET_PORT_RATES)
		return 0;
	f->rate_q16[i] = q16;
	return (uint8_t)i;
}

static void init_port(struct uet_fabric *f, struct uet_port *p, uint32_t owner, uint32_t peer,
		      uint64_t rate_bps)
{
	const struct uet_topo_cfg *t = f->topo;

	p->owner = owner;
	p->peer = peer;
	p->rate = port_rate(f, rate_bps);
	p->is_nic = owner < f->n_hosts;
	p->faces_nic = !p->is_nic && peer < f->n_hosts;
	p->uet_policy = t->uet_policy;
	p->trimming = t->uet_policy && t->switch_trimming;
}

static void link_ports(struct uet_fabric *f, uint32_t pa, uint32_t na, uint32_t pb, uint32_t nb,
		       uint64_t rate_bps)
{
	init_port(f, &f->ports[pa], na, nb, rate_bps);
	init_port(f, &f->ports[pb], nb, na, rate_bps);
}

static int count_nodes(struct uet_fabric *f, const char *where, struct pcm_diag *diag)
{
	const struct uet_topo_cfg *t = f->topo;
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
	if (hosts > (1u << 20) || hosts < 2 || hosts + sws > UET_PKT_MAX_NODES)
		goto bad;
	f->n_hosts = (uint32_t)hosts;
	f->n_switches = (uint32_t)sws;
	f->n_nodes = (uint32_t)(hosts + sws);
	f->n_ports = (uint32_t)ports;
	return 0;
bad:
	uet_diag_set(diag,
		     "%s: topology: sizes out of range (incast senders 1..65535, leaf-spine counts "
		     ">= 1, fat-tree k even in 2..64, 2 .. 2^20 hosts, under 2^21 nodes)",
		     where);
	return -EINVAL;
}

/* Hosts' links, then the switches' among themselves. Return: the longest path's links. */
static uint32_t build_incast(struct uet_fabric *f, struct builder *b)
{
	uint32_t base = add_switch(b, 0, UET_SW_STAR, 0, 0, f->n_hosts, "sw0");

	for (uint32_t h = 0; h < f->n_hosts; h++)
		link_ports(f, h, h, base + h, f->n_hosts, f->host_rate_bps);
	return 2;
}

static uint32_t build_leaf_spine(struct uet_fabric *f, struct builder *b, uint64_t up_rate)
{
	const struct uet_topo_cfg *t = f->topo;
	uint32_t H = t->hosts_per_leaf;
	char name[32];

	for (uint32_t l = 0; l < t->leaves; l++) {
		snprintf(name, sizeof(name), "leaf%u", l);
		add_switch(b, l, UET_SW_LEAF, 0, l, H + t->spines, name);
	}
	for (uint32_t sp = 0; sp < t->spines; sp++) {
		snprintf(name, sizeof(name), "spine%u", sp);
		add_switch(b, t->leaves + sp, UET_SW_SPINE, 0, sp, t->leaves, name);
	}
	for (uint32_t h = 0; h < f->n_hosts; h++) {
		const struct uet_switch *leaf = &f->sw[h / H];

		link_ports(f, h, h, leaf->port_base + h % H, f->n_hosts + h / H, f->host_rate_bps);
	}
	for (uint32_t l = 0; l < t->leaves; l++)
		for (uint32_t sp = 0; sp < t->spines; sp++)
			link_ports(f, f->sw[l].port_base + H + sp, f->n_hosts + l,
				   f->sw[t->leaves + sp].port_base + l, f->n_hosts + t->leaves + sp,
				   up_rate);
	return 4;
}

static uint32_t build_fat_tree(struct uet_fabric *f, struct builder *b)
{
	const struct uet_topo_cfg *t = f->topo;
	uint32_t k = t->k, half = k / 2, n_edge = k * half, n_agg = k * half;
	char name[32];

	for (uint32_t p = 0; p < k; p++)
		for (uint32_t e = 0; e < half; e++) {
			snprintf(name, sizeof(name), "edge%u.%u", p, e);
			add_switch(b, p * half + e, UET_SW_EDGE, p, e, k, name);
		}
	for (uint32_t p = 0; p < k; p++)
		for (uint32_t a = 0; a < half; a++) {
			snprintf(name, sizeof(name), "agg%u.%u", p, a);
			add_switch(b, n_edge + p * half + a, UET_SW_AGG, p, a, k, name);
		}
	for (uint32_t c = 0; c < half * half; c++) {
		snprintf(name, sizeof(name), "core%u", c);
		add_switch(b, n_edge + n_agg + c, UET_SW_CORE, 0, c, k, name);
	}
	for (uint32_t h = 0; h < f->n_hosts; h++) {
		uint32_t e = h / half; /* global edge index = pod * half + edge */

		link_ports(f, h, h, f->sw[e].port_base + h % half, f->n_hosts + e, f->host_rate_bps);
	}
	for (uint32_t p = 0; p < k; p++)
		for (uint32_t e = 0; e < half; e++)
			for (uint32_t a = 0; a < half; a++) {
				uint32_t ei = p * half + e, ai = n_edge + p * half + a;

				link_ports(f, f->sw[ei].port_base + half + a, f->n_hosts + ei,
					   f->sw[ai].port_base + e, f->n_hosts + ai, t->link_rate_bps);
			}
	for (uint32_t p = 0; p < k; p++)
		for (uint32_t a = 0; a < half; a++)
			for (uint32_t j = 0; j < half; j++) {
				uint32_t ai = n_edge + p * half + a;
				uint32_t ci = n_edge + n_agg + a * half + j;

				link_ports(f, f->sw[ai].port_base + half + j, f->n_hosts + ai,
					   f->sw[ci].port_base + p, f->n_hosts + ci, t->link_rate_bps);
			}
	return 6;
}

static struct uet_divisor divisor(uint32_t d)
{
	struct uet_divisor v = { .d = d ? d : 1, .shift = -1 };

	if (v.d & (v.d - 1))
		return v;
	v.shift = __builtin_ctz(v.d);
	return v;
}

/* Every port's queue limit and ECN thresholds. */
static void set_queue_limits(struct uet_fabric *f, uint32_t mtu_bytes)
{
	const struct uet_topo_cfg *t = f->topo;

	f->q_limit = t->queue_bytes ? t->queue_bytes : f->bdp_bytes;
	if (f->q_limit < 2ull * mtu_bytes)
		f->q_limit = 2ull * mtu_bytes;
	f->ecn_kmin = t->ecn_kmin_bytes == UINT64_MAX ? f->q_limit / 5 : t->ecn_kmin_bytes;
	f->ecn_kmax = t->ecn_kmax_bytes;
	if (f->ecn_kmax == UINT64_MAX)
		f->ecn_kmax = f->q_limit * 4 / 5;
	if (f->ecn_kmax <= f->ecn_kmin)
		f->ecn_kmax = f->ecn_kmax ? f->ecn_kmin + 1 : 0;
}

int uet_fabric_build(struct uet_fabric *f, uint64_t host_rate_bps, uint32_t mtu_bytes,
		     const char *where, struct pcm_diag *diag)
{
	const struct uet_topo_cfg *t = f->topo;
	struct builder b = { .f = f };
	uint64_t up_rate = t->link_rate_bps, q_host;
	uint32_t links_max;
	int rc;

	rc = count_nodes(f, where, diag);
	if (rc < 0)
		return rc;
	f->host_rate_bps = host_rate_bps;
	f->link_delay_ps = t->link_delay_ps;
	if (t->kind == UET_TOPO_LEAF_SPINE) {
		if (t->uplink_rate_bps)
			up_rate = t->uplink_rate_bps;
		else
			up_rate = (uint64_t)((double)t->hosts_per_leaf * (double)host_rate_bps /
					     ((double)t->spines * t->oversubscription));
		if (up_rate < 1000000) {
			uet_diag_set(diag,
				     "%s: topology: uplink rate below 1 Mbit/s; check oversubscription",
				     where);
			return -EINVAL;
		}
	}
	f->per_leaf = divisor(t->hosts_per_leaf);
	f->half = divisor(t->k / 2);
	f->per_pod = divisor((t->k / 2) * (t->k / 2));
	f->sw = uet_mem_zalloc(f->mem, (size_t)f->n_switches * sizeof(*f->sw));
	f->ports = uet_mem_zalloc(f->mem, (size_t)f->n_ports * sizeof(*f->ports));
	if (!f->sw || !f->ports)
		return -ENOMEM;
	b.next_port = f->n_hosts;
	switch (t->kind) {
	case UET_TOPO_LEAF_SPINE:
		links_max = build_leaf_spine(f, &b, up_rate);
		break;
	case UET_TOPO_FAT_TREE:
		links_max = build_fat_tree(f, &b);
		break;
	case UET_TOPO_INCAST:
	default:
		links_max = build_incast(f, &b);
		break;
	}
	if (b.next_port != f->n_ports) {
		uet_diag_set(diag, "internal: %u ports built, %u expected", b.next_port, f->n_ports);
		return -EINVAL;
	}
	if (f->n_rates > UET_PORT_RATES) {
		uet_diag_set(diag, "internal: %u link rates, at most %u", f->n_rates, UET_PORT_RATES);
		return -EINVAL;
	}
	/* unloaded RTT of the longest path: propagation both ways, an MTU and an ACK per hop */
	q_host = uet_ps_per_byte_q16(host_rate_bps);
	f->unloaded_rtt_ps = 2ull * links_max * t->link_delay_ps +
			     links_max * (uet_ser_ps(q_host, mtu_bytes) +
					  uet_ser_ps(q_host, UET_ACK_WIRE_BYTES));
	f->bdp_bytes = (uint64_t)((double)host_rate_bps / 8e12 * (double)f->unloaded_rtt_ps);
	set_queue_limits(f, mtu_bytes);
	return 0;
}

void uet_fabric_free(struct uet_fabric *f)
{
	uet_mem_free(f->mem, f->sw, (size_t)f->n_switches * sizeof(*f->sw));
	uet_mem_free(f->mem, f->ports, (size_t)f->n_ports * sizeof(*f->ports));
	f->sw = NULL;
	f->ports = NULL;
}

int uet_node_find(const struct uet_fabric *f, const char *name)
{
	unsigned h;
	char tail;

	if (sscanf(name, "host%u%c", &h, &tail) == 1)
		return h < f->n_hosts ? (int)h : -1;
	for (uint32_t i = 0; i < f->n_switches; i++)
		if (strcmp(f->sw[i].name, name) == 0)
			return (int)(f->n_hosts + i);
	return -1;
}

struct uet_port *uet_port_between(const struct uet_fabric *f, uint32_t a, uint32_t b)
{
	uint32_t base, n;

	if (a < f->n_hosts) {
		base = a;
		n = 1;
	} else {
		base = f->sw[a - f->n_hosts].port_base;
		n = f->sw[a - f->n_hosts].n_ports;
	}
	for (uint32_t i = 0; i < n; i++)
		if (f->ports[base + i].peer == b)
			return &f->ports[base + i];
	return NULL;
}

bool uet_nodes_linked(const struct uet_fabric *f, uint32_t a, uint32_t b)
{
	return uet_port_between(f, a, b) != NULL;
}

void uet_link_set(struct uet_fabric *f, const struct uet_link_failure *fl, bool down)
{
	int a = uet_node_find(f, fl->a), b = uet_node_find(f, fl->b);
	struct uet_port *pa, *pb;

	if (a < 0 || b < 0)
		return;
	pa = uet_port_between(f, (uint32_t)a, (uint32_t)b);
	pb = uet_port_between(f, (uint32_t)b, (uint32_t)a);
	if (!pa || !pb)
		return;
	pa->failed = pb->failed = down;
	pa->loss_ppm = pb->loss_ppm = fl->loss_ppm ? fl->loss_ppm : UET_LOSS_ALL_PPM;
	/* ECMP avoids a link that is down; a lossy one it cannot tell */
	pa->reroute_away = pb->reroute_away = down && fl->reroute && !fl->loss_ppm;
}

void uet_fabric_queue_rows(struct uet_fabric *f, FILE *out)
{
	for (uint32_t i = f->n_hosts; i < f->n_ports; i++) {
		struct uet_port *p = &f->ports[i];
		uint64_t total = p->qbytes[0] + p->qbytes[1] + p->qbytes[2] + 1;

		if (total == p->sampled_qbytes)
			continue;
		p->sampled_qbytes = total;
		uet_rec_queue_row(out, f->des->now_ps, i, f->sw[p->owner - f->n_hosts].name, p->peer,
				  p->qbytes, f->q_limit);
	}
}
