// SPDX-License-Identifier: MIT
/*
 * run_records.c - records pcm-sim adds beside the emulation's CSV records,
 * from what the library shows a program: goodput.csv, each message's
 * delivered bytes (uet_msg_info.delivered_bytes: payload written at the
 * receiver, each byte once) at every sample interval, read from the packet
 * hook as simulated time passes each interval's end, so the run itself is
 * not changed; and failures.csv, the scenario's link failures, which
 * pcm-plot shades. Every record file of a run is opened here.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_records.h"

FILE *records_open(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "pcm-sim: %s: cannot write: %s\n", path, strerror(errno));
	return f;
}

/* Room for @n messages' flags (the run adds its messages when it starts). */
static bool room_for(struct goodput_rec *g, uint32_t n)
{
	uint32_t *a;

	if (n <= g->cap)
		return true;
	a = realloc(g->reported, n * sizeof(*a));
	if (!a) {
		g->oom = true;
		return false;
	}
	memset(a + g->cap, 0, (n - g->cap) * sizeof(*a));
	g->reported = a;
	g->cap = n;
	return true;
}

/*
 * One row per message that is posted by @t_ps and was still open at the
 * previous sample (a completed message gets one last row, then no more).
 */
static void goodput_rows(struct goodput_rec *g, uint64_t t_ps)
{
	uint32_t n = uet_sim_n_msgs(g->sim);

	if (g->oom || !room_for(g, n))
		return;
	for (uint32_t i = 0; i < n; i++) {
		const struct uet_msg_info *m = uet_sim_msg(g->sim, i);

		if (m->post_ps > t_ps || g->reported[i])
			continue;
		fprintf(g->f, "%" PRIu64 ",%u,%u,%u,%" PRIu64 "\n", t_ps, i, m->src, m->dst,
			m->delivered_bytes);
		if (m->done_ps && m->done_ps <= t_ps)
			g->reported[i] = 1;
	}
}

/* The rows of every interval end up to @t_ps. */
static void goodput_until(struct goodput_rec *g, uint64_t t_ps)
{
	while (t_ps >= g->next_ps) {
		goodput_rows(g, g->next_ps);
		g->next_ps += g->interval_ps;
	}
}

/* The packet hook: the interval ends the run has passed get their rows. */
static void goodput_tick(void *ctx, const struct uet_pkt_view *p)
{
	goodput_until(ctx, p->t_ps);
}

int goodput_rec_start(struct goodput_rec *g, const char *dir, const struct uet_scenario *scn,
		      struct uet_sim *sim)
{
	struct uet_hooks hooks = { .ctx = g, .monitor = goodput_tick };

	g->sim = sim;
	g->interval_ps = scn->flow_sample_ps ? scn->flow_sample_ps : scn->nic.stats_interval_ps;
	g->next_ps = 0;
	g->f = records_open(dir, "goodput.csv");
	if (!g->f)
		return -EIO;
	fputs("time_ps,flow,src,dst,delivered_bytes\n", g->f);
	uet_sim_set_hooks(sim, &hooks);
	return 0;
}

int goodput_rec_finish(struct goodput_rec *g)
{
	uint64_t end;
	int rc = 0;

	if (!g->f)
		return 0;
	end = uet_sim_now(g->sim);
	goodput_until(g, end);
	if (end + g->interval_ps != g->next_ps)
		goodput_rows(g, end); /* the run ended inside an interval */
	if (g->oom)
		rc = -ENOMEM;
	if (fclose(g->f) != 0)
		rc = -EIO;
	free(g->reported);
	memset(g, 0, sizeof(*g));
	return rc;
}

int failures_write(const char *dir, const struct uet_scenario *scn)
{
	FILE *f = records_open(dir, "failures.csv");

	if (!f)
		return -EIO;
	fputs("link_a,link_b,at_ps,until_ps,loss\n", f);
	for (uint32_t i = 0; i < scn->n_failures; i++) {
		const struct uet_link_failure *l = &scn->failures[i];

		fprintf(f, "%s,%s,%" PRIu64 ",", l->a, l->b, l->at_ps);
		if (l->until_ps != UINT64_MAX)
			fprintf(f, "%" PRIu64, l->until_ps);
		fprintf(f, ",%g\n", l->loss_ppm ? l->loss_ppm / 1e6 : 1.0);
	}
	return fclose(f) == 0 ? 0 : -EIO;
}
