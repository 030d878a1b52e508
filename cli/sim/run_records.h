/* SPDX-License-Identifier: MIT */
/*
 * run_records.h - the records pcm-sim writes beside the emulation's own
 * (run_records.c): each flow's delivered bytes over time, and the scenario's
 * link failures, for pcm-plot.
 */
#ifndef PCM_SIM_RUN_RECORDS_H
#define PCM_SIM_RUN_RECORDS_H

#include <stdbool.h>
#include <stdio.h>

#include "uet.h"

/* goodput.csv as the run goes: each message's delivered bytes every sample interval. */
struct goodput_rec {
	FILE *f;
	struct uet_sim *sim;
	uint64_t interval_ps, next_ps;
	uint32_t *reported; /* per message: 1 once its last row (after it completed) is out */
	uint32_t cap;       /* of reported */
	bool oom;
};

/**
 * records_open() - open record file @name in directory @dir for writing.
 * @dir: the records' directory.
 * @name: the file's name.
 *
 * Return: the stream, or NULL (said on stderr, with the path and why).
 */
FILE *records_open(const char *dir, const char *name);

/**
 * goodput_rec_start() - open @dir/goodput.csv and sample @sim into it every
 * sample interval of @scn (records.flow_sample_interval, else
 * NDStatsReportInterval), through the sim's packet hook.
 * @g: the recorder, zeroed.
 * @dir: the records' directory.
 * @scn: the scenario.
 * @sim: the run, before it starts.
 *
 * Return: 0, -EIO (named on stderr), -ENOMEM.
 */
int goodput_rec_start(struct goodput_rec *g, const char *dir, const struct uet_scenario *scn,
		      struct uet_sim *sim);

/**
 * goodput_rec_finish() - the rows up to the end of the run, and close.
 * @g: the recorder (a zeroed one is left alone).
 *
 * Return: 0, -EIO.
 */
int goodput_rec_finish(struct goodput_rec *g);

/**
 * failures_write() - @dir/failures.csv: one row per link failure of @scn
 * (`link_a,link_b,at_ps,until_ps,loss`; until_ps empty when the link never
 * comes back, loss 1 for a link down).
 * @dir: the records' directory.
 * @scn: the scenario.
 *
 * Return: 0, -EIO (named on stderr).
 */
int failures_write(const char *dir, const struct uet_scenario *scn);

#endif /* PCM_SIM_RUN_RECORDS_H */
