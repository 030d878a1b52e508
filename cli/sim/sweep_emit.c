// SPDX-License-Identifier: MIT
/*
 * sweep_emit.c - a sweep as a script for an engine that clusters already
 * run. Both cut the grid into shards (cell i is in shard i modulo the
 * count) and run each shard as `pcm-sim sweep GRID -o DIR --shard I/N
 * --resume`, which writes one record per cell into the shared directory;
 * `pcm-sim sweep --collect DIR` merges them and draws the plots. Paths are
 * absolute: every machine must see pcm-sim, the grid, its files and DIR at
 * the same paths.
 */
#include "shell_quote.h"
#include "sweep_emit.h"

/* The shard's command, with @shard the shell text that names the shard. */
static void shard_command(FILE *f, const struct sweep_emit *e, const char *shard,
			  const char *jobs)
{
	shell_quote(f, e->self);
	fputs(" sweep ", f);
	shell_quote(f, e->grid);
	fputs(" -o ", f);
	shell_quote(f, e->dir);
	fprintf(f, " --shard %s/%zu -j %s --resume", shard, e->shards, jobs);
}

static void collect_command(FILE *f, const struct sweep_emit *e)
{
	shell_quote(f, e->self);
	fputs(" sweep --collect ", f);
	shell_quote(f, e->dir);
}

void sweep_emit_slurm(FILE *f, const struct sweep_emit *e)
{
	char jobs[64];

	fprintf(f, "#!/bin/sh\n"
		   "# pcm-sim sweep as a Slurm job array: %s, %zu cells in %zu shards.\n"
		   "# Array task I runs the cells of shard I (SLURM_ARRAY_TASK_ID) into\n# ",
		e->grid, e->cells, e->shards);
	shell_quote(f, e->dir);
	fputs(", which every node must see at that path.\n"
	      "# Submit it with sbatch (options on sbatch's command line win over these);\n"
	      "# when the array is done, merge the records and draw the plots:\n#   ",
	      f);
	collect_command(f, e);
	fputs("\n# or queue that behind the array at once:\n"
	      "#   sbatch --dependency=afterany:JOBID --wrap \"",
	      f);
	collect_command(f, e);
	fprintf(f, "\"\n"
		   "#SBATCH --job-name=pcm-sweep-%s\n"
		   "#SBATCH --array=0-%zu\n"
		   "#SBATCH --cpus-per-task=%u\n"
		   "#SBATCH --output=%s/slurm/%%A_%%a.out\n"
		   "exec ",
		e->name, e->shards - 1, e->jobs, e->dir);
	snprintf(jobs, sizeof(jobs), "\"${SLURM_CPUS_PER_TASK:-%u}\"", e->jobs);
	shard_command(f, e, "\"$SLURM_ARRAY_TASK_ID\"", jobs);
	fputc('\n', f);
}

void sweep_emit_parallel(FILE *f, const struct sweep_emit *e)
{
	fprintf(f, "#!/bin/sh\n"
		   "# pcm-sim sweep with GNU parallel: %s, %zu cells in %zu shards,\n"
		   "# one shard per job, as many jobs at once on each machine as it has cores,\n"
		   "# %s;\n# then the records are merged and the plots drawn.\n",
		e->grid, e->cells, e->shards,
		e->sshloginfile ? "on the machines of the --sshloginfile (each must see "
				  "pcm-sim, the grid\n# and the sweep's directory at these paths)"
				: "on this machine");
	fputs("parallel --quote --jobs 100% ", f);
	if (e->sshloginfile) {
		fputs("--sshloginfile ", f);
		shell_quote(f, e->sshloginfile);
		fputc(' ', f);
	}
	shard_command(f, e, "{}", "1");
	fprintf(f, " --quiet ::: $(seq 0 %zu)\n", e->shards - 1);
	collect_command(f, e);
	fputc('\n', f);
}
