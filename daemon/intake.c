// SPDX-License-Identifier: MIT
/*
 * intake.c - a client's descriptor path (intake.h): intake with its checks,
 * the outstanding slots, completions and the per-conn counters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intake.h"
#include "phase.h"

/* Owner-written counters that pcmd's loop reads: one writer, so load + store. */
#define COUNT(field, n)                                                                            \
	atomic_store_explicit(&(field),                                                            \
			      atomic_load_explicit(&(field), memory_order_relaxed) + (n),          \
			      memory_order_relaxed)

int pcmd_intake_create(struct pcmd_channel *chan, uint32_t client_key, uint32_t max_flows,
		       uint32_t max_outstanding, uint64_t max_message_bytes,
		       const _Atomic uint32_t *phase, int loop_efd, struct pcmd_intake **out)
{
	struct pcmd_intake *in = calloc(1, sizeof(*in));

	if (!in)
		return -ENOMEM;
	in->conns = calloc(max_flows, sizeof(*in->conns));
	in->slots = calloc(max_outstanding, sizeof(*in->slots));
	if (!in->conns || !in->slots) {
		pcmd_intake_destroy(in);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < max_outstanding; i++)
		in->slots[i].next_free = i + 1 < max_outstanding ? i + 1 : UINT32_MAX;
	in->slot_free = max_outstanding ? 0 : UINT32_MAX;
	in->chan = chan;
	in->client_key = client_key;
	in->max_flows = max_flows;
	in->max_outstanding = max_outstanding;
	in->max_message_bytes = max_message_bytes;
	in->phase = phase;
	in->loop_efd = loop_efd;
	*out = in;
	return 0;
}

void pcmd_intake_destroy(struct pcmd_intake *in)
{
	if (!in)
		return;
	free(in->conns);
	free(in->slots);
	free(in);
}

static void wake_loop(struct pcmd_intake *in)
{
	uint64_t one = 1;

	/* EAGAIN: saturated, so the loop is woken anyway */
	if (in->loop_efd >= 0 && write(in->loop_efd, &one, sizeof(one)) < 0)
		return;
}

/* ---- the owner's side ---------------------------------------------------------------------- */

static void put_cqe(struct pcmd_intake *in, const struct pcmd_cqe *cqe)
{
	pcmd_channel_complete(in->chan, cqe);
	COUNT(in->completions, 1);
}

static void write_cqe(struct pcmd_intake *in, uint8_t op, uint32_t conn_id, uint64_t cookie,
		      int status, uint64_t bytes)
{
	struct pcmd_cqe e;

	memset(&e, 0, sizeof(e));
	e.op = op;
	e.status = status;
	e.conn_id = conn_id;
	e.cookie = cookie;
	e.bytes = bytes;
	put_cqe(in, &e);
}

/* The conn @conn_id names, checked against this client's table: 0, -EBADF, -ENOTCONN. */
static int conn_lookup(const struct pcmd_intake *in, uint32_t conn_id, uint32_t *index,
		       uint64_t *handle)
{
	uint32_t i, key;

	if (!pcmd_id_index(conn_id, in->max_flows, &i))
		return -EBADF;
	key = atomic_load_explicit(&in->conns[i].key, memory_order_acquire);
	if (!(key & PCMD_INTAKE_KNOWN) || (uint16_t)(key >> 16) != pcmd_id_gen(conn_id))
		return -EBADF;
	if (!(key & PCMD_INTAKE_USABLE))
		return -ENOTCONN;
	*index = i;
	*handle = atomic_load_explicit(&in->conns[i].handle, memory_order_relaxed);
	return 0;
}

static int check_sqe(const struct pcmd_intake *in, const struct pcmd_sqe *s, uint32_t *index,
		     uint64_t *handle)
{
	uint32_t phase = atomic_load_explicit(in->phase, memory_order_relaxed);
	int rc;

	if ((s->op != PCMD_OP_SEND && s->op != PCMD_OP_RECV) || s->flags || s->reserved)
		return -EINVAL;
	/* Draining: no new sends, but receives still come in so posted sends can finish. */
	if (phase == PCMD_PHASE_DRAINING && s->op == PCMD_OP_SEND)
		return -ESHUTDOWN;
	/* Aborting: what the client posted before the abort is cut off, as the data plane's is. */
	if (phase != PCMD_PHASE_RUNNING && phase != PCMD_PHASE_DRAINING)
		return -ECONNABORTED;
	rc = conn_lookup(in, s->conn_id, index, handle);
	if (rc < 0)
		return rc;
	if (s->len > in->max_message_bytes)
		return -EMSGSIZE;
	return pcmd_channel_check_buffer(in->chan, s->offset, s->len);
}

static uint32_t slot_alloc(struct pcmd_intake *in)
{
	uint32_t s = in->slot_free;

	/* Reservations never exceed max_outstanding, so a slot is always free here. */
	if (s == UINT32_MAX)
		abort();
	in->slot_free = in->slots[s].next_free;
	in->slots[s].used = true;
	return s;
}

static void slot_free(struct pcmd_intake *in, uint32_t s)
{
	in->slots[s].used = false;
	in->slots[s].next_free = in->slot_free;
	in->slot_free = s;
}

static void post_one(struct pcmd_intake *in, const struct pcmd_sqe *sqe, pcmd_plane_post_fn post,
		     void *post_arg)
{
	uint32_t index = 0, s;
	uint64_t handle = 0;
	int rc = check_sqe(in, sqe, &index, &handle);

	if (rc == 0) {
		struct pcmd_intake_conn *cn = &in->conns[index];

		s = slot_alloc(in);
		in->slots[s].cookie = sqe->cookie;
		in->slots[s].conn = index;
		in->slots[s].conn_id = sqe->conn_id;
		in->slots[s].op = sqe->op;
		/* Counted before the post: a data plane may complete it inside post(). */
		COUNT(cn->outstanding, 1);
		if (sqe->op == PCMD_OP_SEND) {
			COUNT(cn->sends, 1);
			COUNT(in->sends_outstanding, 1);
		}
		rc = post(post_arg, handle, sqe->op, sqe->offset, sqe->len,
			  (uint64_t)in->client_key << 32 | s);
		if (rc == 0) {
			COUNT(in->descriptors_ok, 1);
			return;
		}
		COUNT(cn->outstanding, -1);
		if (sqe->op == PCMD_OP_SEND) {
			COUNT(cn->sends, -1);
			COUNT(in->sends_outstanding, -1);
		}
		slot_free(in, s);
	}
	COUNT(in->descriptors_rejected, 1);
	write_cqe(in, sqe->op, sqe->conn_id, sqe->cookie, rc, 0);
}

static int mark_broken(struct pcmd_intake *in)
{
	atomic_store_explicit(&in->broken, 1, memory_order_release);
	wake_loop(in);
	return -EPROTO;
}

int pcmd_intake_take(struct pcmd_intake *in, pcmd_plane_post_fn post, void *post_arg,
		     uint32_t budget)
{
	struct pcmd_sqe sqe;
	uint32_t n = 0;
	int rc = 0;

	if (pcmd_intake_broken(in))
		return -EPROTO;
	while (n < budget && (rc = pcmd_channel_next(in->chan, &sqe, &in->stopped)) == 1) {
		post_one(in, &sqe, post, post_arg);
		n++;
	}
	if (rc < 0)
		return mark_broken(in);
	return (int)n;
}

int pcmd_intake_complete(struct pcmd_intake *in, uint64_t token, int status, uint64_t bytes)
{
	uint32_t s = (uint32_t)token;
	struct pcmd_intake_slot *sl;
	struct pcmd_intake_conn *cn;
	uint32_t phase;

	if (token >> 32 != in->client_key || s >= in->max_outstanding || !in->slots[s].used)
		return -ENOENT;
	sl = &in->slots[s];
	cn = &in->conns[sl->conn];
	COUNT(cn->outstanding, -1);
	if (sl->op == PCMD_OP_SEND) {
		COUNT(cn->sends, -1);
		if (status == 0) {
			COUNT(cn->tx_bytes, bytes);
			COUNT(cn->tx_msgs, 1);
		}
		COUNT(in->sends_outstanding, -1);
		phase = atomic_load_explicit(in->phase, memory_order_relaxed);
		if (phase == PCMD_PHASE_DRAINING && pcmd_intake_sends_outstanding(in) == 0)
			wake_loop(in); /* this client is drained */
	} else if (status == 0) {
		COUNT(cn->rx_bytes, bytes);
		COUNT(cn->rx_msgs, 1);
	}
	write_cqe(in, sl->op, sl->conn_id, sl->cookie, status, status == 0 ? bytes : 0);
	slot_free(in, s);
	return 0;
}

void pcmd_intake_flush(struct pcmd_intake *in)
{
	pcmd_channel_flush(in->chan);
}

int pcmd_intake_arm(struct pcmd_intake *in)
{
	int rc;

	if (pcmd_intake_broken(in))
		return 0;
	rc = pcmd_channel_arm(in->chan, in->stopped);
	return rc < 0 ? mark_broken(in) : rc;
}

/* ---- as a port ------------------------------------------------------------------------------ */

static uint32_t port_intake(void *arg, pcmd_plane_post_fn post, void *post_arg)
{
	int n = pcmd_intake_take(arg, post, post_arg, PCMD_INTAKE_BUDGET);

	return n > 0 ? (uint32_t)n : 0;
}

static void port_complete(void *arg, uint64_t token, int status, uint64_t bytes)
{
	/* -ENOENT: the data plane's bug; the slot table stays as it was. */
	(void)pcmd_intake_complete(arg, token, status, bytes);
}

static void port_flush(void *arg)
{
	pcmd_intake_flush(arg);
}

static bool port_arm(void *arg)
{
	return pcmd_intake_arm(arg) > 0;
}

/* ---- pcmd's loop ----------------------------------------------------------------------------- */

int pcmd_intake_port_add(struct pcmd_intake *in, const struct pcmd_plane_ops *ops,
			 struct pcmd_plane *pl, struct pcmd_plane_region *r, int *doorbell_fd)
{
	const struct pcmd_plane_port port = {.intake = port_intake,
					     .complete = port_complete,
					     .flush = port_flush,
					     .arm = port_arm,
					     .arg = in};
	int rc = ops->port_add(pl, r, &port, doorbell_fd);

	if (rc < 0)
		return rc;
	in->port_ops = ops;
	in->port_plane = pl;
	in->port_region = r;
	return 0;
}

void pcmd_intake_port_removed(struct pcmd_intake *in)
{
	in->port_ops = NULL;
	in->port_plane = NULL;
	in->port_region = NULL;
}

int pcmd_intake_on_owner(struct pcmd_intake *in, int (*fn)(void *arg), void *arg)
{
	if (pcmd_intake_is_port(in))
		return in->port_ops->call(in->port_plane, in->port_region, fn, arg);
	return fn(arg);
}

struct reserve_call {
	struct pcmd_intake *in;
	uint32_t outstanding;
};

static int reserve_fn(void *arg)
{
	struct reserve_call *r = arg;
	int rc = pcmd_channel_reserve(r->in->chan);

	r->outstanding = pcmd_channel_outstanding(r->in->chan);
	return rc;
}

int pcmd_intake_reserve(struct pcmd_intake *in, uint32_t *outstanding)
{
	struct reserve_call r = {.in = in};
	int rc = pcmd_intake_on_owner(in, reserve_fn, &r);

	*outstanding = r.outstanding;
	return rc;
}

static int unreserve_fn(void *arg)
{
	struct pcmd_intake *in = arg;

	pcmd_channel_unreserve(in->chan);
	return 0;
}

void pcmd_intake_unreserve(struct pcmd_intake *in)
{
	(void)pcmd_intake_on_owner(in, unreserve_fn, in);
}

struct post_call {
	struct pcmd_intake *in;
	const struct pcmd_cqe *cqe;
};

static int post_fn(void *arg)
{
	struct post_call *k = arg;

	put_cqe(k->in, k->cqe);
	pcmd_intake_flush(k->in);
	return 0;
}

void pcmd_intake_post_completion(struct pcmd_intake *in, const struct pcmd_cqe *cqe)
{
	struct post_call k = {.in = in, .cqe = cqe};

	(void)pcmd_intake_on_owner(in, post_fn, &k);
}

uint64_t pcmd_intake_flow_handle(const struct pcmd_intake *in, uint32_t flow)
{
	return pcmd_intake_is_port(in) ? in->port_ops->flow_handle(in->port_plane, flow) : flow;
}

void pcmd_intake_conn_set(struct pcmd_intake *in, uint32_t index, uint16_t gen, uint32_t bits,
			  uint64_t handle)
{
	struct pcmd_intake_conn *cn = &in->conns[index];

	/*
	 * The handle changes only when the conn becomes usable. An owner that
	 * loaded the key just before it stopped being usable then still loads
	 * this conn's handle (its post lands before the close, which the data
	 * plane takes after this intake), never 0 or another conn's: a conn
	 * becomes usable again only after its close was taken and completed.
	 */
	if (bits & PCMD_INTAKE_USABLE)
		atomic_store_explicit(&cn->handle, handle, memory_order_relaxed);
	atomic_store_explicit(&cn->key, bits ? (uint32_t)gen << 16 | bits : 0,
			      memory_order_release);
}

void pcmd_intake_conn_reset(struct pcmd_intake *in, uint32_t index)
{
	struct pcmd_intake_conn *cn = &in->conns[index];

	atomic_store_explicit(&cn->tx_bytes, 0, memory_order_relaxed);
	atomic_store_explicit(&cn->rx_bytes, 0, memory_order_relaxed);
	atomic_store_explicit(&cn->tx_msgs, 0, memory_order_relaxed);
	atomic_store_explicit(&cn->rx_msgs, 0, memory_order_relaxed);
	atomic_store_explicit(&cn->outstanding, 0, memory_order_relaxed);
	atomic_store_explicit(&cn->sends, 0, memory_order_relaxed);
}

void pcmd_intake_conn_counters(const struct pcmd_intake *in, uint32_t index,
			       struct pcmd_intake_counters *out)
{
	const struct pcmd_intake_conn *cn = &in->conns[index];

	out->tx_bytes = atomic_load_explicit(&cn->tx_bytes, memory_order_relaxed);
	out->rx_bytes = atomic_load_explicit(&cn->rx_bytes, memory_order_relaxed);
	out->tx_msgs = atomic_load_explicit(&cn->tx_msgs, memory_order_relaxed);
	out->rx_msgs = atomic_load_explicit(&cn->rx_msgs, memory_order_relaxed);
	out->outstanding = atomic_load_explicit(&cn->outstanding, memory_order_relaxed);
	out->sends = atomic_load_explicit(&cn->sends, memory_order_relaxed);
}
