// SPDX-License-Identifier: MIT
/*
 * test_xp_pacer.c - the RATE control: the gap per chunk, the timing wheel
 * (never early, in slot order, across its horizon, next-deadline bound),
 * and a paced connection's chunks leaving at the rate asked.
 */
#include "test_xp_pair.h"

#include "pacer.h"

static void test_gap_is_exact_at_line_rate_and_scales_with_rate(void **state)
{
	/* 64 KiB at 100 Gbit/s: 5242.88 ns, rounded up */
	assert_int_equal(xp_pacer_gap_ns(65536, PCM_RATE_ONE, 100000000000ull), 5243);
	assert_int_equal(xp_pacer_gap_ns(65536, PCM_RATE_ONE / 2, 100000000000ull), 10486);
	assert_int_equal(xp_pacer_gap_ns(1000, PCM_RATE_ONE, 8000000000ull), 1000);
	/* rate 0 counts as the smallest rate, not as a division by zero */
	assert_true(xp_pacer_gap_ns(1, 0, 1000000000ull) >= 8ull * PCM_RATE_ONE);
	assert_int_equal(xp_pacer_gap_ns(0, PCM_RATE_ONE, 1), 0);
}

static void test_wheel_never_fires_early(void **state)
{
	struct xp_wheel w;
	uint32_t out[16];

	assert_int_equal(xp_wheel_init(&w, 16, 64, 1000, 0), 0);
	xp_wheel_insert(&w, 3, 2500);
	assert_int_equal(xp_wheel_expire(&w, 2499, out, 16), 0);
	assert_true(xp_wheel_holds(&w, 3));
	assert_int_equal(xp_wheel_expire(&w, 3000, out, 16), 1);
	assert_int_equal(out[0], 3);
	assert_false(xp_wheel_holds(&w, 3));
	xp_wheel_fini(&w);
}

static void test_wheel_fires_in_slot_order_and_across_its_horizon(void **state)
{
	struct xp_wheel w;
	uint32_t out[16];

	assert_int_equal(xp_wheel_init(&w, 16, 64, 100, 0), 0);
	xp_wheel_insert(&w, 1, 500);
	xp_wheel_insert(&w, 2, 200);
	xp_wheel_insert(&w, 3, 64 * 100 + 300); /* one revolution out: shares slot 3 with t=300 */
	xp_wheel_insert(&w, 4, 300);
	assert_int_equal(xp_wheel_expire(&w, 1000, out, 16), 3);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[1], 4);
	assert_int_equal(out[2], 1);
	assert_true(xp_wheel_holds(&w, 3));
	assert_true(xp_wheel_next(&w) <= 64 * 100 + 300);
	assert_int_equal(xp_wheel_expire(&w, 64 * 100 + 299, out, 16), 0);
	assert_int_equal(xp_wheel_expire(&w, 64 * 100 + 300, out, 16), 1);
	assert_int_equal(out[0], 3);
	assert_int_equal(xp_wheel_next(&w), UINT64_MAX);
	xp_wheel_fini(&w);
}

static void test_wheel_next_is_never_after_the_earliest(void **state)
{
	struct xp_wheel w;
	uint64_t x = 99, now = 0;
	uint32_t out[64];

	assert_int_equal(xp_wheel_init(&w, 64, 128, 10, 0), 0);
	for (int step = 0; step < 20000; step++) {
		uint32_t id;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		id = (uint32_t)(x >> 40) % 64;
		if (!xp_wheel_holds(&w, id))
			xp_wheel_insert(&w, id, now + (x >> 20) % 5000);
		if (step % 3 == 0) {
			uint64_t earliest = UINT64_MAX;

			for (uint32_t i = 0; i < 64; i++)
				if (xp_wheel_holds(&w, i) && w.tick[i] * 10 < earliest)
					earliest = w.tick[i] * 10;
			assert_true(xp_wheel_next(&w) <= earliest);
			now += (x >> 50) % 300;
			for (uint32_t n = xp_wheel_expire(&w, now, out, 64), k = 0; k < n; k++)
				assert_true(w.tick[out[k]] == UINT64_MAX);
		}
	}
	xp_wheel_fini(&w);
}

static uint64_t send_times[64];
static uint32_t n_sends;

static enum xp_net_verdict record_sends(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	if (!pkt->is_ctrl && pkt->src == 0 && n_sends < 64)
		send_times[n_sends++] = pkt->now_ns;
	return XP_NET_PASS;
}

static void tick_fine(struct xp_core_config *cfg)
{
	cfg->pacer_tick_ns = 64;
	cfg->line_rate_bps = 100000000000ull;
	pair_one_chunk_size(cfg); /* the schedule below is of 64 KiB chunks */
}

static void test_paced_connection_sends_at_its_rate(void **state)
{
	static uint8_t src[16 * 65536], dst[16 * 65536];
	struct pair_opts o;
	struct pair p;
	uint64_t span;

	pair_default_opts(&o);
	o.rate = PCM_RATE_ONE / 4; /* 25 Gbit/s: a 64 KiB chunk every 20971.52 ns */
	o.filter = record_sends;
	o.tune = tick_fine;
	n_sends = 0;
	pair_init(&p, &o);
	fill_pattern(src, sizeof(src), 3);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	pair_run(&p, 20000); /* the CTS arrives */
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, 100000000);
	assert_int_equal(n_sends, 16);
	assert_memory_equal(src, dst, sizeof(src));
	for (uint32_t i = 1; i < n_sends; i++)
		assert_true(send_times[i] - send_times[0] >= i * 20971ull); /* never ahead of the rate */
	span = send_times[15] - send_times[0];
	assert_true(span <= 15 * 20972ull + 64); /* and behind it by at most a tick */
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gap_is_exact_at_line_rate_and_scales_with_rate),
		cmocka_unit_test(test_wheel_never_fires_early),
		cmocka_unit_test(test_wheel_fires_in_slot_order_and_across_its_horizon),
		cmocka_unit_test(test_wheel_next_is_never_after_the_earliest),
		cmocka_unit_test(test_paced_connection_sends_at_its_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
