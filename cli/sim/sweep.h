/* SPDX-License-Identifier: MIT */
/*
 * sweep.h - `pcm-sim sweep` (sweep.c): a grid of scenarios, settings,
 * policies and seeds run on every core, or emitted for a cluster, and
 * collected into tables and plots.
 */
#ifndef PCM_SIM_SWEEP_H
#define PCM_SIM_SWEEP_H

/**
 * sweep_main() - the sweep subcommand.
 * @argc: its argument count, "sweep" included.
 * @argv: its arguments, argv[0] "sweep".
 *
 * Return: the exit status: 0 when every cell ran ok, 1 when some failed or
 * have no record, 2 for a usage error or a bad grid.
 */
int sweep_main(int argc, char **argv);

#endif /* PCM_SIM_SWEEP_H */
