// SPDX-License-Identifier: MIT
/*
 * verbs_sq.c - send-queue accounting for QPs created with sq_sig_all = 0.
 *
 * An unsignalled WR produces no completion when it succeeds, so its slot in
 * the send queue is known free only when a later signalled WR of the same
 * QP completes (a QP completes its WRs in order). Each signalled WR records
 * how many WRs its completion frees (itself and the unsignalled ones before
 * it) in a ring of marks. A WR is signalled at least every VB_SIGNAL_EVERY
 * WRs, and always when it is the last one posted to the QP for now, so that
 * no slot waits for a WR that may never come. A QP that fails flushes every
 * WR with a completion of its own, signalled or not; its accounting is then
 * reset at once.
 */
#include <errno.h>
#include <stdlib.h>

#include "verbs_int.h"

int vb_sq_init(struct vb_sq *sq, uint32_t depth)
{
	*sq = (struct vb_sq){ .depth = depth };
	if (depth == 0 || depth > UINT16_MAX)
		return -EINVAL;
	sq->marks = calloc(depth, sizeof(*sq->marks));
	return sq->marks ? 0 : -ENOMEM;
}

void vb_sq_fini(struct vb_sq *sq)
{
	free(sq->marks);
	*sq = (struct vb_sq){ 0 };
}

bool vb_sq_must_signal(const struct vb_sq *sq, bool last)
{
	return last || sq->unsignalled + 1 >= VB_SIGNAL_EVERY;
}

void vb_sq_posted(struct vb_sq *sq, bool signalled)
{
	sq->outstanding++;
	if (!signalled) {
		sq->unsignalled++;
		return;
	}
	sq->marks[(sq->mark_head + sq->mark_count) % sq->depth] = (uint16_t)(sq->unsignalled + 1);
	sq->mark_count++;
	sq->unsignalled = 0;
}

uint32_t vb_sq_completed(struct vb_sq *sq)
{
	uint32_t n;

	if (!sq->mark_count)
		return 0; /* a completion the accounting was reset for */
	n = sq->marks[sq->mark_head];
	sq->mark_head = (sq->mark_head + 1) % sq->depth;
	sq->mark_count--;
	sq->outstanding -= n;
	return n;
}

uint32_t vb_sq_reset(struct vb_sq *sq)
{
	uint32_t n = sq->outstanding;

	sq->outstanding = 0;
	sq->unsignalled = 0;
	sq->mark_head = 0;
	sq->mark_count = 0;
	return n;
}
