// SPDX-License-Identifier: MIT
/*
 * test_flowtab.c - the flow table both shells keep flows in: lowest free
 * handles per group, handles picked by the caller and far apart, memory
 * that grows and shrinks one chunk at a time, and groups (workers) that
 * never share a chunk, so never a cache line of per-flow state.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "flowtab.h"

#define CHUNK PCM_FLOWTAB_CHUNK_FLOWS

static void visit_count(void *arg, uint32_t flow, unsigned char *slot, unsigned char *priv)
{
	(*(uint32_t *)arg)++;
}

static void test_handles_are_lowest_free_and_reused(void **state)
{
	struct pcm_flowtab tab;
	uint32_t f, n = 0;

	assert_int_equal(pcm_flowtab_init(&tab, 4 * CHUNK, 100, 0, 1, NULL), 0);
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
		assert_int_equal(f, i);
	}
	assert_int_equal(pcm_flowtab_remove(&tab, 3), 0);
	assert_int_equal(pcm_flowtab_remove(&tab, 7), 0);
	assert_int_equal(pcm_flowtab_remove(&tab, 3), -ENOENT);
	assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
	assert_int_equal(f, 3);
	assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
	assert_int_equal(f, 7);
	assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
	assert_int_equal(f, 10);
	assert_int_equal(pcm_flowtab_n_live(&tab), 11);
	pcm_flowtab_for_each(&tab, visit_count, &n);
	assert_int_equal(n, 11);
	/* slots are cache-line multiples, zeroed when taken */
	assert_int_equal(tab.slot_bytes, 128);
	memset(pcm_flowtab_slot(&tab, 10), 0xab, 100);
	assert_int_equal(pcm_flowtab_remove(&tab, 10), 0);
	assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
	assert_int_equal(f, 10);
	assert_int_equal(pcm_flowtab_slot(&tab, 10)[0], 0);
	pcm_flowtab_fini(&tab);
}

static void test_sparse_handles_cost_one_chunk_each(void **state)
{
	const uint32_t max = 1u << 22;
	struct pcm_flowtab tab;
	size_t empty, one, two;

	assert_int_equal(pcm_flowtab_init(&tab, max, 64, 64, 1, NULL), 0);
	empty = pcm_flowtab_bytes(&tab);
	assert_int_equal(pcm_flowtab_add_at(&tab, 0, 5), 0);
	one = pcm_flowtab_bytes(&tab);
	assert_int_equal(pcm_flowtab_add_at(&tab, 0, max - 1), 0);
	two = pcm_flowtab_bytes(&tab);
	assert_int_equal(two - one, one - empty);
	assert_true(one - empty < 2 * CHUNK * 128 + 4096);
	assert_int_equal(pcm_flowtab_add_at(&tab, 0, 5), -EEXIST);
	assert_int_equal(pcm_flowtab_add_at(&tab, 0, max), -ERANGE);
	/* a handle with no chunk behind it reads as zeroes and is not live */
	assert_int_equal(pcm_flowtab_slot(&tab, CHUNK * 7)[0], 0);
	assert_false(pcm_flowtab_live(&tab, CHUNK * 7));
	assert_null(pcm_flowtab_slot(&tab, max));
	/* the next lowest free handle is in the first chunk */
	{
		uint32_t f;

		assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
		assert_int_equal(f, 0);
	}
	pcm_flowtab_fini(&tab);
}

static void test_memory_grows_and_shrinks_a_chunk_at_a_time(void **state)
{
	struct pcm_flowtab tab;
	size_t base, per_chunk, prev;
	uint32_t f;

	assert_int_equal(pcm_flowtab_init(&tab, 64 * CHUNK, 128, 0, 1, NULL), 0);
	base = pcm_flowtab_bytes(&tab);
	assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
	per_chunk = pcm_flowtab_bytes(&tab) - base;
	prev = pcm_flowtab_bytes(&tab);
	for (uint32_t i = 1; i < 10 * CHUNK; i++) {
		size_t now;

		assert_int_equal(pcm_flowtab_add(&tab, 0, &f), 0);
		now = pcm_flowtab_bytes(&tab);
		/* never more than one chunk more than the flows need */
		assert_true(now == prev || now == prev + per_chunk);
		prev = now;
	}
	assert_int_equal(pcm_flowtab_bytes(&tab), base + 10 * per_chunk);
	/* emptying a chunk gives its memory back; a partly used one keeps it */
	for (uint32_t i = 0; i < CHUNK; i++)
		assert_int_equal(pcm_flowtab_remove(&tab, 3 * CHUNK + i), 0);
	assert_int_equal(pcm_flowtab_bytes(&tab), base + 9 * per_chunk);
	assert_int_equal(pcm_flowtab_slot(&tab, 3 * CHUNK)[0], 0);
	assert_int_equal(pcm_flowtab_remove(&tab, 5 * CHUNK), 0);
	assert_int_equal(pcm_flowtab_bytes(&tab), base + 9 * per_chunk);
	for (uint32_t f2 = 0; f2 < 10 * CHUNK; f2++)
		pcm_flowtab_remove(&tab, f2);
	assert_int_equal(pcm_flowtab_bytes(&tab), base);
	assert_int_equal(pcm_flowtab_n_live(&tab), 0);
	pcm_flowtab_fini(&tab);
}

static void test_groups_never_share_a_chunk(void **state)
{
	struct pcm_flowtab tab;
	uint32_t a, b;

	assert_int_equal(pcm_flowtab_init(&tab, 16 * CHUNK, 64, 64, 2, NULL), 0);
	assert_int_equal(pcm_flowtab_add(&tab, 0, &a), 0);
	assert_int_equal(pcm_flowtab_add(&tab, 1, &b), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, CHUNK); /* group 1 opened the next chunk */
	assert_int_equal(pcm_flowtab_group(&tab, a), 0);
	assert_int_equal(pcm_flowtab_group(&tab, b), 1);
	assert_int_equal(pcm_flowtab_add_at(&tab, 1, 1), -EXDEV);
	/* slots and private areas are whole cache lines, and the groups' chunks differ */
	assert_int_equal((uintptr_t)pcm_flowtab_slot(&tab, a) % 64, 0);
	assert_int_equal((uintptr_t)pcm_flowtab_priv(&tab, b) % 64, 0);
	assert_int_equal(tab.slot_bytes % 64, 0);
	assert_int_equal(tab.priv_bytes % 64, 0);
	assert_int_not_equal(a / CHUNK, b / CHUNK);
	assert_int_equal(pcm_flowtab_add(&tab, 0, &a), 0);
	assert_int_equal(a, 1);
	assert_int_equal(pcm_flowtab_add(&tab, 2, &a), -EINVAL);
	pcm_flowtab_fini(&tab);
}

static void test_bad_sizes_are_rejected(void **state)
{
	struct pcm_flowtab tab;

	assert_int_equal(pcm_flowtab_init(&tab, 0, 64, 0, 1, NULL), -EINVAL);
	assert_int_equal(pcm_flowtab_init(&tab, PCM_FLOWTAB_MAX_FLOWS + 1, 64, 0, 1, NULL),
			 -EINVAL);
	assert_int_equal(pcm_flowtab_init(&tab, 64, 64, 0, 0, NULL), -EINVAL);
	assert_int_equal(pcm_flowtab_init(&tab, 64, 64, 0, PCM_FLOWTAB_MAX_GROUPS + 1, NULL),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handles_are_lowest_free_and_reused),
		cmocka_unit_test(test_sparse_handles_cost_one_chunk_each),
		cmocka_unit_test(test_memory_grows_and_shrinks_a_chunk_at_a_time),
		cmocka_unit_test(test_groups_never_share_a_chunk),
		cmocka_unit_test(test_bad_sizes_are_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
