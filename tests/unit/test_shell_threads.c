// SPDX-License-Identifier: MIT
/*
 * test_shell_threads.c - the synchronous shell fed by several datapath
 * threads, each owning its own flows, as a multi-engine transport runs it:
 *   - every handler call is counted, whichever thread made it (the shell's
 *     counters used to be plain fields two owners raced on);
 *   - owners add, feed, swap and remove their flows while others do the same
 *     and a third thread reads the counters: every ACK fed is consumed
 *     exactly once across the swaps, and the totals add up.
 * No timing is asserted. The suite also runs under ThreadSanitizer.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "shell.h"
#include "test_util.h"

extern const struct pcm_package pcm_pkg_pair_probe;
extern const struct pcm_package pcm_pkg_dst_p;
extern const struct pcm_package pcm_pkg_dst_q;

#define BIT(t) ((pcm_uint)1 << (t))
#define MSS 4096
#define THREADS 2
#define FLOWS_PER_THREAD 64
#define EVENTS 1024000 /* a multiple of FLOWS_PER_THREAD */

/* The probe handler of dst_p/dst_q reports each call; the controls carry the totals. */
void dst_observe(pcm_uint seed, pcm_uint acks, pcm_uint bytes, pcm_uint ev_a, pcm_uint ev_b,
		 pcm_uint backlog_taken);
void dst_observe(pcm_uint seed, pcm_uint acks, pcm_uint bytes, pcm_uint ev_a, pcm_uint ev_b,
		 pcm_uint backlog_taken)
{
}

/* Owners start together, so that their feeding overlaps. */
static pthread_barrier_t start;

struct owner {
	struct pcm_shell *sh;
	unsigned id;
	uint64_t calls;  /* feeds that returned 1 */
	uint64_t events;
	bool failed;
	char why[256];
};

static void *count_calls_main(void *arg)
{
	struct owner *o = arg;
	struct pcm_event ev = { .valid = BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX) };
	uint32_t base = o->id * FLOWS_PER_THREAD;

	ev.values[PCM_SIG_ACK] = 1;
	ev.values[PCM_SIG_DATA_TX] = MSS;
	pthread_barrier_wait(&start);
	for (uint64_t n = 0; n < EVENTS; n++) {
		int rc = pcm_shell_feed(o->sh, base + (uint32_t)(n % FLOWS_PER_THREAD), &ev, n);

		o->calls += rc == 1;
		o->failed |= rc != 1;
	}
	return NULL;
}

static void test_owners_of_different_flows_count_every_call(void **state)
{
	struct pcm_shell *sh = NULL;
	struct pcm_shell_stats st;
	struct owner o[THREADS];
	pthread_t th[THREADS];
	struct pcm_diag diag;
	uint64_t calls = 0;

	assert_int_equal(pcm_shell_create(&pcm_pkg_pair_probe, NULL, THREADS * FLOWS_PER_THREAD, 0,
					  &sh, &diag),
			 0);
	pthread_barrier_init(&start, NULL, THREADS);
	for (unsigned i = 0; i < THREADS; i++) {
		o[i] = (struct owner){ .sh = sh, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, count_calls_main, &o[i]), 0);
	}
	for (unsigned i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_false(o[i].failed);
		calls += o[i].calls;
	}
	pthread_barrier_destroy(&start);
	pcm_shell_stats(sh, &st);
	assert_int_equal(calls, (uint64_t)THREADS * EVENTS);
	assert_int_equal(st.handler_calls, calls);
	assert_int_equal(st.handler_errors, 0);
	for (uint32_t f = 0; f < THREADS * FLOWS_PER_THREAD; f++) {
		pcm_uint out;

		assert_int_equal(pcm_shell_control(sh, f, PCM_CTRL_CWND, &out), 0);
		assert_int_equal(out, EVENTS / FLOWS_PER_THREAD); /* pair_probe counts its calls */
	}
	pcm_shell_destroy(sh);
}

/* ---- owners changing their flows while others feed ---------------------------------------- */

struct churn {
	struct owner o;
	uint64_t rng;
};

static int index_of(const struct pcm_package *pkg, const char *name)
{
	for (uint32_t i = 0; i < pkg->n_signals; i++)
		if (strcmp(pkg->signals[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* What the flow consumed (its TOTAL control) plus what it holds equals what was fed. */
static bool conserved(struct pcm_shell *sh, uint32_t flow, uint64_t fed)
{
	const struct pcm_package *pkg = pcm_shell_flow_package(sh, flow);
	const pcm_uint *rec = pcm_shell_record(sh, flow);
	pcm_uint total;

	if (pcm_shell_control(sh, flow, PCM_CTRL_CWND, &total) < 0)
		return false;
	return total + rec[PCM_REC_SIGNALS_SLOT + index_of(pkg, "ACKS")] == fed;
}

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	struct owner *o = &c->o;
	struct pcm_event ev = { .valid = BIT(PCM_SIG_ACK) | BIT(PCM_SIG_DATA_TX) |
					 BIT(PCM_SIG_FLOW_SEED) };
	uint32_t flow;
	uint64_t fed = 0;

	pthread_barrier_wait(&start);
	if (pcm_shell_flow_add(o->sh, &pcm_pkg_dst_p, 0, &flow) < 0) {
		o->failed = true;
		return NULL;
	}
	for (uint64_t n = 0; n < EVENTS / 16 && !o->failed; n++) {
		uint64_t r = tu_xorshift(&c->rng);
		int rc;

		ev.values[PCM_SIG_ACK] = 1 + r % 3;
		ev.values[PCM_SIG_DATA_TX] = ev.values[PCM_SIG_ACK] * MSS;
		ev.values[PCM_SIG_FLOW_SEED] = 1;
		rc = pcm_shell_feed(o->sh, flow, &ev, n);
		fed += ev.values[PCM_SIG_ACK];
		o->calls += rc == 1;
		if (r % 7 == 0) {
			const struct pcm_package *to = pcm_shell_flow_package(o->sh, flow) ==
								       &pcm_pkg_dst_p
							       ? &pcm_pkg_dst_q
							       : &pcm_pkg_dst_p;

			rc = pcm_shell_flow_swap(o->sh, flow, to, n);
		}
		if (rc >= 0 && r % 101 == 0) {
			if (!conserved(o->sh, flow, fed)) {
				snprintf(o->why, sizeof(o->why), "flow %u: ACKs not conserved", flow);
				o->failed = true;
			}
			rc = pcm_shell_flow_remove(o->sh, flow);
			if (rc == 0)
				rc = pcm_shell_flow_add(o->sh, &pcm_pkg_dst_q, n, &flow);
			fed = 0;
		}
		if (rc < 0) {
			snprintf(o->why, sizeof(o->why), "flow %u: error %d", flow, rc);
			o->failed = true;
		}
	}
	if (!o->failed && !conserved(o->sh, flow, fed)) {
		snprintf(o->why, sizeof(o->why), "flow %u: ACKs not conserved at the end", flow);
		o->failed = true;
	}
	return NULL;
}

static atomic_bool stop_reader;

static void *stats_reader_main(void *arg)
{
	struct pcm_shell *sh = arg;
	uint64_t last = 0;

	while (!atomic_load(&stop_reader)) {
		struct pcm_shell_stats st;

		pcm_shell_stats(sh, &st);
		(void)last;
		last = st.handler_calls;
	}
	return NULL;
}

static void test_owners_add_swap_and_remove_while_others_feed(void **state)
{
	const struct pcm_package *pkgs[] = { &pcm_pkg_dst_p, &pcm_pkg_dst_q };
	struct pcm_shell_config cfg = { .packages = pkgs, .n_packages = 2, .max_flows = 1 << 16 };
	struct pcm_shell *sh = NULL;
	struct churn c[THREADS];
	pthread_t th[THREADS], reader;
	struct pcm_shell_stats st;
	struct pcm_diag diag;
	uint64_t calls = 0;

	assert_int_equal(pcm_shell_create_cfg(&cfg, &sh, &diag), 0);
	pthread_barrier_init(&start, NULL, THREADS);
	atomic_store(&stop_reader, false);
	assert_int_equal(pthread_create(&reader, NULL, stats_reader_main, sh), 0);
	for (unsigned i = 0; i < THREADS; i++) {
		c[i] = (struct churn){ .o = { .sh = sh, .id = i }, .rng = 0x9e3779b97f4a7c15ull + i };
		assert_int_equal(pthread_create(&th[i], NULL, churn_main, &c[i]), 0);
	}
	for (unsigned i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		if (c[i].o.failed)
			fail_msg("owner %u: %s", i, c[i].o.why);
		calls += c[i].o.calls;
	}
	pthread_barrier_destroy(&start);
	atomic_store(&stop_reader, true);
	assert_int_equal(pthread_join(reader, NULL), 0);
	pcm_shell_stats(sh, &st);
	assert_int_equal(st.handler_calls, calls);
	assert_int_equal(st.flows, THREADS);
	pcm_shell_destroy(sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owners_of_different_flows_count_every_call),
		cmocka_unit_test(test_owners_add_swap_and_remove_while_others_feed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
