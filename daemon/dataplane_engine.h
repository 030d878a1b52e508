/* SPDX-License-Identifier: MIT */
/*
 * dataplane_engine.h - the data plane pcmd ships: the seam (dataplane.h)
 * bound to the transport engine (dataplane_engine.c).
 */
#ifndef PCMD_DATAPLANE_ENGINE_H
#define PCMD_DATAPLANE_ENGINE_H

#include "dataplane.h"

extern const struct pcmd_dp_ops pcmd_dp_engine;

/* What the engine data plane holds now (the tests' leak checks). */
struct pcmd_dp_engine_usage {
	uint32_t regions, flows, listeners, queued_events;
	uint32_t engines; /* running: every engine thread; softnic: the attached hosts */
};

/**
 * pcmd_dp_engine_usage() - count what @dp holds (pcmd's loop thread only).
 * @dp: a data plane from pcmd_dp_engine.create.
 * @out: the counts.
 */
void pcmd_dp_engine_usage(struct pcmd_dp *dp, struct pcmd_dp_engine_usage *out);

#endif /* PCMD_DATAPLANE_ENGINE_H */
