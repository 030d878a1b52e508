// SPDX-License-Identifier: MIT
/*
 * test_pcm_sim.c - pcm-sim as a newcomer uses it, one property per test: a
 * package file given without ./, a package path inside a scenario, every
 * scenario error at its key, each flow's policy in the report, the shipped
 * rules: and flows: examples, the shell flags, warnings and refusals for
 * degenerate derived settings, --check and --dst, and --plot's pictures.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
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
#define PCMC PCM_BUILD_ROOT "/cli/pcmc"
#define FABRIC PCM_SOURCE_ROOT "/policies/fabric/default.yaml"
#define SCENARIOS PCM_SOURCE_ROOT "/scenarios"

#include "cli_run.h"

static char scratch[256];

/* Run @args (after pcm-sim) in directory @cwd. */
static void pcm_sim(const char *cwd, const char *args, struct out *o)
{
	cli_run(scratch, cwd ? cwd : scratch, args, o);
}

/* A tiny two-host scenario, @extra appended. */
static void small_scenario(const char *path, const char *extra)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "name: small\n"
		 "topology: {type: incast, senders: 1, link_rate: 100Gbps, link_delay: 3.3us}\n"
		 "nic: {DataRate: 100Gbps}\n"
		 "traffic: {type: incast, bytes: 64KB}\n"
		 "%s",
		 extra);
	write_text(path, text);
}

/* step_window.so, built by pcmc into @dir. */
static void build_package(const char *dir)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "'%s' build '%s/tests/sim/pkg/step_window.yaml' '%s/tests/sim/pkg/step_window.c' "
		 "--fabric '%s' --target uet -o '%s/step.so' >/dev/null",
		 PCMC, PCM_SOURCE_ROOT, PCM_SOURCE_ROOT, FABRIC, dir);
	assert_int_equal(system(cmd), 0);
}

static void test_package_file_without_dot_slash_runs_or_is_explained(void **state)
{
	char path[512];
	struct out o;

	build_package(scratch);
	snprintf(path, sizeof(path), "%s/s.yaml", scratch);
	small_scenario(path, "policy: swift\n");
	/* a name ending in .so that exists here is this file, not a library search */
	pcm_sim(scratch, "s.yaml --policy step.so", &o);
	expect(&o, 0, "policy ./step.so", NULL);
	pcm_sim(scratch, "s.yaml --policy missing.so", &o);
	expect(&o, 2, NULL, "./missing.so");
}

static void test_package_path_in_a_scenario_is_beside_the_scenario(void **state)
{
	char dir[512], path[600];
	struct out o;

	snprintf(dir, sizeof(dir), "%s/sub", scratch);
	mkdir(dir, 0755);
	build_package(dir);
	snprintf(path, sizeof(path), "%s/beside.yaml", dir);
	small_scenario(path, "policy: ./step.so\n");
	/* run from elsewhere: ./step.so is sub/step.so */
	pcm_sim(scratch, "sub/beside.yaml", &o);
	expect(&o, 0, "1 of 1 flows completed", NULL);
}

static void test_every_scenario_error_names_its_key(void **state)
{
	static const struct {
		const char *extra;
		const char *where;
	} cases[] = {
		{ "rules:\n  - {dst: 99, policy: dctcp}\n", "x.yaml:6:11: rules[0].dst: host 99" },
		{ "flows:\n  - {src: 0, dst: 5, bytes: 1}\n", "x.yaml:6:19: flows[0].dst: host 5" },
		{ "shell: {mode: async, delay_events: 0}\n", "x.yaml:5:36: shell.delay_events" },
		{ "nic: {NDStatsReportInterval: 1ps}\n", "x.yaml:5:7: nic.NDStatsReportInterval" },
		{ "rules:\n  - {dst: 1, policy: nosuch}\n", "x.yaml:6:14: rules[0].policy: 'nosuch'" },
		{ "lb: mprdma\n", "x.yaml:5:1: lb: policy 'swift' and lb 'mprdma' both drive" },
	};
	char path[512];

	snprintf(path, sizeof(path), "%s/x.yaml", scratch);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct out o;

		small_scenario(path, cases[i].extra);
		pcm_sim(scratch, "x.yaml", &o);
		expect(&o, 2, NULL, cases[i].where);
	}
}

static void test_report_shows_each_flows_policy(void **state)
{
	struct out o;

	pcm_sim(NULL, SCENARIOS "/rules-per-destination.yaml", &o);
	expect(&o, 0, "policies swift (6 flows), dctcp (1 flow), nscc (1 flow)", NULL);
	/* the flow into host 0 ran dctcp, the one out of host 7 nscc */
	expect(&o, 0, " -> 0  ", NULL);
	assert_non_null(strstr(strstr(o.stdout_text, " -> 0  "), "dctcp\n"));
	assert_non_null(strstr(strstr(o.stdout_text, "    7 -> "), "nscc\n"));
}

static void test_rules_and_flows_examples_pass_the_checks(void **state)
{
	struct out o;

	pcm_sim(NULL, "--check " SCENARIOS "/rules-per-destination.yaml", &o);
	expect(&o, 0, "check passed: 8 messages", NULL);
	pcm_sim(NULL, "--check " SCENARIOS "/flows-mixed.yaml", &o);
	expect(&o, 0, "check passed: 8 messages", NULL);
	pcm_sim(NULL, SCENARIOS "/flows-mixed.yaml", &o);
	expect(&o, 0, "policies swift (7 flows), dcqcn (1 flow)", NULL);
}

/* The "sim_time_us" and "handler_calls" of a --json run. */
static void json_key(const struct out *o, const char *key, char *val, size_t len)
{
	const char *at = strstr(o->stdout_text, key);
	size_t n;

	assert_non_null(at);
	at += strlen(key);
	n = strcspn(at, ",}");
	assert_true(n < len);
	memcpy(val, at, n);
	val[n] = '\0';
}

static void test_mode_and_delay_flags_do_what_the_shell_key_does(void **state)
{
	char a[64], b[64], c[64], d[64];
	struct out o;

	pcm_sim(NULL, SCENARIOS "/incast-8-async.yaml --json", &o);
	expect(&o, 0, NULL, NULL);
	json_key(&o, "\"sim_time_us\":", a, sizeof(a));
	json_key(&o, "\"handler_calls\":", b, sizeof(b));
	pcm_sim(NULL, SCENARIOS "/incast-8.yaml --mode async --delay-events 32 --json", &o);
	expect(&o, 0, NULL, NULL);
	json_key(&o, "\"sim_time_us\":", c, sizeof(c));
	json_key(&o, "\"handler_calls\":", d, sizeof(d));
	assert_string_equal(a, c);
	assert_string_equal(b, d);
	/* and back: --mode sync on the async scenario is incast-8 */
	pcm_sim(NULL, SCENARIOS "/incast-8-async.yaml --mode sync --json", &o);
	json_key(&o, "\"sim_time_us\":", c, sizeof(c));
	pcm_sim(NULL, SCENARIOS "/incast-8.yaml --json", &o);
	json_key(&o, "\"sim_time_us\":", d, sizeof(d));
	assert_string_equal(c, d);
	pcm_sim(NULL, SCENARIOS "/incast-8.yaml --mode async", &o);
	expect(&o, 2, NULL, "--delay-events");
	pcm_sim(NULL, SCENARIOS "/incast-8.yaml --mode sync --delay-events 4", &o);
	expect(&o, 2, NULL, "asynchronous");
}

static void test_degenerate_derived_settings_are_flagged(void **state)
{
	char path[512];
	struct out o;

	snprintf(path, sizeof(path), "%s/zero.yaml", scratch);
	write_text(path, "name: zero\n"
			 "topology: {type: incast, senders: 4, link_rate: 100Gbps, link_delay: 0ps}\n"
			 "nic: {DataRate: 100Gbps}\n"
			 "traffic: {type: incast, bytes: 64KB}\n");
	pcm_sim(scratch, "zero.yaml", &o);
	/* queues of two packets: a warning at the key that made them */
	expect(&o, 0, NULL, "zero.yaml:2:58: topology.link_delay: the derived switch queues");
	/* and an RTT nothing like the one the built-in swift was built for */
	expect(&o, 0, NULL, "built for FABRIC_BRTT 14.02 us");
	pcm_sim(NULL, SCENARIOS "/incast-8.yaml", &o);
	assert_null(strstr(o.stderr_text, "warning"));
}

/* The part of a --check report that is about the run, not the wall clock. */
static void run_part(const struct out *o, char *buf, size_t len)
{
	const char *from = strstr(o->stdout_text, "check passed:");
	const char *to = from ? strstr(from, " events") : NULL;

	assert_non_null(to);
	snprintf(buf, len, "%.*s", (int)(to - from), from);
}

static void test_check_and_dst_reproduce_a_generated_scenario(void **state)
{
	char args[600], ra[512], rb[512];
	struct out a, b;

	snprintf(args, sizeof(args), "--dst 42 --write '%s/dst-42.yaml'", scratch);
	pcm_sim(NULL, args, &a);
	expect(&a, 0, "dst-42.yaml: check passed", NULL);
	snprintf(args, sizeof(args), "--check '%s/dst-42.yaml'", scratch);
	pcm_sim(NULL, args, &b);
	expect(&b, 0, "check passed", NULL);
	/* the file is the generated scenario: the same run, event for event */
	run_part(&a, ra, sizeof(ra));
	run_part(&b, rb, sizeof(rb));
	assert_string_equal(ra, rb);
}

static bool png(const char *path)
{
	static const unsigned char magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char head[8];
	FILE *f = fopen(path, "rb");
	bool ok = f && fread(head, 1, 8, f) == 8 && memcmp(head, magic, 8) == 0;
	struct stat st;

	if (f)
		fclose(f);
	return ok && stat(path, &st) == 0 && st.st_size > 4096;
}

static void test_plot_draws_the_five_figures_from_the_records(void **state)
{
	static const char *const figs[] = { "cwnd.png", "goodput.png", "queues.png",
					     "fct-cdf.png", "losses.png" };
	char args[600], path[600];
	struct out o;

	if (!PCM_PYTHON[0]) {
		print_message("skip: pcm-sim was built without python3-matplotlib\n");
		skip();
	}
	snprintf(args, sizeof(args), SCENARIOS "/incast-8.yaml --plot '%s/plots'", scratch);
	pcm_sim(NULL, args, &o);
	expect(&o, 0, "cwnd.png: 8 flows, ", NULL);
	expect(&o, 0, "goodput.png: 8 flows, ", NULL);
	/* each figure drew something */
	expect(&o, 0, "fct-cdf.png: 8 messages", NULL);
	assert_null(strstr(o.stdout_text, ": 0 ports"));
	assert_null(strstr(o.stdout_text, ", 0 points"));
	assert_null(strstr(o.stdout_text, ": 0 intervals"));
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		snprintf(path, sizeof(path), "%s/plots/%s", scratch, figs[i]);
		if (!png(path))
			fail_msg("%s is not a drawn PNG", path);
	}
}

/* The number of data rows of CSV file @path. */
static size_t csv_rows(const char *path)
{
	char text[1 << 16];
	size_t n = 0;

	slurp(path, text, sizeof(text));
	for (const char *c = text; *c; c++)
		n += *c == '\n';
	return n ? n - 1 : 0;
}

static void test_plot_baseline_overlays_a_run_and_records_failures(void **state)
{
	char args[800], path[600], text[4096];
	struct out o;

	if (!PCM_PYTHON[0]) {
		print_message("skip: pcm-sim was built without python3-matplotlib\n");
		skip();
	}
	snprintf(args, sizeof(args), SCENARIOS "/failed-link.yaml --plot '%s/base'", scratch);
	pcm_sim(NULL, args, &o);
	expect(&o, 0, "goodput.png: 16 flows, ", NULL);
	/* the failure pcm-plot shades, and each flow's delivered bytes */
	snprintf(path, sizeof(path), "%s/base/failures.csv", scratch);
	slurp(path, text, sizeof(text));
	assert_string_equal(text, "link_a,link_b,at_ps,until_ps,loss\n"
				  "agg0.0,core0,20000000,400000000,1\n");
	snprintf(path, sizeof(path), "%s/base/goodput.csv", scratch);
	assert_true(csv_rows(path) > 16 * 10);
	snprintf(args, sizeof(args),
		 SCENARIOS "/failed-link.yaml --set 'failures[0].reroute=true' --plot '%s/cand' "
			   "--baseline '%s/base'",
		 scratch, scratch);
	pcm_sim(NULL, args, &o);
	expect(&o, 0, "cwnd.png: 16 flows, ", NULL);
	snprintf(path, sizeof(path), "%s/cand/fct-cdf.png", scratch);
	assert_true(png(path));
	snprintf(args, sizeof(args), SCENARIOS "/failed-link.yaml --baseline '%s/base'", scratch);
	pcm_sim(NULL, args, &o);
	expect(&o, 2, NULL, "--baseline RUN_DIR is drawn under this run by --plot DIR");
}

static int setup(void **state)
{
	return scratch_make(scratch, sizeof(scratch), "pcm-sim-test");
}

static int teardown(void **state)
{
	return scratch_remove(scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_package_file_without_dot_slash_runs_or_is_explained),
		cmocka_unit_test(test_package_path_in_a_scenario_is_beside_the_scenario),
		cmocka_unit_test(test_every_scenario_error_names_its_key),
		cmocka_unit_test(test_report_shows_each_flows_policy),
		cmocka_unit_test(test_rules_and_flows_examples_pass_the_checks),
		cmocka_unit_test(test_mode_and_delay_flags_do_what_the_shell_key_does),
		cmocka_unit_test(test_degenerate_derived_settings_are_flagged),
		cmocka_unit_test(test_check_and_dst_reproduce_a_generated_scenario),
		cmocka_unit_test(test_plot_draws_the_five_figures_from_the_records),
		cmocka_unit_test(test_plot_baseline_overlays_a_run_and_records_failures),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
