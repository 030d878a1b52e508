/* SPDX-License-Identifier: MIT */
/*
 * xp_send.h - the sender (send.c): messages being sent and their chunks,
 * the lookups into them, the in-flight accounting, and the sender's entry
 * points. Those that change what the connection must do next return
 * enum xp_news bits for conn.c to act on.
 */
#ifndef XP_SEND_H
#define XP_SEND_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "wire.h"
#include "xp_conn.h"
#include "xp_core_state.h"

#define XP_CHUNKS_PER_CWND 4 /* a chunk is at most this fraction of the window */

enum {
	XP_CH_INFLIGHT = 1, /* counted in bytes in flight */
	XP_CH_LOST = 2,     /* declared lost, waiting to be retransmitted */
	XP_CH_ACKED = 4,
	XP_CH_SAMPLED = 8,  /* its latest transmission gave an RTT sample already */
	XP_CH_SPURIOUS = 16, /* an earlier transmission arrived: the latest one was needless */
	XP_CH_PARITY = 32,  /* the immediate's parity bit of the latest transmission */
};

/* One chunk of a message being sent; ring[index mod XP_WIN] of its message. */
struct xp_chunk {
	uint64_t off;
	uint64_t sent_ns;  /* latest transmission */
	uint64_t prev_sent_ns; /* the one before (an echo of the original is a sample from it) */
	uint64_t tx_seq;   /* connection-wide order of the latest transmission */
	uint32_t len;
	uint8_t flags;
	uint8_t tx_count;  /* transmissions, saturating at 255 (only "more than 2" matters) */
	uint8_t path;      /* path index of the latest transmission */
};

/**
 * xp_chunk_parity() - the parity bit the latest transmission of @ch carried.
 */
static inline bool xp_chunk_parity(const struct xp_chunk *ch)
{
	return ch->flags & XP_CH_PARITY;
}

/* A message being sent: started once its CTS arrived. */
struct xp_smsg {
	uint32_t conn;
	uint32_t seq;
	uint32_t op;
	uint64_t laddr;
	uint64_t len;
	uint32_t lkey;
	uint32_t rkey;
	uint64_t raddr;
	uint64_t cut_bytes;  /* bytes already cut into chunks */
	uint32_t min_chunk;  /* smallest non-last chunk: max(min_chunk_bytes, ceil(len/4096)) */
	uint16_t n_cut;      /* chunks cut (and sent at least once) */
	uint16_t cum;        /* chunks acknowledged in order */
	uint16_t n_lost;     /* chunks marked lost, not yet retransmitted */
	bool last_cut;
	struct xp_chunk ring[XP_WIN];
};

/**
 * xp_smsg_at() - find a running message.
 *
 * Return: @c's running message @seq, or NULL.
 */
static inline struct xp_smsg *xp_smsg_at(struct xp_core *core, struct xp_conn *c, uint32_t seq)
{
	uint32_t i = c->smsg[seq & XP_SLOT_MASK];

	return i != XP_NONE && core->smsgs[i].seq == seq ? &core->smsgs[i] : NULL;
}

/*
 * A walk over @c's running messages, oldest first: by slot from the window's
 * start, which is seq order except that a message 16 or more past the oldest
 * unfinished one comes among the first (it runs only because the one 16
 * before it finished, so no older message shares its slot). Cost: one step
 * per running message, not per window seq; a caller that stops early pays
 * for the messages it saw only.
 */
struct xp_smsg_walk {
	uint32_t rot;  /* the window start's slot */
	uint32_t mask; /* running slots not yet visited, rotated so bit 0 is rot */
};

/**
 * xp_smsg_walk_init() - start a walk over @c's running messages.
 */
static inline void xp_smsg_walk_init(const struct xp_conn *c, struct xp_smsg_walk *w)
{
	w->rot = c->sw.below & XP_SLOT_MASK;
	w->mask = ((uint32_t)c->smsg_mask >> w->rot |
		   (uint32_t)c->smsg_mask << (XP_MSG_SLOTS - w->rot)) & 0xffffu;
}

/**
 * xp_smsg_walk_next() - the walk's next message.
 *
 * Return: the next running message of @c, or NULL once all were seen.
 */
static inline struct xp_smsg *xp_smsg_walk_next(struct xp_core *core, const struct xp_conn *c,
						struct xp_smsg_walk *w)
{
	uint32_t j;

	if (!w->mask)
		return NULL;
	j = (uint32_t)__builtin_ctz(w->mask);
	w->mask &= w->mask - 1;
	return &core->smsgs[c->smsg[(w->rot + j) & XP_SLOT_MASK]];
}

/**
 * xp_smsgs() - @c's running messages, oldest first (the order of struct xp_smsg_walk).
 * @core: the core.
 * @c: the connection.
 * @out: room for XP_MSG_SLOTS.
 *
 * Return: how many.
 */
static inline uint32_t xp_smsgs(struct xp_core *core, const struct xp_conn *c,
				struct xp_smsg **out)
{
	struct xp_smsg_walk w;
	struct xp_smsg *m;
	uint32_t n = 0;

	xp_smsg_walk_init(c, &w);
	while ((m = xp_smsg_walk_next(core, c, &w)))
		out[n++] = m;
	return n;
}

/**
 * xp_inflight_add() - count @ch in flight, for its path, its connection and the core. The one
 * place it is added.
 */
static inline void xp_inflight_add(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch)
{
	ch->flags |= XP_CH_INFLIGHT;
	c->paths[ch->path].in_flight++;
	c->in_flight_bytes += ch->len;
	c->in_flight_chunks++;
	core->in_flight_bytes += ch->len;
	core->in_flight_chunks++;
}

/**
 * xp_inflight_sub() - take @ch, which is in flight, out of the counts. The one place it is
 * subtracted.
 */
static inline void xp_inflight_sub(struct xp_core *core, struct xp_conn *c, struct xp_chunk *ch)
{
	ch->flags &= (uint8_t)~XP_CH_INFLIGHT;
	c->paths[ch->path].in_flight--;
	c->in_flight_bytes -= ch->len;
	c->in_flight_chunks--;
	core->in_flight_bytes -= ch->len;
	core->in_flight_chunks--;
}

/**
 * xp_send_queued() - post.c queued send number send_posted of @c, @len bytes: count it, and
 * start it if its CTS is in.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_send_queued(struct xp_core *core, struct xp_conn *c, uint64_t len, uint64_t now_ns);

/**
 * xp_send_on_cts() - the peer advertised its receive @cts->msg_seq: keep the
 * CTS and start the message if it can; answer a repeated CTS (CTS_ACK, or
 * ABORT again for an aborted message); drop one outside the window.
 * @core: the core.
 * @c: a live connection.
 * @cts: the record's body.
 * @now_ns: the time.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_send_on_cts(struct xp_core *core, struct xp_conn *c, const struct xp_rec_cts *cts,
			uint64_t now_ns);

/**
 * xp_send_on_ack() - apply an ACK record: check it names only chunks sent,
 * acknowledge chunks, take the RTT sample (Karn), feed RACK and the CC,
 * finish the message when all of it is acknowledged.
 * @core: the core.
 * @c: a live connection.
 * @ack: the record's body.
 * @now_ns: the time.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_send_on_ack(struct xp_core *core, struct xp_conn *c, const struct xp_rec_ack *ack,
			uint64_t now_ns);

/**
 * xp_send_try_start() - start every queued send of @c that has its CTS and a free slot (or
 * abort it if too long).
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_send_try_start(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_send_push() - let @c send up to burst_chunks chunks into @batch, under its
 * budget and pacing: a TLP probe or an RTO's retransmission first, then lost
 * chunks, then new ones. A retransmission of a message whose chunks have all
 * been sent queues an ACK request for it, so a lost final ACK costs a round
 * trip even when the receiver's NIC refuses the retransmission.
 * @core: the core.
 * @c: the connection.
 * @now_ns: the time.
 * @batch: where the writes go.
 *
 * Return: what changed (enum xp_news): XP_NEWS_SEND if @c has more it could
 * send now (keep it on the ready list), XP_NEWS_CTRL for ACK requests.
 */
unsigned xp_send_push(struct xp_core *core, struct xp_conn *c, uint64_t now_ns,
		      struct xp_batch *batch);

/**
 * xp_send_fail_from() - fail every send of @c with seq >= @first_seq (queued ones first) with
 * @err.
 */
void xp_send_fail_from(struct xp_core *core, struct xp_conn *c, uint32_t first_seq, int err);

/**
 * xp_send_busy() - does the connection have sends.
 *
 * Return: @c has sends running or queued.
 */
bool xp_send_busy(const struct xp_conn *c);

/**
 * xp_send_on_abort_ack() - the receiver saw our ABORT of @seq: stop retransmitting it. Drops
 * (seq_bad) a stray one.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_send_on_abort_ack(struct xp_core *core, struct xp_conn *c, uint32_t seq,
			      uint64_t now_ns);

/**
 * xp_send_on_abort_sent() - ABORTs of @c went out: arm their retransmission while any is
 * unacknowledged.
 */
void xp_send_on_abort_sent(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

/**
 * xp_send_on_timer() - @c's sender timers: ABORT retransmission when due.
 *
 * Return: what changed (enum xp_news).
 */
unsigned xp_send_on_timer(struct xp_core *core, struct xp_conn *c, uint64_t now_ns);

#endif /* XP_SEND_H */
