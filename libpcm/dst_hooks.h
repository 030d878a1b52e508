/* SPDX-License-Identifier: MIT */
/*
 * dst_hooks.h - the scheduling point of the deterministic-interleaving test
 * build of the asynchronous shell (PCM_ASYNC_DST).
 *
 * That build compiles async.c and pendset.c (and the test packages, through
 * PCM_SHARED_LOAD/STORE of package.h) with a call to pcm_dst_point() before
 * every access to memory shared between threads. The test defines it: it
 * switches to whichever datapath, worker or flow-management actor its seeded
 * scheduler picks next, so one seed is one exact interleaving.
 */
#ifndef PCM_DST_HOOKS_H
#define PCM_DST_HOOKS_H

void pcm_dst_point(void);

#endif /* PCM_DST_HOOKS_H */
