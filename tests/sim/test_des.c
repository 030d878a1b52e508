// SPDX-License-Identifier: MIT
/*
 * test_des.c - the timing wheel pops events in exact (time, insertion) order
 * across every level and the overflow list, pooled events and objects that
 * are their own events alike; cancellation removes exactly the cancelled
 * events, the event pool recycles instead of growing, and busy level-1
 * slots fill into the array the last one left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "des.h"

struct ref {
	uint64_t t;
	uint64_t id;
	bool cancelled;
	struct uet_ev *ev;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void test_pop_order_is_time_then_insertion_across_levels(void **state)
{
	enum { N = 20000 };
	struct uet_des des;
	struct uet_mem mem;
	struct uet_rng rng;
	struct ref *r = calloc(N, sizeof(*r));
	uint64_t last_t = 0, last_id = 0;
	size_t n = 0;

	uet_mem_init(&mem);
	assert_int_equal(uet_des_init(&des, &mem), 0);
	uet_rng_seed(&rng, 7);
	for (size_t i = 0; i < N; i++) {
		/* spread over ps, ns, us, ms, s and beyond the 70 s wheel horizon */
		unsigned scale = uet_rng_below(&rng, 7);
		uint64_t t = uet_rng_next(&rng) % (1ull << (8 + scale * 7));

		if (i % 10 == 0)
			t = r[i / 2].t; /* equal times must keep insertion order */
		r[i] = (struct ref){ .t = t, .id = i };
		r[i].ev = uet_des_schedule(&des, t, 1, NULL, i);
	}
	for (size_t i = 0; i < N; i += 3) {
		uet_des_cancel(&des, r[i].ev);
		r[i].cancelled = true;
	}
	qsort(r, N, sizeof(*r), ref_cmp);
	for (size_t i = 0; i < N; i++) {
		struct uet_fired ev;

		if (r[i].cancelled)
			continue;
		assert_true(uet_des_pop(&des, &ev));
		assert_non_null(ev.ev);
		assert_int_equal(des.now_ps, r[i].t);
		assert_int_equal(ev.arg, r[i].id);
		assert_true(des.now_ps > last_t || (des.now_ps == last_t && ev.arg >= last_id));
		last_t = des.now_ps;
		last_id = ev.arg;
		uet_des_free(&des, ev.ev);
		n++;
	}
	assert_false(uet_des_pop(&des, &(struct uet_fired){ 0 }));
	assert_int_equal(des.n_pending, 0);
	assert_int_equal(n, N - (N + 2) / 3);
	uet_des_fini(&des);
	uet_mem_fini(&mem);
	free(r);
}

/* Handlers schedule into the slot being served, the next slot and far away. */
static void test_events_scheduled_while_running_keep_order(void **state)
{
	struct uet_des des;
	struct uet_mem mem;
	struct uet_rng rng;
	uint64_t last = 0, popped = 0;
	struct uet_fired ev;

	uet_mem_init(&mem);
	assert_int_equal(uet_des_init(&des, &mem), 0);
	uet_rng_seed(&rng, 11);
	for (int i = 0; i < 100; i++)
		uet_des_schedule(&des, 5 + (uint64_t)i * 333, 1, NULL, 0);
	while (uet_des_pop(&des, &ev)) {
		assert_true(des.now_ps >= last);
		last = des.now_ps;
		if (++popped < 200000) {
			uint64_t d[] = { 0, 1, 700, 1024, 5000000, 300000000, 20000000000000ull };

			if (uet_rng_below(&rng, 2))
				uet_des_schedule(&des, des.now_ps + d[uet_rng_below(&rng, 7)], 1,
						 NULL, 0);
			else
				uet_des_schedule(&des, des.now_ps + uet_rng_below(&rng, 100000), 1,
						 NULL, 0);
		}
		uet_des_free(&des, ev.ev);
	}
	assert_true(popped >= 200000);
	/* 100 events pending at any time: the pool recycled instead of growing */
	assert_true(des.n_allocated <= 8192);
	uet_des_fini(&des);
	uet_mem_fini(&mem);
}

static void test_cancelled_event_in_current_slot_is_skipped(void **state)
{
	struct uet_des des;
	struct uet_mem mem;
	struct uet_fired a = { 0 };
	struct uet_ev *b;

	uet_mem_init(&mem);
	assert_int_equal(uet_des_init(&des, &mem), 0);
	uet_des_schedule(&des, 100, 1, NULL, 1);
	assert_true(uet_des_pop(&des, &a));
	uet_des_free(&des, a.ev);
	b = uet_des_schedule(&des, 100, 1, NULL, 2); /* same slot: into the run being served */
	uet_des_schedule(&des, 101, 1, NULL, 3);
	uet_des_cancel(&des, b);
	assert_true(uet_des_pop(&des, &a));
	assert_int_equal(a.arg, 3);
	uet_des_free(&des, a.ev);
	assert_false(uet_des_pop(&des, &a));
	uet_des_fini(&des);
	uet_mem_fini(&mem);
}

/* A 64-byte object that is its own event, as a packet or a port is. */
struct obj {
	uint64_t id;
	char pad[56];
};

/*
 * Crowded nanoseconds (hundreds of entries in one level-0 slot, inserted in
 * falling time order, so the slot's sort merges) and entries added to the
 * slot being served keep (time, insertion) order, objects and pooled events
 * alike.
 */
static void test_crowded_slots_keep_order_for_objects_and_pooled_events(void **state)
{
	enum { N = 6000 };
	struct obj *objs = aligned_alloc(64, N * sizeof(*objs));
	struct ref *r = calloc(2 * N, sizeof(*r));
	struct uet_des des;
	struct uet_mem mem;
	struct uet_rng rng;
	size_t n = 0, popped = 0;

	uet_mem_init(&mem);
	assert_int_equal(uet_des_init(&des, &mem), 0);
	uet_rng_seed(&rng, 23);
	for (size_t i = 0; i < N; i++) {
		/* eight crowded nanoseconds, times falling within each */
		uint64_t t = 5000 + (i % 8) * 1024 * 37 + 1023 - (i * 7) % 1024;

		objs[i].id = n;
		r[n] = (struct ref){ .t = t, .id = n };
		if (i % 3)
			uet_des_arm(&des, &objs[i], t, 2);
		else
			uet_des_schedule(&des, t, 1, NULL, (uint32_t)n);
		n++;
	}
	qsort(r, n, sizeof(*r), ref_cmp);
	for (;;) {
		struct uet_fired ev;
		uint64_t id;

		if (!uet_des_pop(&des, &ev))
			break;
		if (ev.ev) {
			assert_int_equal(ev.type, 1);
			id = ev.arg;
			uet_des_free(&des, ev.ev);
		} else {
			assert_int_equal(ev.type, 2);
			id = ((struct obj *)ev.obj)->id;
		}
		assert_int_equal(des.now_ps, r[popped].t);
		assert_int_equal(id, r[popped].id);
		popped++;
		/* now and then, one more into the nanosecond being served */
		if (n < 2 * N && uet_rng_below(&rng, 4) == 0) {
			uint64_t t = des.now_ps + uet_rng_below(&rng, 3);
			size_t j = n;

			uet_des_schedule(&des, t, 1, NULL, (uint32_t)n);
			/* into the reference's sorted tail: after every entry of equal or earlier time */
			for (; j > popped && r[j - 1].t > t; j--)
				r[j] = r[j - 1];
			r[j] = (struct ref){ .t = t, .id = n };
			n++;
		}
	}
	assert_int_equal(popped, n);
	assert_int_equal(des.n_pending, 0);
	uet_des_fini(&des);
	uet_mem_fini(&mem);
	free(r);
	free(objs);
}

/*
 * Epoch after epoch, each event served schedules one into the next level-0
 * epoch, so every level-1 slot fills past EPOCH_SPARE_MIN (4096) while the
 * one before it is served: the busy slots take over the array of the last
 * one served, and the order stays exact.
 */
static void test_busy_epochs_reuse_arrays_and_keep_order(void **state)
{
	enum { PER_EPOCH = 10000, EPOCHS = 6, EPOCH_PS = 1u << 22 };
	struct ref *r = calloc((size_t)PER_EPOCH * EPOCHS, sizeof(*r));
	uint64_t *popped_t = calloc((size_t)PER_EPOCH * EPOCHS, sizeof(*popped_t));
	uint32_t *popped_id = calloc((size_t)PER_EPOCH * EPOCHS, sizeof(*popped_id));
	uint32_t n = 0, popped = 0, taken = 0, spare_before = 0;
	struct uet_des des;
	struct uet_mem mem;
	struct uet_rng rng;

	assert_true(r && popped_t && popped_id);
	uet_mem_init(&mem);
	assert_int_equal(uet_des_init(&des, &mem), 0);
	uet_rng_seed(&rng, 5);
	for (; n < PER_EPOCH; n++) {
		uint64_t t = EPOCH_PS + uet_rng_below(&rng, EPOCH_PS);

		r[n] = (struct ref){ .t = t, .id = n };
		assert_non_null(uet_des_schedule(&des, t, 1, NULL, n));
	}
	for (struct uet_fired ev; uet_des_pop(&des, &ev);) {
		uint64_t t = des.now_ps + EPOCH_PS;

		popped_t[popped] = des.now_ps;
		popped_id[popped++] = ev.arg;
		uet_des_free(&des, ev.ev);
		if (spare_before && !des.epoch_spare_cap)
			taken++;
		spare_before = des.epoch_spare_cap;
		if (t >> 22 > EPOCHS)
			continue;
		r[n] = (struct ref){ .t = t, .id = n };
		assert_non_null(uet_des_schedule(&des, t, 1, NULL, n));
		n++;
	}
	assert_int_equal(popped, n);
	assert_int_equal(n, PER_EPOCH * EPOCHS);
	qsort(r, n, sizeof(*r), ref_cmp);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(popped_t[i], r[i].t);
		assert_int_equal(popped_id[i], r[i].id);
	}
	/* every epoch after the second filled into the array the one before it left */
	assert_true(taken >= EPOCHS - 3);
	uet_des_fini(&des);
	uet_mem_fini(&mem);
	free(r);
	free(popped_t);
	free(popped_id);
}

static void test_same_seed_same_random_stream(void **state)
{
	struct uet_rng a, b, c;

	uet_rng_seed(&a, 42);
	uet_rng_seed(&b, 42);
	uet_rng_seed(&c, 43);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = uet_rng_next(&a);

		assert_int_equal(x, uet_rng_next(&b));
		assert_int_not_equal(x, uet_rng_next(&c));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pop_order_is_time_then_insertion_across_levels),
		cmocka_unit_test(test_events_scheduled_while_running_keep_order),
		cmocka_unit_test(test_cancelled_event_in_current_slot_is_skipped),
		cmocka_unit_test(test_crowded_slots_keep_order_for_objects_and_pooled_events),
		cmocka_unit_test(test_busy_epochs_reuse_arrays_and_keep_order),
		cmocka_unit_test(test_same_seed_same_random_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
