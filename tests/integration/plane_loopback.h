/* SPDX-License-Identifier: MIT */
/*
 * plane_loopback.h - the integration tests' data plane: pcmd's seam
 * (daemon/plane.h) over memory copies between clients' regions. Not a
 * transport: no wire, no congestion control; it exists so pcmd's channel,
 * isolation and reclaim logic can be tested end to end with real bytes.
 */
#ifndef PCMD_PLANE_LOOPBACK_H
#define PCMD_PLANE_LOOPBACK_H

#include "plane.h"

extern const struct pcmd_plane_ops pcmd_plane_loopback;

/* What the loopback holds now (leak checks in tests that link it directly). */
struct pcmd_plane_loopback_usage {
	uint32_t regions, flows, listeners, queued_events;
	uint64_t bytes_copied;
	uint64_t policy_swaps;
};

void pcmd_plane_loopback_usage(struct pcmd_plane *pl, struct pcmd_plane_loopback_usage *out);

#endif /* PCMD_PLANE_LOOPBACK_H */
