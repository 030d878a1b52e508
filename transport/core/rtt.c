// SPDX-License-Identifier: MIT
/*
 * rtt.c - RFC 6298 SRTT/RTTVAR and the RTO (rtt.h).
 */
#include "rtt.h"

void xp_rtt_init(struct xp_rtt *rtt)
{
	rtt->srtt_ns = 0;
	rtt->rttvar_ns = 0;
	rtt->min_ns = UINT64_MAX;
	rtt->latest_ns = 0;
	rtt->samples = 0;
}

void xp_rtt_sample(struct xp_rtt *rtt, uint64_t sample_ns)
{
	uint64_t r = sample_ns ? sample_ns : 1;

	rtt->latest_ns = r;
	if (r < rtt->min_ns)
		rtt->min_ns = r;
	if (!rtt->samples++) {
		rtt->srtt_ns = r;
		rtt->rttvar_ns = r / 2;
		return;
	}
	{
		uint64_t err = rtt->srtt_ns > r ? rtt->srtt_ns - r : r - rtt->srtt_ns;

		rtt->rttvar_ns = rtt->rttvar_ns - rtt->rttvar_ns / 4 + err / 4;
		rtt->srtt_ns = rtt->srtt_ns - rtt->srtt_ns / 8 + r / 8;
	}
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;

	return m > c ? m : c;
}

uint64_t xp_rtt_rto(const struct xp_rtt *rtt, const struct xp_rto_params *p, unsigned backoff)
{
	uint64_t base;

	if (rtt->samples)
		base = rtt->srtt_ns + max3(4 * rtt->rttvar_ns, p->granularity_ns, p->min_ns);
	else
		base = p->initial_ns;
	if (base > p->max_ns)
		base = p->max_ns;
	for (unsigned i = 0; i < backoff && base < p->max_ns; i++)
		base *= 2;
	return base < p->max_ns ? base : p->max_ns;
}
