/* SPDX-License-Identifier: MIT */
/*
 * xp_recovery.h - loss recovery's state and functions (recovery.c):
 * RACK-TLP (RFC 8985) and the retransmission timeout (RFC 6298), per
 * connection. Its functions are xp_rack_* and xp_rto_* (xp_rec_* are wire
 * records). Those that may give a connection something to send return
 * enum xp_news bits for conn.c to act on.
 */
#ifndef XP_RECOVERY_H
#define XP_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#define XP_MAX_REO_MULT 16  /* RACK reo_wnd grows to at most 16 x min_RTT/4 (then SRTT caps it) */
#define XP_REO_PERSIST 16   /* recovery episodes a grown reo_wnd lasts (RFC 8985 6.2) */

struct xp_chunk;
struct xp_conn;
struct xp_core;

/* How a chunk went (xp_rack_on_sent()). */
enum xp_tx_kind {
	XP_TX_NEW = 0,   /* its first transmission, not a probe */
	XP_TX_RETX = 1,  /* a retransmission of a chunk marked lost */
	XP_TX_PROBE = 2, /* a tail-loss probe (new data or the newest chunk again) */
};

/*
 * A connection's RACK, TLP and RTO state (its RTT estimator is the connection's, c->rtt; each
 * path keeps the newest transmission delivered on it, struct xp_path).
 */
struct xp_rack {
	uint64_t tx_seq;          /* newest transmission known delivered, on any path */
	uint64_t rtt_ns;          /* RACK.rtt of that transmission */
	uint64_t reo_deadline_ns;
	uint64_t last_dsack_ns;
	uint64_t recovery_tx;     /* in a recovery episode: c->tx_seq when it began; 0: none */
	uint64_t tlp_end_tx;      /* the outstanding probe's transmission */
	uint64_t rto_deadline_ns;
	uint64_t tlp_deadline_ns;
	uint64_t max_hold_ns;     /* the receiver's recent maximum hold, for the PTO */
	uint64_t adv_rtt_ns;      /* receiving: the shortest CTS-to-first-chunk time, 0: none */
	uint8_t reo_mult;
	uint8_t reo_persist;
	uint8_t rto_backoff;      /* expiries since the last valid RTT sample */
	bool tlp_out;             /* a probe is outstanding: no other until it is delivered */
	bool tlp_rtx;             /* ... and it resent a chunk (7.4 watches its ACK) */
	bool probe_pending;       /* send a probe on the next turn */
	bool rto_rtx;             /* send the RTO's retransmission on the next turn */
	bool dirty;               /* delivery news since the last loss detection */
	bool tlp_rearm;           /* new data went in this burst: the TLP restarts at its end */
};

/**
 * xp_rack_deadline() - when recovery next has work.
 *
 * Return: the earliest of @r's RTO, TLP and reordering deadlines, or 0 for none.
 */
static inline uint64_t xp_rack_deadline(const struct xp_rack *r)
{
	uint64_t d = r->rto_deadline_ns;

	if (r->tlp_deadline_ns && (!d || r->tlp_deadline_ns < d))
		d = r->tlp_deadline_ns;
	if (r->reo_deadline_ns && (!d || r->reo_deadline_ns < d))
		d = r->reo_deadline_ns;
	return d;
}

/**
 * xp_rack_stop() - disarm @r's timers and drop a pending probe or retransmission (the
 * connection failed or closed).
 */
static inline void xp_rack_stop(struct xp_rack *r)
{
	r->rto_deadline_ns = 0;
	r->tlp_deadline_ns = 0;
	r->reo_deadline_ns = 0;
	r->probe_pending = false;
	r->rto_rtx = false;
	r->tlp_out = false;
	r->tlp_rtx = false;
}

/**
 * xp_rack_on_hold() - an ACK reported the receiver's hold @hold_ns: the maximum follows a
 * rise at once and a fall by 1/8 of the difference.
 */
static inline void xp_rack_on_hold(struct xp_rack *r, uint64_t hold_ns)
{
	r->max_hold_ns =
	    hold_ns > r->max_hold_ns ? hold_ns : r->max_hold_ns - (r->max_hold_ns - hold_ns) / 8;
}

/**
 * xp_rack_init() - reset @c's RTT estimator and RACK, TLP and RTO state.
 */
void xp_rack_init(struct xp_conn *c);

/**
 * xp_rack_on_delivered() - chunk @ch was delivered: advance RACK's newest delivered
 * transmission, the connection's and its path's, if it is newer.
 */
void xp_rack_on_delivered(struct xp_conn *c, const struct xp_chunk *ch, uint64_t now_ns);

/**
 * xp_rto_sample() - the RTT sample an echo gives, under Karn's rule.
 * @core: the core.
 * @c: the connection.
 * @ch: the echoed chunk.
 * @parity: the echoed transmission's parity.
 * @hold_ns: the receiver's hold of it.
 * @now_ns: the time.
 * @rtt_ns: the sample, when there is one.
 *
 * The echo names a transmission unambiguously when it is the latest of at most two, or the
 * one before the latest of two or three (the parity tells them apart; for two, the original
 * of a retransmission that was needless: its sample is what teaches the estimator after a
 * spurious timeout). A valid sample clears the RTO's
 * backoff (RFC 6298 5.7 with Karn's rule: only a valid sample may).
 *
 * Return: true if a sample was taken (fed to SRTT, and for the latest transmission to its
 * path's EWMA).
 */
bool xp_rto_sample(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch, bool parity,
		   uint64_t hold_ns, uint64_t now_ns, uint64_t *rtt_ns);

/**
 * xp_rack_check_spurious() - an ACK's echo named transmission @parity of @ch, in a record that
 * says "duplicate seen" if @dup_seen. If that transmission is not the latest, an earlier one
 * arrived and the latest retransmission was needless (the immediate's parity bit as Eifel's
 * timestamp, RFC 3522); if it is the latest and a duplicate was seen, the echo names (as the
 * transmission that dirtied the record last) the copy that arrived second. Counts it once per
 * transmission, widens reo_wnd as a DSACK does (RFC 8985 6.2), and keeps RACK from crediting
 * the retransmission. Only chunks sent more than once qualify.
 */
void xp_rack_check_spurious(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch,
			    bool parity, bool dup_seen, uint64_t now_ns);

/**
 * xp_rack_on_dsack() - the receiver saw a duplicate (a spurious retransmission): widen
 * reo_wnd, once per SRTT.
 */
void xp_rack_on_dsack(struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rack_detect() - RACK loss detection over @c's chunks in flight, each against the newest
 * delivery on its own path: mark the lost, arm the reordering timer, and end a recovery
 * episode once nothing outstanding at its start is left.
 *
 * Return: XP_NEWS_SEND if chunks were marked lost, else 0.
 */
unsigned xp_rack_detect(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rack_on_new_ack() - new data was acknowledged: the RTO runs again from the earliest
 * outstanding transmission, the TLP is re-armed.
 */
void xp_rack_on_new_ack(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rack_on_probe_acked() - the chunk a probe resent was acknowledged; @repaired: the echo
 * names the probe itself and no duplicate was seen, so the original was lost and only the
 * probe repaired it (RFC 8985 7.4): congestion control hears of that loss.
 */
void xp_rack_on_probe_acked(struct xp_core *core, struct xp_conn *c, const struct xp_chunk *ch,
			    bool repaired, uint64_t now_ns);

/**
 * xp_rack_on_sent() - A chunk went out as @kind: arm the RTO if it is not armed (restart it
 * after a probe, RFC 8985 7.3); after new data, note that the TLP must (re)start (7.2) when the
 * burst ends (xp_rack_on_burst_end()), so the probe waits a PTO after the newest transmission
 * rather than the first of the flight.
 */
void xp_rack_on_sent(struct xp_core *core, struct xp_conn *c, enum xp_tx_kind kind,
		     uint64_t now_ns);

/**
 * xp_rack_on_burst_end() - the sender's turn on @c is over: if new data went, (re)start the
 * TLP, once, from the state the last chunk left (the deadline it computes for every chunk of
 * a burst but the last would be overwritten unread).
 */
void xp_rack_on_burst_end(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rack_on_timer() - @c's recovery timers: TLP (first when due no later than the RTO),
 * RTO, RACK reordering, whichever is due.
 *
 * Return: enum xp_news bits: XP_NEWS_SEND for chunks to send (lost ones, a probe), with
 * XP_NEWS_CTRL after an RTO (its ACK requests).
 */
unsigned xp_rack_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_rack_reo_wnd_ns() - RACK's reordering window.
 *
 * Return: @c's RACK reordering window, ns.
 */
uint64_t xp_rack_reo_wnd_ns(const struct xp_conn *c);

/**
 * xp_rto_ns() - the current RTO.
 *
 * Return: @c's RTO with its current backoff, ns.
 */
uint64_t xp_rto_ns(const struct xp_core *core, const struct xp_conn *c);

/**
 * xp_rto_ctl_ns() - the timeout of a control record's retransmission (CTS, ABORT, FIN,
 * RESET) after @backoff expiries: from @c's RTT estimate when it has one, else from the
 * receive side's (the shortest CTS-to-first-chunk time, which a side that only receives
 * has), else the initial RTO.
 *
 * Return: the timeout, ns.
 */
uint64_t xp_rto_ctl_ns(const struct xp_core *core, const struct xp_conn *c, unsigned backoff);

/**
 * xp_rto_adv_sample() - the first chunk of a receive arrived @sample_ns after its CTS (sent
 * once) went: an upper bound of the RTT, whose minimum the receive side times its control
 * retransmissions on.
 */
void xp_rto_adv_sample(struct xp_conn *c, uint64_t sample_ns);

#endif /* XP_RECOVERY_H */
