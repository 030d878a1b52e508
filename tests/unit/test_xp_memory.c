// SPDX-License-Identifier: MIT
/*
 * test_xp_memory.c - 10,000 connections per core fit, and each of them
 * moves a message. Two cores with 10,000 connections each exchange one
 * message per connection (through pools much smaller than that, so
 * connections wait their turn for a message slot), every byte checked;
 * afterwards every pool is empty again. The bytes per connection are
 * printed (docs/transport.md quotes them).
 */
#include "test_xp_pair.h"

#include "builtin.h"
#include "cc_pcm.h"

#define N_CONNS 10000
#define MSG 64

static void big(struct xp_core_config *cfg)
{
	cfg->max_conns = XP_MAX_CONNS; /* the default: 16,384 ids */
	cfg->max_paths = 4;
	cfg->send_msgs = 1024;
	cfg->recv_msgs = 2048;
	cfg->ops = 65536;
}

static void test_10000_connections_per_core_fit_and_move_data(void **state)
{
	static uint32_t ids[2][N_CONNS], nonces[2][N_CONNS];
	static uint8_t src[N_CONNS][MSG], dst[N_CONNS][MSG];
	struct xp_core_config cfg;
	struct xp_core_usage u;
	struct pair_opts o;
	struct pair p;
	size_t per_conn, total;

	pair_default_opts(&o);
	o.tune = big;
	pair_init(&p, &o);
	for (int h = 0; h < 2; h++)
		for (uint32_t i = 0; i < N_CONNS; i++) {
			struct xp_conn_config cc = { .n_paths = 1, .path_handles = p.handle[h],
						     .cc = xp_cc_fixed_binding(&p.cc[h]) };

			assert_int_equal(xp_conn_create(pair_core(&p, h), &cc, 0, &ids[h][i],
							&nonces[h][i]),
					 0);
		}
	for (int h = 0; h < 2; h++)
		for (uint32_t i = 0; i < N_CONNS; i++)
			assert_int_equal(xp_conn_bind(pair_core(&p, h), ids[h][i], ids[!h][i],
						      nonces[!h][i], (uint32_t)!h, 0),
					 0);
	xp_core_usage(pair_core(&p, 0), &u);
	assert_int_equal(u.conns_open, N_CONNS + 1);
	for (uint32_t i = 0; i < N_CONNS; i++) {
		struct xp_buf rb = { (uintptr_t)dst[i], MSG, xp_net_reg(p.net, 1, dst[i], MSG) };
		struct xp_buf sb = { (uintptr_t)src[i], MSG, 0 };

		fill_pattern(src[i], MSG, i);
		assert_int_equal(xp_post_recv(pair_core(&p, 1), ids[1][i], &rb, i, 0), 0);
		assert_int_equal(xp_post_send(pair_core(&p, 0), ids[0][i], &sb, i, 0), 0);
	}
	xp_net_kick(p.net, 1);
	xp_net_kick(p.net, 0);
	pair_run(&p, 10ull * 1000 * 1000 * 1000);
	assert_int_equal(pair_count(&p, 0, XP_COMP_SEND), N_CONNS);
	assert_int_equal(pair_count(&p, 1, XP_COMP_RECV), N_CONNS);
	for (uint32_t i = 0; i < p.n_log; i++)
		assert_int_equal(p.log[i].c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	assert_true(xp_core_stats(pair_core(&p, 1))->pool_waits > 0); /* 2,048 receive slots for 10,000 */

	per_conn = xp_core_bytes_per_conn(pair_core(&p, 0));
	total = xp_core_bytes_total(pair_core(&p, 0));
	xp_core_config_default(&cfg);
	big(&cfg);
	print_message("core state per connection slot: %zu B (%u path slots); whole core with %u "
		      "sender and %u receiver message slots and %u operations: %zu B = %.1f MiB, "
		      "%zu B per connection at %u connections\n",
		      per_conn, cfg.max_paths, cfg.send_msgs, cfg.recv_msgs, cfg.ops, total,
		      (double)total / (1 << 20), total / N_CONNS, N_CONNS);
	/* a connection's slot in the table stays under 1.5 KiB (4 paths here) */
	assert_true(per_conn < 1536);

	for (int h = 0; h < 2; h++)
		for (uint32_t i = 0; i < N_CONNS; i++)
			assert_int_equal(xp_conn_close(pair_core(&p, h), ids[h][i], XP_CLOSE_GRACEFUL,
						       pair_now(&p)),
					 0);
	xp_net_kick(p.net, 0);
	xp_net_kick(p.net, 1);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
}

static void test_pcm_state_per_connection_is_reported(void **state)
{
	struct xp_cc_pcm_config cfg;
	struct pcm_diag diag;
	struct xp_cc_pcm *p;

	for (size_t i = 0; pcm_builtin_policies[i]; i++) {
		if (strcmp(pcm_builtin_policies[i]->name, "swift") &&
		    strcmp(pcm_builtin_policies[i]->name, "reps"))
			continue;
		xp_cc_pcm_config_default(&cfg);
		cfg.cc = pcm_builtin_policies[i];
		cfg.max_flows = N_CONNS;
		assert_int_equal(xp_cc_pcm_create(&cfg, &p, &diag), 0);
		print_message("%s in the synchronous shell: %zu B per connection\n",
			      cfg.cc->name, xp_cc_pcm_bytes_per_flow(p));
		assert_true(xp_cc_pcm_bytes_per_flow(p) < 4096);
		xp_cc_pcm_destroy(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_10000_connections_per_core_fit_and_move_data),
		cmocka_unit_test(test_pcm_state_per_connection_is_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
