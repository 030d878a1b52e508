/* SPDX-License-Identifier: MIT */
/*
 * dataplane_engine.h - the data plane pcmd ships: the seam (dataplane.h)
 * bound to the transport engine (dataplane_engine.c).
 */
#ifndef PCMD_DATAPLANE_ENGINE_H
#define PCMD_DATAPLANE_ENGINE_H

#include "dataplane.h"

extern const struct pcmd_dp_ops pcmd_dp_engine;

#endif /* PCMD_DATAPLANE_ENGINE_H */
