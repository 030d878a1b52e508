/* SPDX-License-Identifier: MIT */
/*
 * bench_pair.h - pcm-bench goodput between two processes over verbs
 * (bench_pair.c), which pcm-bench goodput (bench_transport.c) hands
 * --listen and --connect to.
 */
#ifndef PCM_BENCH_PAIR_H
#define PCM_BENCH_PAIR_H

#include "bench_rig.h"

/**
 * tp_pair_goodput() - goodput between two processes over verbs: the receiver
 * (--listen) or the sender (--connect) of one flow, connected through the
 * TCP bootstrap (bench_pair.c).
 * @o: the options (o->listen or o->connect set).
 * @dp: the datapath (verbs).
 *
 * Return: 0 when every message arrived intact, -EIO on a mismatch, another
 * -errno when setup failed (each printed).
 */
int tp_pair_goodput(const struct tp_opts *o, const struct xp_dp_ops *dp);

#endif /* PCM_BENCH_PAIR_H */
