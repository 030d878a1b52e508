/* SPDX-License-Identifier: MIT */
/*
 * uet_int.h - the emulation's internal state, shared by its files: packets,
 * ports and switches (fabric.c), NICs, PDCs and groups (nic.c), the PCM
 * glue (cc.c), records (records.c) and the run itself (sim.c).
 */
#ifndef PCM_UET_INT_H
#define PCM_UET_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "des.h"
#include "shell.h"
#include "uet.h"

/* Event types. */
enum uet_ev_type {
	UET_EV_ARRIVE = 1,   /* obj: packet reaching pkt->node */
	UET_EV_PORT_FREE,    /* obj: port whose serializer is free */
	UET_EV_FETCH_DONE,   /* obj: data packet whose payload arrived over PCIe */
	UET_EV_TX_PASS,      /* obj: NIC, transmit process (doorbell) */
	UET_EV_POOL_WAKE,    /* obj: NIC, egress pool drained to half */
	UET_EV_ACK_RELEASE,  /* obj: ACK packet held for the PCIe service time */
	UET_EV_RTO,          /* obj: PDC whose earliest retransmission timer is due */
	UET_EV_PACE,         /* obj: group, pacing gap elapsed */
	UET_EV_MSG_POST,     /* arg: message id */
	UET_EV_STATS,        /* NDStatsReportInterval tick */
	UET_EV_FLOW_SAMPLE,  /* cwnd/rate sample tick */
	UET_EV_LINK,         /* obj: failure, arg: 1 down / 0 up */
	UET_EV_TICK,         /* obj: group whose package has ELAPSED_TIME triggers */
	UET_EV_CREDIT_TICK,  /* obj: NIC whose receiver-credit instance has demand */
	UET_EV_DOORBELL,     /* obj: PDC whose message's doorbell delay is over */
	UET_EV_COUNT,
};

/* Switch traffic classes under the UET policy; NICs use DATA and CONTROL. */
enum uet_tc {
	UET_TC_DATA = 0,
	UET_TC_TRIMMED = 1,
	UET_TC_CONTROL = 2,
	UET_NTC = 3,
};

/*
 * A packet. Its DES event is embedded: a packet is either travelling (ARRIVE),
 * fetching (FETCH_DONE), held (ACK_RELEASE), or queued, never two at once;
 * a queued or free packet links through ev.next.
 */
struct uet_pkt {
	struct uet_ev ev;    /* 32 B; with the fields below, the first cache line */
	uint32_t node;       /* node the packet travels to */
	uint32_t src, dst;
	uint32_t pdc;        /* sender PDC id */
	uint32_t psn;
	uint16_t wire;
	uint16_t payload;
	uint16_t entropy;
	uint16_t service_units; /* ACK: receiver service time in UET_SERVICE_STEP_PS */
	uint8_t kind, dscp, flags, nack_code;
	/* second line: ACK, probe and credit fields */
	uint64_t value;      /* PROBE: send time; CREDIT_REQ: bytes; CREDIT: cumulative credit */
	uint64_t sack_bits;
	uint32_t cack;       /* ACK: next expected PSN (everything below received) */
	uint32_t sack_base;
	uint8_t ce;          /* ACK: CE-marked packets since the previous ACK */
	uint8_t retx_level;  /* DATA: retransmissions before this one (saturating; timer backoff) */
} __attribute__((aligned(64)));

#define UET_PKT_NEXT(p) ((struct uet_pkt *)(p)->ev.next)

struct uet_port {
	struct uet_pkt *qhead[UET_NTC], *qtail[UET_NTC];
	uint64_t qbytes[UET_NTC];
	uint64_t limit;
	uint64_t ecn_kmin, ecn_kmax;
	uint64_t busy_until;
	struct uet_ev free_ev;  /* embedded PORT_FREE event */
	bool free_pending;
	uint64_t ps_per_byte_q16;
	uint64_t delay_ps;
	uint32_t owner, peer; /* node ids */
	bool is_nic;          /* a NIC's egress port */
	bool faces_nic;       /* a switch port whose link goes to a NIC */
	bool failed, reroute_away;
	bool trimming, uet_policy;
	uint64_t tx_pkts, tx_bytes, drops, trims, marks, max_qbytes;
};

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

/* Per-packet sender state. */
enum uet_tx_state {
	UET_TX_UNSENT = 0,
	UET_TX_OUT,        /* counted in flight: fetched/queued/on the wire, awaiting ACK */
	UET_TX_RTXQ,       /* queued for retransmission, not in flight */
	UET_TX_ACKED,
	UET_TX_PREFETCHED, /* payload in the prefetch buffer, not committed */
};

struct uet_txpkt {
	uint64_t rto_ps;    /* deadline of the running retransmission timer, 0 if none */
	uint64_t tx_ps;     /* serialization start of the latest transmission */
	uint32_t retx_next; /* retransmission FIFO link */
	uint16_t entropy;   /* of the latest transmission */
	uint8_t state;
	/*
	 * Transmissions so far, saturating at 255: it only picks the timer's
	 * backoff level (capped at MaxExponentialRTOBackoffCount <= 40) and tells
	 * a first transmission apart, so saturation sets no retry limit.
	 */
	uint8_t tx_count;
};

#define UET_NONE UINT32_MAX

/*
 * Retransmission timers of one PDC at one backoff level. Every timer of a level
 * has the same duration and starts in serialization order, so deadlines are
 * FIFO: one queue per level and one DES event per PDC (at the earliest head)
 * give exact per-packet timers without an event per packet.
 */
struct uet_rtoq {
	uint64_t *deadline;
	uint32_t *psn;
	uint32_t head, len, cap;
};

struct uet_group;

/* Receiving side of a PDC. */
struct uet_rxpdc {
	uint64_t *bits;        /* PSNs received */
	uint32_t expected;     /* next in-order PSN */
	uint32_t max_psn;      /* highest PSN received + 1 */
	uint32_t sack_cursor;  /* successive ACKs report successive 64-PSN blocks */
	uint32_t ce_pending;
	bool done;
	struct uet_group *grp;
};

struct uet_pdc {
	uint32_t id;           /* = message id */
	uint32_t nic, peer;
	struct uet_msg_info *msg;
	struct uet_group *grp;
	struct uet_pdc *ring_next, *ring_prev; /* the group's PDCs, for turns */
	uint32_t npkts;
	uint32_t next_psn;     /* next new segment */
	uint32_t una;          /* lowest PSN not acknowledged */
	uint32_t n_acked;
	uint32_t n_sent;       /* data packets sent, retransmissions included (AR rule) */
	uint32_t retx_head, retx_tail;
	struct uet_pkt *pf_head, *pf_tail; /* payloads in the prefetch buffer, in PSN order */
	uint32_t last_payload;
	bool probe_sent, tx_done_logged;
	struct uet_txpkt *tx;
	struct uet_rtoq *rtoq;  /* one per backoff level, allocated at the first transmission */
	struct uet_ev *rto_ev;
	struct uet_rxpdc rx;
	bool rx_open;
};

struct uet_ctl {
	uint64_t cwnd, rate, ev, credit;
};

struct uet_cc {
	const struct pcm_package *pkg;
	struct pcm_shell *shell;
	uint32_t index;        /* policy index */
	uint32_t *free_slots;
	uint32_t n_free, n_slots;
	int cwnd_slot, rate_slot, ev_slot, credit_slot;
	bool wants_tx_event, wants_tx_ready, receiver_credit;
	bool has_timer;        /* an ELAPSED_TIME signal has a trigger: tick it */
	uint32_t delay;        /* async: feeds before controls apply */
};

/*
 * A package bound to a group: its record in the package's shell, the feeds it
 * has had and, in asynchronous mode, its delay line of control sets.
 */
struct uet_bind {
	struct uet_cc *cc;      /* NULL: no package */
	uint32_t slot;          /* UET_NONE: no record (a receiver-credit policy's sender) */
	uint64_t feeds;
	struct uet_ctl *delay_ring;
};

/* Which of a group's packages an event goes to (uet_cc_feed()). */
#define UET_FEED_POL 1u
#define UET_FEED_LB 2u
#define UET_FEED_ALL (UET_FEED_POL | UET_FEED_LB)

struct uet_group {
	struct uet_nic *nic;
	uint32_t peer;
	uint32_t id;
	struct uet_pdc *turn;  /* ring of this NIC's sending PDCs to the peer */
	uint32_t n_tx, n_rx;
	uint32_t n_doorbell;   /* PDCs posted whose doorbell delay is not over */
	uint64_t inflight;
	uint64_t backlog_bytes; /* new data not yet fetched plus retransmissions waiting */
	uint32_t backlog_pkts;
	struct uet_ctl ctl;     /* controls in force */
	bool in_rq;
	struct uet_group *rq_next, *rq_prev;
	uint64_t next_send_ps;
	struct uet_ev *pace_ev;
	struct uet_bind pol;    /* the group's policy */
	struct uet_bind lb;     /* the scenario's LB package, run beside it */
	uint64_t base_rtt_ps;
	uint64_t credit_granted, credit_used, credit_sent;
	uint64_t posted_bytes, credit_requested; /* sender: EQDS requests */
	uint64_t rx_demand;     /* receiver: bytes this peer asked for and was not yet granted */
	struct uet_group *crr_next; /* receiver: round-robin of peers with demand */
	bool in_crr;
	struct uet_ev *tick_ev;
	uint64_t last_cnp_ps;
	uint64_t last_rtt_ps;
	uint64_t flow_seed;     /* PCM_SIG_FLOW_SEED of this group's events */
};

/* Transport statistics, one row per NIC per NDStatsReportInterval. */
enum uet_stat {
	UET_ST_TX_DATA_PKTS,
	UET_ST_TX_DATA_BYTES,
	UET_ST_TX_RETX_PKTS,
	UET_ST_TX_ACKS,
	UET_ST_TX_NACKS,
	UET_ST_TX_PROBES,
	UET_ST_RX_DATA_PKTS,
	UET_ST_RX_DATA_BYTES,
	UET_ST_RX_DUP_PKTS,
	UET_ST_RX_OOO_PKTS,
	UET_ST_RX_TRIMMED,
	UET_ST_RX_POOL_DROPS,
	UET_ST_RX_ACKS,
	UET_ST_RX_NACKS,
	UET_ST_RX_ECN,
	UET_ST_TIMEOUTS,
	UET_ST_MSGS_POSTED,
	UET_ST_MSGS_SENT,
	UET_ST_MSGS_RECEIVED,
	UET_ST_HANDLER_CALLS,
	UET_ST_COUNT,
};

/* A buffer counted in bytes, its reservations released at scheduled times (bytepool.c). */
struct uet_bytepool {
	uint64_t used;         /* reserved, releases up to the last drain applied */
	uint64_t *end_ps;      /* FIFO of scheduled releases, times non-decreasing */
	uint32_t *bytes;
	uint32_t head, len, cap;
};

/* Apply the releases due by @now_ps. */
void uet_bytepool_drain(struct uet_bytepool *p, uint64_t now_ps);
/* Schedule the release of @bytes (already counted in used) at @end_ps. Return: 0, -ENOMEM. */
int uet_bytepool_release_at(struct uet_bytepool *p, uint64_t end_ps, uint32_t bytes);
/* When the scheduled releases bring used to @level or below; UINT64_MAX if they never do. */
uint64_t uet_bytepool_time_at_or_below(const struct uet_bytepool *p, uint64_t level);
void uet_bytepool_free(struct uet_bytepool *p);

struct uet_nic {
	uint32_t id;
	uint32_t ip;
	struct uet_port *port;
	struct uet_group *rq_head, *rq_tail;
	struct uet_group **groups;
	uint32_t n_groups, cap_groups;
	struct uet_bytepool egress; /* data-class egress pool */
	struct uet_bytepool rx_pool; /* data-class receive pool */
	bool pool_blocked;
	struct uet_ev *pool_ev;
	struct uet_ev *pass_ev;
	uint64_t n2h_free, h2n_free; /* PCIe directions: NIC to host, host to NIC */
	uint64_t last_ack_ps;
	uint64_t prefetch_used;
	bool prefetch_blocked;
	/* the receiver-credit (EQDS) instance: one flow per receiving NIC */
	struct uet_cc *credit_cc;
	uint32_t credit_slot;
	uint64_t credit_distributed;
	struct uet_group *crr_head, *crr_tail;
	struct uet_ev *credit_tick_ev;
	uint64_t st[UET_ST_COUNT];
	uint64_t st_last[UET_ST_COUNT];
};

struct uet_sim {
	const struct uet_scenario *scn;
	struct uet_nic_cfg cfg;
	struct uet_des des;
	struct uet_rng rng;
	uint64_t seed;
	uint32_t n_hosts, n_switches, n_nodes, n_ports;
	struct uet_nic *nics;
	struct uet_switch *sw;
	struct uet_port *ports;
	uint64_t host_rate_bps;
	uint64_t bdp_bytes;
	uint64_t pcie_ps_per_byte_q16;
	struct uet_pkt *pkt_free;
	uint64_t pkts_live;      /* packets allocated and not freed */
	void **pkt_slabs;
	size_t n_pkt_slabs, cap_pkt_slabs;
	struct uet_msg_info *msgs;
	uint32_t n_msgs, cap_msgs;
	uint32_t n_done;
	struct uet_pdc **pdcs;
	struct uet_cc cc[UET_MAX_POLICIES];
	uint32_t n_cc;
	struct uet_cc *lb;       /* the LB package's, or NULL */
	bool started;
	bool oom;
	struct uet_hooks hooks;
	struct uet_records rec;
	uint32_t next_group_id;
	uint64_t last_done_ps;
	/* totals the NICs do not count */
	uint64_t sw_drops, sw_trims, sw_marks, link_drops, filter_drops;
	bool any_reroute;        /* some failure makes ECMP avoid its link */
	struct uet_rawqp *rawqps;
	uint32_t n_rawqps, cap_rawqps;
	uint64_t raw_live;       /* raw packets not yet received or dropped */
	struct uet_raw_ops raw_ops;
	uint64_t handler_errors;
	bool monitor_on;
	uint64_t stop_ps;
	uint64_t last_stats_ps;
	uint64_t flow_sample_ps;
	/* leak audit: what groups still held when they were freed */
	uint64_t leaked_inflight, leaked_backlog;
	uint32_t leaked_groups;
};

/* Format a diagnostic (vsnprintf, truncating). */
void uet_diag_set(struct pcm_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A raw (UC-like) queue pair: sender PSNs and the receiver's message in progress. */
struct uet_rawqp {
	uint32_t src, dst;
	uint16_t entropy;
	uint32_t next_psn;
	uint32_t expected;    /* receiver: next PSN */
	uint32_t rx_first;    /* first PSN of the last message seen, UET_NONE before any */
	uint64_t rx_cookie;
	bool rx_active;
};

/* raw.c */
void uet_raw_receive(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt);
uint64_t uet_pcie_fetch(struct uet_sim *s, struct uet_nic *nic, uint32_t payload);

/* fabric.c */
int uet_fabric_build(struct uet_sim *s, struct pcm_diag *diag);
void uet_fabric_free(struct uet_sim *s);
void uet_port_send(struct uet_sim *s, struct uet_port *p, struct uet_pkt *pkt);
void uet_port_free_event(struct uet_sim *s, struct uet_port *p);
void uet_switch_receive(struct uet_sim *s, struct uet_pkt *pkt);
int uet_node_find(const struct uet_sim *s, const char *name);
void uet_link_set(struct uet_sim *s, const struct uet_link_failure *f, bool down);
bool uet_nodes_linked(struct uet_sim *s, uint32_t a, uint32_t b);
/* Leak audit of ports and queues, after a drained run. Return: 0, -EFAULT. */
int uet_fabric_audit(struct uet_sim *s, struct pcm_diag *diag);

static inline uint64_t uet_ser_ps(uint64_t ps_per_byte_q16, uint64_t bytes)
{
	return (bytes * ps_per_byte_q16) >> 16;
}

static inline uint64_t uet_ps_per_byte_q16(uint64_t rate_bps)
{
	/* 8e12 ps*bit/s per byte, scaled by 2^16, rounded */
	return (uint64_t)((8e12 * 65536.0) / (double)rate_bps + 0.5);
}

/* packet pool (sim.c) */
struct uet_pkt *uet_pkt_alloc(struct uet_sim *s);

static inline void uet_pkt_free(struct uet_sim *s, struct uet_pkt *p)
{
	if (p->kind == UET_PKT_RAW)
		s->raw_live--;
	s->pkts_live--;
	p->ev.next = (struct uet_ev *)s->pkt_free;
	s->pkt_free = p;
}

void uet_pkt_view(const struct uet_sim *s, const struct uet_pkt *p, uint32_t at, bool rx,
		  struct uet_pkt_view *v);

/* nic.c */
void uet_nic_receive(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt);
void uet_nic_tx_start(struct uet_sim *s, struct uet_nic *nic, struct uet_pkt *pkt,
		      uint64_t end_ps);
void uet_nic_fetch_done(struct uet_sim *s, struct uet_pkt *pkt);
void uet_nic_tx_pass(struct uet_sim *s, struct uet_nic *nic);
void uet_nic_pool_wake(struct uet_sim *s, struct uet_nic *nic);
void uet_nic_ack_release(struct uet_sim *s, struct uet_pkt *pkt);
void uet_nic_rto(struct uet_sim *s, struct uet_pdc *pdc);
void uet_nic_pace(struct uet_sim *s, struct uet_group *g);
int uet_nic_post(struct uet_sim *s, struct uet_msg_info *m);
void uet_nic_doorbell(struct uet_sim *s, struct uet_pdc *pdc);
void uet_nic_free_all(struct uet_sim *s);
/* Leak audit of PDCs, groups and pools, after a drained run. Return: 0, -EFAULT. */
int uet_nic_audit(struct uet_sim *s, struct pcm_diag *diag);
/* The scenario's rules: the first matching (src, dst) rule's policy, else policy 0. */
uint32_t uet_policy_for(const struct uet_sim *s, uint32_t src, uint32_t dst);
void uet_nic_tick(struct uet_sim *s, struct uet_group *g);
void uet_nic_credit_tick(struct uet_sim *s, struct uet_nic *nic);

/* cc.c */
int uet_cc_init(struct uet_sim *s, const struct pcm_package *const *pkgs, uint32_t max_groups,
		struct pcm_diag *diag);
void uet_cc_fini(struct uet_sim *s);
int uet_cc_attach(struct uet_sim *s, struct uet_group *g, uint32_t policy);
/* Free the group's records and delay lines. */
void uet_cc_detach(struct uet_sim *s, struct uet_group *g);
/* Feed @ev to the group's packages in @which (UET_FEED_*) that have a record.
 * Return: how many handlers ran. */
int uet_cc_feed(struct uet_sim *s, struct uet_group *g, unsigned which, struct pcm_event *ev);
/* UET_FEED_* of the group's packages that have a record. */
unsigned uet_cc_live(const struct uet_group *g);
/* Check the LB package against every policy (at sim creation). */
int uet_cc_check_lb(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		    struct pcm_diag *diag);
int uet_cc_attach_receiver(struct uet_sim *s, struct uet_nic *nic, struct uet_cc *cc);
void uet_cc_credit_feed(struct uet_sim *s, struct uet_nic *nic, const struct pcm_event *ev);
uint64_t uet_cc_handler_calls(const struct uet_sim *s);

/* records.c */
void uet_rec_headers(struct uet_sim *s);
void uet_rec_stats(struct uet_sim *s);
void uet_rec_flows(struct uet_sim *s);
void uet_rec_event(struct uet_sim *s, uint32_t nic, const char *what, uint32_t pdc,
		   uint32_t peer, uint64_t bytes);
void uet_rec_monitor(struct uet_sim *s, const struct uet_pkt_view *v);
extern const char *const uet_stat_names[UET_ST_COUNT];

#endif /* PCM_UET_INT_H */
