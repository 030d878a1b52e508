/* SPDX-License-Identifier: MIT */
/*
 * test_xp_txlog.h - a pair (test_xp_pair.h) whose network logs every chunk
 * host 0 transmits and drops or delays what a test names: transmission k of
 * a (slot, chunk), control packets from host 1 in a time window, the first
 * records of a kind ("complete" ACKs, the CTS of a message), or an ACK of a
 * message late by some time. For the recovery tests (test_xp_recovery.c,
 * test_xp_rto.c), which share its warm-up: one message exchanged in slot 0,
 * so both sides know the RTT.
 */
#ifndef TEST_XP_TXLOG_H
#define TEST_XP_TXLOG_H

#include "test_xp_pair.h"

#include "imm.h"

#define TXLOG_MAX 8192

struct tx_log {
	uint32_t n;
	uint64_t t[TXLOG_MAX];
	uint16_t chunk[TXLOG_MAX];
	uint8_t slot[TXLOG_MAX];
	uint8_t path[TXLOG_MAX];     /* the sender's path index (handle / 2 in a pair) */
	bool parity[TXLOG_MAX];
	bool dropped[TXLOG_MAX];
	/* rule: drop transmission number k of (slot, chunk) if bit k of drop_tx[slot][chunk] */
	uint32_t drop_tx[16][64];
	uint32_t seen[16][64];
	uint64_t delay_tx0_ns[64];  /* extra delay of chunk c's first transmission in slot 1 */
	bool drop_acks_until;       /* drop every control packet b->a before ack_until_ns */
	uint64_t ack_until_ns;
	uint32_t drop_complete_acks; /* drop this many b->a packets that carry "complete" */
	uint32_t drop_cts;          /* drop this many b->a packets carrying a CTS of cts_seq */
	uint32_t cts_seq;
	uint32_t late_ack_seq;      /* delay b->a packets carrying an ACK of this message ... */
	uint64_t late_ack_ns;       /* ... by this much (0: none) */
	uint32_t late_acks;         /* ... this many of them */
	bool drop_all_from;         /* drop everything from host drop_host from drop_from_ns on */
	uint32_t drop_host;
	uint64_t drop_from_ns;
};

/* Whether control packet @pkt carries a record @match says yes to. */
static inline bool txlog_carries(const struct xp_net_pkt *pkt,
				 bool (*match)(const struct xp_rec *, const struct tx_log *),
				 const struct tx_log *l)
{
	struct xp_wire_reader r;
	struct xp_rec rec;
	enum xp_drop why;

	if (xp_wire_open(&r, pkt->bytes, pkt->len, XP_WIRE_MAX_MTU, &why) < 0)
		return false;
	while (xp_wire_next(&r, &rec, &why) == 1)
		if (match(&rec, l))
			return true;
	return false;
}

static inline bool txlog_is_complete(const struct xp_rec *rec, const struct tx_log *l)
{
	return rec->type == XP_REC_ACK && rec->u.ack.complete;
}

static inline bool txlog_is_cts(const struct xp_rec *rec, const struct tx_log *l)
{
	return rec->type == XP_REC_CTS && rec->u.cts.msg_seq == l->cts_seq;
}

static inline bool txlog_is_late_ack(const struct xp_rec *rec, const struct tx_log *l)
{
	return rec->type == XP_REC_ACK && rec->u.ack.msg_seq == l->late_ack_seq;
}

static inline enum xp_net_verdict txlog_ctrl(struct tx_log *l, const struct xp_net_pkt *pkt,
					     uint64_t *extra)
{
	if (pkt->src != 1)
		return XP_NET_PASS;
	if (l->drop_acks_until && pkt->now_ns < l->ack_until_ns)
		return XP_NET_DROP;
	if (l->drop_complete_acks && txlog_carries(pkt, txlog_is_complete, l)) {
		l->drop_complete_acks--;
		return XP_NET_DROP;
	}
	if (l->drop_cts && txlog_carries(pkt, txlog_is_cts, l)) {
		l->drop_cts--;
		return XP_NET_DROP;
	}
	if (l->late_acks && txlog_carries(pkt, txlog_is_late_ack, l)) {
		l->late_acks--;
		*extra = l->late_ack_ns;
	}
	return XP_NET_PASS;
}

static inline enum xp_net_verdict tx_filter(void *arg, const struct xp_net_pkt *pkt,
					    uint64_t *extra)
{
	struct tx_log *l = arg;
	struct xp_imm f;
	uint32_t k;

	if (l->drop_all_from && pkt->src == l->drop_host && pkt->now_ns >= l->drop_from_ns)
		return XP_NET_DROP;
	if (pkt->is_ctrl)
		return txlog_ctrl(l, pkt, extra);
	if (pkt->src != 0 || l->n == TXLOG_MAX)
		return XP_NET_PASS;
	xp_imm_decode(pkt->write->imm, &f);
	k = l->seen[f.slot][f.chunk % 64]++;
	l->t[l->n] = pkt->now_ns;
	l->chunk[l->n] = f.chunk;
	l->slot[l->n] = f.slot;
	l->path[l->n] = (uint8_t)(pkt->write->path / 2);
	l->parity[l->n] = f.parity;
	l->dropped[l->n] = k < 32 && (l->drop_tx[f.slot][f.chunk % 64] >> k) & 1;
	if (!k && f.slot == 1)
		*extra = l->delay_tx0_ns[f.chunk % 64];
	return l->dropped[l->n++] ? XP_NET_DROP : XP_NET_PASS;
}

/* Transmissions of chunk @chunk of slot @slot in the log. */
static inline uint32_t txlog_count(const struct tx_log *l, uint8_t slot, uint16_t chunk)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < l->n; i++)
		n += l->slot[i] == slot && l->chunk[i] == chunk;
	return n;
}

/*
 * A pair from @o (its filter replaced by the log's) that has exchanged one message (slot 0),
 * so both sides know the RTT; the log is cleared after it.
 */
static inline void warm_pair_opts(struct pair *p, struct tx_log *l, struct pair_opts *o)
{
	static uint8_t src[64], dst[64];

	o->filter = tx_filter;
	o->filter_arg = l;
	memset(l, 0, sizeof(*l));
	pair_init(p, o);
	assert_int_equal(pair_recv(p, 1, dst, sizeof(dst), 100), 0);
	assert_int_equal(pair_send(p, 0, src, sizeof(src), 101), 0);
	pair_run(p, pair_now(p) + 1000000);
	assert_non_null(pair_find(p, 0, XP_COMP_SEND, 101));
	l->n = 0;
	memset(l->seen, 0, sizeof(l->seen));
}

/* A pair that has exchanged one message (slot 0), so both sides know the 10 us RTT. */
static inline void warm_pair(struct pair *p, struct tx_log *l, bool rc)
{
	struct pair_opts o;

	pair_default_opts(&o);
	o.rc_mode = rc;
	if (rc)
		o.link.reliable = true;
	warm_pair_opts(p, l, &o);
}

/* Send a @len-byte message in slot 1 after the warm-up; return the time it went. */
static inline uint64_t send_second(struct pair *p, uint8_t *src, uint8_t *dst, uint64_t len)
{
	uint64_t t0;

	fill_pattern(src, len, 9);
	assert_int_equal(pair_recv(p, 1, dst, len, 1), 0);
	pair_run(p, pair_now(p) + 100000); /* its CTS arrives */
	t0 = pair_now(p);
	assert_int_equal(pair_send(p, 0, src, len, 2), 0);
	return t0;
}

static inline void expect_delivered(struct pair *p, const uint8_t *src, const uint8_t *dst,
				    uint64_t len)
{
	const struct pair_comp *s = pair_find(p, 0, XP_COMP_SEND, 2);

	assert_non_null(s);
	assert_int_equal(s->c.status, 0);
	assert_int_equal(pair_count(p, 1, XP_COMP_RECV), 2);
	assert_int_equal(pair_find(p, 1, XP_COMP_RECV, 1)->c.bytes, len);
	assert_memory_equal(src, dst, len);
}

/* send_second(), run for @run_ns, then expect_delivered(); Return: the time it went. */
static inline uint64_t run_second(struct pair *p, uint8_t *src, uint8_t *dst, uint64_t len,
				  uint64_t run_ns)
{
	uint64_t t0 = send_second(p, src, dst, len);

	pair_run(p, pair_now(p) + run_ns);
	expect_delivered(p, src, dst, len);
	return t0;
}

#endif /* TEST_XP_TXLOG_H */
