/* SPDX-License-Identifier: MIT */
/*
 * rtt.h - the round-trip estimator of RFC 6298, and the RTO it gives.
 *
 *   first sample R:  SRTT = R, RTTVAR = R/2
 *   then:            RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|,  SRTT = 7/8 SRTT + 1/8 R
 *   RTO = SRTT + max(G, 4 RTTVAR, min), capped at max, then doubled per
 *   backoff step and capped at max; before any sample, the initial RTO,
 *   doubled the same way.
 *
 * The minimum bounds the variance term, not the whole RTO, as Linux keeps
 * it (its rttvar never falls below rto_min): on a steady path RTTVAR decays
 * to nothing, and an RTO of SRTT + G would make the first ACK late by a
 * little more than G a spurious timeout.
 *
 * Also keeps the minimum RTT seen (RACK's reordering window is min_RTT/4) and
 * the latest sample. All times are nanoseconds. Which samples are fed here
 * (Karn's rule) is the caller's business: see recovery.c.
 */
#ifndef XP_RTT_H
#define XP_RTT_H

#include <stdint.h>

struct xp_rtt {
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	uint64_t min_ns;    /* UINT64_MAX before the first sample */
	uint64_t latest_ns;
	uint64_t samples;
};

struct xp_rto_params {
	uint64_t initial_ns;     /* before any sample */
	uint64_t min_ns;         /* floor of the variance term (so of RTO - SRTT) */
	uint64_t max_ns;         /* cap, also of the backed-off value */
	uint64_t granularity_ns; /* G: the timer's granularity */
};

/**
 * xp_rtt_init() - an estimator with no sample.
 */
void xp_rtt_init(struct xp_rtt *rtt);

/**
 * xp_rtt_sample() - fold one RTT sample (> 0; a zero sample counts as 1 ns) in.
 */
void xp_rtt_sample(struct xp_rtt *rtt, uint64_t sample_ns);

/**
 * xp_rtt_rto() - the retransmission timeout.
 *
 * Return: the retransmission timeout after @backoff expiries, in ns.
 */
uint64_t xp_rtt_rto(const struct xp_rtt *rtt, const struct xp_rto_params *p, unsigned backoff);

#endif /* XP_RTT_H */
