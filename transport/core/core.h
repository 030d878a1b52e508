/* SPDX-License-Identifier: MIT */
/*
 * core.h - the transport's sans-IO protocol core: one per engine.
 *
 * The core takes `now` (u64 monotonic ns, supplied by the caller) and events,
 * and returns actions. It never blocks, never reads a clock, never touches a
 * device and never allocates after xp_core_create(). It is single-threaded:
 * one engine thread owns it.
 *
 * Inputs:
 *   connection lifecycle   xp_conn_create(), xp_conn_bind(), xp_conn_close()
 *   operations             xp_post_send(), xp_post_recv()
 *   a data chunk arrived   xp_core_on_chunk()    (a WRITE_WITH_IMM completion)
 *   a control packet       xp_core_on_ctrl()     (untrusted bytes)
 *   a write completed      xp_core_on_write_done()
 *   time passed            xp_core_timer()
 * Outputs, appended to a caller-provided batch by xp_core_drain():
 *   XP_ACT_WRITE     post one WRITE_WITH_IMM on a path
 *   XP_ACT_CTRL      send one control packet to a peer (records of many
 *                    connections to that peer, batched per round)
 *   XP_ACT_COMPLETE  an operation (or a close) finished
 * and xp_core_next_deadline(), when xp_core_timer() next has work.
 *
 * A round: feed the events polled from the datapath, call xp_core_timer(),
 * then xp_core_drain() until it returns 0 (or the datapath is full), carrying
 * out each action. Inputs only change state; every packet and completion
 * leaves through xp_core_drain(), so ACKs of a whole round go out together.
 *
 * docs/transport.md describes the protocol: the immediate, the records, the
 * loss-recovery rules, the CC signals and the memory per connection.
 */
#ifndef XP_CORE_H
#define XP_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp_cc.h"
#include "drop.h"
#include "imm.h"

#define XP_MAX_PATHS 64
#define XP_CHUNK_BYTES_MAX (1u << 20) /* largest chunk_bytes: 1 MiB */

/* A buffer: for a send, the local source {addr, len, lkey}; for a receive,
 * where the peer may write {addr, cap, rkey}. */
struct xp_buf {
	uint64_t addr;
	uint64_t len;
	uint32_t key;
};

enum xp_close_mode {
	XP_CLOSE_GRACEFUL = 0, /* finish outstanding work, then close */
	XP_CLOSE_ABORT = 1,    /* fail everything outstanding with -ECANCELED now */
};

enum xp_comp_kind {
	XP_COMP_SEND = 0,
	XP_COMP_RECV = 1,
	XP_COMP_CLOSE = 2, /* the connection is closed; its id may later be reused */
};

enum xp_action_kind {
	XP_ACT_WRITE = 1,
	XP_ACT_CTRL = 2,
	XP_ACT_COMPLETE = 3,
};

struct xp_write {
	uint32_t path;  /* the datapath's handle of the path (from xp_conn_config) */
	uint32_t lkey;
	uint32_t rkey;
	uint32_t imm;   /* host order; see imm.h */
	uint32_t len;
	uint64_t laddr;
	uint64_t raddr;
	uint64_t token; /* hand back to xp_core_on_write_done() if the datapath reports it */
};

struct xp_ctrl {
	uint32_t peer;        /* the connection's ctrl_peer handle (xp_conn_bind()) */
	uint32_t len;
	const uint8_t *bytes; /* inside the batch's ctrl_buf */
};

struct xp_completion {
	uint32_t conn;
	uint8_t kind;   /* enum xp_comp_kind */
	int32_t status; /* 0 or -errno; see docs/transport.md "Errors" */
	uint64_t cookie;
	uint64_t bytes; /* bytes sent or received */
};

struct xp_action {
	uint8_t kind; /* enum xp_action_kind */
	union {
		struct xp_write write;
		struct xp_ctrl ctrl;
		struct xp_completion comp;
	} u;
};

/* Where xp_core_drain() puts actions; control packet bytes go in ctrl_buf. */
struct xp_batch {
	struct xp_action *acts;
	uint32_t cap;        /* room in acts */
	uint32_t n;          /* filled */
	uint32_t max_writes; /* most XP_ACT_WRITE this drain (the datapath's free send slots) */
	uint32_t n_writes;
	uint8_t *ctrl_buf;
	uint32_t ctrl_cap;   /* at least the core's ctrl_mtu */
	uint32_t ctrl_used;
};

/**
 * xp_batch_reset() - reset a batch to empty before a drain.
 */
static inline void xp_batch_reset(struct xp_batch *b, uint32_t max_writes)
{
	b->n = 0;
	b->n_writes = 0;
	b->max_writes = max_writes;
	b->ctrl_used = 0;
}

struct xp_core_config {
	uint64_t seed;             /* 0: nonces and the generator from getrandom(); else a test's */
	uint32_t max_conns;        /* 1 .. XP_MAX_CONNS */
	uint32_t max_paths;        /* per connection, 1 .. XP_MAX_PATHS */
	uint32_t send_msgs;        /* sender messages in flight, core-wide */
	uint32_t recv_msgs;        /* advertised receives, core-wide */
	uint32_t ops;              /* posted sends + receives not yet completed, core-wide */
	uint32_t max_queued;       /* per connection and direction */
	uint32_t chunk_bytes;      /* largest chunk, 1 .. XP_CHUNK_BYTES_MAX */
	uint32_t min_chunk_bytes;  /* the chunk allowed when nothing is in flight */
	uint32_t ctrl_mtu;         /* largest control packet, XP_WIRE_MIN_MTU .. MAX_MTU */
	uint32_t burst_chunks;     /* chunks one connection sends per turn */
	uint64_t rto_initial_ns;
	uint64_t rto_min_ns;
	uint64_t rto_max_ns;
	uint64_t rto_granularity_ns;
	uint64_t quarantine_ns;    /* a closed id is not reused before this */
	uint64_t no_progress_ns;   /* the limit of connections that name none; 0: none */
	uint64_t line_rate_bps;    /* what PCM_RATE_ONE means for the pacer */
	uint64_t pacer_tick_ns;
	uint32_t pacer_slots;      /* a power of two >= 64 */
	uint64_t now_ns;           /* the time the core starts at */
};

/**
 * xp_core_config_default() - defaults: 16,384 connections of up to 8 paths,
 * 64 KiB chunks with a 4 KiB minimum, 1 KiB control packets, RTO 1 ms
 * initial, 100 us floor of its variance term, 50 ms cap, 1 s quarantine,
 * a 5 s no-progress limit, 100 Gbit/s line rate.
 * @cfg: filled in.
 */
void xp_core_config_default(struct xp_core_config *cfg);

struct xp_conn_config {
	uint32_t n_paths;               /* 1 .. max_paths */
	const uint32_t *path_handles;   /* n_paths datapath handles (QPs) */
	const uint16_t *path_entropy;   /* n_paths entropy values (ACK_EV etc.), or NULL: the index */
	bool rc_mode;                   /* the NIC is reliable: never retransmit */
	uint64_t no_progress_ns;        /* fail with -ETIMEDOUT after this long stuck; 0: the core's */
	struct xp_cc_binding cc;
};

/* Counters; drops[] by enum xp_drop. */
struct xp_core_stats {
	uint64_t chunks_sent;     /* first transmissions */
	uint64_t chunks_retx;     /* retransmissions (RACK, RTO, TLP) */
	uint64_t bytes_sent;      /* first transmissions */
	uint64_t chunks_received; /* accepted, not duplicate */
	uint64_t ack_records_tx;
	uint64_t ack_records_rx;
	uint64_t ctrl_packets_tx;
	uint64_t ctrl_packets_rx;
	uint64_t rack_losses;     /* chunks RACK declared lost */
	uint64_t rto_fires;
	uint64_t tlp_fires;
	uint64_t tlp_recoveries;  /* probes that alone repaired a loss (told to the CC) */
	uint64_t spurious_retx;   /* retransmissions the original's delivery showed needless */
	uint64_t rtt_samples;
	uint64_t karn_skipped;    /* echoes that named an ambiguous transmission */
	uint64_t msgs_sent;       /* sends completed with success */
	uint64_t msgs_received;
	uint64_t msgs_aborted;    /* too long for their receive */
	uint64_t conns_timed_out;
	uint64_t pool_waits;      /* a connection waited for a message slot in a pool */
	uint64_t drops[XP_DROP_COUNT];
};

/* What the core holds now; all zero once every connection is gone. */
struct xp_core_usage {
	uint32_t conns_open;      /* created and not yet closed */
	uint32_t conns_quarantined;
	uint32_t send_msgs;
	uint32_t recv_msgs;
	uint32_t ops;
	uint64_t in_flight_bytes;
	uint32_t in_flight_chunks;
	uint32_t timers_armed;
	uint32_t paced;           /* connections on the pacer's wheel */
	uint32_t completions_pending;
};

/* One connection's transport state, for stats and tests. */
struct xp_conn_info {
	uint64_t srtt_ns;      /* 0 before the first sample */
	uint64_t rttvar_ns;
	uint64_t min_rtt_ns;   /* 0 before the first sample */
	uint64_t rto_ns;       /* with the current backoff */
	uint64_t reo_wnd_ns;   /* RACK's reordering window */
	uint64_t in_flight_bytes;
	uint32_t in_flight_chunks;
	uint32_t lost_chunks;  /* declared lost, not yet retransmitted */
	uint32_t send_msgs;    /* messages started and not finished */
	uint32_t recv_msgs;    /* receives advertised and not finished */
	uint32_t rto_backoff;
	uint32_t cc_flow;      /* the connection's flow in its CC binding */
	uint64_t path_rtt_ns[XP_MAX_PATHS]; /* per-path EWMA, 0 before a sample */
	uint64_t cwnd_bytes;   /* the CC's window now; UINT64_MAX: unlimited */
	uint64_t rate_bps;     /* the CC's pacing rate now; 0: not paced (at line rate) */
	uint64_t chunks_retx;  /* retransmissions of this connection (RACK, RTO, TLP) */
	uint64_t rto_fires;    /* its retransmission timeouts */
	uint64_t spurious_retx; /* its retransmissions the original's delivery showed needless */
	uint64_t no_progress_ns; /* its no-progress limit; 0: none */
};

struct xp_core;

/**
 * xp_core_create() - a core with every pool allocated.
 * @cfg: configuration; copied.
 * @out: the core.
 *
 * Return: 0, -EINVAL (a configuration value out of range), -ENOMEM, or
 * getrandom()'s error when cfg->seed is 0 and it has no entropy to give.
 */
int xp_core_create(const struct xp_core_config *cfg, struct xp_core **out);

/**
 * xp_core_destroy() - free everything; open connections are dropped without completions. NULL
 * is a no-op.
 */
void xp_core_destroy(struct xp_core *core);

/**
 * xp_conn_create() - a new local connection, not yet bound to its peer.
 * @core: the core.
 * @cfg: paths, mode, CC binding; copied (the binding's context must outlive
 *       the connection).
 * @now_ns: the time.
 * @id: its id (< max_conns), to give the peer.
 * @nonce: its random nonce (never 0), to give the peer.
 *
 * Operations may be posted at once; nothing is sent before xp_conn_bind().
 *
 * Return: 0, -EINVAL (bad paths or binding), -ENOSPC (no id out of
 * quarantine), or what the binding's flow_open returned.
 */
int xp_conn_create(struct xp_core *core, const struct xp_conn_config *cfg, uint64_t now_ns,
		   uint32_t *id, uint32_t *nonce);

/**
 * xp_conn_bind() - name the peer's side of connection @id, once the
 * datapath's bootstrap has exchanged ids and nonces.
 * @core: the core.
 * @id: the local connection.
 * @peer_id: the peer's connection id.
 * @peer_nonce: the peer's nonce.
 * @ctrl_peer: the datapath's handle for control packets to that peer.
 * @now_ns: the time.
 *
 * Return: 0, -ENOENT (no such connection), -EINVAL (bad peer id or nonce),
 * -EALREADY (bound before), -ESHUTDOWN (closing or closed).
 */
int xp_conn_bind(struct xp_core *core, uint32_t id, uint32_t peer_id, uint32_t peer_nonce,
		 uint32_t ctrl_peer, uint64_t now_ns);

/**
 * xp_conn_close() - close connection @id.
 * @core: the core.
 * @id: the connection.
 * @mode: XP_CLOSE_GRACEFUL or XP_CLOSE_ABORT.
 * @now_ns: the time.
 *
 * Either way one XP_COMP_CLOSE completion follows, after every operation's
 * own completion. A graceful close lets posted operations finish (those the
 * peer can never match fail with -ECONNRESET once its FIN says so); an
 * abortive one fails them with -ECANCELED and resets the peer. A connection
 * that failed (peer reset, timeout, I/O error) must still be closed.
 *
 * Return: 0, -ENOENT, -EALREADY (a graceful close is already under way; an
 * abort may still follow it), -EINVAL (bad mode).
 */
int xp_conn_close(struct xp_core *core, uint32_t id, enum xp_close_mode mode, uint64_t now_ns);

/**
 * xp_conn_set_cc() - move connection @id to another CC binding, at once.
 * @core: the core.
 * @id: the connection.
 * @cc: the new binding; the old flow is closed.
 * @now_ns: the time.
 *
 * Data in flight and queued is untouched: nothing is lost or sent twice.
 *
 * Return: 0, -ENOENT, -EINVAL (incomplete ops), or the new flow_open's error
 * (the old binding stays).
 */
int xp_conn_set_cc(struct xp_core *core, uint32_t id, struct xp_cc_binding cc, uint64_t now_ns);

/**
 * xp_conn_cc_refresh() - connection @id's flow changed its policy within its
 * binding (a live swap in place, cc_pcm.h): re-read the binding's info and
 * apply the new controls from the next sending round.
 * @core: the core.
 * @id: the connection.
 * @now_ns: the time.
 *
 * Return: 0, -ENOENT.
 */
int xp_conn_cc_refresh(struct xp_core *core, uint32_t id, uint64_t now_ns);

/**
 * xp_conn_set_no_progress() - set connection @id's no-progress limit (docs/transport.md
 * "Liveness"), from now on.
 * @core: the core.
 * @id: the connection.
 * @no_progress_ns: the limit; 0: the core's default.
 * @now_ns: the time.
 *
 * Return: 0, -ENOENT (no such live connection).
 */
int xp_conn_set_no_progress(struct xp_core *core, uint32_t id, uint64_t no_progress_ns,
			    uint64_t now_ns);

/**
 * xp_post_send() - queue message @buf on connection @id.
 * @core: the core.
 * @id: the connection.
 * @buf: the message; it must stay valid until its completion.
 * @cookie: returned in the completion.
 * @now_ns: the time.
 *
 * The message goes once the peer's receive for it has sent its CTS; it
 * completes when every chunk is acknowledged (or with an error).
 *
 * Return: 0, -ENOENT, -EMSGSIZE (longer than 4096 chunks of chunk_bytes),
 * -EAGAIN (per-connection queue or operation pool full), -ESHUTDOWN (closing),
 * -ECONNRESET / -ETIMEDOUT / -EIO (the connection failed or its peer closed
 * and will never receive it).
 */
int xp_post_send(struct xp_core *core, uint32_t id, const struct xp_buf *buf, uint64_t cookie,
		 uint64_t now_ns);

/**
 * xp_post_recv() - post receive buffer @buf on connection @id.
 * @core: the core.
 * @id: the connection.
 * @buf: {addr, cap, rkey}; the rkey should be this receive's own (see
 *       docs/transport.md "Direct placement").
 * @cookie: returned in the completion.
 * @now_ns: the time.
 *
 * Receive k of a connection takes the peer's message k.
 *
 * Return: as xp_post_send(), without -EMSGSIZE.
 */
int xp_post_recv(struct xp_core *core, uint32_t id, const struct xp_buf *buf, uint64_t cookie,
		 uint64_t now_ns);

/**
 * xp_core_on_chunk() - a data chunk was placed (WRITE_WITH_IMM completion).
 * @core: the core.
 * @imm: the immediate, host order.
 * @byte_len: bytes written.
 * @path: the datapath handle of the path it arrived on.
 * @ecn_ce: it arrived CE-marked.
 * @now_ns: the time.
 *
 * Return: 0 if accepted, -EALREADY for a duplicate (re-ACKed), -EINVAL when
 * dropped; stats.drops[] says why.
 */
int xp_core_on_chunk(struct xp_core *core, uint32_t imm, uint32_t byte_len, uint32_t path,
		     bool ecn_ce, uint64_t now_ns);

/**
 * xp_core_on_ctrl() - a control packet arrived.
 * @core: the core.
 * @peer: the datapath's handle of the peer it came from.
 * @bytes: the packet (untrusted).
 * @len: its length.
 * @now_ns: the time.
 *
 * Return: the number of records applied; drops are counted in stats.
 */
int xp_core_on_ctrl(struct xp_core *core, uint32_t peer, const void *bytes, size_t len,
		    uint64_t now_ns);

/**
 * xp_core_on_write_done() - the datapath finished a posted write.
 * @core: the core.
 * @token: the write's token.
 * @status: 0, or -errno when the write failed (the connection then fails
 *          with -EIO; on UC a lost write is not an error).
 * @now_ns: the time.
 */
void xp_core_on_write_done(struct xp_core *core, uint64_t token, int status, uint64_t now_ns);

/**
 * xp_core_timer() - run every timer due at @now_ns (RACK, TLP, RTO, pacer, retransmits, ticks,
 * quarantine).
 */
void xp_core_timer(struct xp_core *core, uint64_t now_ns);

/**
 * xp_core_drain() - move pending output into @batch: completions, then
 * control packets, then chunks.
 * @core: the core.
 * @now_ns: the time.
 * @batch: where actions go (from batch->n on).
 *
 * Return: actions added; 0 means nothing more is pending for now.
 */
uint32_t xp_core_drain(struct xp_core *core, uint64_t now_ns, struct xp_batch *batch);

/**
 * xp_core_next_deadline() - when the timers next have work.
 *
 * Return: the earliest time xp_core_timer() has work, or UINT64_MAX.
 */
uint64_t xp_core_next_deadline(const struct xp_core *core);

/**
 * xp_core_stats() - the core's counters, drops by reason included.
 * @core: the core.
 *
 * Return: a pointer into the core, valid until it is destroyed.
 */
const struct xp_core_stats *xp_core_stats(const struct xp_core *core);

/**
 * xp_conn_info() - the transport state of connection @id.
 * @core: the core.
 * @id: the connection.
 * @info: filled in.
 *
 * Return: 0, -ENOENT.
 */
int xp_conn_info(struct xp_core *core, uint32_t id, struct xp_conn_info *info);

/**
 * xp_core_usage() - what the core holds now: connections, pool entries, bytes
 * in flight, timers, paced connections, completions not yet drained. All
 * zero once every connection is closed and out of quarantine.
 * @core: the core.
 * @usage: filled in.
 */
void xp_core_usage(const struct xp_core *core, struct xp_core_usage *usage);

/**
 * xp_core_bytes_per_conn() - memory per connection slot.
 *
 * Return: bytes the core allocated per connection slot (state,
 * paths, timer, lists).
 */
size_t xp_core_bytes_per_conn(const struct xp_core *core);

/**
 * xp_core_bytes_total() - memory of the whole core.
 *
 * Return: every byte xp_core_create() allocated.
 */
size_t xp_core_bytes_total(const struct xp_core *core);

/**
 * xp_core_max_msg_bytes() - the largest message.
 *
 * Return: the largest message a send may carry: 4096 x chunk_bytes.
 */
uint64_t xp_core_max_msg_bytes(const struct xp_core *core);

#endif /* XP_CORE_H */
