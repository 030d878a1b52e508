/* SPDX-License-Identifier: MIT */
/*
 * fabric.h - links, switch ports and topologies (fabric.c, topology.c).
 *
 * The fabric moves packets between nodes: hosts 0 .. n_hosts - 1, then the
 * switches. It knows nothing of NICs: a host's end of the fabric is its
 * egress port (the NIC puts packets on it with uet_port_send()) and the ops
 * table below, through which the fabric tells the host that serialization
 * of one of its packets started and that a packet arrived.
 */
#ifndef PCM_UET_FABRIC_H
#define PCM_UET_FABRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "des.h"
#include "diag.h"
#include "events.h"
#include "pkt.h"
#include "uet.h"

/* Traffic classes of a port: switches under the UET policy use all three, NICs DATA and CONTROL. */
enum uet_tc {
	UET_TC_DATA = 0,
	UET_TC_TRIMMED = 1,
	UET_TC_CONTROL = 2,
	UET_NTC = 3,
};

/* A failed link's loss: everything. */
#define UET_LOSS_ALL_PPM 1000000u

/* The link rates of a fabric's ports (hosts', links', uplinks'): a port names its own. */
#define UET_PORT_RATES 4

/*
 * A port: two cache lines. The first holds all that serializing a packet,
 * admitting one and serving the queues read, so a packet crossing an idle
 * port touches that line only. The second holds the queues' tails, written
 * only when a packet waits behind another (a class is empty when its head
 * is NULL; its tail is stale then), and what failures and records use. A
 * port is its own DES event (PORT_FREE). Queue limits and ECN thresholds
 * are the fabric's, the same for every port.
 */
struct uet_port {
	/* line 1: the serializer, the queues' heads and bytes, the link, the flags */
	uint64_t busy_until;
	struct uet_pkt *qhead[UET_NTC];
	uint64_t qbytes[UET_NTC];
	uint32_t peer;          /* node id at the other end */
	uint8_t rate;           /* its link's rate: an index into the fabric's rate table */
	bool free_pending : 1;  /* its PORT_FREE event is queued */
	bool is_nic : 1;        /* a host's egress port */
	bool faces_nic : 1;     /* a switch port whose link goes to a host */
	bool failed : 1, reroute_away : 1;
	bool trimming : 1, uet_policy : 1;
	/* line 2 */
	struct uet_pkt *qtail[UET_NTC] __attribute__((aligned(64)));
	uint32_t owner;         /* node id */
	uint32_t loss_ppm;      /* while failed: parts per million lost (UET_LOSS_ALL_PPM: all) */
	uint64_t sampled_qbytes; /* the total in the last uet-queues row, +1 (0: none yet) */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct uet_port) == 128, "a port is two cache lines");

enum uet_switch_kind {
	UET_SW_STAR = 0,
	UET_SW_LEAF,
	UET_SW_SPINE,
	UET_SW_EDGE,
	UET_SW_AGG,
	UET_SW_CORE,
};

struct uet_switch {
	uint8_t kind;
	uint32_t pod, idx;   /* leaf/spine index, or fat-tree pod and index */
	uint32_t port_base;
	uint32_t n_ports;
	uint32_t salt;
	char name[32];
};

/* A divisor fixed when the fabric is built: a shift and a mask when it is a power of two. */
struct uet_divisor {
	uint32_t d;
	int shift; /* -1: not a power of two */
};

static inline uint32_t uet_div(const struct uet_divisor *v, uint32_t x)
{
	return v->shift >= 0 ? x >> v->shift : x / v->d;
}

static inline uint32_t uet_mod(const struct uet_divisor *v, uint32_t x)
{
	return v->shift >= 0 ? x & (v->d - 1) : x % v->d;
}

/* How the fabric reaches the hosts. */
struct uet_fabric_ops {
	/* host @host's port starts serializing @pkt; serialization ends at @end_ps */
	void (*tx_start)(void *ctx, uint32_t host, struct uet_pkt *pkt, uint64_t end_ps);
	/* @pkt arrived at host @host, which now owns it */
	void (*deliver)(void *ctx, uint32_t host, struct uet_pkt *pkt);
};

struct uet_fabric {
	const struct uet_topo_cfg *topo;
	struct uet_des *des;
	struct uet_rng *rng;
	struct uet_pkt_pool *pkts;
	struct uet_mem *mem;     /* the run's: switches and ports */
	const struct uet_fabric_ops *ops;
	void *ops_ctx;
	/* every packet reaching a switch: fault injection for tests (hook) */
	enum uet_filter_verdict (*at_switch)(void *ctx, const struct uet_pkt_view *p);
	void *at_switch_ctx;
	uint64_t seed;           /* switches' ECMP salts */
	uint32_t n_hosts, n_switches, n_nodes, n_ports;
	struct uet_switch *sw;
	struct uet_port *ports;  /* [0, n_hosts) are the hosts' */
	/* routing's divisors: hosts per leaf; fat tree: k/2 (hosts per edge), hosts per pod */
	struct uet_divisor per_leaf, half, per_pod;
	uint64_t host_rate_bps;  /* the lower of DataRate and the link rate */
	uint64_t link_delay_ps;  /* every link's */
	uint64_t unloaded_rtt_ps; /* of the longest path: propagation, an MTU and an ACK per hop */
	uint64_t bdp_bytes;      /* host rate times that RTT */
	/* every port's: the byte limit of each class, and the data class's ECN thresholds */
	uint64_t q_limit, ecn_kmin, ecn_kmax;
	uint64_t rate_q16[UET_PORT_RATES]; /* picoseconds per byte << 16, by uet_port.rate */
	uint32_t n_rates;
	bool any_reroute;        /* some failure makes ECMP avoid its link */
	/* totals: what the switches and links did */
	uint64_t sw_drops, sw_trims, sw_marks, link_drops, filter_drops;
};

/**
 * uet_fabric_build() - the ports, switches and links of @f->topo.
 * @f: the fabric; topo, des, rng, pkts and seed set by the caller.
 * @host_rate_bps: the hosts' rate (the lower of DataRate and the link rate).
 * @mtu_bytes: a full data packet on the wire, for the BDP of the default queues.
 * @where: the scenario's name for messages.
 * @diag: what is wrong with the topology, on failure.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int uet_fabric_build(struct uet_fabric *f, uint64_t host_rate_bps, uint32_t mtu_bytes,
		     const char *where, struct pcm_diag *diag);
void uet_fabric_free(struct uet_fabric *f);

/* Queue @pkt on @p, or serialize it at once if @p is idle. */
void uet_port_send(struct uet_fabric *f, struct uet_port *p, struct uet_pkt *pkt);
/* The PORT_FREE event: @p's serializer is free. */
void uet_port_free_event(struct uet_fabric *f, struct uet_port *p);
/* The ARRIVE event: @pkt reached pkt->node, a switch or a host. */
void uet_fabric_arrive(struct uet_fabric *f, struct uet_pkt *pkt);
/*
 * Fetch into the cache what a coming ARRIVE (@pkt at a switch: the egress
 * port it will take, whose index a whole packet keeps in pkt->egress_hint
 * where routing does not depend on failed links) or PORT_FREE (@p: the
 * packet it will send) touches first. Neither changes what the event will
 * do.
 */
void uet_fabric_warm_arrival(const struct uet_fabric *f, struct uet_pkt *pkt);
void uet_port_warm(const struct uet_port *p);

/* A node by name ("host3", "sw0", "leaf1", "spine0", "edge0.1", "agg2.0", "core5"), or -1. */
int uet_node_find(const struct uet_fabric *f, const char *name);
/* Node @a's port whose link goes to node @b, or NULL. */
struct uet_port *uet_port_between(const struct uet_fabric *f, uint32_t a, uint32_t b);
bool uet_nodes_linked(const struct uet_fabric *f, uint32_t a, uint32_t b);
/* Take the link of @fl down (both ways) or bring it back. */
void uet_link_set(struct uet_fabric *f, const struct uet_link_failure *fl, bool down);

/* uet-queues rows for the switch ports whose queues changed since the last call. */
void uet_fabric_queue_rows(struct uet_fabric *f, FILE *out);

/* Leak audit of ports and queues, after a drained run. Return: 0, -EFAULT. */
int uet_fabric_audit(const struct uet_fabric *f, struct pcm_diag *diag);

static inline uint64_t uet_ser_ps(uint64_t ps_per_byte_q16, uint64_t bytes)
{
	return (bytes * ps_per_byte_q16) >> 16;
}

/* Picoseconds per byte of @p's link, << 16. */
static inline uint64_t uet_port_ps_per_byte_q16(const struct uet_fabric *f, const struct uet_port *p)
{
	return f->rate_q16[p->rate];
}

static inline uint64_t uet_ps_per_byte_q16(uint64_t rate_bps)
{
	/* 8e12 ps*bit/s per byte, scaled by 2^16, rounded */
	return (uint64_t)((8e12 * 65536.0) / (double)rate_bps + 0.5);
}

#endif /* PCM_UET_FABRIC_H */
