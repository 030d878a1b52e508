// SPDX-License-Identifier: MIT
/*
 * test_scenarios.c - whole runs of the shipped scenarios: the 8:1 incast with
 * swift finishes close to the ideal, a run is a pure function of its seed
 * (byte-identical records), and every shipped scenario loads and completes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "builtin.h"
#include "uet.h"

static struct uet_scenario *load(const char *name)
{
	char path[512];
	struct uet_scenario *scn = NULL;
	struct pcm_diag diag;

	snprintf(path, sizeof(path), "%s/scenarios/%s", PCM_SOURCE_ROOT, name);
	if (uet_scenario_load(path, &scn, &diag) < 0)
		fail_msg("%s", diag.msg);
	return scn;
}

struct opened {
	struct pcm_package_handle h[UET_MAX_POLICIES];
	const struct pcm_package *pkgs[UET_MAX_POLICIES];
};

static void open_policies(const struct uet_scenario *scn, struct opened *o)
{
	memset(o, 0, sizeof(*o));
	for (uint32_t i = 0; i < scn->n_policies; i++) {
		char err[256];

		if (strcmp(scn->policies[i], "none") == 0)
			continue;
		if (pcm_package_open(scn->policies[i], pcm_builtin_policies, &o->h[i], err,
				     sizeof(err)) < 0)
			fail_msg("%s", err);
		o->pkgs[i] = o->h[i].pkg;
	}
}

static void test_incast8_swift_max_fct_within_10pct_of_ideal(void **state)
{
	struct uet_scenario *scn = load("incast-8.yaml");
	struct uet_results r;
	struct uet_sim *sim;
	struct pcm_diag diag;
	struct opened o;
	uint64_t bytes = 0;
	double ideal_us;

	assert_string_equal(scn->policies[0], "swift");
	open_policies(scn, &o);
	assert_int_equal(uet_sim_create(scn, o.pkgs, scn->seed, &sim, &diag), 0);
	assert_int_equal(uet_sim_run(sim, scn->stop_ps), 0);
	uet_sim_results(sim, &r);
	for (uint32_t i = 0; i < uet_sim_n_msgs(sim); i++)
		bytes += uet_sim_msg(sim, i)->bytes;
	/* every byte through the receiver's 100 Gbit/s link */
	ideal_us = (double)bytes * 8 / 100e9 * 1e6;
	assert_int_equal(r.completed, 8);
	assert_true(r.fct_max_us >= ideal_us);
	assert_true(r.fct_max_us <= 1.10 * ideal_us);
	assert_true(r.handler_calls > 0);
	assert_int_equal(r.handler_errors, 0);
	uet_sim_destroy(sim);
	uet_scenario_free(scn);
}

struct mem_records {
	char *buf[4];
	size_t len[4];
};

static void run_to_memory(const char *name, uint64_t seed, struct mem_records *m)
{
	struct uet_scenario *scn = load(name);
	FILE *f[4];
	struct uet_records rec;
	struct uet_sim *sim;
	struct pcm_diag diag;
	struct opened o;

	scn->nic.event_logging = true;
	scn->nic.uet_monitor = true;
	for (int i = 0; i < 4; i++)
		f[i] = open_memstream(&m->buf[i], &m->len[i]);
	rec = (struct uet_records){
		.transport_stats = f[0], .events = f[1], .monitor = f[2], .flows = f[3],
	};
	open_policies(scn, &o);
	assert_int_equal(uet_sim_create(scn, o.pkgs, seed, &sim, &diag), 0);
	uet_sim_set_records(sim, &rec);
	assert_int_equal(uet_sim_run(sim, scn->stop_ps), 0);
	for (int i = 0; i < 4; i++)
		fclose(f[i]);
	uet_sim_destroy(sim);
	uet_scenario_free(scn);
}

static void test_same_seed_gives_byte_identical_records(void **state)
{
	struct mem_records a, b, c;

	run_to_memory("failed-link.yaml", 7, &a);
	run_to_memory("failed-link.yaml", 7, &b);
	run_to_memory("failed-link.yaml", 8, &c);
	for (int i = 0; i < 4; i++) {
		assert_true(a.len[i] > 100);
		assert_int_equal(a.len[i], b.len[i]);
		assert_memory_equal(a.buf[i], b.buf[i], a.len[i]);
	}
	/* another seed draws another permutation and other paths */
	assert_true(a.len[2] != c.len[2] || memcmp(a.buf[2], c.buf[2], a.len[2]) != 0);
	for (int i = 0; i < 4; i++) {
		free(a.buf[i]);
		free(b.buf[i]);
		free(c.buf[i]);
	}
}

static void test_records_have_a_row_per_nic_per_interval(void **state)
{
	struct mem_records m;
	char *line, *save = NULL;
	unsigned rows = 0, header_cols = 0;

	run_to_memory("incast-8.yaml", 1, &m);
	for (line = strtok_r(m.buf[0], "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned cols = 1;

		for (char *p = line; *p; p++)
			cols += *p == ',';
		if (!header_cols) {
			header_cols = cols;
			assert_non_null(strstr(line, "ivl_tx_data_pkts,tx_data_pkts"));
			continue;
		}
		assert_int_equal(cols, header_cols);
		rows++;
	}
	/* 9 NICs, every 10 us over about 2.7 ms, plus the final row */
	assert_int_equal(rows % 9, 0);
	assert_true(rows / 9 > 200);
	/* one message: posted, PDC created at both ends, three completions, two closes */
	assert_non_null(strstr(m.buf[1], ",msg_posted,"));
	assert_non_null(strstr(m.buf[1], ",send_complete,"));
	assert_non_null(strstr(m.buf[1], ",recv_complete,"));
	assert_non_null(strstr(m.buf[1], ",msg_complete,"));
	assert_non_null(strstr(m.buf[1], ",pdc_closed,"));
	assert_non_null(strstr(m.buf[2], ",rx,ack,"));
	for (int i = 0; i < 4; i++)
		free(m.buf[i]);
}

static void test_every_shipped_scenario_completes(void **state)
{
	static const char *const small[] = {
		"incast-8.yaml",	 "incast-32.yaml",     "failed-link.yaml",
		"leaf-spine.yaml",	 "incast-8-async.yaml", "incast-8-rate.yaml",
		"rules-per-destination.yaml", "flows-mixed.yaml",
	};

	for (size_t i = 0; i < sizeof(small) / sizeof(small[0]); i++) {
		struct uet_scenario *scn = load(small[i]);
		struct uet_results r;
		struct uet_sim *sim;
		struct pcm_diag diag;
		struct opened o;

		open_policies(scn, &o);
		if (uet_sim_create(scn, o.pkgs, scn->seed, &sim, &diag) < 0)
			fail_msg("%s: %s", small[i], diag.msg);
		assert_int_equal(uet_sim_run(sim, scn->stop_ps), 0);
		uet_sim_results(sim, &r);
		assert_int_equal(r.completed, r.flows);
		uet_sim_destroy(sim);
		uet_scenario_free(scn);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_incast8_swift_max_fct_within_10pct_of_ideal),
		cmocka_unit_test(test_same_seed_gives_byte_identical_records),
		cmocka_unit_test(test_records_have_a_row_per_nic_per_interval),
		cmocka_unit_test(test_every_shipped_scenario_completes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
