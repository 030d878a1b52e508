/* SPDX-License-Identifier: MIT */
/*
 * native_swift.h - Swift written by hand in plain C with no PCM: the same
 * math as policies/swift.c in double precision. Only the benchmarks use it,
 * as the baseline that measures what PCM's abstraction costs.
 */
#ifndef PCM_BENCH_NATIVE_SWIFT_H
#define PCM_BENCH_NATIVE_SWIFT_H

#include <stdbool.h>
#include <stdint.h>

struct native_swift_params {
	double mss_bytes; /* payload of a full packet (DATA_TX) */
	double pkt_bytes; /* what one packet counts in the window (FABRIC_NOMINAL_PKT_BYTES) */
	double ai_pkts;
	double beta;
	double max_mdf;
	uint64_t rtx_reset_threshold;
	double base_target_us;
	double hop_scale_us;
	unsigned hop_count;
	double fs_range_us;
	double fs_alpha;
	double fs_beta;
	double min_cwnd_pkts;
	double max_cwnd_pkts;
	uint64_t initial_cwnd_bytes;
};

struct native_swift_flow {
	double cwnd_pkts;
	uint64_t cwnd_bytes; /* what the datapath enforces */
	uint64_t t_last_decrease_ps;
	uint64_t retx_count;
	uint64_t rtt_ps; /* last sample */
	uint64_t epoch_ps;
};

/* One ACK-side event, the fields a transport hands its CC module. */
struct native_swift_event {
	uint32_t acks;
	uint32_t nacks;
	uint32_t rtos;
	bool has_rtt;
	uint64_t acked_bytes;
	uint64_t rtt_ps;
};

/* Parameters derived from the default fabric profile, as swift.yaml does. */
void native_swift_default_params(struct native_swift_params *p);

void native_swift_init(struct native_swift_flow *f, const struct native_swift_params *p,
		       uint64_t now_ps);

/* React to one event; returns true if the window was updated. */
bool native_swift_on_event(struct native_swift_flow *f, const struct native_swift_params *p,
			   const struct native_swift_event *ev, uint64_t now_ps);

#endif /* PCM_BENCH_NATIVE_SWIFT_H */
