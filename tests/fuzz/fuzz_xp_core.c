// SPDX-License-Identifier: MIT
/*
 * fuzz_xp_core.c - libFuzzer target for the transport core's wire input:
 * control packets (any bytes, any length) and chunk immediates (any word,
 * length, path and CE bit), interleaved with timers, drains, new operations,
 * closes and write completions, on a core with live connections in every
 * state (bound and sending, bound and receiving, unbound).
 *
 * The input is a program: each step is an opcode byte and its operands.
 * Opcode 7 builds a record aimed at a live connection, with its real id and
 * nonce and fuzzed fields, so the semantic checks behind the nonce are
 * reached too, not only the parser.
 *
 * Oracles, besides ASan/UBSan: every completion names an operation that was
 * posted and not completed before (exactly once); the core's accounting
 * never goes negative; and at the end, once every connection is aborted and
 * the quarantine has passed, every pool, timer, byte in flight and pending
 * completion is back to zero and every operation completed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "pcm.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_CONNS 3
#define MAX_OPS 512

struct state {
	struct xp_core *core;
	struct xp_cc_fixed cc;
	uint32_t id[N_CONNS];
	uint32_t nonce[N_CONNS];
	uint32_t handles[2];
	uint8_t done[MAX_OPS]; /* per cookie: 0 free, 1 posted, 2 completed */
	uint32_t n_ops;
	uint64_t now;
	uint64_t tokens[16];
	uint32_t n_tokens;
	struct xp_action acts[256];
	uint8_t ctrl[256 * XP_WIRE_MAX_MTU / 16];
};

static void require(bool ok)
{
	if (!ok)
		abort();
}

struct reader {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct reader *r, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8 | (r->left ? *r->p : 0);
		if (r->left) {
			r->p++;
			r->left--;
		}
	}
	return v;
}

static void drain(struct state *s)
{
	struct xp_batch b = { .acts = s->acts, .cap = 256, .ctrl_buf = s->ctrl,
			      .ctrl_cap = sizeof(s->ctrl) };

	for (int rounds = 0; rounds < 64; rounds++) {
		xp_batch_reset(&b, 200);
		if (!xp_core_drain(s->core, s->now, &b))
			return;
		for (uint32_t i = 0; i < b.n; i++) {
			const struct xp_action *a = &b.acts[i];

			if (a->kind == XP_ACT_WRITE) {
				require(a->u.write.len <= XP_CHUNK_BYTES_MAX);
				if (s->n_tokens < 16)
					s->tokens[s->n_tokens++] = a->u.write.token;
			} else if (a->kind == XP_ACT_CTRL) {
				struct xp_wire_reader r;
				enum xp_drop why;

				/* what the core emits, its peer must accept */
				require(xp_wire_open(&r, a->u.ctrl.bytes, a->u.ctrl.len, 1024,
						     &why) == 0);
			} else if (a->u.comp.kind != XP_COMP_CLOSE) {
				uint64_t c = a->u.comp.cookie;

				require(c < MAX_OPS && s->done[c] == 1);
				s->done[c] = 2;
			}
		}
	}
}

static void post(struct state *s, unsigned conn, bool send, uint64_t len)
{
	struct xp_buf b = { 0x100000 + (uint64_t)s->n_ops * 0x10000, len, 5 + s->n_ops };

	if (s->n_ops == MAX_OPS)
		return;
	if ((send ? xp_post_send : xp_post_recv)(s->core, s->id[conn], &b, s->n_ops, s->now) == 0)
		s->done[s->n_ops] = 1;
	s->n_ops++;
}

static void setup(struct state *s)
{
	struct xp_core_config cfg;
	struct xp_conn_config cc;

	memset(s, 0, sizeof(*s));
	xp_core_config_default(&cfg);
	cfg.seed = 42; /* fixed: the nonces are the same each run, so they can be learned */
	cfg.max_conns = 8;
	cfg.max_paths = 2;
	cfg.send_msgs = 8;
	cfg.recv_msgs = 8;
	cfg.ops = MAX_OPS;
	cfg.chunk_bytes = 4096;
	cfg.min_chunk_bytes = 1024;
	require(xp_core_create(&cfg, &s->core) == 0);
	s->cc.cwnd_bytes = 16384;
	s->cc.rate = PCM_RATE_ONE;
	s->handles[0] = 10;
	s->handles[1] = 11;
	cc = (struct xp_conn_config){ .n_paths = 2, .path_handles = s->handles,
				      .cc = xp_cc_fixed_binding(&s->cc) };
	for (unsigned k = 0; k < N_CONNS; k++)
		require(xp_conn_create(s->core, &cc, 0, &s->id[k], &s->nonce[k]) == 0);
	/* 0 and 1 bound to peer 1, 2 left unbound */
	require(xp_conn_bind(s->core, s->id[0], 3, 0x1234, 1, 0) == 0);
	require(xp_conn_bind(s->core, s->id[1], 4, 0x5678, 1, 0) == 0);
	post(s, 0, true, 10000);
	post(s, 0, false, 8192);
	post(s, 1, false, 100);
	post(s, 2, true, 50);
	drain(s);
}

/* A record for live connection @k with fuzzed type and fields. */
static void aimed_record(struct state *s, struct reader *r)
{
	unsigned k = (unsigned)take(r, 1) % N_CONNS;
	struct xp_rec rec;
	uint8_t buf[64];
	struct xp_wire_writer w;

	memset(&rec, 0, sizeof(rec));
	rec.type = (uint8_t)(1 + take(r, 1) % (XP_REC_TYPE_END - 1));
	rec.conn = (uint16_t)s->id[k];
	rec.nonce = s->nonce[k];
	switch (rec.type) {
	case XP_REC_ACK:
		rec.u.ack.msg_seq = (uint32_t)take(r, 1);
		rec.u.ack.cum = (uint16_t)(take(r, 2) % (XP_MAX_CHUNKS + 1));
		rec.u.ack.sack = take(r, 8);
		rec.u.ack.echo_valid = take(r, 1) & 1;
		rec.u.ack.echo_chunk = (uint16_t)(take(r, 2) % XP_MAX_CHUNKS);
		rec.u.ack.echo_parity = take(r, 1) & 1;
		rec.u.ack.hold_ns = (uint32_t)take(r, 4);
		rec.u.ack.ce = (uint16_t)take(r, 2);
		rec.u.ack.dup_seen = take(r, 1) & 1;
		rec.u.ack.complete = take(r, 1) & 1;
		break;
	case XP_REC_CTS:
		rec.u.cts.msg_seq = (uint32_t)take(r, 1);
		rec.u.cts.rkey = (uint32_t)take(r, 4);
		rec.u.cts.raddr = take(r, 8);
		rec.u.cts.cap = take(r, 4);
		break;
	case XP_REC_FIN:
		rec.u.fin.sends_total = (uint32_t)take(r, 1);
		rec.u.fin.recvs_total = (uint32_t)take(r, 1);
		break;
	case XP_REC_RESET:
		rec.u.reason = (uint32_t)(1 + take(r, 1) % (XP_RESET_REASON_END - 1));
		break;
	default:
		rec.u.msg_seq = (uint32_t)take(r, 1);
		break;
	}
	xp_wire_begin(&w, buf, sizeof(buf));
	if (xp_wire_put(&w, &rec) == 0)
		xp_core_on_ctrl(s->core, (uint32_t)take(r, 1) % 3, buf, xp_wire_finish(&w), s->now);
}

static void step(struct state *s, struct reader *r)
{
	switch (take(r, 1) % 8) {
	case 0: { /* raw control packet */
		uint8_t buf[1100];
		size_t len = (size_t)take(r, 2) % sizeof(buf);

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)take(r, 1);
		xp_core_on_ctrl(s->core, (uint32_t)take(r, 1) % 3, buf, len, s->now);
		break;
	}
	case 1: { /* chunk */
		uint32_t imm = (uint32_t)take(r, 4), len = (uint32_t)take(r, 3);
		uint32_t path = (uint32_t)take(r, 1);

		xp_core_on_chunk(s->core, imm, len, path < 200 ? s->handles[path & 1] : path,
				 path & 2, s->now);
		break;
	}
	case 2:
		s->now += take(r, 2) * 1000;
		xp_core_timer(s->core, s->now);
		break;
	case 3:
		drain(s);
		break;
	case 4:
		post(s, (unsigned)take(r, 1) % N_CONNS, take(r, 1) & 1, take(r, 3));
		break;
	case 5:
		xp_conn_close(s->core, s->id[take(r, 1) % N_CONNS],
			      take(r, 1) & 1 ? XP_CLOSE_ABORT : XP_CLOSE_GRACEFUL, s->now);
		break;
	case 6:
		if (s->n_tokens)
			xp_core_on_write_done(s->core, s->tokens[take(r, 1) % s->n_tokens],
					      take(r, 1) & 1 ? -EIO : 0, s->now);
		break;
	default:
		aimed_record(s, r);
		break;
	}
}

static void finish(struct state *s)
{
	struct xp_core_usage u;

	drain(s);
	for (unsigned k = 0; k < N_CONNS; k++)
		xp_conn_close(s->core, s->id[k], XP_CLOSE_ABORT, s->now);
	drain(s);
	s->now += 10ull * 1000 * 1000 * 1000;
	xp_core_timer(s->core, s->now);
	drain(s);
	xp_core_usage(s->core, &u);
	require(!u.conns_open && !u.conns_quarantined && !u.send_msgs && !u.recv_msgs && !u.ops &&
		!u.in_flight_bytes && !u.in_flight_chunks && !u.timers_armed && !u.paced &&
		!u.completions_pending);
	require(s->cc.open_flows == 0);
	for (uint32_t i = 0; i < s->n_ops; i++)
		require(s->done[i] != 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state s;
	struct reader r = { data, size };
	struct xp_core_usage u;

	setup(&s);
	for (int n = 0; r.left && n < 400; n++) {
		step(&s, &r);
		xp_core_usage(s.core, &u);
		require(u.ops <= MAX_OPS && u.send_msgs <= 8 && u.recv_msgs <= 8);
		require(u.in_flight_bytes < (1ull << 40));
	}
	finish(&s);
	xp_core_destroy(s.core);
	return 0;
}
