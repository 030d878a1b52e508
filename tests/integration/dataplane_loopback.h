/* SPDX-License-Identifier: MIT */
/*
 * dataplane_loopback.h - the integration tests' data plane: pcmd's seam
 * (daemon/dataplane.h) over memory copies between clients' regions. Not a
 * transport: no wire, no congestion control; it exists so pcmd's channel,
 * isolation and reclaim logic can be tested end to end with real bytes.
 */
#ifndef PCMD_DATAPLANE_LOOPBACK_H
#define PCMD_DATAPLANE_LOOPBACK_H

#include "dataplane.h"

extern const struct pcmd_dp_ops pcmd_dp_loopback;

/* What the loopback holds now (leak checks in tests that link it directly). */
struct pcmd_dp_loopback_usage {
	uint32_t regions, flows, listeners, queued_events;
	uint64_t bytes_copied;
	uint64_t policy_swaps;
};

void pcmd_dp_loopback_usage(struct pcmd_dp *dp, struct pcmd_dp_loopback_usage *out);

#endif /* PCMD_DATAPLANE_LOOPBACK_H */
