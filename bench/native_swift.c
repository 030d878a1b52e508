// SPDX-License-Identifier: MIT
/*
 * native_swift.c - hand-written Swift (Kumar et al., SIGCOMM 2020), the
 * baseline of `pcm-bench handlers`. Same update rules, units and constants
 * as policies/swift.c built in double precision; see that file for the math.
 */
#include <math.h>

#include "native_swift.h"

/* Default fabric profile (policies/fabric/default.yaml). */
#define FABRIC_LINK_MSS 4096.0
#define FABRIC_NOMINAL_PKT_BYTES 4184.0
#define FABRIC_BRTT_PS 14022720.0
#define FABRIC_MIN_CWND 4184.0
#define FABRIC_MAX_CWND 262926.0
#define FABRIC_BDP 175284u
#define FABRIC_HOP_COUNT 6u

/* bytes / mss as whole packets plus a fraction, as pcm_algo_bytes_to_pkts() does */
static double bytes_to_pkts(uint64_t bytes, uint64_t mss)
{
	return (double)(bytes / mss) + (double)(bytes % mss) / (double)mss;
}

/* whole packets scaled in integers, the fraction in double, as pcm_algo_pkts_to_bytes() */
static uint64_t pkts_to_bytes(double pkts, uint64_t mss)
{
	uint64_t whole = (uint64_t)pkts;

	return whole * mss + (uint64_t)((pkts - (double)whole) * (double)mss);
}

void native_swift_default_params(struct native_swift_params *p)
{
	p->mss_bytes = FABRIC_LINK_MSS;
	p->pkt_bytes = FABRIC_NOMINAL_PKT_BYTES;
	p->ai_pkts = 1.0;
	p->beta = 0.8;
	p->max_mdf = 0.5;
	p->rtx_reset_threshold = 5;
	p->base_target_us = FABRIC_BRTT_PS / 1000000.0;
	p->hop_scale_us = 0.5;
	p->hop_count = FABRIC_HOP_COUNT;
	p->fs_range_us = 2.0 * FABRIC_BRTT_PS / 1000000.0;
	p->min_cwnd_pkts = FABRIC_MIN_CWND / FABRIC_NOMINAL_PKT_BYTES;
	p->max_cwnd_pkts = FABRIC_MAX_CWND / FABRIC_NOMINAL_PKT_BYTES;
	p->fs_alpha = p->fs_range_us / (1.0 / sqrt(0.1) - 1.0 / sqrt(p->max_cwnd_pkts));
	p->fs_beta = -p->fs_alpha / sqrt(p->max_cwnd_pkts);
	p->initial_cwnd_bytes = FABRIC_BDP;
}

void native_swift_init(struct native_swift_flow *f, const struct native_swift_params *p,
		       uint64_t now_ps)
{
	f->cwnd_pkts = bytes_to_pkts(p->initial_cwnd_bytes, (uint64_t)p->pkt_bytes);
	f->cwnd_bytes = p->initial_cwnd_bytes;
	f->t_last_decrease_ps = 0;
	f->retx_count = 0;
	f->rtt_ps = 0;
	f->epoch_ps = now_ps;
}

/* Plain comparisons, not fmin/fmax: those are out-of-line libm calls here. */
static inline double min_d(double a, double b)
{
	return a < b ? a : b;
}

static inline double max_d(double a, double b)
{
	return a > b ? a : b;
}

static double ps_to_us(uint64_t ps)
{
	return (double)(ps / 1000000) + (double)((ps % 1000000) / 1000) / 1000.0;
}

static double target_delay_us(const struct native_swift_params *p, double cwnd)
{
	double fs = p->fs_alpha / sqrt(cwnd) + p->fs_beta;

	fs = max_d(min_d(fs, p->fs_range_us), 0.0);
	return p->base_target_us + p->hop_scale_us * p->hop_count + fs;
}

static double on_ack(struct native_swift_flow *f, const struct native_swift_params *p,
		     const struct native_swift_event *ev, bool can_decrease)
{
	double delay = ps_to_us(f->rtt_ps), target = target_delay_us(p, f->cwnd_pkts);
	double cwnd = f->cwnd_pkts;

	f->retx_count = 0;
	if (delay < target) {
		double step = p->ai_pkts * bytes_to_pkts(ev->acked_bytes, (uint64_t)p->mss_bytes);

		return cwnd + (cwnd >= 1.0 ? step / cwnd : step);
	}
	if (!can_decrease)
		return cwnd;
	return cwnd * max_d(1.0 - p->beta * ((delay - target) / delay), 1.0 - p->max_mdf);
}

bool native_swift_on_event(struct native_swift_flow *f, const struct native_swift_params *p,
			   const struct native_swift_event *ev, uint64_t now_ps)
{
	uint64_t now = now_ps - f->epoch_ps;
	double next, cwnd = f->cwnd_pkts;
	bool can_decrease;

	if (ev->has_rtt)
		f->rtt_ps = ev->rtt_ps;
	if (!ev->acks && !ev->nacks && !ev->rtos)
		return false;
	can_decrease = now - f->t_last_decrease_ps >= f->rtt_ps;
	if (ev->rtos) {
		f->retx_count += ev->rtos;
		if (f->retx_count >= p->rtx_reset_threshold)
			next = p->min_cwnd_pkts;
		else
			next = can_decrease ? cwnd * (1.0 - p->max_mdf) : cwnd;
	} else if (ev->nacks) {
		f->retx_count = 0;
		next = can_decrease ? cwnd * (1.0 - p->max_mdf) : cwnd;
	} else {
		next = on_ack(f, p, ev, can_decrease);
	}
	next = max_d(min_d(next, p->max_cwnd_pkts), p->min_cwnd_pkts);
	if (next < cwnd)
		f->t_last_decrease_ps = now;
	f->cwnd_pkts = next;
	f->cwnd_bytes = pkts_to_bytes(next, (uint64_t)p->pkt_bytes);
	return true;
}
