/* SPDX-License-Identifier: MIT */
/*
 * sweep_build.h - the packages a grid builds from source (sweep_build.c).
 */
#ifndef PCM_SIM_SWEEP_BUILD_H
#define PCM_SIM_SWEEP_BUILD_H

#include "sweep_grid.h"

/**
 * sweep_build_policies() - build each policy of @g given as sources with
 * pcmc, into DIR/policies/NAME.so, unless the one there was built from the
 * same sources (its stamp, NAME.key, holds their hash); point the policy's
 * --policy at it.
 * @g: the grid.
 * @dir: the sweep's directory, absolute.
 *
 * Return: 0, -ENOENT (no pcmc), -EIO (a build failed: pcmc said why on
 * stderr), -errno.
 */
int sweep_build_policies(struct sweep_grid *g, const char *dir);

#endif /* PCM_SIM_SWEEP_BUILD_H */
