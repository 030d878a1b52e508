/* SPDX-License-Identifier: MIT */
/*
 * plane_engine.h - the data plane pcmd ships: the seam (plane.h)
 * bound to the transport engine (plane_engine*.c).
 */
#ifndef PCMD_PLANE_ENGINE_H
#define PCMD_PLANE_ENGINE_H

#include "plane.h"

extern const struct pcmd_plane_ops pcmd_plane_engine;

/* What the engine data plane holds now (the tests' leak checks). */
struct pcmd_plane_engine_usage {
	uint32_t regions, flows, listeners, queued_events;
	uint32_t engines; /* running: every engine thread; softnic: the attached hosts */
};

/**
 * pcmd_plane_engine_usage() - count what @pl holds (pcmd's loop thread only).
 * @pl: a data plane from pcmd_plane_engine.create.
 * @out: the counts.
 */
void pcmd_plane_engine_usage(struct pcmd_plane *pl, struct pcmd_plane_engine_usage *out);

#endif /* PCMD_PLANE_ENGINE_H */
