// SPDX-License-Identifier: MIT
/*
 * test_xp_conn.c - the connection table: ids and nonces (from getrandom(),
 * or a test's seed), quarantine of a closed id, binding rules, records
 * before the bind (a CTS, only from the peer the bind names), and the
 * lifecycle's completions.
 */
#include "test_xp_pair.h"

static struct xp_cc_fixed fixed = { .cwnd_bytes = UINT64_MAX, .rate = PCM_RATE_ONE };
static const uint32_t handles[2] = { 0, 1 };

static struct xp_core *small_core(uint32_t max_conns, uint64_t quarantine_ns)
{
	struct xp_core_config cfg;
	struct xp_core *core;

	xp_core_config_default(&cfg);
	cfg.max_conns = max_conns;
	cfg.quarantine_ns = quarantine_ns;
	cfg.rto_max_ns = quarantine_ns / 4;
	cfg.rto_min_ns = cfg.rto_max_ns < cfg.rto_min_ns ? cfg.rto_max_ns : cfg.rto_min_ns;
	assert_int_equal(xp_core_create(&cfg, &core), 0);
	return core;
}

static struct xp_conn_config conn_cfg(void)
{
	struct xp_conn_config c = { .n_paths = 2, .path_handles = handles,
				    .cc = xp_cc_fixed_binding(&fixed) };

	return c;
}

/* Drain everything pending (completions) into @acts; return how many. */
static uint32_t drain_all(struct xp_core *core, uint64_t now, struct xp_action *acts, uint32_t cap)
{
	static uint8_t ctrl[64 * 1024];
	struct xp_batch b = { .acts = acts, .cap = cap, .ctrl_buf = ctrl, .ctrl_cap = sizeof(ctrl) };

	xp_batch_reset(&b, UINT32_MAX);
	while (xp_core_drain(core, now, &b) && b.n < cap)
		;
	return b.n;
}

static void test_ids_are_unique_and_nonces_nonzero(void **state)
{
	struct xp_core *core = small_core(64, 1000000000);
	struct xp_conn_config cc = conn_cfg();
	uint32_t ids[64], nonces[64], id, nonce;

	for (int i = 0; i < 64; i++) {
		assert_int_equal(xp_conn_create(core, &cc, 0, &ids[i], &nonces[i]), 0);
		assert_true(ids[i] < 64);
		assert_int_not_equal(nonces[i], 0);
		for (int j = 0; j < i; j++) {
			assert_int_not_equal(ids[i], ids[j]);
			assert_int_not_equal(nonces[i], nonces[j]);
		}
	}
	assert_int_equal(xp_conn_create(core, &cc, 0, &id, &nonce), -ENOSPC);
	assert_int_equal(fixed.open_flows, 64);
	xp_core_destroy(core);
	fixed.open_flows = 0;
}

static void test_closed_id_is_quarantined_then_reused_oldest_first(void **state)
{
	struct xp_core *core = small_core(2, 4000000);
	struct xp_conn_config cc = conn_cfg();
	struct xp_action acts[8];
	struct xp_core_usage u;
	uint32_t a, b, id, nonce, a_nonce;

	assert_int_equal(xp_conn_create(core, &cc, 0, &a, &a_nonce), 0);
	assert_int_equal(xp_conn_create(core, &cc, 0, &b, &nonce), 0);
	assert_int_equal(xp_conn_close(core, a, XP_CLOSE_ABORT, 1000), 0);
	assert_int_equal(drain_all(core, 1000, acts, 8), 1);
	assert_int_equal(acts[0].kind, XP_ACT_COMPLETE);
	assert_int_equal(acts[0].u.comp.kind, XP_COMP_CLOSE);
	assert_int_equal(acts[0].u.comp.conn, a);
	xp_core_usage(core, &u);
	assert_int_equal(u.conns_open, 1);
	assert_int_equal(u.conns_quarantined, 1);
	/* Until the quarantine ends, a's id is not handed out again. */
	assert_int_equal(xp_conn_create(core, &cc, 2000, &id, &nonce), -ENOSPC);
	assert_int_equal(xp_conn_close(core, a, XP_CLOSE_GRACEFUL, 2000), -EALREADY);
	assert_true(xp_core_next_deadline(core) <= 1000 + 4000000);
	xp_core_timer(core, 1000 + 4000000 - 1);
	assert_int_equal(xp_conn_create(core, &cc, 2000, &id, &nonce), -ENOSPC);
	xp_core_timer(core, 1000 + 4000000);
	assert_int_equal(xp_conn_create(core, &cc, 1000 + 4000000, &id, &nonce), 0);
	assert_int_equal(id, a);
	assert_int_not_equal(nonce, a_nonce);
	xp_core_destroy(core);
	fixed.open_flows = 0;
}

static void test_bind_checks_its_arguments(void **state)
{
	struct xp_core *core = small_core(4, 1000000000);
	struct xp_conn_config cc = conn_cfg();
	uint32_t id, nonce;

	assert_int_equal(xp_conn_create(core, &cc, 0, &id, &nonce), 0);
	assert_int_equal(xp_conn_bind(core, 3, 1, 1, 0, 0), -ENOENT);
	assert_int_equal(xp_conn_bind(core, id, 16384, 1, 0, 0), -EINVAL);
	assert_int_equal(xp_conn_bind(core, id, 1, 0, 0, 0), -EINVAL);
	assert_int_equal(xp_conn_bind(core, id, 1, 5, 0, 0), 0);
	assert_int_equal(xp_conn_bind(core, id, 1, 5, 0, 0), -EALREADY);
	assert_int_equal(xp_conn_close(core, id, XP_CLOSE_ABORT, 0), 0);
	assert_int_equal(xp_conn_bind(core, id, 1, 5, 0, 0), -ESHUTDOWN);
	xp_core_destroy(core);
	fixed.open_flows = 0;
}

static void test_create_rejects_bad_paths_and_incomplete_cc(void **state)
{
	struct xp_core *core = small_core(4, 1000000000);
	struct xp_conn_config cc = conn_cfg();
	struct xp_cc_ops broken = xp_cc_fixed_ops;
	uint32_t id, nonce;

	cc.n_paths = 0;
	assert_int_equal(xp_conn_create(core, &cc, 0, &id, &nonce), -EINVAL);
	cc.n_paths = 9; /* default max_paths is 8 */
	assert_int_equal(xp_conn_create(core, &cc, 0, &id, &nonce), -EINVAL);
	cc = conn_cfg();
	cc.path_handles = NULL;
	assert_int_equal(xp_conn_create(core, &cc, 0, &id, &nonce), -EINVAL);
	cc = conn_cfg();
	broken.on_loss = NULL;
	cc.cc.ops = &broken;
	assert_int_equal(xp_conn_create(core, &cc, 0, &id, &nonce), -EINVAL);
	assert_int_equal(fixed.open_flows, 0);
	xp_core_destroy(core);
}

static void test_core_config_is_range_checked(void **state)
{
	struct xp_core_config cfg;
	struct xp_core *core;

	xp_core_config_default(&cfg);
	cfg.max_conns = 16385;
	assert_int_equal(xp_core_create(&cfg, &core), -EINVAL);
	xp_core_config_default(&cfg);
	cfg.chunk_bytes = (1u << 20) + 1;
	assert_int_equal(xp_core_create(&cfg, &core), -EINVAL);
	xp_core_config_default(&cfg);
	cfg.min_chunk_bytes = cfg.chunk_bytes + 1;
	assert_int_equal(xp_core_create(&cfg, &core), -EINVAL);
	xp_core_config_default(&cfg);
	cfg.quarantine_ns = 3 * cfg.rto_max_ns; /* must be well above the largest RTO */
	assert_int_equal(xp_core_create(&cfg, &core), -EINVAL);
	xp_core_config_default(&cfg);
	cfg.ctrl_mtu = 32;
	assert_int_equal(xp_core_create(&cfg, &core), -EINVAL);
	xp_core_config_default(&cfg);
	cfg.pacer_slots = 100;
	assert_int_equal(xp_core_create(&cfg, &core), -EINVAL);
	xp_core_config_default(&cfg);
	assert_int_equal(xp_core_create(&cfg, &core), 0);
	assert_int_equal(xp_core_max_msg_bytes(core), 4096ull * 65536);
	xp_core_destroy(core);
}

/* The CTS from b reaches a before a is bound: it is held, and used once the bind names b. */
static void test_records_before_bind_are_kept(void **state)
{
	static uint8_t src[1000], dst[1000];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	pair_init(&p, &o);
	/* pair_init bound both; make a second connection bound on one side only first */
	{
		struct xp_conn_config cc = { .n_paths = 1, .path_handles = p.handle[0],
					     .cc = xp_cc_fixed_binding(&p.cc[0]) };
		struct xp_conn_config cb = { .n_paths = 1, .path_handles = p.handle[1],
					     .cc = xp_cc_fixed_binding(&p.cc[1]) };
		uint32_t ia, na, ib, nb;
		struct xp_buf rb, sb = { (uintptr_t)src, sizeof(src), 0 };

		assert_int_equal(xp_conn_create(pair_core(&p, 0), &cc, 0, &ia, &na), 0);
		assert_int_equal(xp_conn_create(pair_core(&p, 1), &cb, 0, &ib, &nb), 0);
		assert_int_equal(xp_conn_bind(pair_core(&p, 1), ib, ia, na, 0, 0), 0);
		rb = (struct xp_buf){ (uintptr_t)dst, sizeof(dst),
				      xp_net_reg(p.net, 1, dst, sizeof(dst)) };
		p.rkey_of[9] = rb.key;
		assert_int_equal(xp_post_recv(pair_core(&p, 1), ib, &rb, 9, 0), 0);
		xp_net_kick(p.net, 1);
		pair_run(&p, 100000); /* CTS arrives at a, unbound */
		assert_int_equal(xp_post_send(pair_core(&p, 0), ia, &sb, 8, pair_now(&p)), 0);
		assert_int_equal(xp_conn_bind(pair_core(&p, 0), ia, ib, nb, 1, pair_now(&p)), 0);
		xp_net_kick(p.net, 0);
		pair_run(&p, 1000000);
		/* One round trip after the bind: the first CTS was used, not a retransmission. */
		assert_non_null(pair_find(&p, 0, XP_COMP_SEND, 8));
		assert_true(pair_find(&p, 0, XP_COMP_SEND, 8)->t_ns < 100000 + 20000);
		assert_non_null(pair_find(&p, 1, XP_COMP_RECV, 9));
		assert_memory_equal(src, dst, sizeof(src));
	}
	pair_fini(&p);
}

/* Two fresh cores (two engines, two processes) do not give their first connection one nonce. */
static void test_nonces_come_from_getrandom_unless_a_test_seeds_them(void **state)
{
	struct xp_conn_config cc = conn_cfg();
	uint32_t id[2], nonce[2];
	struct xp_core *core[2];

	for (int k = 0; k < 2; k++) {
		struct xp_core_config cfg;

		xp_core_config_default(&cfg);
		assert_int_equal(cfg.seed, 0);
		cfg.max_conns = 4;
		assert_int_equal(xp_core_create(&cfg, &core[k]), 0);
		assert_int_equal(xp_conn_create(core[k], &cc, 0, &id[k], &nonce[k]), 0);
	}
	assert_int_equal(id[0], id[1]);
	assert_int_not_equal(nonce[0], nonce[1]);
	for (int k = 0; k < 2; k++) {
		struct xp_core_config cfg;

		xp_core_destroy(core[k]);
		xp_core_config_default(&cfg);
		cfg.seed = 77; /* the test hook: the same seed, the same nonces */
		cfg.max_conns = 4;
		assert_int_equal(xp_core_create(&cfg, &core[k]), 0);
		assert_int_equal(xp_conn_create(core[k], &cc, 0, &id[k], &nonce[k]), 0);
	}
	assert_int_equal(nonce[0], nonce[1]);
	for (int k = 0; k < 2; k++)
		xp_core_destroy(core[k]);
}

static void inject(struct xp_core *core, uint32_t from, const struct xp_rec *rec, uint64_t now)
{
	uint8_t buf[XP_WIRE_MAX_MTU];
	struct xp_wire_writer w;

	xp_wire_begin(&w, buf, sizeof(buf));
	assert_int_equal(xp_wire_put(&w, rec), 0);
	xp_core_on_ctrl(core, from, buf, xp_wire_finish(&w), now);
}

static struct xp_rec cts_rec(uint32_t id, uint32_t nonce, uint64_t raddr)
{
	struct xp_rec r = { .type = XP_REC_CTS, .conn = (uint16_t)id, .nonce = nonce };

	r.u.cts = (struct xp_rec_cts){ .msg_seq = 0, .rkey = 5, .raddr = raddr, .cap = 1000 };
	return r;
}

/*
 * Before the bind, anyone who learned the nonce could forge records: a CTS from another peer
 * than the one the bind names is dropped at the bind (the send never writes where it said), a
 * CTS from a second peer is refused at once, and a RESET (or anything but a CTS) is refused.
 */
static void test_records_before_bind_come_only_from_the_named_peer(void **state)
{
	struct xp_core *core = small_core(4, 1000000000);
	struct xp_conn_config cc = conn_cfg();
	struct xp_buf b = { 0x5000, 1000, 3 };
	struct xp_action acts[16];
	struct xp_rec r;
	uint32_t id, nonce, n, writes = 0;

	assert_int_equal(xp_conn_create(core, &cc, 0, &id, &nonce), 0);
	r = cts_rec(id, nonce, 0xbad0000);
	inject(core, 7, &r, 10);                       /* forged, from peer 7 */
	r = cts_rec(id, nonce, 0x900d000);
	inject(core, 1, &r, 20);                       /* the real one: another peer than the first */
	assert_int_equal(drops(core, XP_DROP_REC_WRONG_PEER), 1);
	r = (struct xp_rec){ .type = XP_REC_RESET, .conn = (uint16_t)id, .nonce = nonce };
	r.u.reason = XP_RESET_ABORT;
	inject(core, 1, &r, 30);
	assert_int_equal(drops(core, XP_DROP_REC_UNEXPECTED), 1);
	assert_int_equal(xp_post_send(core, id, &b, 1, 40), 0); /* not reset */
	assert_int_equal(xp_conn_bind(core, id, 3, 0x1234, 1, 50), 0);
	assert_int_equal(drops(core, XP_DROP_REC_WRONG_PEER), 2); /* the held forgery */
	n = drain_all(core, 50, acts, 16);
	for (uint32_t i = 0; i < n; i++)
		writes += acts[i].kind == XP_ACT_WRITE;
	assert_int_equal(writes, 0);
	r = cts_rec(id, nonce, 0x900d000);
	inject(core, 1, &r, 60);                       /* the peer retransmits its CTS */
	n = drain_all(core, 60, acts, 16);
	for (uint32_t i = 0; i < n; i++)
		if (acts[i].kind == XP_ACT_WRITE) {
			assert_int_equal(acts[i].u.write.raddr, 0x900d000);
			writes++;
		}
	assert_int_equal(writes, 1);
	xp_core_destroy(core);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_are_unique_and_nonces_nonzero),
		cmocka_unit_test(test_closed_id_is_quarantined_then_reused_oldest_first),
		cmocka_unit_test(test_bind_checks_its_arguments),
		cmocka_unit_test(test_create_rejects_bad_paths_and_incomplete_cc),
		cmocka_unit_test(test_core_config_is_range_checked),
		cmocka_unit_test(test_records_before_bind_are_kept),
		cmocka_unit_test(test_nonces_come_from_getrandom_unless_a_test_seeds_them),
		cmocka_unit_test(test_records_before_bind_come_only_from_the_named_peer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
