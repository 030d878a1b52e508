// SPDX-License-Identifier: MIT
/*
 * test_xp_untrusted.c - what arrives from the wire is untrusted. While two
 * connections (a victim and a bystander) each carry a transfer, forged
 * input is thrown at both cores: immediates naming any connection on the
 * victim's own path, control packets that are short, oversized or garbage,
 * records with a wrong nonce, an unknown connection or from the wrong peer,
 * and, with the victim's real nonce, ACKs for chunks never sent, SACK bits
 * beyond the window, a forged "complete", CTSs outside the window, ABORTs
 * and FINs that contradict what happened. Every one is counted under its
 * own reason and dropped; nothing crashes; both transfers arrive intact and
 * the bystander never notices.
 */
#include "test_xp_pair.h"

#include "imm.h"

struct world {
	struct pair p;
	uint32_t by[2];       /* bystander connection ids (a, b) */
	uint32_t by_nonce[2];
	uint32_t evil_a, evil_b; /* an extra path of the victim's */
};

static void setup(struct world *w)
{
	struct pair_opts o;

	pair_default_opts(&o);
	o.n_paths = 2;
	o.cwnd_bytes = 131072;
	o.tune = pair_one_chunk_size; /* the lies below name chunks by index */
	pair_init(&w->p, &o);
	for (int h = 0; h < 2; h++) {
		struct xp_conn_config cc = { .n_paths = 2, .path_handles = w->p.handle[h],
					     .cc = xp_cc_fixed_binding(&w->p.cc[h]) };

		assert_int_equal(xp_conn_create(pair_core(&w->p, h), &cc, 0, &w->by[h],
						&w->by_nonce[h]), 0);
	}
	for (int h = 0; h < 2; h++)
		assert_int_equal(xp_conn_bind(pair_core(&w->p, h), w->by[h], w->by[!h],
					      w->by_nonce[!h], (uint32_t)!h, 0), 0);
}

static void inject_ctrl(struct world *w, int host, uint32_t from, const struct xp_rec *rec)
{
	uint8_t buf[XP_WIRE_MAX_MTU];
	struct xp_wire_writer wr;

	xp_wire_begin(&wr, buf, sizeof(buf));
	assert_int_equal(xp_wire_put(&wr, rec), 0);
	xp_core_on_ctrl(pair_core(&w->p, host), from, buf, xp_wire_finish(&wr), pair_now(&w->p));
	xp_net_kick(w->p.net, (uint32_t)host);
}

static struct xp_rec victim_rec(struct world *w, int host, uint8_t type)
{
	struct xp_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.conn = (uint16_t)w->p.conn[host];
	r.nonce = w->p.nonce[host];
	return r;
}

/* Phase 1: input that names nobody real. */
static void throw_garbage(struct world *w, uint64_t *x)
{
	struct xp_core *a = pair_core(&w->p, 0), *b = pair_core(&w->p, 1);
	uint32_t nobodys_path = w->p.handle[1][1] + 100;
	struct xp_imm f = { .conn = (uint16_t)w->by[1], .slot = 0, .chunk = 3 };
	uint8_t junk[5000];
	struct xp_rec r;

	/* a chunk naming the bystander, on a path that is not the bystander's */
	assert_int_equal(xp_core_on_chunk(b, xp_imm_encode(&f), 100, nobodys_path, false, 1),
			 -EINVAL);
	assert_int_equal(drops(b, XP_DROP_IMM_WRONG_PATH), 1);
	for (int i = 0; i < 20000; i++) {
		*x = *x * 6364136223846793005ull + 1442695040888963407ull;
		assert_int_equal(xp_core_on_chunk(b, (uint32_t)(*x >> 32), (uint32_t)(*x >> 12) & 0x1ffff,
						  nobodys_path, *x & 1, pair_now(&w->p)),
				 -EINVAL);
	}
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37);
	assert_int_equal(xp_core_on_ctrl(a, 1, junk, 3, 1), 0);
	assert_int_equal(xp_core_on_ctrl(a, 1, junk, sizeof(junk), 1), 0);
	assert_int_equal(xp_core_on_ctrl(a, 1, junk, 200, 1), 0);
	assert_int_equal(drops(a, XP_DROP_CTRL_SHORT), 1);
	assert_int_equal(drops(a, XP_DROP_CTRL_OVERSIZE), 1);
	assert_int_equal(drops(a, XP_DROP_CTRL_MAGIC), 1);
	for (int i = 0; i < 20000; i++) { /* a valid header over random records */
		*x = *x * 6364136223846793005ull + 1442695040888963407ull;
		for (size_t k = 0; k < 64; k++)
			junk[k] = (uint8_t)(*x >> (k % 56)) ^ (uint8_t)k;
		junk[0] = 0x78;
		junk[1] = 0x70;
		junk[2] = 1;
		junk[4] = 0;
		junk[5] = 64;
		junk[6] = junk[7] = 0;
		xp_core_on_ctrl((i & 1) ? a : b, 1 - (uint32_t)(i & 1), junk, 64, pair_now(&w->p));
	}
	/* the bystander's id with a wrong nonce; an id nobody has; the right nonce from another peer */
	memset(&r, 0, sizeof(r));
	r.type = XP_REC_RESET;
	r.u.reason = XP_RESET_ABORT;
	r.conn = (uint16_t)w->by[0];
	r.nonce = w->by_nonce[0] ^ 1;
	inject_ctrl(w, 0, 1, &r);
	assert_true(drops(a, XP_DROP_REC_WRONG_NONCE) >= 1);
	r.conn = 60;
	inject_ctrl(w, 0, 1, &r);
	assert_true(drops(a, XP_DROP_REC_UNKNOWN_CONN) >= 1);
	r.conn = (uint16_t)w->by[0];
	r.nonce = w->by_nonce[0];
	inject_ctrl(w, 0, 5, &r);
	assert_int_equal(drops(a, XP_DROP_REC_WRONG_PEER), 1);
}

/* Phase 2: the victim's real nonce, fields that contradict what happened. */
static void throw_lies(struct world *w)
{
	struct xp_core *a = pair_core(&w->p, 0), *b = pair_core(&w->p, 1);
	struct xp_rec r = victim_rec(w, 0, XP_REC_ACK);

	r.u.ack.cum = 4000; /* never sent */
	inject_ctrl(w, 0, 1, &r);
	assert_int_equal(drops(a, XP_DROP_ACK_NEVER_SENT), 1);
	r.u.ack.cum = 0;
	r.u.ack.sack = 1ull << 63; /* chunk 64: beyond the window */
	inject_ctrl(w, 0, 1, &r);
	assert_int_equal(drops(a, XP_DROP_ACK_NEVER_SENT), 2);
	r.u.ack.sack = 0;
	r.u.ack.complete = true; /* not even fully sent */
	inject_ctrl(w, 0, 1, &r);
	assert_int_equal(drops(a, XP_DROP_ACK_BAD_COMPLETE), 1);
	r.u.ack.complete = false;
	r.u.ack.msg_seq = 9; /* no message 9 */
	inject_ctrl(w, 0, 1, &r);
	assert_int_equal(drops(a, XP_DROP_ACK_UNKNOWN_MSG), 1);
	r = victim_rec(w, 0, XP_REC_CTS);
	r.u.cts.msg_seq = 1000; /* far outside the window */
	r.u.cts.cap = 1;
	inject_ctrl(w, 0, 1, &r);
	assert_int_equal(drops(a, XP_DROP_CTS_BAD_SEQ), 1);
	r = victim_rec(w, 1, XP_REC_ABORT);
	r.u.msg_seq = 0; /* chunks arrived already: the sender could not have aborted it */
	inject_ctrl(w, 1, 0, &r);
	assert_int_equal(drops(b, XP_DROP_SEQ_BAD), 1);
	r = victim_rec(w, 1, XP_REC_RESET_ACK); /* nobody sent a RESET */
	inject_ctrl(w, 1, 0, &r);
	assert_int_equal(drops(b, XP_DROP_REC_UNEXPECTED), 1);
	r = victim_rec(w, 0, XP_REC_FIN_ACK); /* nobody sent a FIN */
	inject_ctrl(w, 0, 1, &r);
	assert_int_equal(drops(a, XP_DROP_REC_UNEXPECTED), 1);
}

static void test_forgeries_are_counted_dropped_and_harmless(void **state)
{
	static uint8_t vs[1 << 20], vd[1 << 20], bs[1 << 20], bd[1 << 20];
	static struct world w;
	struct xp_core *a, *b;
	uint64_t x = 12345, total = 0;
	struct xp_rec r;

	setup(&w);
	a = pair_core(&w.p, 0);
	b = pair_core(&w.p, 1);
	fill_pattern(vs, sizeof(vs), 1);
	fill_pattern(bs, sizeof(bs), 2);
	assert_int_equal(pair_recv(&w.p, 1, vd, sizeof(vd), 1), 0);
	assert_int_equal(pair_send(&w.p, 0, vs, sizeof(vs), 2), 0);
	{
		struct xp_buf rb = { (uintptr_t)bd, sizeof(bd), xp_net_reg(w.p.net, 1, bd, sizeof(bd)) };
		struct xp_buf sb = { (uintptr_t)bs, sizeof(bs), 0 };

		w.p.rkey_of[3] = rb.key;
		assert_int_equal(xp_post_recv(b, w.by[1], &rb, 3, 0), 0);
		assert_int_equal(xp_post_send(a, w.by[0], &sb, 4, 0), 0);
		xp_net_kick(w.p.net, 0);
		xp_net_kick(w.p.net, 1);
	}
	pair_run(&w.p, 30000); /* both transfers under way */
	throw_garbage(&w, &x);
	throw_lies(&w);
	pair_run(&w.p, pair_now(&w.p) + 1000000000);
	/* both transfers arrived intact, with nothing sent twice */
	assert_int_equal(pair_find(&w.p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_int_equal(pair_find(&w.p, 0, XP_COMP_SEND, 4)->c.status, 0);
	assert_int_equal(pair_find(&w.p, 1, XP_COMP_RECV, 3)->c.status, 0);
	assert_memory_equal(vs, vd, sizeof(vs));
	assert_memory_equal(bs, bd, sizeof(bs));
	assert_int_equal(xp_core_stats(a)->chunks_retx + xp_core_stats(b)->chunks_retx, 0);
	/* a FIN saying fewer messages than were received is a lie too */
	r = victim_rec(&w, 1, XP_REC_FIN);
	inject_ctrl(&w, 1, 0, &r);
	assert_int_equal(drops(b, XP_DROP_FIN_BAD), 1);
	for (int k = 0; k < XP_DROP_COUNT; k++)
		total += drops(a, (enum xp_drop)k) + drops(b, (enum xp_drop)k);
	assert_true(total >= 40000);
	for (int h = 0; h < 2; h++)
		assert_int_equal(xp_conn_close(pair_core(&w.p, h), w.by[h], XP_CLOSE_GRACEFUL,
					       pair_now(&w.p)),
				 0);
	pair_close_and_check_clean(&w.p);
	pair_fini(&w.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forgeries_are_counted_dropped_and_harmless),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
