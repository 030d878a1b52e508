/* SPDX-License-Identifier: MIT */
/*
 * test_xp_pair.h - two cores joined by the virtual-time network
 * (tests/dst/xp_net.h), one connection between them, for the unit tests
 * of the transport core. Host 0 is "a", host 1 is "b".
 *
 * Completions are logged in order; buffers are registered with a fresh
 * rkey per receive, invalidated when it completes, as the softnic and null
 * datapaths do.
 */
#ifndef TEST_XP_PAIR_H
#define TEST_XP_PAIR_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core.h"
#include "pcm.h"
#include "wire.h"
#include "xp_net.h"

#define PAIR_MAX_LOG 65536
#define PAIR_MAX_PATHS 8

struct pair_comp {
	uint32_t host;
	struct xp_completion c;
	uint64_t t_ns;
};

struct pair_opts {
	uint32_t n_paths;
	struct xp_link link;      /* every data path, both ways */
	const struct xp_link *path_links; /* or: path k's link a->b (b->a keeps link); NULL: link */
	struct xp_link ctrl;      /* both control links */
	uint64_t cwnd_bytes;      /* fixed window (0: unlimited) */
	uint64_t rate;            /* fixed rate (0: line rate) */
	bool rc_mode;
	uint64_t no_progress_ns;
	xp_net_filter_fn filter;
	void *filter_arg;
	void (*tune)(struct xp_core_config *cfg); /* adjust both cores' config */
};

struct pair {
	struct xp_net *net;
	struct xp_cc_fixed cc[2];
	uint32_t conn[2];
	uint32_t nonce[2];
	uint32_t handle[2][PAIR_MAX_PATHS];
	uint32_t n_paths;
	struct pair_comp *log; /* PAIR_MAX_LOG entries */
	uint32_t n_log;
	/* receive rkeys by cookie, to invalidate on completion */
	uint32_t *rkey_of;     /* PAIR_MAX_LOG entries */
	xp_net_filter_fn filter;
	void *filter_arg;
};

static inline void pair_on_complete(void *arg, struct xp_net *net, uint32_t host,
			     const struct xp_completion *c)
{
	struct pair *p = arg;

	assert_true(p->n_log < PAIR_MAX_LOG);
	p->log[p->n_log].host = host;
	p->log[p->n_log].c = *c;
	p->log[p->n_log].t_ns = xp_net_now(net);
	p->n_log++;
	if (c->kind == XP_COMP_RECV && c->cookie < PAIR_MAX_LOG)
		xp_net_invalidate(net, host, p->rkey_of[c->cookie]);
}

static inline enum xp_net_verdict pair_filter(void *arg, const struct xp_net_pkt *pkt,
				       uint64_t *extra_delay_ns)
{
	struct pair *p = arg;

	return p->filter ? p->filter(p->filter_arg, pkt, extra_delay_ns) : XP_NET_PASS;
}

/*
 * A tune for tests that count chunks: the minimum chunk is the whole chunk, so
 * every chunk but a message's last is chunk_bytes whatever the window, the RTT
 * samples and the recovery state (docs/transport.md "Chunking").
 */
static inline void pair_one_chunk_size(struct xp_core_config *cfg)
{
	cfg->min_chunk_bytes = cfg->chunk_bytes;
}

static inline void pair_default_opts(struct pair_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->n_paths = 1;
	o->link.delay_ns = 5000;
	o->ctrl.delay_ns = 5000;
}

static inline void pair_init(struct pair *p, const struct pair_opts *o)
{
	struct xp_net_config ncfg = { .seed = 7, .on_complete = pair_on_complete,
				      .filter = pair_filter, .arg = p };
	struct xp_core_config cfg;

	memset(p, 0, sizeof(*p));
	p->log = calloc(PAIR_MAX_LOG, sizeof(*p->log));
	p->rkey_of = calloc(PAIR_MAX_LOG, sizeof(*p->rkey_of));
	assert_non_null(p->log);
	assert_non_null(p->rkey_of);
	p->filter = o->filter;
	p->filter_arg = o->filter_arg;
	p->n_paths = o->n_paths;
	assert_int_equal(xp_net_create(&ncfg, &p->net), 0);
	xp_core_config_default(&cfg);
	cfg.seed = 1; /* the test hook: nonces and path draws follow from it */
	cfg.max_conns = 64;
	cfg.send_msgs = 64;
	cfg.recv_msgs = 64;
	cfg.ops = 1024;
	if (o->tune)
		o->tune(&cfg);
	assert_int_equal(xp_net_add_host(p->net, &cfg), 0);
	assert_int_equal(xp_net_add_host(p->net, &cfg), 1);
	for (uint32_t k = 0; k < o->n_paths; k++)
		assert_int_equal(xp_net_add_path(p->net, 0, 1,
						 o->path_links ? &o->path_links[k] : &o->link, &o->link,
						 &p->handle[0][k], &p->handle[1][k]),
				 0);
	xp_net_set_ctrl(p->net, 0, 1, &o->ctrl);
	xp_net_set_ctrl(p->net, 1, 0, &o->ctrl);
	for (int h = 0; h < 2; h++) {
		struct xp_conn_config cc = { .n_paths = o->n_paths, .path_handles = p->handle[h],
					     .rc_mode = o->rc_mode,
					     .no_progress_ns = o->no_progress_ns };

		p->cc[h].cwnd_bytes = o->cwnd_bytes ? o->cwnd_bytes : UINT64_MAX;
		p->cc[h].rate = o->rate ? o->rate : PCM_RATE_ONE;
		cc.cc = xp_cc_fixed_binding(&p->cc[h]);
		assert_int_equal(xp_conn_create(xp_net_core(p->net, h), &cc, 0, &p->conn[h],
						&p->nonce[h]),
				 0);
	}
	for (int h = 0; h < 2; h++)
		assert_int_equal(xp_conn_bind(xp_net_core(p->net, h), p->conn[h], p->conn[!h],
					      p->nonce[!h], (uint32_t)!h, 0),
				 0);
}

static inline void pair_fini(struct pair *p)
{
	xp_net_destroy(p->net);
	free(p->log);
	free(p->rkey_of);
}

static inline struct xp_core *pair_core(struct pair *p, int host)
{
	return xp_net_core(p->net, (uint32_t)host);
}

static inline uint64_t pair_now(struct pair *p)
{
	return xp_net_now(p->net);
}

/* Post a receive of @cap bytes at @buf on @host with its own rkey; cookie < PAIR_MAX_LOG. */
static inline int pair_recv(struct pair *p, int host, void *buf, uint64_t cap, uint64_t cookie)
{
	uint32_t key = xp_net_reg(p->net, (uint32_t)host, buf, cap);
	struct xp_buf b = { (uintptr_t)buf, cap, key };
	int rc;

	p->rkey_of[cookie] = key;
	rc = xp_post_recv(pair_core(p, host), p->conn[host], &b, cookie, pair_now(p));
	xp_net_kick(p->net, (uint32_t)host);
	return rc;
}

static inline int pair_send(struct pair *p, int host, const void *buf, uint64_t len, uint64_t cookie)
{
	struct xp_buf b = { (uintptr_t)buf, len, 0 };
	int rc = xp_post_send(pair_core(p, host), p->conn[host], &b, cookie, pair_now(p));

	xp_net_kick(p->net, (uint32_t)host);
	return rc;
}

/* Run until nothing is scheduled before @limit_ns. */
static inline void pair_run(struct pair *p, uint64_t limit_ns)
{
	while (xp_net_next_event(p->net) <= limit_ns)
		xp_net_step(p->net);
}

/* The completion of @kind with @cookie on @host, or NULL. */
static inline const struct pair_comp *pair_find(const struct pair *p, int host, uint8_t kind,
					 uint64_t cookie)
{
	for (uint32_t i = 0; i < p->n_log; i++)
		if (p->log[i].host == (uint32_t)host && p->log[i].c.kind == kind &&
		    p->log[i].c.cookie == cookie)
			return &p->log[i];
	return NULL;
}

static inline uint32_t pair_count(const struct pair *p, int host, uint8_t kind)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->n_log; i++)
		n += p->log[i].host == (uint32_t)host && p->log[i].c.kind == kind;
	return n;
}

static inline void fill_pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((i * 131u + seed * 7u) ^ (i >> 9));
}

/* Close both ends gracefully and run past quarantine: every pool back to empty. */
static inline void pair_close_and_check_clean(struct pair *p)
{
	struct xp_core_usage u;

	for (int h = 0; h < 2; h++) {
		int rc = xp_conn_close(pair_core(p, h), p->conn[h], XP_CLOSE_GRACEFUL, pair_now(p));

		assert_true(rc == 0 || rc == -EALREADY);
		xp_net_kick(p->net, (uint32_t)h);
	}
	pair_run(p, pair_now(p) + 10ull * 1000 * 1000 * 1000);
	for (int h = 0; h < 2; h++) {
		assert_non_null(pair_find(p, h, XP_COMP_CLOSE, 0));
		xp_core_usage(pair_core(p, h), &u);
		assert_int_equal(u.conns_open, 0);
		assert_int_equal(u.conns_quarantined, 0);
		assert_int_equal(u.send_msgs, 0);
		assert_int_equal(u.recv_msgs, 0);
		assert_int_equal(u.ops, 0);
		assert_int_equal(u.in_flight_bytes, 0);
		assert_int_equal(u.timers_armed, 0);
		assert_int_equal(u.paced, 0);
		assert_int_equal(u.completions_pending, 0);
		assert_int_equal(p->cc[h].open_flows, 0);
	}
}

/* The end of a pair test: both ends closed, every pool empty, the network freed. */
static inline void pair_done(struct pair *p)
{
	pair_close_and_check_clean(p);
	pair_fini(p);
}

/*
 * Solo cores: one core driven by hand, its actions drained into an array and
 * its control packets decoded, for tests that forge what a peer would send.
 */
struct solo {
	struct xp_core *core;
	struct xp_cc_fixed cc;
	uint32_t conn;
	uint32_t nonce;
	uint32_t peer_conn;
	uint32_t peer_nonce;
	uint32_t handle;
	struct xp_action acts[512];
	uint32_t n_acts;
	uint8_t ctrl[512 * 1024];
};

static inline void solo_init(struct solo *s, uint64_t cwnd_bytes, void (*tune)(struct xp_core_config *))
{
	struct xp_core_config cfg;
	struct xp_conn_config cc;

	memset(s, 0, sizeof(*s));
	xp_core_config_default(&cfg);
	cfg.seed = 1;
	cfg.max_conns = 16;
	cfg.send_msgs = 32;
	cfg.recv_msgs = 32;
	cfg.ops = 256;
	if (tune)
		tune(&cfg);
	assert_int_equal(xp_core_create(&cfg, &s->core), 0);
	s->cc.cwnd_bytes = cwnd_bytes ? cwnd_bytes : UINT64_MAX;
	s->cc.rate = PCM_RATE_ONE;
	s->handle = 7;
	cc = (struct xp_conn_config){ .n_paths = 1, .path_handles = &s->handle,
				      .cc = xp_cc_fixed_binding(&s->cc) };
	assert_int_equal(xp_conn_create(s->core, &cc, 0, &s->conn, &s->nonce), 0);
	s->peer_conn = 5;
	s->peer_nonce = 0x5eed;
	assert_int_equal(xp_conn_bind(s->core, s->conn, s->peer_conn, s->peer_nonce, 1, 0), 0);
}

static inline void solo_fini(struct solo *s)
{
	xp_core_destroy(s->core);
}

/* Drain everything now pending into s->acts (replacing what was there). */
static inline uint32_t solo_drain(struct solo *s, uint64_t now_ns)
{
	struct xp_batch b = { .acts = s->acts, .cap = 512, .ctrl_buf = s->ctrl,
			      .ctrl_cap = sizeof(s->ctrl) };

	xp_batch_reset(&b, UINT32_MAX);
	while (b.n < b.cap && xp_core_drain(s->core, now_ns, &b))
		;
	s->n_acts = b.n;
	return b.n;
}

/* The records of every control packet in s->acts, in order. */
static inline uint32_t solo_records(const struct solo *s, struct xp_rec *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->n_acts; i++) {
		struct xp_wire_reader r;
		enum xp_drop why;
		struct xp_rec rec;

		if (s->acts[i].kind != XP_ACT_CTRL)
			continue;
		assert_int_equal(xp_wire_open(&r, s->acts[i].u.ctrl.bytes, s->acts[i].u.ctrl.len,
					      XP_WIRE_MAX_MTU, &why),
				 0);
		while (xp_wire_next(&r, &rec, &why) == 1 && n < max)
			out[n++] = rec;
	}
	return n;
}

/* Deliver one forged record to the solo core, as from its peer (control peer 1). */
static inline int solo_inject(struct solo *s, const struct xp_rec *rec, uint64_t now_ns)
{
	uint8_t buf[XP_WIRE_MAX_MTU];
	struct xp_wire_writer w;

	xp_wire_begin(&w, buf, sizeof(buf));
	assert_int_equal(xp_wire_put(&w, rec), 0);
	return xp_core_on_ctrl(s->core, 1, buf, xp_wire_finish(&w), now_ns);
}

static inline struct xp_rec solo_rec(const struct solo *s, uint8_t type)
{
	struct xp_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.conn = (uint16_t)s->conn;
	r.nonce = s->nonce;
	return r;
}

/* A CTS from the peer for message @seq into a buffer of @cap bytes. */
static inline void solo_cts(struct solo *s, uint32_t seq, uint64_t cap, uint64_t now_ns)
{
	struct xp_rec r = solo_rec(s, XP_REC_CTS);

	r.u.cts.msg_seq = seq;
	r.u.cts.raddr = 1ull << 32;
	r.u.cts.cap = cap;
	r.u.cts.rkey = 77;
	assert_int_equal(solo_inject(s, &r, now_ns), 1);
}

/* The writes in s->acts. */
static inline uint32_t solo_writes(const struct solo *s, struct xp_write *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->n_acts && n < max; i++)
		if (s->acts[i].kind == XP_ACT_WRITE)
			out[n++] = s->acts[i].u.write;
	return n;
}

/* A solo core whose message 0 was acknowledged at 20 us: SRTT = 20 us, RTTVAR = 10 us. */
static inline void solo_warm(struct solo *s, uint64_t cwnd_bytes)
{
	struct xp_rec ack;

	solo_init(s, cwnd_bytes, NULL);
	solo_cts(s, 0, 1000, 0);
	assert_int_equal(xp_post_send(s->core, s->conn, &(struct xp_buf){ 0x5000, 1000, 3 }, 100,
				      0), 0);
	assert_int_equal(solo_drain(s, 0), 1);
	ack = solo_rec(s, XP_REC_ACK);
	ack.u.ack = (struct xp_rec_ack){ .msg_seq = 0, .cum = 1, .complete = true,
					 .echo_valid = true, .echo_chunk = 0 };
	assert_int_equal(solo_inject(s, &ack, 20000), 1);
	solo_drain(s, 20000);
}

static inline const struct xp_completion *solo_comp(const struct solo *s, uint8_t kind, uint64_t cookie)
{
	for (uint32_t i = 0; i < s->n_acts; i++)
		if (s->acts[i].kind == XP_ACT_COMPLETE && s->acts[i].u.comp.kind == kind &&
		    s->acts[i].u.comp.cookie == cookie)
			return &s->acts[i].u.comp;
	return NULL;
}

static inline uint64_t drops(struct xp_core *core, enum xp_drop why)
{
	return xp_core_stats(core)->drops[why];
}

#endif /* TEST_XP_PAIR_H */
