// SPDX-License-Identifier: MIT
/*
 * test_pcm_sweep.c - pcm-sim sweep as an author uses it, one property per
 * test: a grid's product gives each cell one record; a bad grid is told at
 * its file, line and column; a failing or crashing cell is recorded and the
 * others run; --resume runs only what is missing and does nothing on a
 * finished sweep; -j 2 runs two cells at once; shards merge by --collect in
 * cell order; summary.csv is flat RFC 4180; a policy given as sources is
 * built once; pcm-sim --set; the comparison plots; the Slurm script's
 * shards. (A real Slurm and GNU parallel run the emitted scripts in
 * test_sweep_slurm.sh and test_sweep_parallel.sh.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#define PCM_SIM PCM_BUILD_ROOT "/cli/sim/pcm-sim"
#define PKG PCM_SOURCE_ROOT "/tests/sim/pkg"
#define FABRIC PCM_SOURCE_ROOT "/policies/fabric/default.yaml"
#define SCENARIOS PCM_SOURCE_ROOT "/scenarios"

#include "cli_run.h"

static char scratch[256];

/* pcm-sim @args, run in the scratch directory. */
static void pcm_sim(struct out *o, const char *fmt, ...)
{
	char args[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	cli_run(scratch, scratch, args, o);
}

static void write_file(const char *name, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	write_text(path, text);
}

/* The text of @name in the scratch directory ("" if absent), in @buf. */
static char *read_file(const char *name, char *buf, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	slurp(path, buf, len);
	return buf;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* Line @i (0-based) of @text, into @buf. */
static char *line_of(const char *text, size_t i, char *buf, size_t len)
{
	for (; i && text; i--) {
		text = strchr(text, '\n');
		text = text ? text + 1 : NULL;
	}
	assert_non_null(text);
	snprintf(buf, len, "%.*s", (int)strcspn(text, "\n"), text);
	return buf;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static double number_after(const char *text, const char *key)
{
	const char *at = strstr(text, key);

	assert_non_null(at);
	return strtod(at + strlen(key), NULL);
}

static time_t mtime(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	return stat(path, &st) == 0 ? st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : 0;
}

/* Two tiny scenarios (one sender, 64 KB; two senders): cells of a few ms. */
static void tiny_scenarios(void)
{
	static const char *const common =
		"nic: {DataRate: 100Gbps}\n"
		"traffic: {type: incast, bytes: 64KB}\n"
		"policy: swift\n";
	char text[1024];

	snprintf(text, sizeof(text),
		 "name: one\ntopology: {type: incast, senders: 1, link_rate: 100Gbps, "
		 "link_delay: 3.3us}\n%s", common);
	write_file("one.yaml", text);
	snprintf(text, sizeof(text),
		 "name: two\ntopology: {type: incast, senders: 2, link_rate: 100Gbps, "
		 "link_delay: 3.3us}\n%s", common);
	write_file("two.yaml", text);
}

static void test_grid_product_gives_every_cell_one_record(void **state)
{
	char buf[1 << 17], line[4096];
	struct out o;

	tiny_scenarios();
	write_file("g.yaml", "scenarios: [one.yaml, two.yaml]\n"
			     "set:\n"
			     "  traffic.bytes: [16KB, 64KB]\n"
			     "policies: [swift, dctcp]\n"
			     "seeds: [1, 2]\n");
	pcm_sim(&o, "sweep g.yaml -j 2 -o out");
	expect(&o, 0, "16 of 16 cells recorded: 16 ok", "16 run (16 ok, 0 not ok) with -j 2");
	read_file("out/results.jsonl", buf, sizeof(buf));
	assert_int_equal(count_lines(buf), 16);
	for (size_t i = 0; i < 16; i++) {
		char want[64];

		line_of(buf, i, line, sizeof(line));
		snprintf(want, sizeof(want), "{\"cell\":%zu,\"cells\":16,", i);
		if (strncmp(line, want, strlen(want)) != 0 || !strstr(line, "\"status\":\"ok\""))
			fail_msg("line %zu: %s", i, line);
	}
	/* the slowest axis is the scenario, the fastest the seed; each reaches its run */
	line_of(buf, 13, line, sizeof(line));
	if (!strstr(line, "\"scenario_file\":\"two.yaml\",\"set\":{\"traffic.bytes\":\"64KB\"},"
			  "\"policy\":\"swift\",\"seed\":2,") ||
	    !strstr(line, "\"result\":{\"scenario\":\"two\",\"policy\":\"swift\",\"seed\":2,"
			  "\"hosts\":3,\"flows\":2,") ||
	    !strstr(line, "--set traffic.bytes=64KB"))
		fail_msg("cell 13: %s", line);
	/* 16 KB and 64 KB are different runs */
	line_of(buf, 0, line, sizeof(line));
	assert_true(number_after(line, "\"max\":") < 64 * 8 / 100.0 * 1.0 + 20);
}

static void test_bad_grid_is_reported_at_file_line_col(void **state)
{
	static const struct {
		const char *grid, *message;
	} cases[] = {
		{ "scenarios: [one.yaml]\nset:\n  topology.link_ratex: [100Gbps]\n",
		  "g.yaml:3:3: topology.link_ratex: unknown key (valid here: type, senders," },
		{ "scenarios: [one.yaml]\nset:\n  topology.link_rate: [100Gbps, 400]\n",
		  "g.yaml:3:33: topology.link_rate: '400' needs a unit" },
		{ "scenarios: [one.yaml]\nconfigurations:\n  - {name: a, nic.Bogus: 1}\n",
		  "g.yaml:3:15: nic.Bogus: unknown NIC attribute" },
		{ "scenarios: [one.yaml]\nset:\n  failures[0].at: [1us]\n",
		  "g.yaml:3:3: failures[0].at: the scenario has no 'failures' list to index" },
		{ "scenarioz: [one.yaml]\n", "g.yaml:1:1: scenarioz: unknown key" },
		{ "scenarios: [one.yaml, nope.yaml]\n", "g.yaml:1:23: scenarios[1]: " },
		{ "scenarios: [one.yaml]\npolicies: [swift, swiftt]\n",
		  "g.yaml:2:19: policies[1]: 'swiftt' is not a built-in policy" },
		{ "scenarios: [one.yaml]\npolicies: [./one.yaml]\n",
		  "g.yaml:2:12: policies[0]: cannot load package '" },
		{ "scenarios: [one.yaml]\nseeds: [1, -2]\n",
		  "g.yaml:2:12: seeds[1]: a seed is a non-negative integer" },
		{ "scenarios: [one.yaml]\nset:\n  traffic.bytes: [16KB\n", "g.yaml:4:1: YAML:" },
		/* what would silently give cells twice, or let one setting hide another */
		{ "scenarios: [one.yaml]\nseeds: [1]\nseeds: [2]\n",
		  "g.yaml:3:1: seeds: given twice (first at 2:1)" },
		{ "scenarios: [one.yaml]\nset:\n  traffic.bytes: [16KB]\n  traffic.bytes: [1MB]\n",
		  "g.yaml:4:3: set.traffic.bytes: given twice (first at 3:3)" },
		{ "scenarios: [one.yaml]\nconfigurations:\n  - {stop: 1s, stop: 2s}\n",
		  "g.yaml:3:16: stop: given twice (first at 3:6)" },
		{ "scenarios: [one.yaml, ./one.yaml]\n",
		  "g.yaml:1:23: scenarios[1]: './one.yaml' is scenarios[0] again" },
		{ "scenarios: [one.yaml]\nseeds: [1, 2, 1]\n",
		  "g.yaml:2:15: seeds[2]: seed 1 is used twice" },
		{ "scenarios: [one.yaml]\nset:\n  traffic.bytes: [16KB, 1MB, 16KB]\n",
		  "g.yaml:3:30: set.traffic.bytes: '16KB' is used twice" },
		{ "scenarios: [one.yaml]\nset:\n  traffic.bytes: [16KB]\n"
		  "  traffic: ['{type: incast, bytes: 1MB}']\n",
		  "g.yaml:4:3: set.traffic: overlaps set.traffic.bytes (at 3:3)" },
		{ "scenarios: [one.yaml]\nset:\n  traffic.bytes: [16KB]\n"
		  "configurations:\n  - {name: a, traffic.bytes: 1MB}\n",
		  "g.yaml:3:3: set.traffic.bytes: configurations[0] sets traffic.bytes too (at 5:15)" },
	};
	struct out o;

	tiny_scenarios();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file("g.yaml", cases[i].grid);
		pcm_sim(&o, "sweep g.yaml -o bad");
		expect(&o, 2, NULL, cases[i].message);
	}
	/* nothing ran: no directory was made for a grid that does not read */
	assert_int_equal(mtime("bad"), 0);
}

static void test_failing_and_crashing_cells_are_recorded_and_the_rest_run(void **state)
{
	char buf[1 << 16], line[4096], cmd[2048];
	struct out o;

	tiny_scenarios();
	snprintf(cmd, sizeof(cmd),
		 "scenarios: [one.yaml]\n"
		 "set:\n"
		 "  nic.NDStatsReportInterval: [10us, 1ps]\n"
		 "policies: [swift, {name: trap, build: [%s/trap_on_ack.yaml, "
		 "%s/trap_on_ack.c]}]\n",
		 PKG, PKG);
	write_file("g.yaml", cmd);
	pcm_sim(&o, "sweep g.yaml -j 2 -o out");
	expect(&o, 1, "4 of 4 cells recorded: 1 ok, 3 not ok", NULL);
	read_file("out/results.jsonl", buf, sizeof(buf));
	assert_int_equal(count_lines(buf), 4);
	line_of(buf, 0, line, sizeof(line));
	assert_non_null(strstr(line, "\"status\":\"ok\",\"exit\":0,"));
	/* the trap kills its process; the record says so */
	line_of(buf, 1, line, sizeof(line));
	if (!strstr(line, "\"status\":\"crashed\",\"exit\":null,") ||
	    !strstr(line, "killed by signal") || strstr(line, "\"result\""))
		fail_msg("cell 1: %s", line);
	/* a run pcm-sim refuses: exit 2 and its message */
	line_of(buf, 2, line, sizeof(line));
	if (!strstr(line, "\"status\":\"failed\",\"exit\":2,") ||
	    !strstr(line, "nic.NDStatsReportInterval: below one packet time"))
		fail_msg("cell 2: %s", line);
}

static void test_resume_runs_only_missing_cells_and_a_finished_sweep_does_no_work(void **state)
{
	time_t before[6], results, csv;
	char name[64], buf[1 << 16];
	struct out o;

	tiny_scenarios();
	write_file("g.yaml", "scenarios: [one.yaml]\npolicies: [swift, dctcp, nscc]\n"
			     "seeds: [1, 2]\n");
	pcm_sim(&o, "sweep g.yaml -j 2 -o out");
	expect(&o, 0, "6 of 6 cells recorded", NULL);
	/* an interrupted sweep: two records missing */
	assert_int_equal(unlink(strcat(strcpy(buf, scratch), "/out/cells/000001.json")), 0);
	assert_int_equal(unlink(strcat(strcpy(buf, scratch), "/out/cells/000004.json")), 0);
	for (size_t i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "out/cells/%06zu.json", i);
		before[i] = mtime(name);
	}
	pcm_sim(&o, "sweep g.yaml -j 2 -o out --resume");
	expect(&o, 0, "6 of 6 cells recorded", "6 cells, 4 recorded before, 2 run (2 ok");
	for (size_t i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "out/cells/%06zu.json", i);
		if (i != 1 && i != 4)
			assert_true(mtime(name) == before[i]);
		else
			assert_true(mtime(name) != 0);
	}
	assert_int_equal(count_lines(read_file("out/results.jsonl", buf, sizeof(buf))), 6);
	/* finished: nothing runs, nothing is rewritten */
	results = mtime("out/results.jsonl");
	csv = mtime("out/summary.csv");
	for (size_t i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "out/cells/%06zu.json", i);
		before[i] = mtime(name);
	}
	pcm_sim(&o, "sweep g.yaml -o out --resume");
	expect(&o, 0, NULL, "6 recorded before, 0 run");
	expect(&o, 0, NULL, "are up to date");
	assert_true(mtime("out/results.jsonl") == results && mtime("out/summary.csv") == csv);
	for (size_t i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "out/cells/%06zu.json", i);
		assert_true(mtime(name) == before[i]);
	}
	/* a changed scenario is another cell: its records are run again */
	write_file("one.yaml", "name: one\ntopology: {type: incast, senders: 1}\n"
			       "traffic: {type: incast, bytes: 32KB}\n");
	pcm_sim(&o, "sweep g.yaml -o out --resume");
	expect(&o, 0, NULL, "0 recorded before, 6 run");
}

/* The cells' [started, started + cell_wall_s] intervals: does any pair overlap? */
static bool cells_overlap(const char *results, size_t n)
{
	double start[16], end[16];
	char line[8192];

	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++) {
		line_of(results, i, line, sizeof(line));
		start[i] = number_after(line, "\"started\":");
		end[i] = start[i] + number_after(line, "\"cell_wall_s\":");
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (start[i] < end[k] && start[k] < end[i])
				return true;
	return false;
}

static void test_j2_runs_two_cells_at_once(void **state)
{
	char buf[1 << 16], grid[512];
	struct out o;

	snprintf(grid, sizeof(grid), "scenarios: [%s/incast-32.yaml]\nseeds: [1, 2, 3, 4]\n",
		 SCENARIOS);
	write_file("g.yaml", grid);
	pcm_sim(&o, "sweep g.yaml -j 1 -o one");
	expect(&o, 0, "4 of 4 cells recorded: 4 ok", "with -j 1");
	assert_false(cells_overlap(read_file("one/results.jsonl", buf, sizeof(buf)), 4));
	pcm_sim(&o, "sweep g.yaml -j 2 -o two");
	expect(&o, 0, "4 of 4 cells recorded: 4 ok", "with -j 2");
	assert_true(cells_overlap(read_file("two/results.jsonl", buf, sizeof(buf)), 4));
}

static void test_shards_then_collect_merge_in_cell_order(void **state)
{
	char a[1 << 16], b[1 << 16];
	struct out o;

	tiny_scenarios();
	write_file("g.yaml", "scenarios: [one.yaml, two.yaml]\npolicies: [swift, dctcp]\n"
			     "seeds: [1, 2]\n");
	pcm_sim(&o, "sweep g.yaml -o whole -j 2 --quiet");
	expect(&o, 0, NULL, NULL);
	pcm_sim(&o, "sweep g.yaml -o parts --shard 1/3 --quiet");
	expect(&o, 0, NULL, NULL);
	/* a shard alone does not merge; --collect says what is missing */
	assert_int_equal(mtime("parts/results.jsonl"), 0);
	pcm_sim(&o, "sweep --collect parts");
	expect(&o, 1, "3 of 8 cells recorded", NULL);
	expect(&o, 1, "the first is cell 0", NULL);
	pcm_sim(&o, "sweep g.yaml -o parts --shard 0/3 --quiet");
	pcm_sim(&o, "sweep g.yaml -o parts --shard 2/3 --quiet");
	pcm_sim(&o, "sweep --collect parts");
	expect(&o, 0, "8 of 8 cells recorded: 8 ok", NULL);
	/* the same records, in the same order, as one local sweep's (timings aside) */
	read_file("whole/summary.csv", a, sizeof(a));
	read_file("parts/summary.csv", b, sizeof(b));
	assert_int_equal(count_lines(a), 9);
	for (size_t i = 1; i < 9; i++) {
		char la[4096], lb[4096];

		line_of(a, i, la, sizeof(la));
		line_of(b, i, lb, sizeof(lb));
		/* up to the first timing column, cell_wall_s, after the parameters */
		assert_int_equal(strncmp(la, lb, 30), 0);
		assert_non_null(strstr(la, ",ok,0,"));
		assert_non_null(strstr(lb, ",ok,0,"));
	}
}

static void test_summary_csv_is_flat_and_quoted(void **state)
{
	char buf[1 << 16], line[4096];
	struct out o;

	tiny_scenarios();
	write_file("g.yaml", "scenarios: [one.yaml]\n"
			     "set:\n"
			     "  traffic: [{type: incast, bytes: 8KB}, {type: incast, bytes: \"16KB\"}]\n"
			     "  nic.NDStatsReportInterval: [10us, 1ps]\n");
	pcm_sim(&o, "sweep g.yaml -o out");
	expect(&o, 1, "4 of 4 cells recorded: 2 ok, 2 not ok", NULL);
	read_file("out/summary.csv", buf, sizeof(buf));
	assert_int_equal(count_lines(buf), 5);
	/* RFC 4180: CRLF line ends; a field with a comma or a quote is quoted, quotes doubled */
	assert_non_null(strstr(buf, "\r\n"));
	line_of(buf, 0, line, sizeof(line));
	if (!starts_with(line, "cell,scenario_file,traffic,nic.NDStatsReportInterval,status,exit,"
			       "started,cell_wall_s,error,scenario,policy,seed,hosts,flows,") ||
	    !strstr(line, ",fct_us.max,"))
		fail_msg("header: %s", line);
	line_of(buf, 3, line, sizeof(line));
	if (!starts_with(line, "2,one.yaml,\"{type: incast, bytes: \"\"16KB\"\"}\",10us,ok,0,"))
		fail_msg("row 3: %s", line);
	/* a failed cell's row has its error and no results */
	line_of(buf, 2, line, sizeof(line));
	assert_non_null(strstr(line, ",1ps,failed,2,"));
	assert_non_null(strstr(line, "below one packet time"));
}

static void test_policy_sources_are_built_once(void **state)
{
	char grid[1024];
	struct out o;

	tiny_scenarios();
	snprintf(grid, sizeof(grid),
		 "scenarios: [one.yaml]\n"
		 "policies: [swift, {name: step, build: [%s/step_window.yaml, %s/step_window.c], "
		 "fabric: %s}]\n",
		 PKG, PKG, FABRIC);
	write_file("g.yaml", grid);
	pcm_sim(&o, "sweep g.yaml -o out");
	expect(&o, 0, "2 of 2 cells recorded: 2 ok", "building policy 'step' with pcmc");
	assert_true(mtime("out/policies/step.so") != 0);
	assert_non_null(strstr(read_file("out/results.jsonl", grid, sizeof(grid)),
			       "\"policy\":\"step\""));
	pcm_sim(&o, "sweep g.yaml -o out");
	expect(&o, 0, "2 of 2 cells recorded: 2 ok", NULL);
	assert_null(strstr(o.stderr_text, "building"));
	/* a package file by its path, relative to the grid */
	write_file("so.yaml", "scenarios: [one.yaml]\npolicies: [out/policies/step.so]\n");
	pcm_sim(&o, "sweep so.yaml -o so");
	expect(&o, 0, "1 of 1 cells recorded: 1 ok", NULL);
	assert_non_null(strstr(read_file("so/results.jsonl", grid, sizeof(grid)),
			       "\"policy\":\"out/policies/step.so\""));
	/* sources pcmc cannot build: the grid's entry is named, nothing runs */
	write_file("broken.c", "int broken(");
	snprintf(grid, sizeof(grid),
		 "scenarios: [one.yaml]\n"
		 "policies:\n  - swift\n  - {name: broken, build: [%s/step_window.yaml, broken.c]}\n",
		 PKG);
	write_file("b.yaml", grid);
	pcm_sim(&o, "sweep b.yaml -o b");
	expect(&o, 2, NULL, "b.yaml:4:5: policies[1]: pcmc could not build policy 'broken'");
	assert_int_equal(mtime("b/results.jsonl"), 0);
}

static void test_set_on_the_command_line_changes_the_run(void **state)
{
	struct out o;
	double small, large;

	tiny_scenarios();
	pcm_sim(&o, "one.yaml --json --set traffic.bytes=16KB");
	expect(&o, 0, "\"flows\":1", NULL);
	small = number_after(o.stdout_text, "\"max\":");
	pcm_sim(&o, "one.yaml --json --set 'traffic={type: incast, bytes: 1MB}'");
	expect(&o, 0, NULL, NULL);
	large = number_after(o.stdout_text, "\"max\":");
	assert_true(large > 5 * small);
	/* a key added where the file has none */
	pcm_sim(&o, "one.yaml --json --set 'failures=[{link: [host0, sw0], at: 1us, until: 50us}]'");
	expect(&o, 0, "\"timeouts\":", NULL);
	assert_true(number_after(o.stdout_text, "\"max\":") > 50);
	pcm_sim(&o, "one.yaml --set topology.senderz=3");
	expect(&o, 2, NULL, "--set:1:1: topology.senderz: unknown key");
	pcm_sim(&o, "one.yaml --set topology.senders");
	expect(&o, 2, NULL, "is not KEY=VALUE");
}

static void test_sweep_draws_comparison_plots(void **state)
{
	static const char *const figs[] = { "fct-over-ideal.png", "jain.png", "retransmits.png",
					     "goodput.png", "drops.png" };
	char path[512];
	struct out o;
	struct stat st;

	if (!PCM_PYTHON[0]) {
		print_message("skip: pcm-sim was built without python3-matplotlib\n");
		skip();
	}
	tiny_scenarios();
	write_file("g.yaml", "scenarios: [one.yaml, two.yaml]\npolicies: [swift, dctcp]\n"
			     "seeds: [1, 2]\n");
	pcm_sim(&o, "sweep g.yaml -o out");
	expect(&o, 0, "jain.png: 2 panels, 2 policies, 8 cells drawn", NULL);
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		snprintf(path, sizeof(path), "%s/out/plots/%s", scratch, figs[i]);
		if (stat(path, &st) != 0 || st.st_size < 4096)
			fail_msg("%s is not a drawn PNG", path);
	}
}

static void test_a_terminal_gets_a_progress_bar_and_a_log_gets_lines(void **state)
{
	char cmd[1024];
	struct out o;

	if (system("command -v script >/dev/null 2>&1") != 0) {
		print_message("skip: no script(1) to give pcm-sim a terminal (util-linux)\n");
		skip();
	}
	tiny_scenarios();
	write_file("g.yaml", "scenarios: [one.yaml]\npolicies: [swift, dctcp]\nseeds: [1, 2]\n");
	/* the listing: each cell's label and command, nothing run */
	pcm_sim(&o, "sweep g.yaml --list");
	expect(&o, 0, "3\tone.yaml dctcp seed 2\t", NULL);
	assert_int_equal(count_lines(o.stdout_text), 4);
	assert_int_equal(mtime("g.sweep"), 0);
	/* a log: one line per cell */
	pcm_sim(&o, "sweep g.yaml -o log -j 1");
	expect(&o, 0, NULL, "pcm-sim sweep: [4/4] cell 3 ok in ");
	assert_null(strstr(o.stderr_text, "\r["));
	/* a terminal (script(1) gives it one): the bar, redrawn in place */
	snprintf(cmd, sizeof(cmd), "script -qec \"'%s' sweep g.yaml -o tty -j 1\" /dev/null",
		 PCM_SIM);
	cli_shell(scratch, scratch, cmd, &o);
	expect(&o, 0, "\r[##############################] 4/4 cells, 0 failed, 0 running, ", NULL);
	assert_non_null(strstr(o.stdout_text, "\r[..............................] 0/4 cells"));
	assert_null(strstr(o.stdout_text, "] cell 3 ok in "));
}

static void test_shipped_grids_read_and_the_paper_grid_runs(void **state)
{
	char buf[1 << 16];
	struct out o;

	pcm_sim(&o, "sweep " SCENARIOS "/sweeps/speed-24.yaml --list");
	expect(&o, 0, "23\tfattree-k8.yaml traffic.bytes=4MB nscc seed 8\t", NULL);
	assert_int_equal(count_lines(o.stdout_text), 24);
	pcm_sim(&o, "sweep " SCENARIOS "/sweeps/paper.yaml --list");
	expect(&o, 0, "199\tpaper-incast.yaml 64x256KB mprdma-iw4 seed 10\t", NULL);
	assert_int_equal(count_lines(o.stdout_text), 200);
	/* one shard of it: the tuned policy is built, and its window is the smaller */
	pcm_sim(&o, "sweep " SCENARIOS "/sweeps/paper.yaml -o paper --shard 1/10 --quiet");
	expect(&o, 0, NULL, "building policy 'mprdma-iw4' with pcmc");
	read_file("paper/cells/000011.json", buf, sizeof(buf));
	if (!strstr(buf, "\"configuration\":\"4x64KB\",\"policy\":\"mprdma-iw4\",\"seed\":2,") ||
	    !strstr(buf, "\"status\":\"ok\"") || !strstr(buf, "\"drops\":0,"))
		fail_msg("cell 11: %s", buf);
	read_file("paper/cells/000001.json", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"policy\":\"mprdma\",\"seed\":2,"));
	assert_true(number_after(buf, "\"drops\":") > 0);
}

static void test_emit_slurm_script_shards_the_grid(void **state)
{
	char buf[8192];
	struct out o;

	tiny_scenarios();
	write_file("g.yaml", "scenarios: [one.yaml]\npolicies: [swift, dctcp]\nseeds: [1, 2, 3]\n");
	pcm_sim(&o, "sweep --emit slurm g.yaml -o shared --shards 4 -j 2");
	expect(&o, 0, "#SBATCH --array=0-3\n", "6 cells in 4 shards");
	expect(&o, 0, "#SBATCH --cpus-per-task=2\n", NULL);
	expect(&o, 0, "/shared --shard \"$SLURM_ARRAY_TASK_ID\"/4 -j \"${SLURM_CPUS_PER_TASK:-2}\" "
		      "--resume\n", NULL);
	expect(&o, 0, "sweep --collect ", NULL);
	/* the shared directory has the manifest and the Slurm output directory */
	assert_int_equal(count_lines(read_file("shared/manifest.tsv", buf, sizeof(buf))), 7);
	assert_true(mtime("shared/slurm") != 0);
	pcm_sim(&o, "sweep --emit parallel g.yaml -o shared");
	expect(&o, 0, "parallel --quote --jobs 100% ", "6 cells in 6 shards");
	expect(&o, 0, "--shard {}/6 -j 1 --resume --quiet ::: $(seq 0 5)\n", NULL);
}

static int setup(void **state)
{
	return scratch_make(scratch, sizeof(scratch), "pcm-sweep-test");
}

static int teardown(void **state)
{
	return scratch_remove(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_grid_product_gives_every_cell_one_record,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_grid_is_reported_at_file_line_col, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_failing_and_crashing_cells_are_recorded_and_the_rest_run, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_resume_runs_only_missing_cells_and_a_finished_sweep_does_no_work,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_j2_runs_two_cells_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shards_then_collect_merge_in_cell_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_summary_csv_is_flat_and_quoted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_policy_sources_are_built_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_set_on_the_command_line_changes_the_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sweep_draws_comparison_plots, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_a_terminal_gets_a_progress_bar_and_a_log_gets_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shipped_grids_read_and_the_paper_grid_runs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_emit_slurm_script_shards_the_grid, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
