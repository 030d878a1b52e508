// SPDX-License-Identifier: MIT
/*
 * test_xp_send.c - the sender: CTS matching, chunking under the byte budget,
 * the message-size rules, messages in flight, and the too-long abort.
 */
#include "test_xp_pair.h"

#include "imm.h"

/*
 * Writes seen leaving host 0, with the sender's bytes in flight right after
 * each drain and its RTT samples, RTOs and TLPs so far. With blackout_ns,
 * every write is dropped for that long from the first one sent once the
 * sender has blackout_after RTT samples; with rate, the connection is paced.
 */
struct write_log {
	struct pair *p;
	uint32_t n;
	uint32_t len[8192];
	uint64_t in_flight[8192];
	uint32_t send_msgs_max;
	uint32_t imm[8192];
	uint64_t samples[8192];
	uint64_t rtos[8192];
	uint64_t tlps[8192];
	uint64_t t_ns[8192];
	uint64_t blackout_ns;
	uint64_t blackout_after;
	uint64_t blackout_from_ns; /* 0: not begun */
	uint64_t rate;             /* PCM_RATE_ONE scale; 0: line rate */
};

static enum xp_net_verdict log_writes(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	struct write_log *wl = arg;
	const struct xp_core_stats *st;
	struct xp_core_usage u;

	if (pkt->is_ctrl || pkt->src != 0 || wl->n == 8192)
		return XP_NET_PASS;
	xp_core_usage(pair_core(wl->p, 0), &u);
	st = xp_core_stats(pair_core(wl->p, 0));
	wl->len[wl->n] = pkt->write->len;
	wl->imm[wl->n] = pkt->write->imm;
	wl->samples[wl->n] = st->rtt_samples;
	wl->rtos[wl->n] = st->rto_fires;
	wl->tlps[wl->n] = st->tlp_fires;
	wl->t_ns[wl->n] = pkt->now_ns;
	wl->in_flight[wl->n++] = u.in_flight_bytes;
	if (u.send_msgs > wl->send_msgs_max)
		wl->send_msgs_max = u.send_msgs;
	if (wl->blackout_ns && !wl->blackout_from_ns && st->rtt_samples >= wl->blackout_after)
		wl->blackout_from_ns = pkt->now_ns;
	if (wl->blackout_from_ns && pkt->now_ns < wl->blackout_from_ns + wl->blackout_ns)
		return XP_NET_DROP;
	return XP_NET_PASS;
}

static void test_small_message_goes_at_once_with_a_preposted_receive(void **state)
{
	static uint8_t src[64], dst[64];
	const struct pair_comp *s, *r;
	struct pair_opts o;
	struct pair p;
	uint64_t t0;

	pair_default_opts(&o); /* 5 us each way */
	pair_init(&p, &o);
	fill_pattern(src, sizeof(src), 1);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	pair_run(&p, 50000); /* the CTS is at the sender before the send */
	t0 = pair_now(&p);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, 1000000);
	r = pair_find(&p, 1, XP_COMP_RECV, 1);
	s = pair_find(&p, 0, XP_COMP_SEND, 2);
	assert_non_null(r);
	assert_non_null(s);
	/* one way for the data, one back for the ACK: no rendezvous round trip */
	assert_int_equal(r->t_ns - t0, 5000);
	assert_int_equal(s->t_ns - t0, 10000);
	assert_int_equal(r->c.bytes, 64);
	assert_memory_equal(src, dst, sizeof(src));
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_send_waits_for_its_receive(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	pair_init(&p, &o);
	fill_pattern(src, sizeof(src), 2);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 1), 0);
	pair_run(&p, 5000000);
	assert_null(pair_find(&p, 0, XP_COMP_SEND, 1));
	assert_int_equal(xp_net_stats(p.net)->writes, 0);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 2), 0);
	pair_run(&p, 10000000);
	assert_non_null(pair_find(&p, 0, XP_COMP_SEND, 1));
	assert_memory_equal(src, dst, sizeof(src));
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_receives_take_messages_in_fifo_order(void **state)
{
	static uint8_t src[3][5000], dst[3][5000];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.n_paths = 3;
	o.link.jitter_ns = 20000; /* chunks and CTSs reorder */
	o.ctrl.jitter_ns = 20000;
	pair_init(&p, &o);
	for (int k = 0; k < 3; k++) {
		fill_pattern(src[k], sizeof(src[k]), 10 + (uint32_t)k);
		assert_int_equal(pair_send(&p, 0, src[k], 1000u + 1000u * (uint32_t)k, 10 + (uint64_t)k),
				 0);
	}
	for (int k = 0; k < 3; k++)
		assert_int_equal(pair_recv(&p, 1, dst[k], sizeof(dst[k]), 20 + (uint64_t)k), 0);
	pair_run(&p, 10000000);
	for (int k = 0; k < 3; k++) {
		const struct pair_comp *r = pair_find(&p, 1, XP_COMP_RECV, 20 + (uint64_t)k);

		assert_non_null(r);
		assert_int_equal(r->c.status, 0);
		assert_int_equal(r->c.bytes, 1000 + 1000 * k);
		assert_memory_equal(src[k], dst[k], 1000 + 1000 * k);
	}
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

/* Send @len bytes under a fixed window @cwnd (0: unlimited), logging writes (@wl's blackout kept). */
static void transfer_logged(uint64_t cwnd, uint64_t len, struct write_log *wl,
			    void (*tune)(struct xp_core_config *))
{
	static uint8_t src[16 << 20], dst[16 << 20];
	uint64_t blackout_ns = wl->blackout_ns, blackout_after = wl->blackout_after, rate = wl->rate;
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.cwnd_bytes = cwnd;
	o.rate = rate;
	o.filter = log_writes;
	o.filter_arg = wl;
	o.tune = tune;
	memset(wl, 0, sizeof(*wl));
	wl->blackout_ns = blackout_ns;
	wl->blackout_after = blackout_after;
	wl->rate = rate;
	wl->p = &p;
	pair_init(&p, &o);
	fill_pattern(src, len, 4);
	assert_int_equal(pair_recv(&p, 1, dst, len, 1), 0);
	assert_int_equal(pair_send(&p, 0, src, len, 2), 0);
	pair_run(&p, 10ull * 1000 * 1000 * 1000);
	assert_non_null(pair_find(&p, 0, XP_COMP_SEND, 2));
	assert_int_equal(pair_find(&p, 1, XP_COMP_RECV, 1)->c.bytes, len);
	assert_memory_equal(src, dst, len);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_chunk_never_exceeds_budget(void **state)
{
	static struct write_log wl;
	const uint64_t cwnds[] = { 10000, 100000, 300000, 1000000 };

	for (unsigned k = 0; k < 4; k++) {
		transfer_logged(cwnds[k], 3000000, &wl, NULL);
		assert_true(wl.n >= 3000000 / 65536);
		for (uint32_t i = 0; i < wl.n; i++) {
			assert_true(wl.len[i] <= 65536);
			/* after the drain the window holds: the chunk fit the budget */
			assert_true(wl.in_flight[i] <= cwnds[k]);
		}
	}
}

static void test_window_below_one_chunk_never_deadlocks(void **state)
{
	static struct write_log wl;

	transfer_logged(100, 1000000, &wl, NULL);
	/* one minimum-size chunk at a time, over the budget only with nothing else in flight */
	for (uint32_t i = 0; i < wl.n; i++) {
		assert_true(wl.len[i] <= 4096);
		assert_int_equal(wl.in_flight[i], wl.len[i]);
	}
	assert_int_equal(wl.n, (1000000 + 4095) / 4096);
}

/*
 * The chunk cap: one minimum chunk (4 KiB) until the first RTT sample, then a
 * quarter of the window in whole minimum chunks (100,000 / 4 = 25,000: 24 KiB),
 * or whole 64 KiB chunks with no window.
 */
static void test_chunks_start_at_the_minimum_then_take_a_quarter_of_the_window(void **state)
{
	static struct write_log wl;
	uint32_t before = 0, at_cap = 0, whole = 0;

	memset(&wl, 0, sizeof(wl));
	transfer_logged(100000, 3000000, &wl, NULL);
	for (uint32_t i = 0; i < wl.n; i++) {
		if (!wl.samples[i]) {
			assert_int_equal(wl.len[i], 4096);
			before++;
			continue;
		}
		assert_true(wl.len[i] <= 24576);
		at_cap += wl.len[i] == 24576;
	}
	assert_true(before >= 1);
	assert_true(at_cap >= 1);

	memset(&wl, 0, sizeof(wl));
	transfer_logged(0, 3000000, &wl, NULL);
	assert_int_equal(wl.len[0], 4096);
	for (uint32_t i = 0; i < wl.n; i++) {
		if (!wl.samples[i])
			assert_int_equal(wl.len[i], 4096);
		whole += wl.len[i] == 65536;
	}
	assert_true(whole >= 1);
}

/* Writes of slot @slot's chunks not sent before (a chunk index of one message is sent once first). */
static bool first_transmission(const struct write_log *wl, uint32_t i, uint8_t (*seen)[4096],
			       uint32_t *slot)
{
	struct xp_imm f;
	bool fresh;

	xp_imm_decode(wl->imm[i], &f);
	fresh = !seen[f.slot][f.chunk];
	seen[f.slot][f.chunk] = 1;
	*slot = f.slot;
	return fresh;
}

/*
 * Every write is dropped for 2 ms once the sender has RTT samples; with no
 * window but paced at a quarter of the line rate, the sender has room for a
 * whole chunk when its tail probe goes: the probe, the first write after the
 * TLP fires, is still a new chunk of one minimum chunk (4 KiB).
 */
static void test_tail_probe_is_one_minimum_chunk(void **state)
{
	static struct write_log wl;
	static uint8_t seen[XP_MSG_SLOTS][4096];
	uint32_t probes = 0, slot;

	memset(&wl, 0, sizeof(wl));
	memset(seen, 0, sizeof(seen));
	wl.blackout_ns = 2000000;
	wl.blackout_after = 4;
	wl.rate = PCM_RATE_ONE / 4;
	transfer_logged(0, 8000000, &wl, NULL);
	for (uint32_t i = 0; i < wl.n; i++) {
		bool fresh = first_transmission(&wl, i, seen, &slot);

		if (i && wl.tlps[i] > wl.tlps[i - 1]) {
			assert_true(fresh);
			assert_int_equal(wl.len[i], 4096);
			probes++;
		}
	}
	assert_true(probes >= 1);
}

/*
 * With no window, message A's writes are dropped for 2 ms once the sender has
 * RTT samples; message B's receive is posted after the first RTO, so B's
 * chunks are cut while the connection is in RTO recovery (nothing can be
 * acknowledged before the blackout ends): each is one minimum chunk. Once
 * the blackout is over and ACKs bring news, B's chunks grow back.
 */
static void test_rto_recovery_cuts_minimum_chunks(void **state)
{
	static uint8_t src[8 << 20], dst[8 << 20], src2[1 << 20], dst2[1 << 20];
	static struct write_log wl;
	static uint8_t seen[XP_MSG_SLOTS][4096];
	uint32_t in_recovery = 0, after = 0, slot;
	uint64_t t = 0;
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.filter = log_writes;
	o.filter_arg = &wl;
	memset(&wl, 0, sizeof(wl));
	memset(seen, 0, sizeof(seen));
	wl.p = &p;
	wl.blackout_ns = 2000000;
	wl.blackout_after = 4;
	pair_init(&p, &o);
	fill_pattern(src, sizeof(src), 6);
	fill_pattern(src2, sizeof(src2), 7);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	assert_int_equal(pair_send(&p, 0, src2, sizeof(src2), 3), 0);
	for (int k = 0; k < 1000 && !xp_core_stats(pair_core(&p, 0))->rto_fires; k++) {
		t += 10000;
		pair_run(&p, t);
	}
	assert_true(xp_core_stats(pair_core(&p, 0))->rto_fires >= 1);
	assert_true(t < wl.blackout_from_ns + wl.blackout_ns);
	assert_int_equal(pair_recv(&p, 1, dst2, sizeof(dst2), 4), 0);
	pair_run(&p, t + 10ull * 1000 * 1000 * 1000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 3)->c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	assert_memory_equal(src2, dst2, sizeof(src2));
	for (uint32_t i = 0; i < wl.n; i++) {
		if (!first_transmission(&wl, i, seen, &slot) || slot != 1)
			continue;
		if (wl.t_ns[i] < wl.blackout_from_ns + wl.blackout_ns) {
			assert_int_equal(wl.len[i], 4096);
			in_recovery++;
		} else {
			after += wl.len[i] > 4096;
		}
	}
	assert_true(in_recovery >= 1);
	assert_true(after >= 1);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void small_chunks(struct xp_core_config *cfg)
{
	cfg->chunk_bytes = 4096;
	cfg->min_chunk_bytes = 1024;
}

static void test_min_chunk_grows_so_a_message_fits_4096_chunks(void **state)
{
	static struct write_log wl;

	/* 16 MiB in 4 KiB chunks is exactly 4096 chunks, with a 1500-byte window */
	transfer_logged(1500, 16u << 20, &wl, small_chunks);
	assert_int_equal(wl.n, 4096);
	for (uint32_t i = 0; i < wl.n; i++) {
		struct xp_imm f;

		xp_imm_decode(wl.imm[i], &f);
		assert_int_equal(f.chunk, i);
		assert_int_equal(f.last, i == 4095);
		assert_int_equal(wl.len[i], 4096);
	}
}

static void test_message_over_4096_chunks_is_refused(void **state)
{
	struct solo s;
	struct xp_buf b = { 0x10000, 4096ull * 65536 + 1, 0 };

	solo_init(&s, 0, NULL);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 1, 0), -EMSGSIZE);
	b.len--;
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 1, 0), 0);
	solo_fini(&s);
}

/* A send whose buffer wraps the address space is -EINVAL at post, as a receive's is. */
static void test_a_buffer_that_wraps_is_refused_for_sends_as_for_receives(void **state)
{
	struct solo s;
	struct xp_buf b = { UINT64_MAX - 100, 200, 0 };

	solo_init(&s, 0, NULL);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 1, 0), -EINVAL);
	assert_int_equal(xp_post_recv(s.core, s.conn, &b, 2, 0), -EINVAL);
	b.len = 100; /* up to the last byte: no wrap */
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 3, 0), 0);
	solo_fini(&s);
}

static void one_in_flight_each(struct xp_core_config *cfg)
{
	cfg->max_queued = 64;
}

static void test_at_most_8_messages_in_flight(void **state)
{
	static uint8_t src[40][2000], dst[40][2000];
	static struct write_log wl;
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.filter = log_writes;
	o.filter_arg = &wl;
	o.tune = one_in_flight_each;
	memset(&wl, 0, sizeof(wl));
	wl.p = &p;
	pair_init(&p, &o);
	for (int k = 0; k < 40; k++) {
		fill_pattern(src[k], sizeof(src[k]), 100 + (uint32_t)k);
		assert_int_equal(pair_recv(&p, 1, dst[k], sizeof(dst[k]), 100 + (uint64_t)k), 0);
		assert_int_equal(pair_send(&p, 0, src[k], sizeof(src[k]), 200 + (uint64_t)k), 0);
	}
	pair_run(&p, 100000000);
	assert_int_equal(wl.send_msgs_max, XP_MSG_WINDOW);
	for (int k = 0; k < 40; k++) {
		assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 200 + (uint64_t)k)->c.status, 0);
		assert_memory_equal(src[k], dst[k], sizeof(src[k]));
	}
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void tiny_queue(struct xp_core_config *cfg)
{
	cfg->max_queued = 4;
}

static void test_full_queue_returns_eagain(void **state)
{
	struct solo s;
	struct xp_buf b = { 0x10000, 100, 0 };

	solo_init(&s, 0, tiny_queue);
	for (int k = 0; k < 4; k++)
		assert_int_equal(xp_post_send(s.core, s.conn, &b, (uint64_t)k, 0), 0);
	assert_int_equal(xp_post_send(s.core, s.conn, &b, 9, 0), -EAGAIN);
	for (int k = 0; k < 4; k++)
		assert_int_equal(xp_post_recv(s.core, s.conn, &b, (uint64_t)k, 0), 0);
	/* receives advertised (CTS) leave the queue, so more fit */
	assert_int_equal(xp_post_recv(s.core, s.conn, &b, 9, 0), 0);
	solo_fini(&s);
}

static void test_too_long_message_aborts_both_sides(void **state)
{
	static uint8_t src[3000], dst[3000];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	pair_init(&p, &o);
	fill_pattern(src, sizeof(src), 5);
	assert_int_equal(pair_recv(&p, 1, dst, 100, 1), 0);
	assert_int_equal(pair_recv(&p, 1, dst + 100, 2000, 2), 0);
	assert_int_equal(pair_send(&p, 0, src, 200, 3), 0);  /* 200 > 100 */
	assert_int_equal(pair_send(&p, 0, src, 1500, 4), 0); /* the next one still goes */
	pair_run(&p, 100000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 3)->c.status, -EMSGSIZE);
	assert_int_equal(pair_find(&p, 1, XP_COMP_RECV, 1)->c.status, -EMSGSIZE);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 4)->c.status, 0);
	assert_int_equal(pair_find(&p, 1, XP_COMP_RECV, 2)->c.status, 0);
	assert_memory_equal(src, dst + 100, 1500);
	assert_int_equal(xp_net_stats(p.net)->writes, 1); /* nothing of the long one was sent */
	assert_int_equal(xp_core_stats(pair_core(&p, 0))->msgs_aborted, 1);
	assert_int_equal(xp_core_stats(pair_core(&p, 1))->msgs_aborted, 1);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_empty_message_is_one_empty_chunk(void **state)
{
	static uint8_t buf[16];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	pair_init(&p, &o);
	assert_int_equal(pair_recv(&p, 1, buf, sizeof(buf), 1), 0);
	assert_int_equal(pair_send(&p, 0, buf, 0, 2), 0);
	pair_run(&p, 1000000);
	assert_int_equal(pair_find(&p, 1, XP_COMP_RECV, 1)->c.status, 0);
	assert_int_equal(pair_find(&p, 1, XP_COMP_RECV, 1)->c.bytes, 0);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_int_equal(xp_net_stats(p.net)->writes, 1);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_message_goes_at_once_with_a_preposted_receive),
		cmocka_unit_test(test_send_waits_for_its_receive),
		cmocka_unit_test(test_receives_take_messages_in_fifo_order),
		cmocka_unit_test(test_chunk_never_exceeds_budget),
		cmocka_unit_test(test_window_below_one_chunk_never_deadlocks),
		cmocka_unit_test(test_chunks_start_at_the_minimum_then_take_a_quarter_of_the_window),
		cmocka_unit_test(test_tail_probe_is_one_minimum_chunk),
		cmocka_unit_test(test_rto_recovery_cuts_minimum_chunks),
		cmocka_unit_test(test_min_chunk_grows_so_a_message_fits_4096_chunks),
		cmocka_unit_test(test_message_over_4096_chunks_is_refused),
		cmocka_unit_test(test_a_buffer_that_wraps_is_refused_for_sends_as_for_receives),
		cmocka_unit_test(test_at_most_8_messages_in_flight),
		cmocka_unit_test(test_full_queue_returns_eagain),
		cmocka_unit_test(test_too_long_message_aborts_both_sides),
		cmocka_unit_test(test_empty_message_is_one_empty_chunk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
