// SPDX-License-Identifier: MIT
/*
 * test_mem.c - a run's memory (mem.h): blocks of every size are as aligned
 * as promised, zeroed when asked, disjoint and keep what was written; a
 * block given back is what the next request of its class gets; realloc
 * keeps the contents across classes and into blocks of their own; a small
 * run gets no huge-page advice and a large one does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "des.h"
#include "mem.h"

enum { N_BLOCKS = 3000 };

struct block {
	unsigned char *p;
	size_t n;
};

/* Sizes from 1 B to 64 KiB, and one in 64 up to 1 MiB: mostly small, as a run's are. */
static size_t draw_size(struct uet_rng *rng)
{
	uint64_t r = uet_rng_next(rng);
	unsigned shift = (unsigned)(r % 64 == 0 ? r % 21 : r % 17);

	return 1 + (size_t)((r >> 8) & ((1ull << shift) - 1));
}

static void fill(const struct block *b, size_t i)
{
	memset(b->p, (int)(i * 37 % 251) + 1, b->n);
}

static void assert_filled(const struct block *b, size_t i)
{
	unsigned char want = (unsigned char)(i * 37 % 251 + 1);

	for (size_t k = 0; k < b->n; k++)
		if (b->p[k] != want)
			fail_msg("block %zu (%zu B) byte %zu: %u, want %u", i, b->n, k, b->p[k], want);
}

static void assert_zero(const unsigned char *p, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (p[k])
			fail_msg("byte %zu of a zeroed block of %zu is %u", k, n, p[k]);
}

static void assert_aligned(const void *p, size_t n)
{
	assert_int_equal((uintptr_t)p % 16, 0);
	if (n % 64 == 0)
		assert_int_equal((uintptr_t)p % 64, 0);
}

static void test_blocks_are_aligned_zeroed_and_disjoint(void **state)
{
	struct block *b = calloc(N_BLOCKS, sizeof(*b));
	struct uet_mem m;
	struct uet_rng rng;

	(void)state;
	uet_mem_init(&m);
	uet_rng_seed(&rng, 11);
	for (size_t i = 0; i < N_BLOCKS; i++) {
		b[i].n = draw_size(&rng);
		b[i].p = uet_mem_zalloc(&m, b[i].n);
		assert_non_null(b[i].p);
		assert_aligned(b[i].p, b[i].n);
		assert_zero(b[i].p, b[i].n);
		fill(&b[i], i);
		/* give every third back and take a new one: recycled blocks are zeroed too */
		if (i % 3 == 2) {
			uet_mem_free(&m, b[i - 1].p, b[i - 1].n);
			b[i - 1].p = uet_mem_zalloc(&m, b[i - 1].n);
			assert_non_null(b[i - 1].p);
			assert_zero(b[i - 1].p, b[i - 1].n);
			fill(&b[i - 1], i - 1);
		}
	}
	for (size_t i = 0; i < N_BLOCKS; i++)
		assert_filled(&b[i], i);
	for (size_t i = 0; i < N_BLOCKS; i++)
		uet_mem_free(&m, b[i].p, b[i].n);
	uet_mem_fini(&m);
	assert_int_equal(m.n_maps, 0);
	free(b);
}

static void test_a_block_given_back_is_reused_by_its_class(void **state)
{
	struct uet_mem m;
	void *a, *b, *c;

	(void)state;
	if (UET_MEM_SANITIZED)
		skip(); /* every block is malloc()'s under the sanitizer */
	uet_mem_init(&m);
	a = uet_mem_alloc(&m, 600);
	b = uet_mem_alloc(&m, 600);
	uet_mem_free(&m, a, 600);
	/* 520 B is in 600's class (513..640): the same block, not a new one */
	c = uet_mem_alloc(&m, 520);
	assert_ptr_equal(c, a);
	/* 700 B is not: a new block */
	c = uet_mem_alloc(&m, 700);
	assert_ptr_not_equal(c, a);
	assert_ptr_not_equal(c, b);
	/* a block of its own is unmapped when given back */
	a = uet_mem_alloc(&m, UET_MEM_CLASS_MAX + 1);
	assert_int_equal(m.n_maps, 2);
	uet_mem_free(&m, a, UET_MEM_CLASS_MAX + 1);
	assert_int_equal(m.n_maps, 1);
	uet_mem_fini(&m);
}

static void test_realloc_keeps_contents(void **state)
{
	static const size_t sizes[] = { 1, 16, 17, 200, 513, 640, 641, 5000, UET_MEM_CLASS_MAX,
					UET_MEM_CLASS_MAX + 1, 3u << 20, 100 };
	struct uet_mem m;
	unsigned char *p = NULL;
	size_t have = 0;

	(void)state;
	uet_mem_init(&m);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], keep = have < n ? have : n;

		p = uet_mem_realloc(&m, p, have, n);
		assert_non_null(p);
		for (size_t k = 0; k < keep; k++)
			if (p[k] != (unsigned char)(k % 253))
				fail_msg("realloc %zu -> %zu: byte %zu lost", have, n, k);
		for (size_t k = 0; k < n; k++)
			p[k] = (unsigned char)(k % 253);
		have = n;
	}
	uet_mem_free(&m, p, have);
	uet_mem_fini(&m);
}

static void test_huge_pages_only_for_large_runs(void **state)
{
	struct uet_mem m;
	size_t n = 0;

	(void)state;
	if (UET_MEM_SANITIZED)
		skip();
	uet_mem_init(&m);
	while (n + 4096 < UET_MEM_SMALL_BYTES - UET_MEM_CHUNK_BYTES) {
		assert_non_null(uet_mem_alloc(&m, 4096));
		n += 4096;
	}
	assert_true(m.mapped <= UET_MEM_SMALL_BYTES);
	assert_int_equal(m.huge, 0);
	for (size_t i = 0; i < UET_MEM_SMALL_BYTES / 4096; i++)
		assert_non_null(uet_mem_alloc(&m, 4096));
	assert_true(m.mapped > UET_MEM_SMALL_BYTES);
	/* madvise(MADV_HUGEPAGE) fails only on kernels built without THP */
	if (m.huge == 0)
		print_message("huge pages not advised: this kernel has no THP\n");
	else
		assert_true(m.huge <= m.mapped - UET_MEM_SMALL_BYTES + UET_MEM_CHUNK_BYTES);
	uet_mem_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks_are_aligned_zeroed_and_disjoint),
		cmocka_unit_test(test_a_block_given_back_is_reused_by_its_class),
		cmocka_unit_test(test_realloc_keeps_contents),
		cmocka_unit_test(test_huge_pages_only_for_large_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
