/* SPDX-License-Identifier: MIT */
/*
 * xp_cc.h - the congestion-control and load-balancing seam of the core.
 *
 * The core knows nothing of PCM: it reports what happened to a connection's
 * data through these ops and reads back three controls. A binding (ops plus
 * its context) is chosen per connection; many connections may share one
 * context, each holding its own flow in it.
 *
 * Events, all for one flow, with `now` in ns:
 *   on_ack   once per ACK record that brought news (chunks newly acked, an
 *            RTT sample, or CE marks);
 *   on_loss  once per batch of chunks RACK (or TLP) declared lost;
 *   on_rto   once per retransmission timeout;
 *   on_tx    before each chunk's path is chosen (one call per chunk about to
 *            go), when the binding asks for it (info.wants_tx: load
 *            balancers that pick an entropy per packet);
 *   tick     at the times the binding asks for (info.tick_ns), while the
 *            connection has data in flight or queued.
 * Controls (read after every event, and before each sending round):
 *   cwnd_bytes  the window: the core's byte budget per chunk is cwnd minus
 *               bytes in flight (UINT64_MAX: no limit);
 *   rate        PCM_RATE_ONE (1 << 20) = the datapath's line rate; at or
 *               above it the connection is not paced;
 *   ev          when has_ev, the path is ev mod n_paths; otherwise the core
 *               picks by power of two choices on per-path RTT.
 *
 * xp_cc_fixed is a trivial binding with a constant window and rate, for
 * tests and for datapaths measured without CC. cc_pcm.h binds PCM packages.
 */
#ifndef XP_CC_H
#define XP_CC_H

#include <stdbool.h>
#include <stdint.h>

struct xp_cc_ack {
	uint32_t acked_chunks;    /* chunks newly acknowledged by this record */
	uint64_t acked_bytes;     /* their bytes */
	uint64_t rtt_ns;          /* RTT sample (Karn-clean), 0 when none */
	uint32_t ecn_ce;          /* CE-marked chunks the record echoes */
	bool echo_ce;             /* the echoed chunk itself was CE-marked */
	uint64_t hold_ns;         /* receiver's hold of the echoed chunk */
	uint16_t ev;              /* entropy of the path the echoed (or newest acked) chunk took */
	uint64_t in_flight_bytes; /* after this record */
	uint64_t backlog_bytes;   /* bytes posted and not yet sent once */
};

struct xp_cc_loss {
	uint32_t lost_chunks;
	uint64_t lost_bytes;
	uint16_t ev;              /* entropy of the path of the last chunk declared lost */
	uint64_t in_flight_bytes; /* after the losses */
	uint64_t backlog_bytes;
};

struct xp_cc_ctl {
	uint64_t cwnd_bytes; /* UINT64_MAX: unlimited */
	uint64_t rate;       /* PCM_RATE_ONE scale */
	bool has_ev;
	uint64_t ev;
};

struct xp_cc_info {
	bool wants_tx;    /* call on_tx before each chunk */
	uint64_t tick_ns; /* call tick this often while busy; 0: never */
};

struct xp_cc_ops {
	const char *name;
	void (*info)(void *ctx, struct xp_cc_info *info);
	/* Open a flow for a new connection; @flow_seed is a per-connection constant, never 0. */
	int (*flow_open)(void *ctx, uint64_t flow_seed, uint64_t now_ns, uint32_t *flow);
	void (*flow_close)(void *ctx, uint32_t flow, uint64_t now_ns);
	void (*on_ack)(void *ctx, uint32_t flow, const struct xp_cc_ack *ack, uint64_t now_ns);
	void (*on_loss)(void *ctx, uint32_t flow, const struct xp_cc_loss *loss, uint64_t now_ns);
	void (*on_rto)(void *ctx, uint32_t flow, uint64_t in_flight_bytes, uint64_t now_ns);
	void (*on_tx)(void *ctx, uint32_t flow, uint64_t backlog_bytes, uint64_t in_flight_bytes,
		      uint64_t now_ns);
	void (*tick)(void *ctx, uint32_t flow, uint64_t now_ns);
	void (*read)(void *ctx, uint32_t flow, struct xp_cc_ctl *ctl);
};

struct xp_cc_binding {
	const struct xp_cc_ops *ops;
	void *ctx;
};

/**
 * xp_cc_ops_check() - check that a binding's ops table is complete, as a
 * registration check: every op set and a name.
 * @ops: the table.
 *
 * Return: 0, -EINVAL naming nothing (the caller knows which table it gave).
 */
int xp_cc_ops_check(const struct xp_cc_ops *ops);

/* A constant window and rate: struct xp_cc_fixed is its own context. */
struct xp_cc_fixed {
	uint64_t cwnd_bytes;
	uint64_t rate;
	uint32_t open_flows; /* flows opened and not yet closed: a leak check for tests */
	uint64_t lost_chunks; /* chunks its flows were told were lost (on_loss), for tests */
	uint32_t loss_events; /* on_loss calls */
	uint32_t rto_events;  /* on_rto calls */
};

extern const struct xp_cc_ops xp_cc_fixed_ops;

/**
 * xp_cc_fixed_binding() - bind a connection to a fixed window and rate.
 *
 * Return: a binding to @fixed, whose fields the caller set.
 */
static inline struct xp_cc_binding xp_cc_fixed_binding(struct xp_cc_fixed *fixed)
{
	struct xp_cc_binding b = { &xp_cc_fixed_ops, fixed };

	return b;
}

#endif /* XP_CC_H */
