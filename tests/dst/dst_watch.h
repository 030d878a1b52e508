/* SPDX-License-Identifier: MIT */
/*
 * dst_watch.h - an invariant of loss recovery checked from the wire: a chunk
 * is not marked lost again while its retransmission is out. RACK leaves a
 * retransmission that is out to the RTO, so between a chunk's second
 * transmission and its third (and any later one) the sender's core must
 * have run an RTO or a tail-loss probe (the only other ways a chunk goes
 * again). The watch keys each chunk by its sender (the test's connection:
 * an old sender may still retransmit to a receiving id given to a new
 * connection since), the receiving host, the receiving connection id, the
 * message slot and the chunk index, as the immediate names them, and
 * forgets a slot's chunks when its send completes (the sender starts the
 * next message in that slot only after the receiver's ACK said the message
 * is complete) or when the receiving id is given to a new connection.
 */
#ifndef DST_WATCH_H
#define DST_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct dst_watch;

/* Return: 0, -ENOMEM. */
int dst_watch_create(struct dst_watch **out);
void dst_watch_destroy(struct dst_watch *w);

/**
 * dst_watch_chunk() - a chunk transmission was seen on the wire.
 * @w: the watch.
 * @sender: the sending connection (the test's index, < 256).
 * @dst_host: the receiving host.
 * @imm: its immediate (host order).
 * @timers: the sending core's RTO and TLP firings so far.
 *
 * Return: false if it is a third (or later) transmission with no RTO or TLP
 * since the one before.
 */
bool dst_watch_chunk(struct dst_watch *w, uint32_t sender, uint32_t dst_host, uint32_t imm,
		     uint64_t timers);

/* @sender's send in @slot to connection @conn at @dst_host completed. */
void dst_watch_msg_done(struct dst_watch *w, uint32_t sender, uint32_t dst_host, uint32_t conn,
			uint32_t slot);

/* Connection id @conn at @dst_host names a new connection, with @sender, from now on. */
void dst_watch_conn_new(struct dst_watch *w, uint32_t sender, uint32_t dst_host, uint32_t conn);

#endif /* DST_WATCH_H */
