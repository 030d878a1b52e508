/* SPDX-License-Identifier: MIT */
/*
 * tcp_shared.h - window growth shared by reno_like and ecn_like. Like the
 * SDK's tcp_utils.h it picks the generated header of the package being built
 * from BUILD_ALGO_<NAME>, which pcmc defines as the SDK's build does.
 */
#ifndef TCP_SHARED_H
#define TCP_SHARED_H

#include "pcm.h"
#include "pcmh.h"

#ifdef BUILD_ALGO_RENO_LIKE
#include "reno_like.h"
#elif BUILD_ALGO_ECN_LIKE
#include "ecn_like.h"
#else
#error "tcp_shared.c is built as part of reno_like or ecn_like"
#endif

/* Below SSTHRESH +1 packet per ACK; above it +1 packet per window of ACKs. */
void tcp_shared_grow(ALGO_CTX_ARGS, pcm_uint *cwnd_pkts, pcm_uint acks);

#endif /* TCP_SHARED_H */
