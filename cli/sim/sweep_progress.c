// SPDX-License-Identifier: MIT
/*
 * sweep_progress.c - a sweep's progress: on a terminal one line redrawn in
 * place (a bar, the cells done, failed and running, the time so far and an
 * estimate of the rest, from the mean so far); into a file or a pipe a
 * plain line per cell that ended, which a log keeps.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sweep_progress.h"

#define BAR_WIDTH 30

double sweep_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void clock_text(double s, char *buf, size_t len)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static void draw(struct sweep_progress *p)
{
	double elapsed = sweep_now_s() - p->t0;
	size_t fill = p->total ? p->done * BAR_WIDTH / p->total : BAR_WIDTH;
	char bar[BAR_WIDTH + 1], spent[32], left[32] = "?";

	memset(bar, '#', fill);
	memset(bar + fill, '.', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	clock_text(elapsed, spent, sizeof(spent));
	if (p->done)
		clock_text(elapsed / (double)p->done * (double)(p->total - p->done), left,
			   sizeof(left));
	fprintf(p->f, "\r[%s] %zu/%zu cells, %zu failed, %zu running, %s, ~%s left \033[K", bar,
		p->done, p->total, p->failed, p->running, spent, left);
	fflush(p->f);
}

void sweep_progress_start(struct sweep_progress *p, FILE *f, size_t total, bool quiet)
{
	p->f = f;
	p->tty = isatty(fileno(f)) && !quiet;
	p->quiet = quiet;
	p->total = total;
	p->done = p->failed = p->running = 0;
	p->t0 = sweep_now_s();
	if (p->tty && total)
		draw(p);
}

void sweep_progress_cell(struct sweep_progress *p, size_t index, const char *label,
			 const char *status, double wall_s)
{
	p->done++;
	p->running -= p->running > 0;
	p->failed += strcmp(status, "ok") != 0;
	if (p->quiet)
		return;
	if (p->tty) {
		if (strcmp(status, "ok") != 0)
			fprintf(p->f, "\r\033[Kpcm-sim sweep: cell %zu %s: %s\n", index, status,
				label);
		draw(p);
		return;
	}
	fprintf(p->f, "pcm-sim sweep: [%zu/%zu] cell %zu %s in %.2f s: %s\n", p->done, p->total,
		index, status, wall_s, label);
	fflush(p->f);
}

void sweep_progress_tick(struct sweep_progress *p)
{
	if (p->tty)
		draw(p);
}

void sweep_progress_end(struct sweep_progress *p)
{
	if (p->tty && p->total)
		fputc('\n', p->f);
}
