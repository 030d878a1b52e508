/* SPDX-License-Identifier: MIT */
/*
 * intake.h - one client's descriptor path: its submissions taken from the
 * channel, checked, posted to the data plane, and their completions written
 * back, with the per-descriptor state this needs (the table of the client's
 * connections as the data path sees them, the outstanding slots, per-conn
 * counters).
 *
 * Who runs it: the intake has one owner thread at a time. With a data plane
 * that serves ports (plane.h, port_add) it is the data plane's thread
 * (the engine's, or the softnic fabric's): pcmd's loop is not in the
 * per-descriptor path at all. With one that does not (the integration
 * tests' loopback), it is pcmd's loop, through the same functions: every
 * rule below is written once.
 *
 * Where each check runs (pcmd_intake_take(), on the owner):
 *   ring indices (the client's SQ tail, CQ head)    channel.c, -EPROTO: disconnect
 *   a completion slot reserved, max_outstanding      channel.c, backpressure
 *   op, flags, reserved                              -EINVAL
 *   pcmd's phase: a send while draining              -ESHUTDOWN
 *                 anything once aborting             -ECONNABORTED (as the data plane's)
 *   the conn id: this client's table, generation     -EBADF
 *   established and not closed by the client         -ENOTCONN
 *   length <= the client's max_message_bytes         -EMSGSIZE
 *   [offset, offset + len) inside the data area      channel.c, -EFAULT
 * A descriptor is copied out of shared memory once, then checked.
 *
 * The conn table is written by pcmd's loop (pcmd_intake_conn_set()) and read
 * by the owner, through one atomic word per conn (generation and state)
 * stored with release after the data plane's handle: the owner either sees
 * the conn closed, or sees it open with its handle (the handle is left as it
 * was when the conn stops being usable, so a look that raced the change
 * still names this conn's own flow). The loop closes a conn
 * here before it asks the data plane to close the flow, and the data plane
 * takes both in order, so no post reaches a flow after its close and a
 * client can only ever name its own flows. Counters are written by the owner
 * only and read by the loop (relaxed atomics): nothing wakes the loop per
 * descriptor.
 */
#ifndef PCMD_INTAKE_H
#define PCMD_INTAKE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "channel.h"
#include "plane.h"

/* The id a client names a conn (or a listener) by: its generation and index + 1. */
static inline uint32_t pcmd_conn_id(uint32_t index, uint16_t gen)
{
	return (uint32_t)gen << 16 | (index + 1);
}

/* The index an id (pcmd_conn_id()) names, when it is below @n: true and *@index. */
static inline bool pcmd_id_index(uint32_t id, uint32_t n, uint32_t *index)
{
	uint32_t low = id & 0xffff;

	if (low == 0 || low - 1 >= n)
		return false;
	*index = low - 1;
	return true;
}

/* The generation an id (pcmd_conn_id()) names. */
static inline uint16_t pcmd_id_gen(uint32_t id)
{
	return (uint16_t)(id >> 16);
}

/* Conn key bits below the generation (bits 16..31). */
#define PCMD_INTAKE_KNOWN 1u  /* the id names a conn of this client (else -EBADF) */
#define PCMD_INTAKE_USABLE 2u /* established, not closed by the client (else -ENOTCONN) */

/* A flow's counters, as the data path saw its completions. */
struct pcmd_intake_counters {
	uint64_t tx_bytes, rx_bytes, tx_msgs, rx_msgs;
	uint32_t outstanding, sends;
};

#define PCMD_INTAKE_BUDGET 256 /* submissions per turn before other clients get one */

struct pcmd_intake_conn {
	_Atomic uint32_t key;	 /* gen << 16 | PCMD_INTAKE_* ; written by the loop */
	_Atomic uint64_t handle; /* the data plane's name of the flow */
	_Atomic uint64_t tx_bytes, rx_bytes, tx_msgs, rx_msgs; /* the owner's */
	_Atomic uint32_t outstanding, sends;
};

struct pcmd_intake_slot {
	uint64_t cookie;
	uint32_t conn;	  /* index in the conn table */
	uint32_t conn_id; /* as the client named it (checked) */
	uint8_t op;
	bool used;
	uint32_t next_free;
};

struct pcmd_intake {
	struct pcmd_channel *chan;
	uint32_t client_key; /* the high half of every token */
	uint32_t max_flows;
	uint32_t max_outstanding;
	uint64_t max_message_bytes;
	const _Atomic uint32_t *phase; /* pcmd's (enum pcmd_phase) */
	int loop_efd;		       /* wakes pcmd's loop: a broken ring, a drained client */
	uint32_t stopped;	       /* the owner's: enum pcmd_intake_stop */
	struct pcmd_intake_conn *conns;
	struct pcmd_intake_slot *slots;
	uint32_t slot_free;
	_Atomic uint32_t sends_outstanding;
	_Atomic uint64_t descriptors_ok, descriptors_rejected, completions;
	_Atomic int broken; /* the client's ring indices are corrupt: pcmd's loop disconnects it */
	/* The data plane's port this intake is (pcmd_intake_port_add()); NULL: the loop runs it. */
	const struct pcmd_plane_ops *port_ops;
	struct pcmd_plane *port_plane;
	struct pcmd_plane_region *port_region;
};

/**
 * pcmd_intake_create() - the descriptor path of a client's channel.
 * @chan: the channel (stays the caller's).
 * @client_key: the client's key, the high half of every data-plane token.
 * @max_flows: conn table size (limits.flows_per_client).
 * @max_outstanding: slots (limits.outstanding_per_client).
 * @max_message_bytes: the longest message the client may post.
 * @phase: pcmd's phase, read by the owner.
 * @loop_efd: an eventfd pcmd's loop watches (the data plane's event fd).
 * @out: the intake.
 *
 * Return: 0, -ENOMEM.
 */
int pcmd_intake_create(struct pcmd_channel *chan, uint32_t client_key, uint32_t max_flows,
		       uint32_t max_outstanding, uint64_t max_message_bytes,
		       const _Atomic uint32_t *phase, int loop_efd, struct pcmd_intake **out);

void pcmd_intake_destroy(struct pcmd_intake *in);

/* ---- the owner's side ---------------------------------------------------------------------- */

/**
 * pcmd_intake_take() - take, check and post up to @budget submissions; a bad
 * one completes at once with its error (visible at the next flush).
 * @in: the intake.
 * @post: how a checked descriptor reaches the data plane.
 * @post_arg: for @post.
 * @budget: submissions at most.
 *
 * Return: how many were taken, or -EPROTO (the client's ring indices are
 * corrupt: @in is marked broken and pcmd's loop is woken to disconnect it).
 */
int pcmd_intake_take(struct pcmd_intake *in, pcmd_plane_post_fn post, void *post_arg,
		     uint32_t budget);

/**
 * pcmd_intake_complete() - the data plane's completion of a post.
 * @in: the intake.
 * @token: the post's token.
 * @status: 0 or -errno.
 * @bytes: moved.
 *
 * Return: 0, -ENOENT (the token names no outstanding slot: dropped).
 */
int pcmd_intake_complete(struct pcmd_intake *in, uint64_t token, int status, uint64_t bytes);

/* Publish the written completions, release the taken submissions. */
void pcmd_intake_flush(struct pcmd_intake *in);

/**
 * pcmd_intake_arm() - before the owner sleeps: ask for the client's doorbell.
 * @in: the intake.
 *
 * Return: 1 (input can be taken now: do not sleep), 0, -EPROTO (marked broken).
 */
int pcmd_intake_arm(struct pcmd_intake *in);

/* ---- pcmd's loop ----------------------------------------------------------------------------- */

/**
 * pcmd_intake_port_add() - hand the intake to the data plane as region @r's
 * port (plane.h, ports): from then on the data plane's thread owns it, each
 * turn taking up to PCMD_INTAKE_BUDGET submissions, and pcmd's loop reaches
 * it through pcmd_intake_on_owner().
 * @in: the intake.
 * @ops: the data plane's ops table (with port_add).
 * @pl: the data plane.
 * @r: the client's region.
 * @doorbell_fd: the fd that wakes the port's thread (the caller's).
 *
 * Return: 0, or port_add()'s -errno (the loop keeps the intake).
 */
int pcmd_intake_port_add(struct pcmd_intake *in, const struct pcmd_plane_ops *ops,
			 struct pcmd_plane *pl, struct pcmd_plane_region *r, int *doorbell_fd);

/* The data plane removed the port (its region is released): the loop owns the intake again. */
void pcmd_intake_port_removed(struct pcmd_intake *in);

/* Does the data plane's thread run the intake (a port), rather than pcmd's loop? */
static inline bool pcmd_intake_is_port(const struct pcmd_intake *in)
{
	return in->port_region != NULL;
}

/**
 * pcmd_intake_on_owner() - run @fn where the intake runs (the data plane's
 * thread for a port, else here) and wait for it.
 * @in: the intake.
 * @fn: the function; its return is returned.
 * @arg: for @fn.
 */
int pcmd_intake_on_owner(struct pcmd_intake *in, int (*fn)(void *arg), void *arg);

/**
 * pcmd_intake_reserve() - reserve a completion slot for a request (CONNECT,
 * ACCEPT), on the owner.
 * @in: the intake.
 * @outstanding: the slots reserved now (for the error message).
 *
 * Return: 0, -ENOBUFS, -EPROTO (channel.h).
 */
int pcmd_intake_reserve(struct pcmd_intake *in, uint32_t *outstanding);

/* Give back a reservation whose request never started (on the owner). */
void pcmd_intake_unreserve(struct pcmd_intake *in);

/**
 * pcmd_intake_post_completion() - write one completion into a slot reserved
 * with pcmd_intake_reserve() and publish it, on the owner.
 * @in: the intake.
 * @cqe: the completion.
 */
void pcmd_intake_post_completion(struct pcmd_intake *in, const struct pcmd_cqe *cqe);

/* The name the intake posts flow @flow by: the port's flow_handle(), or the flow id itself. */
uint64_t pcmd_intake_flow_handle(const struct pcmd_intake *in, uint32_t flow);

/**
 * pcmd_intake_conn_set() - what the data path knows of conn @index.
 * @in: the intake.
 * @index: the conn.
 * @gen: its generation.
 * @bits: PCMD_INTAKE_KNOWN, PCMD_INTAKE_USABLE (0: free).
 * @handle: the data plane's name of its flow; taken only with PCMD_INTAKE_USABLE
 *          (a conn that stops being usable keeps it: see intake.c).
 */
void pcmd_intake_conn_set(struct pcmd_intake *in, uint32_t index, uint16_t gen, uint32_t bits,
			  uint64_t handle);

/* Zero conn @index's counters (a new conn in the entry; nothing of the old one outstanding). */
void pcmd_intake_conn_reset(struct pcmd_intake *in, uint32_t index);

/* Conn @index's counters now. */
void pcmd_intake_conn_counters(const struct pcmd_intake *in, uint32_t index,
			       struct pcmd_intake_counters *out);

static inline uint32_t pcmd_intake_sends_outstanding(const struct pcmd_intake *in)
{
	return atomic_load_explicit(&in->sends_outstanding, memory_order_relaxed);
}

static inline bool pcmd_intake_broken(const struct pcmd_intake *in)
{
	return atomic_load_explicit(&in->broken, memory_order_acquire) != 0;
}

#endif /* PCMD_INTAKE_H */
