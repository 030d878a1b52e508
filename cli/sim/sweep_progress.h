/* SPDX-License-Identifier: MIT */
/*
 * sweep_progress.h - telling how a sweep goes (sweep_progress.c): a
 * progress bar on a terminal, a line per finished cell otherwise.
 */
#ifndef PCM_SIM_SWEEP_PROGRESS_H
#define PCM_SIM_SWEEP_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct sweep_progress {
	FILE *f;
	bool tty;            /* draw a bar (else log lines) */
	bool quiet;          /* neither */
	size_t total;        /* cells to run now */
	size_t done, failed;
	size_t running;      /* set by the caller as it starts cells; one less as each ends */
	double t0;
};

/**
 * sweep_progress_start() - begin: on a terminal @f gets a bar, redrawn in
 * place; otherwise one line per cell.
 * @p: the state.
 * @f: where to tell it (stderr).
 * @total: the cells to run.
 * @quiet: say nothing per cell.
 */
void sweep_progress_start(struct sweep_progress *p, FILE *f, size_t total, bool quiet);

/**
 * sweep_progress_cell() - a cell ended.
 * @p: the state.
 * @index: the cell.
 * @label: its parameters in a few words.
 * @status: "ok", "incomplete", "failed", "crashed".
 * @wall_s: its run's wall time.
 */
void sweep_progress_cell(struct sweep_progress *p, size_t index, const char *label,
			 const char *status, double wall_s);

/**
 * sweep_progress_tick() - redraw the bar (time passes); nothing in a log.
 * @p: the state.
 */
void sweep_progress_tick(struct sweep_progress *p);

/**
 * sweep_progress_end() - end the bar's line.
 * @p: the state.
 */
void sweep_progress_end(struct sweep_progress *p);

/**
 * sweep_now_s() - a monotonic clock, in seconds.
 *
 * Return: the time.
 */
double sweep_now_s(void);

#endif /* PCM_SIM_SWEEP_PROGRESS_H */
