// SPDX-License-Identifier: MIT
/*
 * test_xp_cc_pcm.c - the PCM binding: the core's events reach a package as
 * the documented signals, its CWND, RATE and EV controls are enforced, the
 * capability target is checked, LB and CC packages combine, flows are added
 * and removed per connection (handles reused), the async shell runs inline
 * deterministically and places flows on the least loaded worker, and a live
 * swap, to another binding or in place within one, loses and duplicates
 * nothing.
 */
#include "test_xp_pair.h"

#include "builtin.h"
#include "cc_pcm.h"
#include "imm.h"
#include "package.h"

extern const struct pcm_package pcm_pkg_xp_probe;
extern const struct pcm_package pcm_pkg_xp_pace_half;

#define TOT(i) (probe[2 + pcm_pkg_xp_probe.n_signals + pcm_pkg_xp_probe.n_controls + (i)])
#define LAST(i) (probe[2 + pcm_pkg_xp_probe.n_signals + pcm_pkg_xp_probe.n_controls + 8 + (i)])
enum { T_ACK, T_NACK, T_RTO, T_TX, T_ECN, T_ACKED, T_NACKED, T_CALLS };
enum { L_RTT, L_QDELAY, L_INFL, L_BACKLOG, L_AEV, L_EEV, L_NEV, L_SEED };

static const struct pcm_package *builtin(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (!strcmp(pcm_builtin_policies[i]->name, name))
			return pcm_builtin_policies[i];
	fail_msg("no built-in %s", name);
	return NULL;
}

static struct xp_cc_pcm *make(const struct pcm_package *cc, const struct pcm_package *lb,
			      enum xp_cc_pcm_mode mode, uint32_t flows)
{
	struct xp_cc_pcm_config cfg;
	struct pcm_diag diag;
	struct xp_cc_pcm *p;

	xp_cc_pcm_config_default(&cfg);
	cfg.cc = cc;
	cfg.lb = lb;
	cfg.mode = mode;
	cfg.async_inline = true;
	cfg.max_flows = flows;
	cfg.target = pcm_target_find("softnic");
	if (xp_cc_pcm_create(&cfg, &p, &diag) < 0)
		fail_msg("xp_cc_pcm_create: %s", diag.msg);
	return p;
}

/* A pair whose host 0 connection runs @binding; link as given. */
static void pcm_pair(struct pair *p, struct pair_opts *o, struct xp_cc_binding binding)
{
	struct xp_conn_config cc = { .n_paths = o->n_paths, .path_handles = NULL, .cc = binding };

	if (!o->tune)
		o->tune = pair_one_chunk_size; /* these tests count chunks */
	pair_init(p, o);
	/* replace a's connection by one bound to the package */
	assert_int_equal(xp_conn_close(pair_core(p, 0), p->conn[0], XP_CLOSE_ABORT, 0), 0);
	assert_int_equal(xp_conn_close(pair_core(p, 1), p->conn[1], XP_CLOSE_ABORT, 0), 0);
	xp_net_kick(p->net, 0);
	xp_net_kick(p->net, 1);
	p->n_log = 0;
	cc.path_handles = p->handle[0];
	assert_int_equal(xp_conn_create(pair_core(p, 0), &cc, 0, &p->conn[0], &p->nonce[0]), 0);
	cc.path_handles = p->handle[1];
	cc.cc = xp_cc_fixed_binding(&p->cc[1]);
	assert_int_equal(xp_conn_create(pair_core(p, 1), &cc, 0, &p->conn[1], &p->nonce[1]), 0);
	for (int h = 0; h < 2; h++)
		assert_int_equal(xp_conn_bind(pair_core(p, h), p->conn[h], p->conn[!h], p->nonce[!h],
					      (uint32_t)!h, 0),
				 0);
}

static uint32_t path_of_write[4096], n_writes;

static enum xp_net_verdict note_paths(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	if (!pkt->is_ctrl && pkt->src == 0 && n_writes < 4096)
		path_of_write[n_writes++] = pkt->write->path;
	return XP_NET_PASS;
}

static void test_acks_become_the_documented_signals(void **state)
{
	static uint8_t src[10 * 65536], dst[10 * 65536];
	struct xp_cc_pcm *cc = make(&pcm_pkg_xp_probe, NULL, XP_CC_PCM_SYNC, 4);
	pcm_uint probe[64];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.n_paths = 3;
	o.link.ecn_ppm = 1000000; /* every chunk CE-marked */
	o.filter = note_paths;
	n_writes = 0;
	pcm_pair(&p, &o, xp_cc_pcm_binding(cc));
	fill_pattern(src, sizeof(src), 1);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	pair_run(&p, 100000);
	n_writes = 0;
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 100000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	assert_int_equal(xp_cc_pcm_peek(cc, 0, 0, probe), 0);
	assert_int_equal(TOT(T_ACK), 10);             /* chunks acked */
	assert_int_equal(TOT(T_ACKED), sizeof(src));  /* their bytes */
	assert_int_equal(TOT(T_ECN), 10);             /* CE echoes */
	assert_int_equal(TOT(T_TX), n_writes);        /* one TX event per chunk sent (EV is read) */
	assert_int_equal(TOT(T_NACK), 0);
	assert_int_equal(TOT(T_RTO), 0);
	assert_int_equal(LAST(L_RTT), 10000ull * 1000);  /* ps */
	assert_int_equal(LAST(L_QDELAY), 0);
	assert_int_equal(LAST(L_INFL), 0);            /* after the last ACK */
	assert_int_equal(LAST(L_BACKLOG), 0);
	assert_true(LAST(L_EEV) < 3);                 /* a path's entropy (the index here) */
	assert_int_equal(LAST(L_EEV), LAST(L_AEV));
	assert_int_not_equal(LAST(L_SEED), 0);
	/* EV counts transmissions: chunk k went on path k mod 3 */
	assert_int_equal(n_writes, 10);
	for (uint32_t k = 0; k < n_writes; k++)
		assert_int_equal(path_of_write[k], p.handle[0][(k + 1) % 3]);
	pair_close_and_check_clean(&p);
	assert_int_equal(xp_cc_pcm_flows_open(cc), 0);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

/* Drop transmission k of (slot, chunk) when bit k of drop_mask[slot][chunk] is set. */
static uint32_t drop_mask[2][8], seen_tx[2][8];

static enum xp_net_verdict drop_some(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	struct xp_imm f;
	uint32_t k;

	if (pkt->is_ctrl || pkt->src != 0)
		return XP_NET_PASS;
	xp_imm_decode(pkt->write->imm, &f);
	if (f.slot > 1 || f.chunk > 7)
		return XP_NET_PASS;
	k = seen_tx[f.slot][f.chunk]++;
	return k < 32 && (drop_mask[f.slot][f.chunk] >> k) & 1 ? XP_NET_DROP : XP_NET_PASS;
}

static void test_losses_and_timeouts_become_nack_and_rto(void **state)
{
	static uint8_t src[4 * 65536], dst[4 * 65536];
	struct xp_cc_pcm *cc = make(&pcm_pkg_xp_probe, NULL, XP_CC_PCM_SYNC, 4);
	pcm_uint probe[64];
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.filter = drop_some;
	memset(drop_mask, 0, sizeof(drop_mask));
	memset(seen_tx, 0, sizeof(seen_tx));
	drop_mask[0][1] = 1; /* message 0: chunk 1 lost once (RACK finds it) */
	drop_mask[1][0] = 3; /* message 1, a single chunk: it and its tail probe lost (RTO) */
	pcm_pair(&p, &o, xp_cc_pcm_binding(cc));
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	pair_run(&p, 100000);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 100000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_int_equal(xp_cc_pcm_peek(cc, 0, 0, probe), 0);
	assert_int_equal(TOT(T_NACK), 1);
	assert_int_equal(TOT(T_NACKED), 65536);
	assert_int_equal(LAST(L_NEV), 0); /* path 0's entropy */
	assert_int_equal(TOT(T_ACK), 4);
	assert_int_equal(TOT(T_RTO), 0);
	assert_int_equal(pair_recv(&p, 1, dst, 100, 3), 0);
	pair_run(&p, pair_now(&p) + 100000);
	assert_int_equal(pair_send(&p, 0, src, 100, 4), 0);
	pair_run(&p, pair_now(&p) + 100000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 4)->c.status, 0);
	assert_int_equal(xp_cc_pcm_peek(cc, 0, 0, probe), 0);
	assert_int_equal(TOT(T_RTO), 1);
	assert_int_equal(TOT(T_ACK), 5);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

static void test_swift_window_drives_the_byte_budget(void **state)
{
	static uint8_t src[4 << 20], dst[4 << 20];
	struct xp_cc_pcm *cc = make(builtin("swift"), NULL, XP_CC_PCM_SYNC, 4);
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.n_paths = 4;
	pcm_pair(&p, &o, xp_cc_pcm_binding(cc));
	fill_pattern(src, sizeof(src), 2);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 1000000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	assert_true(xp_cc_pcm_handler_calls(cc) > 0);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

static uint64_t sent_at[64];
static uint32_t n_sent;

static enum xp_net_verdict note_times(void *arg, const struct xp_net_pkt *pkt, uint64_t *extra)
{
	if (!pkt->is_ctrl && pkt->src == 0 && n_sent < 64)
		sent_at[n_sent++] = pkt->now_ns;
	return XP_NET_PASS;
}

static void test_rate_control_paces_the_connection(void **state)
{
	static uint8_t src[16 * 65536], dst[16 * 65536];
	struct xp_cc_pcm *cc = make(&pcm_pkg_xp_pace_half, NULL, XP_CC_PCM_SYNC, 4);
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.filter = note_times;
	n_sent = 0;
	pcm_pair(&p, &o, xp_cc_pcm_binding(cc));
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	pair_run(&p, 100000);
	n_sent = 0;
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 100000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	/* RATE = PCM_RATE_ONE / 2 of 100 Gbit/s: a 64 KiB chunk every 10,486 ns, never sooner */
	assert_int_equal(n_sent, 16);
	for (uint32_t i = 1; i < n_sent; i++)
		assert_true(sent_at[i] - sent_at[0] >= i * 10485ull);
	assert_true(sent_at[15] - sent_at[0] <= 15 * 10486ull + 1024);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

static void test_target_without_a_signal_rejects_the_package(void **state)
{
	struct xp_cc_pcm_config cfg;
	struct pcm_diag diag;
	struct xp_cc_pcm *p = NULL;

	xp_cc_pcm_config_default(&cfg);
	cfg.cc = builtin("dcqcn"); /* reacts to CNPs, which the CPU transport never sees */
	cfg.target = pcm_target_find("softnic");
	assert_int_equal(xp_cc_pcm_create(&cfg, &p, &diag), -ENOTSUP);
	assert_null(p);
	assert_non_null(strstr(diag.msg, "PCM_SIG_CNP"));
	cfg.target = pcm_target_find("verbs");
	assert_int_equal(xp_cc_pcm_create(&cfg, &p, &diag), -ENOTSUP);
	cfg.cc = builtin("swift");
	assert_int_equal(xp_cc_pcm_create(&cfg, &p, &diag), 0);
	xp_cc_pcm_destroy(p);
}

static void test_lb_may_not_drive_a_cc_control(void **state)
{
	struct xp_cc_pcm_config cfg;
	struct pcm_diag diag;
	struct xp_cc_pcm *p = NULL;

	xp_cc_pcm_config_default(&cfg);
	cfg.cc = builtin("swift");
	cfg.lb = builtin("newreno");
	assert_int_equal(xp_cc_pcm_create(&cfg, &p, &diag), -EINVAL);
	assert_non_null(strstr(diag.msg, "PCM_CTRL_CWND"));
	cfg.lb = builtin("reps");
	assert_int_equal(xp_cc_pcm_create(&cfg, &p, &diag), 0);
	xp_cc_pcm_destroy(p);
	cfg.lb = NULL;
	cfg.cc = NULL;
	assert_int_equal(xp_cc_pcm_create(&cfg, &p, &diag), -EINVAL);
}

static void test_lb_package_picks_the_path(void **state)
{
	static uint8_t src[1 << 20], dst[1 << 20];
	struct xp_cc_pcm *cc = make(builtin("swift"), builtin("ops"), XP_CC_PCM_SYNC, 4);
	bool used[4] = { false };
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.n_paths = 4;
	o.filter = note_paths;
	n_writes = 0;
	pcm_pair(&p, &o, xp_cc_pcm_binding(cc));
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 1000000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	/* oblivious spraying over the 4 paths */
	for (uint32_t k = 0; k < n_writes; k++)
		for (int q = 0; q < 4; q++)
			used[q] |= path_of_write[k] == p.handle[0][q];
	for (int q = 0; q < 4; q++)
		assert_true(used[q]);
	pair_close_and_check_clean(&p);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

static void test_sync_flows_are_removed_and_their_handles_reused(void **state)
{
	struct xp_cc_pcm *cc = make(&pcm_pkg_xp_probe, NULL, XP_CC_PCM_SYNC, 1);
	struct xp_cc_binding b = xp_cc_pcm_binding(cc);
	struct xp_cc_ack ack = { .acked_chunks = 3, .acked_bytes = 300 };
	pcm_uint probe[64];
	uint32_t f1, f2;

	assert_int_equal(b.ops->flow_open(b.ctx, 42, 0, &f1), 0);
	assert_int_equal(b.ops->flow_open(b.ctx, 43, 0, &f2), -ENOSPC);
	b.ops->on_ack(b.ctx, f1, &ack, 1000);
	assert_int_equal(xp_cc_pcm_peek(cc, 0, f1, probe), 0);
	assert_int_equal(TOT(T_ACK), 3);
	assert_int_equal(LAST(L_SEED), 42);
	b.ops->flow_close(b.ctx, f1, 2000);
	assert_int_equal(b.ops->flow_open(b.ctx, 44, 3000, &f2), 0);
	assert_int_equal(f2, f1);
	assert_int_equal(xp_cc_pcm_peek(cc, 0, f2, probe), 0);
	assert_int_equal(TOT(T_ACK), 0); /* a new connection starts from the package's initial state */
	b.ops->flow_close(b.ctx, f2, 4000);
	xp_cc_pcm_destroy(cc);
}

static void test_async_inline_feeds_the_same_as_sync(void **state)
{
	struct xp_cc_pcm *s = make(&pcm_pkg_xp_probe, NULL, XP_CC_PCM_SYNC, 2);
	struct xp_cc_pcm *a = make(&pcm_pkg_xp_probe, NULL, XP_CC_PCM_ASYNC, 2);
	struct xp_cc_binding bs = xp_cc_pcm_binding(s), ba = xp_cc_pcm_binding(a);
	pcm_uint ps[64], pa[64];
	uint32_t fs, fa, f;

	assert_int_equal(bs.ops->flow_open(bs.ctx, 7, 0, &fs), 0);
	assert_int_equal(ba.ops->flow_open(ba.ctx, 7, 0, &fa), 0);
	for (uint64_t t = 1; t < 200; t++) {
		struct xp_cc_ack ack = { .acked_chunks = (uint32_t)(t % 3), .acked_bytes = t * 100,
					 .rtt_ns = t * 10, .ecn_ce = (uint32_t)(t % 2),
					 .in_flight_bytes = t, .backlog_bytes = 2 * t };
		struct xp_cc_loss loss = { .lost_chunks = 1, .lost_bytes = 50, .ev = 3 };

		bs.ops->on_ack(bs.ctx, fs, &ack, t * 1000);
		ba.ops->on_ack(ba.ctx, fa, &ack, t * 1000);
		if (t % 17 == 0) {
			bs.ops->on_loss(bs.ctx, fs, &loss, t * 1000);
			ba.ops->on_loss(ba.ctx, fa, &loss, t * 1000);
		}
	}
	assert_int_equal(xp_cc_pcm_peek(s, 0, fs, ps), 0);
	assert_int_equal(xp_cc_pcm_peek(a, 0, fa, pa), 0);
	/* sums and last values agree (the async shell consumed what each call saw) */
	for (int i = 0; i < 8; i++)
		assert_int_equal(ps[2 + pcm_pkg_xp_probe.n_signals + pcm_pkg_xp_probe.n_controls + i],
				 pa[2 + pcm_pkg_xp_probe.n_signals + pcm_pkg_xp_probe.n_controls + i]);
	/* a closed connection's flow goes back to the shell: its place serves the next one */
	assert_int_equal(ba.ops->flow_open(ba.ctx, 8, 300000, &f), 0);
	assert_int_equal(ba.ops->flow_open(ba.ctx, 9, 300000, &f), -ENOSPC); /* max_flows 2 */
	ba.ops->flow_close(ba.ctx, fa, 300000);
	assert_int_equal(xp_cc_pcm_flows_open(a), 1);
	assert_int_equal(ba.ops->flow_open(ba.ctx, 9, 300000, &fa), 0);
	assert_int_equal(xp_cc_pcm_peek(a, 0, fa, pa), 0);
	assert_int_equal(pa[2 + pcm_pkg_xp_probe.n_signals + pcm_pkg_xp_probe.n_controls], 0);
	ba.ops->flow_close(ba.ctx, fa, 300000);
	ba.ops->flow_close(ba.ctx, f, 300000);
	assert_int_equal(xp_cc_pcm_flows_open(a), 0);
	bs.ops->flow_close(bs.ctx, fs, 300000);
	xp_cc_pcm_destroy(s);
	xp_cc_pcm_destroy(a);
}

/* Worker threads run the handlers while the core feeds: TSan watches this one. */
static void test_async_workers_run_beside_the_core(void **state)
{
	static uint8_t src[2 << 20], dst[2 << 20];
	struct xp_cc_pcm_config cfg;
	struct pcm_diag diag;
	struct xp_cc_pcm *cc;
	struct pair_opts o;
	struct pair p;

	xp_cc_pcm_config_default(&cfg);
	cfg.cc = builtin("swift");
	cfg.mode = XP_CC_PCM_ASYNC;
	cfg.async.mode = PCM_ASYNC_LOCKED;
	cfg.async.n_workers = 2;
	cfg.max_flows = 4;
	cfg.target = pcm_target_find("softnic");
	assert_int_equal(xp_cc_pcm_create(&cfg, &cc, &diag), 0);
	assert_int_equal(xp_cc_pcm_start(cc), 0);
	pair_default_opts(&o);
	o.n_paths = 2;
	pcm_pair(&p, &o, xp_cc_pcm_binding(cc));
	fill_pattern(src, sizeof(src), 6);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 1000000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	pair_close_and_check_clean(&p);
	assert_int_equal(xp_cc_pcm_flows_open(cc), 0);
	xp_cc_pcm_stop(cc);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

static void test_live_swap_loses_and_duplicates_nothing(void **state)
{
	static uint8_t src[2 << 20], dst[2 << 20];
	struct xp_cc_pcm *cc = make(builtin("newreno"), NULL, XP_CC_PCM_SYNC, 4);
	const struct xp_core_stats *st;
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.cwnd_bytes = 131072;
	pair_init(&p, &o);
	fill_pattern(src, sizeof(src), 5);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 40000);
	assert_null(pair_find(&p, 0, XP_COMP_SEND, 2)); /* in the middle of the transfer */
	assert_int_equal(xp_conn_set_cc(pair_core(&p, 0), p.conn[0], xp_cc_pcm_binding(cc),
					pair_now(&p)),
			 0);
	assert_int_equal(p.cc[0].open_flows, 0); /* the fixed binding let go of its flow */
	assert_int_equal(xp_cc_pcm_flows_open(cc), 1);
	xp_net_kick(p.net, 0);
	pair_run(&p, pair_now(&p) + 1000000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_memory_equal(src, dst, sizeof(src));
	st = xp_core_stats(pair_core(&p, 0));
	assert_int_equal(st->bytes_sent, sizeof(src)); /* every byte went once */
	assert_int_equal(st->chunks_retx, 0);
	assert_int_equal(xp_core_stats(pair_core(&p, 1))->drops[XP_DROP_IMM_DUP], 0);
	assert_true(xp_cc_pcm_handler_calls(cc) > 0);
	/* an incomplete table is refused and the old binding kept */
	{
		struct xp_cc_ops broken = xp_cc_fixed_ops;
		struct xp_cc_binding b = { &broken, &p.cc[0] };

		broken.read = NULL;
		assert_int_equal(xp_conn_set_cc(pair_core(&p, 0), p.conn[0], b, pair_now(&p)),
				 -EINVAL);
		assert_int_equal(xp_cc_pcm_flows_open(cc), 1);
	}
	pair_close_and_check_clean(&p);
	assert_int_equal(xp_cc_pcm_flows_open(cc), 0);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

static void ack_n(struct xp_cc_binding b, uint32_t flow, int n, uint64_t *t)
{
	struct xp_cc_ack ack = { .acked_chunks = 3, .acked_bytes = 300, .rtt_ns = 5000 };

	for (int i = 0; i < n; i++, *t += 1000)
		b.ops->on_ack(b.ctx, flow, &ack, *t);
}

static void test_swap_in_place_hands_events_to_one_package_at_a_time(void **state)
{
	struct xp_cc_pcm_config cfg;
	const struct pcm_package *room[] = { &pcm_pkg_xp_probe, NULL };
	const struct pcm_package *pc, *pl;
	struct xp_cc_pcm *small, *cc;
	struct xp_cc_binding b;
	struct xp_cc_ctl ctl;
	struct pcm_diag diag;
	pcm_uint probe[64];
	uint64_t t = 1000;
	uint32_t f;

	/* no room reserved for a larger package: refused, the flow keeps its package */
	small = make(&pcm_pkg_xp_pace_half, NULL, XP_CC_PCM_SYNC, 4);
	b = xp_cc_pcm_binding(small);
	assert_int_equal(b.ops->flow_open(b.ctx, 5, 0, &f), 0);
	assert_int_equal(xp_cc_pcm_flow_swap(small, f, &pcm_pkg_xp_probe, NULL, t, &diag), -E2BIG);
	assert_non_null(strstr(diag.msg, "xp_probe"));
	assert_int_equal(xp_cc_pcm_flow_packages(small, f, &pc, &pl), 0);
	assert_ptr_equal(pc, &pcm_pkg_xp_pace_half);
	assert_int_equal(xp_cc_pcm_flow_swap(small, f + 1, &pcm_pkg_xp_probe, NULL, t, &diag),
			 -ENOENT);
	b.ops->flow_close(b.ctx, f, t);
	xp_cc_pcm_destroy(small);

	xp_cc_pcm_config_default(&cfg);
	cfg.cc = &pcm_pkg_xp_pace_half;
	cfg.max_flows = 4;
	cfg.room_for = room;
	cfg.target = pcm_target_find("softnic");
	assert_int_equal(xp_cc_pcm_create(&cfg, &cc, &diag), 0);
	b = xp_cc_pcm_binding(cc);
	assert_int_equal(b.ops->flow_open(b.ctx, 9, 0, &f), 0);
	ack_n(b, f, 4, &t);
	b.ops->read(b.ctx, f, &ctl);
	assert_int_equal(ctl.rate, PCM_RATE_ONE / 2);
	assert_int_equal(ctl.cwnd_bytes, UINT64_MAX);
	assert_false(ctl.has_ev);
	/* pace_half -> probe: only what comes after the swap reaches the probe */
	assert_int_equal(xp_cc_pcm_flow_swap(cc, f, &pcm_pkg_xp_probe, NULL, t, &diag), 0);
	ack_n(b, f, 7, &t);
	assert_int_equal(xp_cc_pcm_peek(cc, 0, f, probe), 0);
	assert_int_equal(TOT(T_ACK), 7 * 3);
	assert_int_equal(TOT(T_ACKED), 7 * 300);
	assert_int_equal(LAST(L_SEED), 9); /* the connection's seed stays */
	b.ops->read(b.ctx, f, &ctl);
	assert_int_equal(ctl.cwnd_bytes, 131072); /* the probe's controls now */
	assert_true(ctl.has_ev);
	/* probe -> pace_half -> probe: the probe starts over, the pace_half period is not in it */
	assert_int_equal(xp_cc_pcm_flow_swap(cc, f, &pcm_pkg_xp_pace_half, NULL, t, &diag), 0);
	ack_n(b, f, 5, &t);
	b.ops->read(b.ctx, f, &ctl);
	assert_int_equal(ctl.rate, PCM_RATE_ONE / 2);
	assert_int_equal(xp_cc_pcm_flow_swap(cc, f, &pcm_pkg_xp_probe, NULL, t, &diag), 0);
	ack_n(b, f, 2, &t);
	assert_int_equal(xp_cc_pcm_peek(cc, 0, f, probe), 0);
	assert_int_equal(TOT(T_ACK), 2 * 3);
	/* a swap to the package it runs changes nothing */
	assert_int_equal(xp_cc_pcm_flow_swap(cc, f, &pcm_pkg_xp_probe, NULL, t, &diag), 0);
	assert_int_equal(xp_cc_pcm_peek(cc, 0, f, probe), 0);
	assert_int_equal(TOT(T_ACK), 2 * 3);
	b.ops->flow_close(b.ctx, f, t);
	assert_int_equal(xp_cc_pcm_flows_open(cc), 0);
	xp_cc_pcm_destroy(cc);
}

static void test_swap_adds_and_removes_the_lb_flow(void **state)
{
	struct xp_cc_pcm *cc = make(builtin("swift"), NULL, XP_CC_PCM_SYNC, 4);
	struct xp_cc_binding b = xp_cc_pcm_binding(cc);
	const struct pcm_package *pc, *pl;
	struct xp_cc_ctl ctl;
	struct pcm_diag diag;
	uint64_t t = 1000;
	uint32_t f;

	assert_int_equal(b.ops->flow_open(b.ctx, 3, 0, &f), 0);
	b.ops->read(b.ctx, f, &ctl);
	assert_false(ctl.has_ev);
	/* an LB package that drives a control of the CC package is refused */
	assert_int_equal(xp_cc_pcm_flow_swap(cc, f, builtin("swift"), &pcm_pkg_xp_probe, t, &diag),
			 -EINVAL);
	assert_non_null(strstr(diag.msg, "both drive"));
	assert_int_equal(xp_cc_pcm_flow_packages(cc, f, &pc, &pl), 0);
	assert_null(pl);
	assert_int_equal(xp_cc_pcm_flow_swap(cc, f, builtin("swift"), builtin("ops"), t, &diag), 0);
	ack_n(b, f, 3, &t);
	b.ops->read(b.ctx, f, &ctl);
	assert_true(ctl.has_ev); /* the LB flow drives the path */
	assert_int_equal(xp_cc_pcm_flow_packages(cc, f, &pc, &pl), 0);
	assert_ptr_equal(pl, builtin("ops"));
	assert_int_equal(xp_cc_pcm_flow_swap(cc, f, builtin("swift"), NULL, t, &diag), 0);
	b.ops->read(b.ctx, f, &ctl);
	assert_false(ctl.has_ev);
	assert_int_equal(xp_cc_pcm_peek(cc, 1, f, NULL), -ERANGE);
	b.ops->flow_close(b.ctx, f, t);
	xp_cc_pcm_destroy(cc);
}

/* swift -> newreno in place, mid-transfer, in each shell mode: the bytes go once, intact. */
static void swap_mid_transfer(enum xp_cc_pcm_mode mode)
{
	static uint8_t src[2 << 20], dst[2 << 20];
	const struct pcm_package *room[] = { builtin("newreno"), NULL };
	const struct xp_core_stats *st;
	struct xp_cc_pcm_config cfg;
	struct xp_conn_info info;
	const struct pcm_package *pc, *pl;
	struct pcm_diag diag;
	struct pair_opts o;
	struct pair p;
	struct xp_cc_pcm *cc;

	xp_cc_pcm_config_default(&cfg);
	cfg.cc = builtin("swift");
	cfg.mode = mode;
	cfg.async_inline = true;
	cfg.max_flows = 4;
	cfg.room_for = room;
	cfg.target = pcm_target_find("softnic");
	assert_int_equal(xp_cc_pcm_create(&cfg, &cc, &diag), 0);
	pair_default_opts(&o);
	pcm_pair(&p, &o, xp_cc_pcm_binding(cc));
	memset(dst, 0, sizeof(dst));
	fill_pattern(src, sizeof(src), 11);
	assert_int_equal(pair_recv(&p, 1, dst, sizeof(dst), 1), 0);
	assert_int_equal(pair_send(&p, 0, src, sizeof(src), 2), 0);
	pair_run(&p, pair_now(&p) + 40000);
	assert_null(pair_find(&p, 0, XP_COMP_SEND, 2)); /* in the middle of the transfer */
	assert_int_equal(xp_conn_info(pair_core(&p, 0), p.conn[0], &info), 0);
	assert_int_equal(xp_cc_pcm_flow_swap(cc, info.cc_flow, builtin("newreno"), NULL,
					     pair_now(&p), &diag),
			 0);
	assert_int_equal(xp_cc_pcm_flow_packages(cc, info.cc_flow, &pc, &pl), 0);
	assert_ptr_equal(pc, builtin("newreno"));
	assert_int_equal(xp_cc_pcm_flows_open(cc), 1); /* the same flow, not a new one */
	xp_net_kick(p.net, 0);
	pair_run(&p, pair_now(&p) + 1000000000);
	assert_int_equal(pair_find(&p, 0, XP_COMP_SEND, 2)->c.status, 0);
	assert_int_equal(pair_find(&p, 1, XP_COMP_RECV, 1)->c.bytes, sizeof(src));
	assert_memory_equal(src, dst, sizeof(src));
	st = xp_core_stats(pair_core(&p, 0));
	assert_int_equal(st->bytes_sent, sizeof(src));
	assert_int_equal(st->chunks_retx, 0);
	assert_int_equal(xp_core_stats(pair_core(&p, 1))->drops[XP_DROP_IMM_DUP], 0);
	pair_close_and_check_clean(&p);
	assert_int_equal(xp_cc_pcm_flows_open(cc), 0);
	pair_fini(&p);
	xp_cc_pcm_destroy(cc);
}

static void test_swap_in_place_mid_transfer_sync_loses_nothing(void **state)
{
	swap_mid_transfer(XP_CC_PCM_SYNC);
}

static void test_swap_in_place_mid_transfer_async_loses_nothing(void **state)
{
	swap_mid_transfer(XP_CC_PCM_ASYNC);
}

static void test_async_flows_go_to_the_least_loaded_worker(void **state)
{
	struct xp_cc_pcm_config cfg;
	struct xp_cc_binding b;
	struct xp_cc_pcm *cc;
	struct pcm_diag diag;
	uint32_t f[6], per[2] = { 0, 0 };

	xp_cc_pcm_config_default(&cfg);
	cfg.cc = &pcm_pkg_xp_probe;
	cfg.mode = XP_CC_PCM_ASYNC;
	cfg.async_inline = true;
	cfg.async.n_workers = 2;
	cfg.numa_node = 0; /* unpinned workers have no node: every worker is a candidate */
	cfg.max_flows = 8;
	cfg.target = pcm_target_find("softnic");
	assert_int_equal(xp_cc_pcm_create(&cfg, &cc, &diag), 0);
	b = xp_cc_pcm_binding(cc);
	for (int i = 0; i < 6; i++) {
		int w;

		assert_int_equal(b.ops->flow_open(b.ctx, 1 + (uint64_t)i, 0, &f[i]), 0);
		w = xp_cc_pcm_flow_worker(cc, f[i]);
		assert_true(w == 0 || w == 1);
		per[w]++;
	}
	assert_int_equal(per[0], 3);
	assert_int_equal(per[1], 3);
	/* close two of worker 0's: the next two go there */
	for (int i = 0, closed = 0; i < 6 && closed < 2; i++)
		if (xp_cc_pcm_flow_worker(cc, f[i]) == 0) {
			b.ops->flow_close(b.ctx, f[i], 0);
			f[i] = UINT32_MAX;
			closed++;
		}
	for (int i = 0; i < 6; i++)
		if (f[i] == UINT32_MAX) {
			assert_int_equal(b.ops->flow_open(b.ctx, 50, 0, &f[i]), 0);
			assert_int_equal(xp_cc_pcm_flow_worker(cc, f[i]), 0);
		}
	for (int i = 0; i < 6; i++)
		b.ops->flow_close(b.ctx, f[i], 0);
	assert_int_equal(xp_cc_pcm_flows_open(cc), 0);
	assert_int_equal(xp_cc_pcm_flow_worker(cc, f[0]), -ENOENT);
	xp_cc_pcm_destroy(cc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_acks_become_the_documented_signals),
		cmocka_unit_test(test_losses_and_timeouts_become_nack_and_rto),
		cmocka_unit_test(test_swift_window_drives_the_byte_budget),
		cmocka_unit_test(test_rate_control_paces_the_connection),
		cmocka_unit_test(test_target_without_a_signal_rejects_the_package),
		cmocka_unit_test(test_lb_may_not_drive_a_cc_control),
		cmocka_unit_test(test_lb_package_picks_the_path),
		cmocka_unit_test(test_sync_flows_are_removed_and_their_handles_reused),
		cmocka_unit_test(test_async_inline_feeds_the_same_as_sync),
		cmocka_unit_test(test_async_workers_run_beside_the_core),
		cmocka_unit_test(test_live_swap_loses_and_duplicates_nothing),
		cmocka_unit_test(test_swap_in_place_hands_events_to_one_package_at_a_time),
		cmocka_unit_test(test_swap_adds_and_removes_the_lb_flow),
		cmocka_unit_test(test_swap_in_place_mid_transfer_sync_loses_nothing),
		cmocka_unit_test(test_swap_in_place_mid_transfer_async_loses_nothing),
		cmocka_unit_test(test_async_flows_go_to_the_least_loaded_worker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
