// SPDX-License-Identifier: MIT
/*
 * test_pendset.c - the asynchronous shell's pending set (libpcm/pendset.h),
 * single-threaded: a set that has emptied reads as empty, so a worker may
 * block (before the fix, pcm_pendset_nonempty() read a top word that stayed
 * set for good, and a worker thread spun on an empty set forever); and,
 * seeded and randomized against a model, every flow in the set is returned
 * by one round-robin pass, nothing else is ever returned, and the set reads
 * empty exactly when the model is.
 *
 *   PCM_PENDSET_SEEDS=N (default 200), PCM_PENDSET_SEED=S (first seed, default 1)
 *
 * A failing seed prints the line that reruns it alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pendset.h"

#define MAX_FLOWS (1u << 20)
#define MODEL_FLOWS 64 /* flows a randomized run draws from */
#define STEPS_PER_SEED 400
#define NARROW_MAX_FLOWS 4096 /* a set whose levels above 0 are one bit each */

struct fixture {
	struct pcm_pendset_l0 l0;
	struct pcm_pendset ps;
	uint32_t cursor;
};

static void fixture_init(struct fixture *f, uint32_t max_flows)
{
	assert_int_equal(pcm_pendset_l0_init(&f->l0, max_flows), 0);
	assert_int_equal(pcm_pendset_init(&f->ps, max_flows), 0);
	f->cursor = 0;
}

static void fixture_fini(struct fixture *f)
{
	pcm_pendset_fini(&f->ps);
	pcm_pendset_l0_fini(&f->l0);
}

static uint32_t next_one(struct fixture *f, uint32_t *flow)
{
	return pcm_pendset_next(&f->ps, &f->l0, &f->cursor, flow, 1);
}

static void test_emptied_set_reads_empty(void **state)
{
	static const uint32_t flows[] = { 0, 1, 63, 64, 4095, 4096, 262143, 262144, MAX_FLOWS - 1 };
	struct fixture f;
	uint32_t got;

	(void)state;
	fixture_init(&f, MAX_FLOWS);
	assert_false(pcm_pendset_nonempty(&f.ps));
	for (size_t i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
		assert_true(pcm_pendset_add(&f.ps, &f.l0, flows[i]));
		assert_true(pcm_pendset_nonempty(&f.ps));
		assert_int_equal(next_one(&f, &got), 1);
		assert_int_equal(got, flows[i]);
		pcm_pendset_remove(&f.ps, &f.l0, flows[i]);
		/* the worker's next round finds nothing; then it may block */
		assert_int_equal(next_one(&f, &got), 0);
		assert_false(pcm_pendset_nonempty(&f.ps));
	}
	fixture_fini(&f);
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Odd seeds draw flows far apart and close together, so every level's words
 * are exercised; even seeds only flows below 4096 (one word above level 0,
 * in a set of 4096, so each level above 0 is a single bit: the shape whose
 * top bit the old walk never cleared).
 */
static bool wide_flows;

static uint32_t model_flow(uint32_t i)
{
	if (!wide_flows)
		return i * 37u;
	return i < MODEL_FLOWS / 2 ? i * 37u : (i * 70001u) % MAX_FLOWS;
}

static uint32_t model_count(const bool *in)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < MODEL_FLOWS; i++)
		n += in[i];
	return n;
}

static int model_index(uint32_t flow)
{
	for (uint32_t i = 0; i < MODEL_FLOWS; i++)
		if (model_flow(i) == flow)
			return (int)i;
	return -1;
}

/* One round-robin pass returns each flow in the set once and nothing else. Return: a failure. */
static const char *check_pass(struct fixture *f, const bool *in)
{
	bool seen[MODEL_FLOWS] = { false };
	uint32_t n = model_count(in), flow;

	for (uint32_t k = 0; k < n; k++) {
		int i;

		if (next_one(f, &flow) != 1)
			return "a pass returned fewer flows than the set holds";
		i = model_index(flow);
		if (i < 0 || !in[i])
			return "a flow not in the set was returned";
		if (seen[i])
			return "a pass returned a flow twice";
		seen[i] = true;
	}
	if (n == 0 && next_one(f, &flow) != 0)
		return "an empty set returned a flow";
	if (pcm_pendset_nonempty(&f->ps) != (n > 0))
		return n ? "a nonempty set read as empty" : "an emptied set read as nonempty";
	return NULL;
}

static const char *run_seed(uint64_t seed)
{
	bool in[MODEL_FLOWS] = { false };
	uint64_t rng = seed;
	const char *why = NULL;
	struct fixture f;

	wide_flows = seed & 1;
	fixture_init(&f, wide_flows ? MAX_FLOWS : NARROW_MAX_FLOWS);
	for (uint32_t step = 0; step < STEPS_PER_SEED && !why; step++) {
		uint64_t r = splitmix(&rng);
		uint32_t i = (uint32_t)(r >> 8) % MODEL_FLOWS;

		switch (r % 4) {
		case 0:
		case 1:
			if (pcm_pendset_add(&f.ps, &f.l0, model_flow(i)) == in[i])
				why = "add's result disagrees with membership";
			in[i] = true;
			break;
		case 2:
			/* like the worker, remove only what a visit found */
			pcm_pendset_remove(&f.ps, &f.l0, model_flow(i));
			in[i] = false;
			break;
		default:
			why = check_pass(&f, in);
			break;
		}
	}
	for (uint32_t i = 0; i < MODEL_FLOWS && !why; i++) {
		pcm_pendset_remove(&f.ps, &f.l0, model_flow(i));
		in[i] = false;
	}
	if (!why)
		why = check_pass(&f, in);
	fixture_fini(&f);
	return why;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static void test_randomized_against_model(void **state)
{
	uint64_t first = env_u64("PCM_PENDSET_SEED", 1), n = env_u64("PCM_PENDSET_SEEDS", 200);

	(void)state;
	for (uint64_t seed = first; seed < first + n; seed++) {
		const char *why = run_seed(seed);

		if (why) {
			fprintf(stderr, "seed %llu: %s\nreproduce: PCM_PENDSET_SEED=%llu "
				"PCM_PENDSET_SEEDS=1 build/tests/unit/test_pendset\n",
				(unsigned long long)seed, why, (unsigned long long)seed);
			fail();
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emptied_set_reads_empty),
		cmocka_unit_test(test_randomized_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
