/* SPDX-License-Identifier: MIT */
/*
 * nic.h - the UET NIC model: its state, and the functions its files share.
 * Each file of nic/ is one section of seeds/uet-nic-datapath.txt (or a pcm
 * extension); README.md lists them from the top down, and a file calls only
 * files below it:
 *
 *   rx, ack, nack, cnp, credit_grant, wire, audit
 *     -> pdc -> rto, group -> sched -> credit, prefetch, segment, pcie
 *     -> coalesce, bytepool, gqueue, trace, ring
 *
 * Where a file below must start something above it, it returns what is
 * due instead of calling up: a credit retry or grant names the group to
 * kick, a prefetched payload's arrival says a transmit pass is due, and
 * the caller (rx.c, or the run's event dispatch in sim.c) does it.
 *
 * Beyond nic/, dependencies point one way too: the NIC puts packets on its
 * port and runs its packages by name (fabric.h, uet_cc.h); the fabric
 * reaches the NIC only through its ops table, and the run (sim.c)
 * dispatches the NIC's events.
 */
#ifndef PCM_UET_NIC_H
#define PCM_UET_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "bytepool.h"
#include "uet_cc.h"
#include "events.h"
#include "fabric.h"
#include "records.h"

#define UET_BIT(t) ((pcm_uint)1 << (t))

struct uet_nics;

/*
 * UET_CHECK(): an invariant of the PSN and SACK state, checked when the run
 * asks for it (uet_sim_set_checks(): the randomized suite, pcm-sim --check).
 * A failure is counted (trace.c) and reported by the leak audit, with the
 * first one's place. Unchecked runs pay one predicted branch.
 */
void uet_check_fail(struct uet_nics *ns, const char *file, int line, const char *what);
#define UET_CHECKING(ns) __builtin_expect((ns)->checking, 0)
/* Inside an `if (UET_CHECKING(ns))` block: several invariants behind one test. */
#define UET_ASSERT(ns, cond)                                                                       \
	do {                                                                                       \
		if (!(cond))                                                                       \
			uet_check_fail((ns), __FILE__, __LINE__, #cond);                           \
	} while (0)
#define UET_CHECK(ns, cond)                                                                        \
	do {                                                                                       \
		if (UET_CHECKING(ns))                                                              \
			UET_ASSERT(ns, cond);                                                      \
	} while (0)

/* Per-packet sender state. */
enum uet_tx_state {
	UET_TX_UNSENT = 0,
	UET_TX_OUT,        /* counted in flight: fetched/queued/on the wire, awaiting ACK */
	UET_TX_RTXQ,       /* queued for retransmission after a NACK, not in flight */
	UET_TX_ACKED,
	UET_TX_PREFETCHED, /* payload in the prefetch buffer, not committed */
	UET_TX_RTXQ_RTO,   /* queued for retransmission after a timeout, not in flight */
};

/* Is a packet in this state waiting in its PDC's retransmission queue? */
static inline bool uet_tx_queued(uint8_t state)
{
	return state == UET_TX_RTXQ || state == UET_TX_RTXQ_RTO;
}

/*
 * A PSN's sender record: 16 bytes, so that the records in flight, which a
 * large fabric touches once per packet and its ACK, take as few lines as
 * they can. The running timer's deadline is not kept: it is the latest
 * copy's serialization start, plus its serialization time and the timeout
 * of its backoff level (uet_tx_deadline()).
 */
struct uet_txpkt {
	uint64_t tx_ps;     /* serialization start of the latest transmission */
	uint32_t retx_next; /* retransmission FIFO link */
	uint16_t entropy;   /* of the latest transmission */
	uint8_t state : 7;
	bool timer_on : 1;  /* the latest transmission's retransmission timer runs */
	/*
	 * Transmissions so far, saturating at 255: it only picks the timer's
	 * backoff level (capped at MaxExponentialRTOBackoffCount <= 40) and tells
	 * a first transmission apart, so saturation sets no retry limit.
	 */
	uint8_t tx_count;
};

_Static_assert(sizeof(struct uet_txpkt) == 16, "a sender record is 16 bytes");

struct uet_group;

/*
 * A FIFO of groups waiting for something (credit to hand out, prefetch
 * room), linked through a struct uet_glink of theirs: a group may wait in
 * more than one, each through its own link.
 */
struct uet_glink {
	struct uet_group *next;
	bool queued;
};

struct uet_gqueue {
	struct uet_group *head, *tail;
	size_t link;            /* offsetof(struct uet_group, <its link>) */
};

/* Receiving side of a PDC. */
struct uet_rxpdc {
	uint64_t *bits;        /* PSNs received */
	uint32_t expected;     /* next in-order PSN */
	uint32_t max_psn;      /* highest PSN received + 1 */
	uint32_t sack_cursor;  /* successive ACKs report successive 64-PSN blocks */
	uint32_t ce_pending;
	uint32_t unacked_bytes; /* AckCoalesceBytes: payload since the last ACK */
	bool ack_request;      /* AckCoalesceBytes: a flagged packet's gap is still open */
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
	/*
	 * The sender's record of each PSN, for the latest tx_mask + 1 PSNs below
	 * next_psn only (a ring, grown to at least twice the span from una to
	 * next_psn): every older PSN is acknowledged, and a large fabric's
	 * memory does not grow with message sizes. uet_tx_state() reads any PSN.
	 */
	struct uet_txpkt *tx;
	uint32_t tx_mask;
	uint64_t ps_per_byte_q16; /* its NIC's port: serialization times of its records */
	/*
	 * Retransmission timers, one FIFO of (deadline, PSN) per backoff level:
	 * every timer of a level has one duration and starts in serialization
	 * order, so deadlines are FIFO and one DES event per PDC (at the
	 * earliest head) gives exact per-packet timers. Allocated at the first
	 * transmission.
	 */
	struct uet_ring *rtoq;
	struct uet_ev *rto_ev;
	uint64_t rto_at;       /* rto_ev's time, read here instead of from the event */
	uint32_t rto_psn;      /* level 0 in the records: no first transmission below times out */
	struct uet_rxpdc rx;
	bool rx_open;
};

/*
 * A group: what every packet's send and ACK touch comes first (four cache
 * lines, the group aligned to them); receiver credit, the receiver's side
 * and the CNP notification point, which most runs do not use, come after.
 */
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
	struct uet_ccflow cc;   /* its policy, the LB beside it, and the controls in force */
	bool in_rq;
	struct uet_group *rq_next, *rq_prev;
	struct uet_glink pfw;   /* waiting for prefetch buffer room */
	uint64_t next_send_ps;
	struct uet_ev *pace_ev;
	uint64_t base_rtt_ps;
	uint64_t last_rtt_ps;
	uint64_t flow_seed;     /* PCM_SIG_FLOW_SEED of this group's events */
	uint32_t tx_unreported; /* data packets sent since its last TX event */
	/* receiver credit, sender side (credit.c): wire bytes; may send while used < granted */
	uint64_t credit_used, credit_granted;
	uint64_t credit_need;   /* posted plus lost: what it must put on the wire */
	uint64_t credit_requested; /* cumulative, need beyond the speculative bytes */
	struct uet_ev *credit_retry_ev;
	/* receiver side: one sender group's requests (its id + 1, 0: none yet) */
	uint32_t cr_sender;
	uint64_t cr_requested, cr_granted; /* cumulative, for that sender group */
	struct uet_glink crr;   /* receiver: in the round-robin of peers with demand */
	struct uet_ev *tick_ev;
	/* receiver side, DCQCN's notification point (cnp.c) */
	uint64_t cnp_last_ps;   /* when it last sent a CNP; UINT64_MAX: never */
	uint32_t cnp_marks;     /* CE-marked packets since, not yet notified */
	uint32_t cnp_pdc;       /* the PDC of the latest of them */
	struct uet_ev *cnp_ev;  /* the end of the current CnpInterval */
} __attribute__((aligned(64)));

struct uet_nic {
	uint32_t id;
	uint32_t ip;
	struct uet_port *port;
	struct uet_group *rq_head, *rq_tail;
	struct uet_group **groups;
	uint32_t n_groups, cap_groups;
	struct uet_bytepool egress;  /* data-class egress pool */
	struct uet_bytepool rx_pool; /* data-class receive pool */
	bool pool_blocked;
	struct uet_ev *pool_ev;
	struct uet_ev *pass_ev;
	uint64_t n2h_free, h2n_free; /* PCIe directions: NIC to host, host to NIC */
	uint64_t last_ack_ps;
	uint64_t prefetch_used;
	bool prefetch_blocked;
	struct uet_gqueue pfw;  /* groups waiting for prefetch room */
	/* the receiver-credit (EQDS) instance: one flow per receiving NIC */
	struct uet_bind credit;
	uint64_t credit_distributed;
	struct uet_gqueue crr;  /* receiver: peers with credit demand, round-robin */
	struct uet_ev *credit_tick_ev;
	uint64_t st[UET_ST_COUNT];
	uint64_t st_last[UET_ST_COUNT];
};

/* The NICs of a run and what they share. */
struct uet_nics {
	struct uet_nic_cfg cfg;
	const struct uet_scenario *scn;  /* rules: the policy of a new group */
	struct uet_des *des;
	struct uet_rng *rng;
	struct uet_pkt_pool *pkts;
	struct uet_mem *mem;             /* the run's: NICs, PDCs, groups, their rings */
	struct uet_fabric *fab;
	struct uet_nic *nics;
	uint32_t n_hosts;
	struct uet_pdc **pdcs;           /* by message id; NULL once closed */
	uint32_t n_pdcs;
	struct uet_ccset cc;
	/* every packet a NIC sends or receives (uet_hooks.monitor) */
	void (*monitor)(void *ctx, const struct uet_pkt_view *p);
	void *monitor_ctx;
	struct uet_records rec;
	bool monitor_on;
	bool checking;                   /* UET_CHECK() on */
	bool cnp_on;                     /* a package reads PCM_SIG_CNP: receivers notify */
	uint64_t pcie_ps_per_byte_q16;
	uint64_t seed;
	uint32_t next_group_id;
	uint32_t n_done;                 /* messages completed at the sender */
	uint64_t last_done_ps;
	bool oom;
	/* leak audit: what groups still held when they were freed */
	uint64_t leaked_inflight, leaked_backlog;
	uint32_t leaked_groups;
	/* checking build: invariants that failed, and the first one */
	uint64_t check_failures;
	char check_msg[192];
};

/* What a transmit attempt did (sched.c, prefetch.c). */
enum uet_try {
	UET_TRY_NOTHING = 0,
	UET_TRY_SENT,
	UET_TRY_BLOCKED,   /* window */
	UET_TRY_NO_CREDIT, /* receiver credit */
	UET_TRY_PACED,
	UET_TRY_POOL_FULL,
	UET_TRY_PREFETCH_FULL,
};

static inline uint64_t uet_now(const struct uet_nics *ns)
{
	return ns->des->now_ps;
}

/* Has the receiving side of a PDC got @psn? */
static inline bool uet_rx_has(const struct uet_rxpdc *rx, uint32_t psn)
{
	return rx->bits[psn >> 6] >> (psn & 63) & 1;
}

/*
 * The sender's records of a PDC start with room for windows up to twice the
 * initial one (claim_psn() keeps twice the packets in flight), within these
 * bounds and never more than the message needs: records that grew in step
 * on every PDC would leave their smaller arrays unused in the run's memory.
 */
#define UET_TX_RING_MIN 16
#define UET_TX_RING_FIRST_MAX 256

/* The least power of two >= @n (at most 2^31). */
static inline uint32_t uet_pow2_at_least(uint64_t n)
{
	uint32_t p = 1;

	while (p < n && p < (1u << 31))
		p <<= 1;
	return p;
}

/* The record of @psn, one of the ring's: in [next_psn - tx_mask - 1, next_psn). */
static inline struct uet_txpkt *uet_tx(const struct uet_pdc *pdc, uint32_t psn)
{
	return &pdc->tx[psn & pdc->tx_mask];
}

/* Is @psn's record in the ring? */
static inline bool uet_tx_kept(const struct uet_pdc *pdc, uint32_t psn)
{
	return psn < pdc->next_psn && pdc->next_psn - psn <= pdc->tx_mask + 1;
}

/* The state of any PSN: unsent at or beyond next_psn, acknowledged below the ring. */
static inline uint8_t uet_tx_state(const struct uet_pdc *pdc, uint32_t psn)
{
	if (psn >= pdc->next_psn)
		return UET_TX_UNSENT;
	return uet_tx_kept(pdc, psn) ? uet_tx(pdc, psn)->state : UET_TX_ACKED;
}

/* Payload bytes of @psn of @pdc. */
static inline uint32_t uet_pdc_payload(const struct uet_nics *ns, const struct uet_pdc *pdc,
				       uint32_t psn)
{
	return psn + 1 == pdc->npkts ? pdc->last_payload : ns->cfg.rdma_data_mss;
}

/* A pooled event; NULL and ns->oom set if the pool cannot grow. */
static inline struct uet_ev *uet_nic_schedule(struct uet_nics *ns, uint64_t t, uint16_t type,
					      void *obj, uint64_t arg)
{
	struct uet_ev *ev = uet_des_schedule(ns->des, t, type, obj, (uint32_t)arg);

	if (!ev)
		ns->oom = true;
	return ev;
}

/*
 * The small pieces of the per-packet path that several files use, inline:
 * the ready queue (sched.c), and what a group's packages ask of the NIC
 * (group.c).
 */
/* Take @g out of @nic's ready queue, if it is in. */
static inline void uet_rq_remove(struct uet_nic *nic, struct uet_group *g)
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

/* @g joins the tail (a new message, a prefetched payload) unless it is in. */
static inline void uet_rq_push_tail(struct uet_nic *nic, struct uet_group *g)
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

/* @g comes back at the head (an ACK, NACK or timeout) unless it is in. */
static inline void uet_rq_push_head(struct uet_nic *nic, struct uet_group *g)
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

/* A retransmission waiting, a payload prefetched, or a segment not yet fetched. */
static inline bool uet_pdc_has_work(const struct uet_pdc *pdc)
{
	return pdc->retx_head != UET_NONE || pdc->pf_head || pdc->next_psn < pdc->npkts;
}

/* Has some PDC of @g something to send? */
static inline bool uet_group_has_work(const struct uet_group *g)
{
	const struct uet_pdc *pdc = g->turn;

	for (uint32_t i = 0; i < g->n_tx && pdc; i++, pdc = pdc->ring_next)
		if (uet_pdc_has_work(pdc))
			return true;
	return false;
}

/* UET_FEED_* of @g's packages (with a record) that @pred holds for. */
static inline unsigned uet_group_packages_where(const struct uet_group *g,
						bool (*pred)(const struct uet_cc *))
{
	unsigned live = uet_cc_live(&g->cc), which = 0;

	if ((live & UET_FEED_POL) && pred(g->cc.pol.cc))
		which |= UET_FEED_POL;
	if ((live & UET_FEED_LB) && pred(g->cc.lb.cc))
		which |= UET_FEED_LB;
	return which;
}

static inline bool uet_cc_has_timer(const struct uet_cc *cc)
{
	return cc->has_timer;
}

static inline bool uet_cc_drives_ev(const struct uet_cc *cc)
{
	return cc->ev_slot >= 0;
}

static inline bool uet_cc_wants_tx_event(const struct uet_cc *cc)
{
	return cc->wants_tx_event;
}

/* Is @g paced: a package drives RATE and it is below line rate? */
static inline bool uet_group_rate_limited(const struct uet_group *g)
{
	return ((g->cc.pol.cc && g->cc.pol.cc->rate_slot >= 0) ||
		(g->cc.lb.cc && g->cc.lb.cc->rate_slot >= 0)) &&
	       g->cc.ctl.rate < PCM_RATE_ONE;
}

/* Does @g send only on receiver credit? */
static inline bool uet_group_credit_gated(const struct uet_group *g)
{
	return g->cc.pol.cc && g->cc.pol.cc->receiver_credit;
}

/* audit.c: the NICs' life, and the audit */
int uet_nics_init(struct uet_nics *ns, uint32_t n_hosts);
void uet_nics_fini(struct uet_nics *ns);
/* Leak audit of PDCs, groups and pools, after a drained run. Return: 0, -EFAULT. */
int uet_nic_audit(struct uet_nics *ns, struct pcm_diag *diag);

/* trace.c: what the NICs show (and uet_check_fail() above) */
void uet_nic_monitor(struct uet_nics *ns, const struct uet_pkt *pkt, uint32_t at, bool rx);
void uet_nic_log(struct uet_nics *ns, uint32_t nic, const char *what, uint32_t pdc,
		 uint32_t peer, uint64_t bytes);
void uet_nic_stats_rows(struct uet_nics *ns);
void uet_nic_flow_rows(struct uet_nics *ns);

/* pdc.c */
int uet_nic_post(struct uet_nics *ns, struct uet_msg_info *m);
void uet_nic_doorbell(struct uet_nics *ns, struct uet_pdc *pdc);
/* The sender's completion: close @pdc. Return: true if its group lives on. */
bool uet_pdc_close(struct uet_nics *ns, struct uet_pdc *pdc);
/* The receiving side of @pdc on @nic, created by its first packet. Return: false on ENOMEM. */
bool uet_pdc_rx_create(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc);
static inline bool uet_pdc_rx_open(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc)
{
	return pdc->rx_open || uet_pdc_rx_create(ns, nic, pdc);
}
void uet_pdc_free(struct uet_nics *ns, struct uet_pdc *pdc);

/* segment.c */
/* A packet for PSN next_psn of @pdc, that PSN claimed. Return: NULL (no memory: blocked). */
struct uet_pkt *uet_segment_new(struct uet_nics *ns, struct uet_pdc *pdc);
/* Build data packet @psn of @pdc into @pkt; @retx: a retransmission, after a timeout if @rto. */
void uet_segment_commit(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g,
			struct uet_pdc *pdc, struct uet_pkt *pkt, uint32_t psn, bool retx, bool rto);
/* A control packet from @nic to @peer, built but not sent; NULL without memory. */
struct uet_pkt *uet_control_packet(struct uet_nics *ns, struct uet_nic *nic, uint32_t peer,
				   uint32_t pdc_id, enum uet_pkt_kind kind, uint64_t value,
				   uint16_t wire);
void uet_send_control(struct uet_nics *ns, struct uet_nic *nic, uint32_t peer, uint32_t pdc_id,
		      enum uet_pkt_kind kind, uint64_t value, uint16_t wire);

/* coalesce.c: receiver ACK coalescing (AckCoalesceBytes, a pcm extension) */
/* Does data packet @psn of @pdc, just committed by @g, ask for an ACK? */
bool uet_coalesce_ar(const struct uet_nics *ns, const struct uet_group *g,
		     const struct uet_pdc *pdc, uint32_t psn, bool retx);
/*
 * Does the receiver ACK @pkt now? @first: the PDC's first packet; @dup: a
 * duplicate. Called after the packet's PSN is recorded.
 */
bool uet_coalesce_ack_due(const struct uet_nics *ns, struct uet_rxpdc *rx,
			  const struct uet_pkt *pkt, bool first, bool dup);

/* pcie.c: a fetch of @payload bytes; return: when the payload has arrived at the NIC */
uint64_t uet_pcie_fetch(struct uet_nics *ns, struct uet_nic *nic, uint32_t payload);
/* A write of @payload received bytes to host memory; return: when it is done. */
uint64_t uet_pcie_write(struct uet_nics *ns, struct uet_nic *nic, uint32_t payload);

/* wire.c */
void uet_nic_tx_start(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt,
		      uint64_t end_ps);

/* rx.c */
void uet_nic_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt);
/*
 * Fetch into the cache, ahead of its ARRIVE event, what receiving @pkt at
 * @nic touches: @late false, the NIC and the PDC's slot in ns->pdcs; @late
 * true (an event or two later, that slot now cached), the PDC itself. Only
 * a hint: nothing changes.
 */
void uet_nic_warm_receive(const struct uet_nics *ns, const struct uet_nic *nic,
			  const struct uet_pkt *pkt, bool late);

/* ack.c */
void uet_ack_send(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc,
		  struct uet_pkt *pkt, uint64_t hold_ps);
void uet_nic_ack_release(struct uet_nics *ns, struct uet_pkt *pkt);
void uet_ack_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt);
void uet_probe_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt);
void uet_probe_ack_receive(struct uet_nics *ns, struct uet_pkt *pkt);

/* nack.c */
void uet_nack_send(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc,
		   struct uet_pkt *pkt);
void uet_nack_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt);

/* rto.c */
/* The timeout of a transmission at backoff @level (its retransmissions before it). */
static inline uint64_t uet_rto_ps(const struct uet_nic_cfg *c, uint32_t level)
{
	uint32_t k = level < c->max_rto_backoff ? level : c->max_rto_backoff;

	if (c->fixed_rexmit_enable)
		return c->fixed_rexmit_ps;
	return c->initial_rto_ps << (k > 40 ? 40 : k);
}

/*
 * The deadline of the timer that @psn's latest transmission started at
 * backoff @level (uet_rto_arm()): it runs from the end of that copy's
 * serialization. Copies of one PSN start serializing at distinct times, so
 * a deadline names its copy.
 */
static inline uint64_t uet_tx_deadline(const struct uet_nics *ns, const struct uet_pdc *pdc,
				       uint32_t psn, uint32_t level)
{
	uint32_t wire = uet_pdc_payload(ns, pdc, psn) + UET_WIRE_HDR_BYTES;

	return uet_tx(pdc, psn)->tx_ps + uet_ser_ps(pdc->ps_per_byte_q16, wire) +
	       uet_rto_ps(&ns->cfg, level);
}

void uet_rto_arm(struct uet_nics *ns, struct uet_pdc *pdc, uint32_t psn, uint32_t level,
		 uint64_t deadline);
void uet_nic_rto(struct uet_nics *ns, struct uet_pdc *pdc);
void uet_rto_free(struct uet_nics *ns, struct uet_pdc *pdc);

/* sched.c */
void uet_nic_tx_pass(struct uet_nics *ns, struct uet_nic *nic);
/* After an ACK, NACK or timeout: @g back at the head, and a transmit pass. */
void uet_nic_kick(struct uet_nics *ns, struct uet_group *g);
void uet_nic_pool_wake(struct uet_nics *ns, struct uet_nic *nic);
void uet_nic_pace(struct uet_nics *ns, struct uet_group *g);
void uet_arm_pool_wake(struct uet_nics *ns, struct uet_nic *nic);
/* A NACK or (@timeout) a timeout lost @psn: out of flight, queued ahead of new data. */
void uet_requeue(struct uet_nics *ns, struct uet_pdc *pdc, uint32_t psn, bool timeout);

/* gqueue.c */
void uet_gqueue_push(struct uet_gqueue *q, struct uet_group *g);
struct uet_group *uet_gqueue_pop(struct uet_gqueue *q);
/* Take @g out of @q if it is there. */
void uet_gqueue_remove(struct uet_gqueue *q, struct uet_group *g);
bool uet_gqueue_has(const struct uet_gqueue *q, const struct uet_group *g);

/* group.c */
/* The scenario's rules: the first matching (src, dst) rule's policy, else policy 0. */
uint32_t uet_policy_for(const struct uet_scenario *scn, uint32_t src, uint32_t dst);
struct uet_group *uet_group_find(struct uet_nic *nic, uint32_t peer);
struct uet_group *uet_group_get(struct uet_nics *ns, struct uet_nic *nic, uint32_t peer,
				int policy);
/* Free @g if no PDC uses it any more. Return: true if it is still alive. */
bool uet_group_release_if_dead(struct uet_nics *ns, struct uet_group *g);
/*
 * Feed @g's packages in @which (UET_FEED_*), every event carrying IN_FLIGHT,
 * TX_BACKLOG_BYTES, FLOW_SEED and BASE_RTT. Return: 1 if a handler ran.
 */
static inline int uet_group_feed_to(struct uet_nics *ns, struct uet_group *g, unsigned which,
				    struct pcm_event *ev)
{
	int n;

	if (!(uet_cc_live(&g->cc) & which))
		return 0;
	ev->valid |= UET_BIT(PCM_SIG_IN_FLIGHT) | UET_BIT(PCM_SIG_TX_BACKLOG_BYTES) |
		     UET_BIT(PCM_SIG_FLOW_SEED) | UET_BIT(PCM_SIG_BASE_RTT);
	ev->values[PCM_SIG_IN_FLIGHT] = g->inflight;
	ev->values[PCM_SIG_TX_BACKLOG_BYTES] = g->backlog_bytes;
	ev->values[PCM_SIG_FLOW_SEED] = g->flow_seed;
	ev->values[PCM_SIG_BASE_RTT] = g->base_rtt_ps;
	n = uet_cc_feed(&g->cc, which, ev, uet_now(ns));
	g->nic->st[UET_ST_HANDLER_CALLS] += (uint64_t)n;
	return n > 0;
}

static inline int uet_group_feed(struct uet_nics *ns, struct uet_group *g, struct pcm_event *ev)
{
	return uet_group_feed_to(ns, g, UET_FEED_ALL, ev);
}
void uet_group_start_tick(struct uet_nics *ns, struct uet_group *g);
void uet_nic_tick(struct uet_nics *ns, struct uet_group *g);

/* prefetch.c */
enum uet_try uet_prefetch_fetch(struct uet_nics *ns, struct uet_nic *nic, struct uet_group *g,
				struct uet_pdc *pdc);
/* A prefetched payload is committed to the wire: its buffer space is released. */
void uet_prefetch_release(struct uet_nics *ns, struct uet_nic *nic, uint32_t wire);
/* @g can send nothing until the prefetch buffer drains: it waits off the ready queue. */
void uet_prefetch_wait(struct uet_nic *nic, struct uet_group *g);
/*
 * A payload fetched over PCIe arrived at the NIC: to the port, or (with the
 * prefetch buffer) to its PDC. Return: true if the NIC's transmit process
 * must run now (uet_nic_tx_pass()).
 */
bool uet_nic_fetch_done(struct uet_nics *ns, struct uet_pkt *pkt);

/* cnp.c */
/* Turn the receivers' notification points on if a package of the run reads PCM_SIG_CNP. */
void uet_cnp_setup(struct uet_nics *ns);
/* A CE-marked data packet of @pdc arrived at its receiver. */
void uet_cnp_marked(struct uet_nics *ns, struct uet_nic *nic, struct uet_pdc *pdc);
void uet_nic_cnp_interval_end(struct uet_nics *ns, struct uet_group *g);
void uet_cnp_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt);

/* credit.c: the sender's side */
/* @g must put @wire more bytes on the wire (a message posted, a packet lost): ask for them. */
void uet_credit_need(struct uet_nics *ns, struct uet_group *g, uint32_t pdc_id, uint64_t wire);
/* @g is stopped for want of credit: ask again if nothing answers. */
void uet_credit_blocked(struct uet_nics *ns, struct uet_group *g);
/* The retry timer of @g. Return: true if @g must be kicked (uet_nic_kick()). */
bool uet_nic_credit_retry(struct uet_nics *ns, struct uet_group *g);
/* A grant arrived. Return: the group it raised, to be kicked (uet_nic_kick()), or NULL. */
struct uet_group *uet_credit_grant_receive(struct uet_nics *ns, struct uet_nic *nic,
					   const struct uet_pkt *pkt);

/* credit_grant.c: the receiver's side */
void uet_credit_request_receive(struct uet_nics *ns, struct uet_nic *nic, struct uet_pkt *pkt);
void uet_nic_credit_tick(struct uet_nics *ns, struct uet_nic *nic);

#endif /* PCM_UET_NIC_H */
