/* SPDX-License-Identifier: MIT */
/*
 * xp_ack.h - the drain of control records (ack.c): every connection's ACKs,
 * CTSs, their answers and FIN/RESET, batched per peer into packets.
 */
#ifndef XP_ACK_H
#define XP_ACK_H

#include <stdint.h>

#include "core.h"

struct xp_core;

/**
 * xp_ctrl_drain() - write the control records of every connection that has
 * some (ACKs, CTSs, their answers, FIN/RESET), batched per peer into
 * packets of at most ctrl_mtu bytes, into @batch.
 * @core: the core.
 * @now_ns: the time (ACK hold times are measured to it).
 * @batch: where the packets go; a connection whose records do not fit waits
 *         for the next drain.
 */
void xp_ctrl_drain(struct xp_core *core, uint64_t now_ns, struct xp_batch *batch);

#endif /* XP_ACK_H */
