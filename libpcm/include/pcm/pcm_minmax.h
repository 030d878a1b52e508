/* SPDX-License-Identifier: MIT */
/*
 * pcm_minmax.h - MIN and MAX for pcm's own code and policies. pcm.h leaves
 * them out of a handler package's build (HANDLER_BUILD, which pcmc and the
 * SDK's build define), because the SDK's packages define their own in their
 * algo_utils.h; pcm's policies get them from pcm_algo.h, which includes this.
 */
#ifndef PCM_PCM_MINMAX_H
#define PCM_PCM_MINMAX_H

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

#endif /* PCM_PCM_MINMAX_H */
