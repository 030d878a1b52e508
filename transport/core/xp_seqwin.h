/* SPDX-License-Identifier: MIT */
/*
 * xp_seqwin.h - message sequence numbers and the window each direction of a
 * connection keeps over them (sends, and receives): the rule both share.
 *
 * Sequence numbers are u32 and compared modulo 2^32 (seq_diff()). A message
 * slot s holds message k with k mod 16 == s. A window (struct xp_seqwin)
 * keeps the oldest message not finished, and per slot the last one that
 * ended there.
 */
#ifndef XP_SEQWIN_H
#define XP_SEQWIN_H

#include <stdbool.h>
#include <stdint.h>

#include "imm.h"
#include "pool.h"

#define XP_SLOT_MASK (XP_MSG_SLOTS - 1)
#define XP_CTS_WINDOW (2 * XP_MSG_SLOTS) /* CTS seqs a sender accepts beyond its oldest message */

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

static inline uint16_t xp_slot_bit(uint32_t seq)
{
	return (uint16_t)(1u << (seq & XP_SLOT_MASK));
}

enum xp_outcome {
	XP_OUT_OK = 0,
	XP_OUT_ABORTED, /* too long for its receive */
	XP_OUT_FAILED,  /* any other error */
};

/* The last message that finished in a slot. */
struct xp_slot_done {
	uint32_t seq;
	uint16_t n_chunks;
	uint8_t outcome;
};

/*
 * One direction's message sequence (sends, or receives). Messages finish
 * out of order, but every message not yet finished lies in
 * [below, below + XP_CTS_WINDOW): a message starts only once the one 16
 * before it finished, and only with a CTS inside that window. So "oldest
 * not finished" is @below plus a bitmap of finished seqs after it. Per slot
 * the window also keeps the last message that completed or was aborted in
 * it (the peer may still ask about those); starting at s - 16, so "slot free
 * for k" is: nothing active there and the last one was k - 16.
 */
struct xp_seqwin {
	uint32_t below;    /* oldest message not finished */
	uint64_t finished; /* bit i: below + i finished */
	struct xp_slot_done last[XP_MSG_SLOTS];
};

static inline void xp_seqwin_init(struct xp_seqwin *w)
{
	w->below = 0;
	w->finished = 0;
	for (uint32_t s = 0; s < XP_MSG_SLOTS; s++)
		w->last[s] = (struct xp_slot_done){ .seq = s - XP_MSG_SLOTS };
}

/* Return: the slot of @seq holds nothing (@active[slot] empty) and its last message was seq - 16. */
static inline bool xp_seqwin_slot_free(const struct xp_seqwin *w, const uint32_t *active,
				       uint32_t seq)
{
	uint32_t s = seq & XP_SLOT_MASK;

	return active[s] == XP_NONE && w->last[s].seq == seq - XP_MSG_SLOTS;
}

/* Return: message @seq is over (completed, aborted or failed), or older than every open one. */
static inline bool xp_seqwin_finished(const struct xp_seqwin *w, uint32_t seq)
{
	uint32_t d = seq - w->below;

	if ((int32_t)d < 0)
		return true;
	return d < 64 && ((w->finished >> d) & 1);
}

/* Return: the slot of @seq remembers it, ended with @outcome. */
static inline bool xp_seqwin_ended(const struct xp_seqwin *w, uint32_t seq, uint8_t outcome)
{
	const struct xp_slot_done *d = &w->last[seq & XP_SLOT_MASK];

	return d->seq == seq && d->outcome == outcome;
}

/*
 * Message @seq is over. A completed or aborted one becomes its slot's last;
 * a failed one is only counted finished, since nothing can follow it on the
 * connection. Seqs outside the window (sends failed wholesale) only go.
 */
static inline void xp_seqwin_finish(struct xp_seqwin *w, uint32_t seq, uint16_t n_chunks,
				    uint8_t outcome)
{
	uint32_t d = seq - w->below;

	if (outcome != XP_OUT_FAILED)
		w->last[seq & XP_SLOT_MASK] = (struct xp_slot_done){ seq, n_chunks, outcome };
	if (d >= 64)
		return;
	w->finished |= 1ull << d;
	while (w->finished & 1) {
		w->finished >>= 1;
		w->below++;
	}
}

#endif /* XP_SEQWIN_H */
