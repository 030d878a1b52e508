// SPDX-License-Identifier: MIT
/*
 * test_scenario_file.c - scenario files: every mistake is reported as
 * "file:line:col: key: what is wrong" and rejected, and no input, however
 * mangled, crashes the loader; settings laid over a file (pcm-sim --set, a
 * sweep's set:) replace, add and index its keys, and a bad one is reported
 * at the file, line and column it was written in.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "uet.h"

static const char good[] = "name: t\n"
			   "seed: 3\n"
			   "topology:\n"
			   "  type: fat_tree\n"
			   "  k: 4\n"
			   "  link_rate: 100Gbps\n"
			   "  link_delay: 1us\n"
			   "nic:\n"
			   "  RdmaDataMSS: 4096\n"
			   "  AckRequestEveryNthPacket: 4\n"
			   "  AckCoalesceBytes: 16KiB\n"
			   "  InitialRetransmitTimeout: 50us\n"
			   "  DataRate: 100 Gbps\n"
			   "policy: swift\n"
			   "rules:\n"
			   "  - {dst: 3, policy: doca_ecn_aimd}\n"
			   "shell: {mode: async, delay_events: 32}\n"
			   "traffic: {type: permutation, bytes: 1MiB}\n"
			   "flows:\n"
			   "  - {src: 0, dst: 5, bytes: 4KB, start: 2us, policy: none}\n"
			   "failures:\n"
			   "  - {link: [agg0.0, core0], at: 10us, until: 20us}\n"
			   "stop: 5ms\n";

static void test_valid_file_sets_every_field(void **state)
{
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;

	assert_int_equal(uet_scenario_parse("t.yaml", good, strlen(good), &scn, &diag), 0);
	assert_string_equal(scn->name, "t");
	assert_int_equal(scn->seed, 3);
	assert_int_equal(scn->topo.kind, UET_TOPO_FAT_TREE);
	assert_int_equal(scn->topo.k, 4);
	assert_int_equal(scn->topo.link_delay_ps, 1000000);
	assert_int_equal(scn->nic.ack_every_nth, 4);
	assert_int_equal(scn->nic.ack_coalesce_bytes, 16384);
	assert_int_equal(scn->nic.initial_rto_ps, 50000000);
	assert_int_equal(scn->nic.data_rate_bps, 100000000000ull);
	assert_int_equal(scn->n_policies, 3);
	assert_string_equal(scn->policies[0], "swift");
	assert_string_equal(scn->policies[1], "doca_ecn_aimd");
	assert_string_equal(scn->policies[2], "none");
	assert_int_equal(scn->rules[0].dst, 3);
	assert_int_equal(scn->rules[0].src, -1);
	assert_int_equal(scn->rules[0].policy, 1);
	assert_int_equal(scn->shell_mode, UET_SHELL_ASYNC);
	assert_int_equal(scn->delay_events, 32);
	assert_int_equal(scn->traffic, UET_TRAFFIC_PERMUTATION);
	assert_int_equal(scn->traffic_bytes, 1048576);
	assert_int_equal(scn->n_flows, 1);
	assert_int_equal(scn->flows[0].bytes, 4000);
	assert_int_equal(scn->flows[0].start_ps, 2000000);
	assert_int_equal(scn->flows[0].policy, 2);
	assert_string_equal(scn->failures[0].b, "core0");
	assert_int_equal(scn->failures[0].until_ps, 20000000);
	assert_int_equal(scn->stop_ps, 5000000000ull);
	uet_scenario_free(scn);
}

struct bad_case {
	const char *yaml;
	const char *prefix; /* "file:line:col: key" */
	const char *what;   /* part of the explanation */
};

static const struct bad_case bad[] = {
	{ "name: x\ncolour: red\n", "b.yaml:2:1: colour", "unknown key" },
	{ "topology:\n  link_delay: 3\n", "b.yaml:2:15: topology.link_delay", "needs a unit" },
	{ "topology:\n  link_delay: 3 parsecs\n", "b.yaml:2:15: topology.link_delay",
	  "unknown unit" },
	{ "topology:\n  k: 5\n", "b.yaml:2:6: topology.k", "even" },
	{ "topology:\n  type: torus\n", "b.yaml:2:9: topology.type", "not incast" },
	{ "topology: [1, 2]\n", "b.yaml:1:11: topology", "mapping" },
	{ "nic:\n  RdmaMss: 4096\n", "b.yaml:2:3: nic.RdmaMss", "unknown NIC attribute" },
	{ "nic:\n  RdmaDataMSS: -4\n", "b.yaml:2:16: nic.RdmaDataMSS", "non-negative" },
	{ "nic:\n  RdmaDataMSS: 0\n", "b.yaml:2:16: nic.RdmaDataMSS", "outside" },
	{ "nic:\n  TrimmingEnabled: maybe\n", "b.yaml:2:20: nic.TrimmingEnabled",
	  "not a boolean" },
	{ "nic:\n  DataRate: 400\n", "b.yaml:2:13: nic.DataRate", "needs a unit" },
	{ "nic:\n  DataRate: {a: 1}\n", "b.yaml:2:13: nic.DataRate", "single value" },
	{ "flows:\n  - {src: 0, bytes: 10}\n", "b.yaml:2:5: flows[0]", "needs src, dst and bytes" },
	{ "flows:\n  - {src: 0, dst: 1, bytes: 1.5}\n", "b.yaml:2:29: flows[0].bytes",
	  "whole number" },
	{ "shell: {mode: async}\n", "b.yaml:1:15: shell.mode", "delay_events" },
	{ "shell: {mode: async, delay_events: 0}\n", "b.yaml:1:36: shell.delay_events",
	  "delay_events >= 1" },
	{ "topology: {type: incast, senders: 15}\nrules:\n  - {dst: 99, policy: dctcp}\n",
	  "b.yaml:3:11: rules[0].dst", "16 hosts (0..15)" },
	{ "topology: {type: incast, senders: 2}\nflows:\n  - {src: 0, dst: 7, bytes: 1}\n",
	  "b.yaml:3:19: flows[0].dst", "3 hosts (0..2)" },
	{ "flows:\n  - {src: 2, dst: 2, bytes: 1}\n", "b.yaml:2:5: flows[0]", "both host 2" },
	{ "topology: {type: leaf_spine, leaves: 2}\n", "b.yaml:1:1: topology",
	  "needs leaves, spines" },
	{ "failures:\n  - {link: [sw0, host1], at: 1us, loss: 0}\n",
	  "b.yaml:2:41: failures[0].loss", "outside" },
	{ "shell: {mode: sometimes}\n", "b.yaml:1:15: shell.mode", "sync or async" },
	{ "failures:\n  - {link: [a], at: 1us}\n", "b.yaml:2:12: failures[0].link",
	  "[node, node]" },
	{ "failures:\n  - {link: [a, b], at: 5us, until: 1us}\n", "b.yaml:2:5: failures[0]",
	  "after" },
	{ "rules:\n  - {dst: 1}\n", "b.yaml:2:5: rules[0]", "missing 'policy'" },
	{ "name: [unclosed\n", "b.yaml:2:1: YAML", "" },
	{ "", "b.yaml:1:1: (top)", "empty" },
	{ "- just\n- a list\n", "b.yaml:1:1: (top)", "mapping" },
	{ "traffic: {type: incast, bytes: 5XB}\n", "b.yaml:1:32: traffic.bytes", "unknown unit" },
};

/* Sizes, rates and times take pcm-units(7)'s spellings, those of pcmd.conf(5) too. */
static void test_units_are_read_as_pcmd_conf_reads_them(void **state)
{
	static const char y[] = "traffic: {type: incast, bytes: 2 TiB}\n"
				"nic: {CreditSpeculativeBytes: 1TB, DataRate: 400gbps}\n"
				"stop: 9007199254740993ps\n";
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;

	assert_int_equal(uet_scenario_parse("u.yaml", y, strlen(y), &scn, &diag), 0);
	assert_int_equal(scn->traffic_bytes, 2ull << 40);
	assert_int_equal(scn->nic.credit_speculative_bytes, 1000000000000ull);
	assert_int_equal(scn->nic.data_rate_bps, 400000000000ull);
	/* exact beyond a double's 53 bits */
	assert_int_equal(scn->stop_ps, 9007199254740993ull);
	uet_scenario_free(scn);
}

static void test_bad_input_names_file_line_col_and_key(void **state)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct uet_scenario *scn = NULL;
		struct pcm_diag diag;
		const char *y = bad[i].yaml;
		int rc = uet_scenario_parse("b.yaml", y, strlen(y), &scn, &diag);

		if (rc != -EINVAL || strncmp(diag.msg, bad[i].prefix, strlen(bad[i].prefix)) != 0 ||
		    !strstr(diag.msg, bad[i].what))
			fail_msg("case %zu: rc %d, message '%s', wanted '%s...%s'", i, rc, diag.msg,
				 bad[i].prefix, bad[i].what);
		assert_null(scn);
	}
}

static void test_inconsistent_scenario_is_rejected_at_creation(void **state)
{
	static const char *const yaml[] = {
		("topology: {type: fat_tree, k: 4}\n"
		 "failures:\n  - {link: [agg0.0, edge1.0], at: 1us}\n"),
		"nic: {PrefetchBufferEnable: true, PrefetchBufferSize: 100}\n",
		"topology: {uet_policy: false, trimming: true}\n",
		"nic: {NDStatsReportInterval: 1ps}\n",
		"nic: {IngressBufferSize: 4000}\n",
	};
	/* each names the key where the file set it */
	static const char *const want[] = {
		"c.yaml:3:5: failures[0]: no link between",
		"c.yaml:1:35: nic.PrefetchBufferSize: must hold one packet",
		"c.yaml:1:31: topology.trimming: trimming runs only under the UET policy",
		"c.yaml:1:7: nic.NDStatsReportInterval: below one packet time",
		"c.yaml:1:7: nic.IngressBufferSize: must hold one full packet",
	};

	for (size_t i = 0; i < sizeof(yaml) / sizeof(yaml[0]); i++) {
		struct uet_scenario *scn = NULL;
		struct uet_sim *sim = NULL;
		struct pcm_diag diag;

		int rc = uet_scenario_parse("c.yaml", yaml[i], strlen(yaml[i]), &scn, &diag);

		assert_int_equal(rc, 0);
		snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
		assert_int_equal(uet_sim_create(scn, NULL, 1, &sim, &diag), -EINVAL);
		if (strncmp(diag.msg, want[i], strlen(want[i])) != 0)
			fail_msg("case %zu: '%s', wanted '%s'", i, diag.msg, want[i]);
		uet_scenario_free(scn);
	}
}

/*
 * A packet keeps node ids in 21 bits (pkt.h). The file's bounds stay below
 * that; a scenario built through the API past it is refused, not truncated.
 */
static void test_a_fabric_past_the_packets_node_ids_is_refused(void **state)
{
	static const char yaml[] =
		"topology: {type: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 1}\n";
	struct uet_scenario *scn = NULL;
	struct uet_sim *sim = NULL;
	struct pcm_diag diag;

	(void)state;
	assert_int_equal(uet_scenario_parse("c.yaml", yaml, strlen(yaml), &scn, &diag), 0);
	snprintf(scn->policies[0], sizeof(scn->policies[0]), "none");
	/* 2^20 hosts, one per leaf, and 4,096 spines: 2^21 + 4,096 nodes */
	scn->topo.leaves = 1u << 20;
	scn->topo.hosts_per_leaf = 1;
	scn->topo.spines = 4096;
	assert_int_equal(uet_sim_create(scn, NULL, 1, &sim, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "under 2^21 nodes"));
	assert_null(sim);
	uet_scenario_free(scn);
}

static void test_lb_gets_its_own_package_entry_apart_from_rules(void **state)
{
	static const char y[] = "rules:\n  - {dst: 3, policy: reps}\n"
				"lb: reps\n"
				"policy: swift\n";
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;

	assert_int_equal(uet_scenario_parse("l.yaml", y, strlen(y), &scn, &diag), 0);
	assert_true(scn->has_lb);
	assert_int_equal(scn->lb_policy, 1);
	assert_string_equal(scn->policies[1], "reps");
	/* a rule naming the same package gets a group-policy entry of its own */
	assert_int_equal(scn->rules[0].policy, 2);
	assert_string_equal(scn->policies[2], "reps");
	/* pcm-sim --lb replaces it in place; "none" removes it */
	assert_int_equal(uet_scenario_set_lb(scn, "ops"), 0);
	assert_int_equal(scn->lb_policy, 1);
	assert_string_equal(scn->policies[1], "ops");
	assert_int_equal(uet_scenario_set_lb(scn, "none"), 0);
	assert_false(scn->has_lb);
	assert_int_equal(scn->n_policies, 3);
	uet_scenario_free(scn);
}

static void test_mangled_input_never_crashes(void **state)
{
	size_t n = strlen(good);
	char *buf = malloc(n + 1);
	uint64_t x = 88172645463325252ull;
	unsigned accepted = 0;

	for (int round = 0; round < 4000; round++) {
		struct uet_scenario *scn = NULL;
		struct pcm_diag diag;
		int flips = 1 + round % 4, rc;

		memcpy(buf, good, n + 1);
		for (int f = 0; f < flips; f++) {
			static const char alphabet[] = " :-[]{}#\n\t\"'0a9&*!|>%@`,.";

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[x % n] = alphabet[(x >> 32) % (sizeof(alphabet) - 1)];
		}
		rc = uet_scenario_parse("m.yaml", buf, (size_t)((x >> 20) % (n + 1)), &scn, &diag);
		if (rc == 0) {
			accepted++;
			uet_scenario_free(scn);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_int_equal(strncmp(diag.msg, "m.yaml:", 7), 0);
		}
	}
	assert_true(accepted > 0);
	free(buf);
}

static void test_missing_file_is_an_error_not_a_crash(void **state)
{
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;

	assert_int_equal(uet_scenario_load("/nonexistent/x.yaml", &scn, &diag), -ENOENT);
	assert_non_null(strstr(diag.msg, "/nonexistent/x.yaml"));
}

static void test_settings_replace_add_and_index_what_the_file_has(void **state)
{
	/* as a grid file has it: the first line indented to the value's column */
	static const char block[] = "  - {link: [agg0.1, core1], at: 1us}\n"
				    "  - link: [agg1.0, core0]\n"
				    "    at: 2us\n"
				    "    until: 3us\n";
	const struct uet_scenario_set sets[] = {
		{ "topology.link_rate", "400Gbps", "g.yaml", 3, 3, 3 },
		{ "nic.PrefetchBufferEnable", "true", "g.yaml", 4, 4, 3 },
		{ "failures[0].until", "15us", "g.yaml", 5, 5, 3 },
		{ "records.flow_sample_interval", "20us", "g.yaml", 6, 6, 3 },
		{ "seed", "9", "g.yaml", 7, 7, 3 },
	};
	const struct uet_scenario_set replace_list = { "failures", block, "g.yaml", 8, 8, 1 };
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;

	if (uet_scenario_parse_set("t.yaml", good, strlen(good), sets, 5, &scn, &diag))
		fail_msg("%s", diag.msg);
	assert_int_equal(scn->topo.link_rate_bps, 400000000000ull);        /* replaced */
	assert_true(scn->nic.prefetch_enable);                             /* added */
	assert_int_equal(scn->failures[0].until_ps, 15000000);             /* an item's key */
	assert_int_equal(scn->failures[0].at_ps, 10000000);                /* its neighbour kept */
	assert_int_equal(scn->flow_sample_ps, 20000000);                   /* a mapping added */
	assert_int_equal(scn->seed, 9);
	assert_int_equal(scn->nic.ack_every_nth, 4);                       /* the rest as written */
	uet_scenario_free(scn);
	/* a block list, its lines in their places */
	if (uet_scenario_parse_set("t.yaml", good, strlen(good), &replace_list, 1, &scn, &diag))
		fail_msg("%s", diag.msg);
	assert_int_equal(scn->n_failures, 2);
	assert_string_equal(scn->failures[1].a, "agg1.0");
	assert_int_equal(scn->failures[1].until_ps, 3000000);
	uet_scenario_free(scn);
}

static void test_a_bad_setting_is_reported_where_it_was_written(void **state)
{
	static const struct {
		struct uet_scenario_set set;
		const char *message;
	} cases[] = {
		{ { "topology.link_ratex", "1Gbps", "g.yaml", 4, 4, 3 },
		  "g.yaml:4:3: topology.link_ratex: unknown key (valid here: type," },
		{ { "topology.link_rate", "    [1Gbps]", "g.yaml", 7, 7, 3 },
		  "g.yaml:7:5: topology.link_rate: expected a single value, not a list" },
		{ { "nic.InitialCwnd", "{a: [1}", "g.yaml", 2, 2, 1 },
		  "g.yaml:2:7: nic.InitialCwnd: YAML:" },
		{ { "topology..k", "4", "g.yaml", 1, 1, 1 }, "g.yaml:1:1: topology..k: not a key path" },
		{ { "rules[9].dst", "1", "g.yaml", 1, 1, 1 },
		  "g.yaml:1:1: rules[9].dst: the scenario's 'rules' has no item 9" },
		{ { "policy.x", "1", "g.yaml", 1, 1, 1 },
		  "g.yaml:1:1: policy.x: cannot set 'x': what holds it in the scenario is not a "
		  "mapping" },
		{ { "flows[0].src", "99", "g.yaml", 3, 3, 1 },
		  "g.yaml:3:1: flows[0].src: host 99 does not exist" },
	};
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = uet_scenario_parse_set("t.yaml", good, strlen(good), &cases[i].set, 1,
						&scn, &diag);

		if (rc != -EINVAL || !strstr(diag.msg, cases[i].message))
			fail_msg("case %zu: rc %d, '%s' (wanted '%s')", i, rc, diag.msg,
				 cases[i].message);
	}
	/* no setting: the same as uet_scenario_parse() */
	assert_int_equal(uet_scenario_parse_set("t.yaml", good, strlen(good), NULL, 0, &scn,
						&diag),
			 0);
	uet_scenario_free(scn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_file_sets_every_field),
		cmocka_unit_test(test_units_are_read_as_pcmd_conf_reads_them),
		cmocka_unit_test(test_bad_input_names_file_line_col_and_key),
		cmocka_unit_test(test_inconsistent_scenario_is_rejected_at_creation),
		cmocka_unit_test(test_a_fabric_past_the_packets_node_ids_is_refused),
		cmocka_unit_test(test_lb_gets_its_own_package_entry_apart_from_rules),
		cmocka_unit_test(test_mangled_input_never_crashes),
		cmocka_unit_test(test_missing_file_is_an_error_not_a_crash),
		cmocka_unit_test(test_settings_replace_add_and_index_what_the_file_has),
		cmocka_unit_test(test_a_bad_setting_is_reported_where_it_was_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
