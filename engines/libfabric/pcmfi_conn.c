// SPDX-License-Identifier: MIT
/*
 * pcmfi_conn.c - one pcm connection of the provider: segments in, segments
 * out (the format is pcmfi_wire.h).
 *
 * Receiving: the connection keeps `ring` receives of one segment each
 * posted (pcm_tp_recv() into pcm-registered memory), takes them back in the
 * order it posted them (libpcmtransport fills receive k with the peer's
 * message k) and hands each segment to its owner. A MSG segment for which
 * the owner has no receive yet is kept, its slot not reposted, and so is
 * every later MSG segment until pcmfi_conn_drain() delivers them; other
 * segments pass it. So a peer can send only as far ahead as the ring,
 * libpcmtransport's own flow control does the rest (a send goes once its
 * receive is posted).
 *
 * Sending: operations wait in a FIFO; each is cut into segments as send
 * slots free up, copied into the slot (header, then op->fill()'s payload),
 * and sent with pcm_tp_send(). An operation is done (op->done()) when all its
 * segments completed at the peer, or with the first failure.
 *
 * Closing: pcm_tp_conn_close() is called once; the operations still posted
 * then complete (with errors), and the connection is freed once none is
 * left and its owner has released it. Nothing is posted after the close.
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

#define NONE UINT32_MAX

static size_t seg_bytes(void)
{
	return pcmfi_cfg.segment_bytes;
}

/* The fewest bytes a peer's receives hold (FI_PCM_SEGMENT_SIZE's minimum). */
#define SEG_MIN 4096u

/**
 * pcmfi_conn_peer_segment() - the peer said its receives hold @bytes: send
 * segments no longer than that nor than ours.
 *
 * Return: 0, or -FI_EIO (fewer than any peer may hold).
 */
int pcmfi_conn_peer_segment(struct pcmfi_conn *c, uint64_t bytes)
{
	if (bytes < SEG_MIN)
		return -FI_EIO;
	c->tx_seg = bytes < seg_bytes() ? (size_t)bytes : seg_bytes();
	return 0;
}

/**
 * pcmfi_op_new() - an operation of wire type @type with @copy_bytes of owned
 * memory (for inject data or private data), zeroed otherwise.
 *
 * Return: the operation, or NULL.
 */
struct pcmfi_op *pcmfi_op_new(uint8_t type, size_t copy_bytes)
{
	struct pcmfi_op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	if (copy_bytes) {
		op->copy = malloc(copy_bytes);
		if (!op->copy) {
			free(op);
			return NULL;
		}
	}
	op->hdr.type = type;
	op->fill = pcmfi_op_fill_iov;
	return op;
}

void pcmfi_op_free(struct pcmfi_op *op)
{
	if (!op)
		return;
	free(op->copy);
	free(op);
}

/**
 * pcmfi_op_fill_iov() - the payload of an operation that sends its iovecs
 * (or, with op->copy, its copy).
 *
 * Return: 0.
 */
int pcmfi_op_fill_iov(struct pcmfi_op *op, uint64_t offset, void *dst, size_t len)
{
	if (op->copy)
		memcpy(dst, op->copy + offset, len);
	else
		pcmfi_iov_copy_from(op->iov, op->iov_count, offset, dst, len);
	return 0;
}

/* ---- the slot lists (posting order of receives; kept MSG segments) -------------------- */

static void list_append(struct pcmfi_conn *c, uint32_t *first, uint32_t *last, uint32_t i)
{
	c->rx[i].next = NONE;
	if (*last != NONE)
		c->rx[*last].next = i;
	else
		*first = i;
	*last = i;
}

static uint32_t list_pop(struct pcmfi_conn *c, uint32_t *first, uint32_t *last)
{
	uint32_t i = *first;

	if (i == NONE)
		return NONE;
	*first = c->rx[i].next;
	if (*first == NONE)
		*last = NONE;
	return i;
}

/* ---- creation and teardown --------------------------------------------------------------- */

static void conn_free(struct pcmfi_conn *c)
{
	struct pcmfi_conn **p = &c->fab->conns;

	while (*p && *p != c)
		p = &(*p)->next;
	if (*p)
		*p = c->next;
	if (c->mem && !c->port->dead)
		pcm_tp_mem_free(c->port->tp, c->mem);
	free(c->rx);
	free(c->tx);
	free(c);
}

static int conn_new(struct pcmfi_port *port, const struct pcmfi_conn_ops *ops, void *owner,
		    struct pcmfi_conn **out)
{
	unsigned ring = pcmfi_cfg.ring, slots = pcmfi_cfg.slots;
	struct pcmfi_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return -FI_ENOMEM;
	c->fab = port->fab;
	c->port = port;
	c->ops = ops;
	c->owner = owner;
	c->rx_first = c->rx_last = c->stall_first = c->stall_last = NONE;
	c->tx_seg = SEG_MIN; /* until the peer says how much its receives hold */
	c->rx = calloc(ring, sizeof(*c->rx));
	c->tx = calloc(slots, sizeof(*c->tx));
	c->mem = pcm_tp_mem_alloc(port->tp, (ring + slots) * seg_bytes());
	c->next = c->fab->conns;
	c->fab->conns = c;
	if (!c->rx || !c->tx || !c->mem) {
		if (!c->mem)
			FI_WARN(&pcmfi_prov, FI_LOG_EP_CTRL,
				"no room for a connection's %u segments of %zu bytes: %s "
				"(FI_PCM_REGION_MB)\n",
				ring + slots, seg_bytes(), pcm_tp_last_error());
		conn_free(c);
		return -FI_ENOMEM;
	}
	for (unsigned i = 0; i < ring; i++) {
		c->rx[i].buf = c->mem + (size_t)i * seg_bytes();
		c->rx[i].wr = (struct pcmfi_wr){PCMFI_WR_RX, c, i};
	}
	for (unsigned i = 0; i < slots; i++) {
		c->tx[i].buf = c->mem + (size_t)(ring + i) * seg_bytes();
		c->tx[i].wr = (struct pcmfi_wr){PCMFI_WR_TX, c, i};
	}
	*out = c;
	return 0;
}

/* pcm_tp_conn_close(), once; -EAGAIN leaves it due for the next progress. */
static void close_tp(struct pcmfi_conn *c)
{
	int rc;

	if (c->state == PCMFI_CONN_DIALING || (c->state == PCMFI_CONN_CLOSED && !c->close_due))
		return;
	c->state = PCMFI_CONN_CLOSED;
	rc = c->tp ? pcm_tp_conn_close(c->tp) : 0;
	c->close_due = rc == -EAGAIN;
}

static void finish(struct pcmfi_op *op)
{
	if (op->all_cut && op->in_flight == 0 && op->done)
		op->done(op, op->status);
}

/* The operations not yet started fail with @err. */
static void fail_queue(struct pcmfi_conn *c, int err)
{
	while (c->txq) {
		struct pcmfi_op *op = c->txq;

		c->txq = op->next;
		op->next = NULL;
		if (!op->status)
			op->status = err;
		op->all_cut = true;
		finish(op);
	}
	c->txq_tail = NULL;
}

/**
 * pcmfi_conn_fail() - the connection is broken: close it, fail what it had
 * not started, and tell its owner (once).
 * @err: a negative FI_E* code.
 */
void pcmfi_conn_fail(struct pcmfi_conn *c, int err)
{
	if (c->failed)
		return;
	c->failed = true;
	close_tp(c);
	fail_queue(c, err);
	if (c->ops)
		c->ops->failed(c, err);
}

/**
 * pcmfi_conn_release() - the owner is done with @c: drop everything it had
 * queued or in flight (without calling their done()), close it, and free it
 * once libpcmtransport has handed back all it holds.
 */
void pcmfi_conn_release(struct pcmfi_conn *c)
{
	c->ops = NULL;
	c->owner = NULL;
	for (unsigned i = 0; i < pcmfi_cfg.slots; i++) {
		struct pcmfi_op *op = c->tx[i].op;

		if (!op)
			continue;
		/* an operation in several slots is freed once */
		for (unsigned j = i; j < pcmfi_cfg.slots; j++)
			if (c->tx[j].op == op)
				c->tx[j].op = NULL;
		if (op->all_cut)
			pcmfi_op_free(op);
		else
			op->done = NULL; /* still queued: freed with the queue below */
	}
	while (c->txq) {
		struct pcmfi_op *op = c->txq;

		c->txq = op->next;
		pcmfi_op_free(op);
	}
	c->txq_tail = NULL;
	c->stall_first = c->stall_last = NONE;
	for (unsigned i = 0; i < pcmfi_cfg.ring; i++)
		c->rx[i].kept = false;
	close_tp(c);
}

/**
 * pcmfi_conn_set_owner() - hand @c to another owner (a request's endpoint).
 */
void pcmfi_conn_set_owner(struct pcmfi_conn *c, const struct pcmfi_conn_ops *ops, void *owner)
{
	c->ops = ops;
	c->owner = owner;
}

/* ---- receiving ----------------------------------------------------------------------------- */

static void post_rx(struct pcmfi_conn *c, uint32_t i)
{
	struct pcmfi_rx_slot *s = &c->rx[i];
	int rc;

	rc = pcm_tp_recv(c->tp, NULL, s->buf, seg_bytes(), (uint64_t)(uintptr_t)&s->wr);
	if (rc == -EAGAIN) {
		c->rx_retry = true; /* reposted by the next progress */
		return;
	}
	if (rc < 0) {
		FI_WARN(&pcmfi_prov, FI_LOG_EP_DATA, "pcm_tp_recv: %s\n", pcm_tp_strerror(rc));
		pcmfi_conn_fail(c, pcmfi_errno(rc));
		return;
	}
	s->posted = true;
	s->filled = false;
	c->outstanding++;
	list_append(c, &c->rx_first, &c->rx_last, i);
}

/* Post every slot that is neither posted nor holding a kept segment. */
static void refill(struct pcmfi_conn *c)
{
	c->rx_retry = false;
	for (uint32_t i = 0; i < pcmfi_cfg.ring && c->state == PCMFI_CONN_OPEN && !c->failed; i++)
		if (!c->rx[i].posted && !c->rx[i].kept)
			post_rx(c, i);
}

/* Check a received segment. Return: its header, or NULL (the peer broke the protocol). */
static const struct pcmfi_wire_hdr *check(const struct pcmfi_rx_slot *s)
{
	const struct pcmfi_wire_hdr *h = (const struct pcmfi_wire_hdr *)s->buf;

	if (s->bytes < PCMFI_WIRE_HDR_BYTES || h->magic != PCMFI_WIRE_MAGIC ||
	    h->version != PCMFI_WIRE_VERSION || h->type == 0 || h->type >= PCMFI_W_TYPE_MAX ||
	    h->len != s->bytes - PCMFI_WIRE_HDR_BYTES)
		return NULL;
	return h;
}

/* Hand slot @i's segment to the owner. Return: true if the slot is free again. */
static bool deliver(struct pcmfi_conn *c, uint32_t i)
{
	const struct pcmfi_wire_hdr *h = check(&c->rx[i]);
	int rc;

	if (!h) {
		FI_WARN(&pcmfi_prov, FI_LOG_EP_DATA, "a malformed segment (%u bytes)\n",
			c->rx[i].bytes);
		pcmfi_conn_fail(c, -FI_EIO);
		return true;
	}
	if (!c->ops)
		return true;
	if (h->type == PCMFI_W_MSG && c->stall_first != NONE)
		rc = 1; /* behind a kept one */
	else
		rc = c->ops->recv(c, h, c->rx[i].buf + PCMFI_WIRE_HDR_BYTES);
	if (rc == 1 && h->type == PCMFI_W_MSG && !c->failed) {
		c->rx[i].kept = true;
		list_append(c, &c->stall_first, &c->stall_last, i);
		return false;
	}
	if (rc != 0 && !c->failed)
		pcmfi_conn_fail(c, rc < 0 ? rc : -FI_EIO);
	return true;
}

/* Deliver the filled receives at the head of the posting order. */
static void rx_in_order(struct pcmfi_conn *c)
{
	while (c->rx_first != NONE && c->rx[c->rx_first].filled && !c->failed) {
		uint32_t i = list_pop(c, &c->rx_first, &c->rx_last);

		c->rx[i].posted = false;
		c->rx[i].filled = false;
		deliver(c, i);
	}
	refill(c);
}

static void on_rx(struct pcmfi_conn *c, uint32_t i, const struct pcm_tp_completion *comp)
{
	struct pcmfi_rx_slot *s = &c->rx[i];

	c->outstanding--;
	if (c->state != PCMFI_CONN_OPEN || c->failed) {
		s->posted = false;
		return; /* closing: what comes back is the abort */
	}
	if (comp->status < 0) {
		s->posted = false;
		FI_WARN(&pcmfi_prov, FI_LOG_EP_DATA, "a receive failed: %s\n",
			pcm_tp_strerror(comp->status));
		pcmfi_conn_fail(c, pcmfi_errno(comp->status));
		return;
	}
	s->filled = true;
	s->bytes = (uint32_t)comp->bytes;
	rx_in_order(c);
}

/**
 * pcmfi_conn_drain() - deliver the kept MSG segments again, in order, until
 * the owner keeps one; repost the slots freed. A failed connection still
 * delivers what it had received.
 */
void pcmfi_conn_drain(struct pcmfi_conn *c)
{
	while (c->stall_first != NONE && c->ops) {
		uint32_t i = c->stall_first;
		const struct pcmfi_wire_hdr *h = (const struct pcmfi_wire_hdr *)c->rx[i].buf;
		int rc = c->ops->recv(c, h, c->rx[i].buf + PCMFI_WIRE_HDR_BYTES);

		if (rc == 1)
			break;
		list_pop(c, &c->stall_first, &c->stall_last);
		c->rx[i].kept = false;
		if (rc < 0 && !c->failed)
			pcmfi_conn_fail(c, rc);
	}
	refill(c);
}

/* ---- sending -------------------------------------------------------------------------------- */

static int free_tx_slot(const struct pcmfi_conn *c)
{
	for (unsigned i = 0; i < pcmfi_cfg.slots; i++)
		if (!c->tx[i].busy)
			return (int)i;
	return -1;
}

/*
 * Cut the head operation's next segment into slot @i and send it.
 * Return: 0 (sent), -FI_EAGAIN (libpcmtransport is full: try later), or
 * another negative code (the connection failed).
 */
static int send_segment(struct pcmfi_conn *c, unsigned i)
{
	struct pcmfi_op *op = c->txq;
	struct pcmfi_tx_slot *s = &c->tx[i];
	struct pcmfi_wire_hdr *h = (struct pcmfi_wire_hdr *)s->buf;
	uint64_t left = op->payload - op->cut;
	size_t max = c->tx_seg - PCMFI_WIRE_HDR_BYTES;
	size_t len = left < max ? (size_t)left : max;
	int rc;

	*h = op->hdr;
	h->magic = PCMFI_WIRE_MAGIC;
	h->version = PCMFI_WIRE_VERSION;
	h->offset = op->cut;
	h->len = (uint32_t)len;
	h->flags &= (uint8_t)~PCMFI_WF_LAST;
	rc = len ? op->fill(op, op->cut, s->buf + PCMFI_WIRE_HDR_BYTES, len) : 0;
	if (rc < 0) {
		/* the peer learns of the failure from an empty last segment */
		h->status = rc;
		h->len = 0;
		len = 0;
		op->status = rc;
		left = 0;
	}
	if (len == left)
		h->flags |= PCMFI_WF_LAST;
	rc = pcm_tp_send(c->tp, NULL, s->buf, PCMFI_WIRE_HDR_BYTES + len,
			 (uint64_t)(uintptr_t)&s->wr);
	if (rc < 0)
		return rc == -EAGAIN ? -FI_EAGAIN : pcmfi_errno(rc);
	s->busy = true;
	s->op = op;
	c->tx_busy++;
	c->outstanding++;
	op->in_flight++;
	op->cut += len;
	if (h->flags & PCMFI_WF_LAST) {
		op->all_cut = true;
		c->txq = op->next;
		op->next = NULL;
		if (!c->txq)
			c->txq_tail = NULL;
	}
	return 0;
}

static void pump(struct pcmfi_conn *c)
{
	int i, rc;

	while (c->state == PCMFI_CONN_OPEN && !c->failed && c->txq &&
	       (i = free_tx_slot(c)) >= 0) {
		rc = send_segment(c, (unsigned)i);
		if (rc == -FI_EAGAIN)
			return;
		if (rc < 0) {
			FI_WARN(&pcmfi_prov, FI_LOG_EP_DATA, "pcm_tp_send: %s\n",
				fi_strerror(-rc));
			pcmfi_conn_fail(c, rc);
			return;
		}
	}
}

/**
 * pcmfi_conn_send() - queue @op behind the operations queued before it and
 * start sending what the slots allow. A connection that failed fails @op
 * (op->done() is called before this returns).
 */
void pcmfi_conn_send(struct pcmfi_conn *c, struct pcmfi_op *op)
{
	op->next = NULL;
	if (c->failed || c->state == PCMFI_CONN_CLOSED) {
		op->status = op->status ? op->status : -FI_ENOTCONN;
		op->all_cut = true;
		finish(op);
		return;
	}
	if (c->txq_tail)
		c->txq_tail->next = op;
	else
		c->txq = op;
	c->txq_tail = op;
	pump(c);
}

static void on_tx(struct pcmfi_conn *c, uint32_t i, const struct pcm_tp_completion *comp)
{
	struct pcmfi_tx_slot *s = &c->tx[i];
	struct pcmfi_op *op = s->op;
	int err = pcmfi_errno(comp->status);

	c->outstanding--;
	c->tx_busy--;
	s->busy = false;
	s->op = NULL;
	if (op) {
		op->in_flight--;
		if (err && !op->status)
			op->status = err;
		finish(op);
	}
	if (err && c->state == PCMFI_CONN_OPEN) {
		FI_WARN(&pcmfi_prov, FI_LOG_EP_DATA, "a send failed: %s\n",
			pcm_tp_strerror(comp->status));
		pcmfi_conn_fail(c, err);
	} else
		pump(c);
}

/* ---- setup ---------------------------------------------------------------------------------- */

/**
 * pcmfi_conn_dial() - dial @name from @port; @ops->connected() says how it went.
 *
 * Return: 0, -FI_ENOMEM, or pcm_tp_connect()'s refusal as a FI_E* code.
 */
int pcmfi_conn_dial(struct pcmfi_port *port, const char *name, const struct pcmfi_conn_ops *ops,
		    void *owner, struct pcmfi_conn **out)
{
	struct pcm_tp_conn_opts o = {.policy = pcmfi_cfg.policy[0] ? pcmfi_cfg.policy : NULL};
	struct pcmfi_conn *c;
	int rc = conn_new(port, ops, owner, &c);

	if (rc)
		return rc;
	c->state = PCMFI_CONN_DIALING;
	c->connect_wr = (struct pcmfi_wr){PCMFI_WR_CONNECT, c, 0};
	rc = pcm_tp_connect(port->tp, name, &o, (uint64_t)(uintptr_t)&c->connect_wr);
	if (rc < 0) {
		FI_WARN(&pcmfi_prov, FI_LOG_EP_CTRL, "pcm_tp_connect(%s): %s (%s)\n", name,
			pcm_tp_strerror(rc), pcm_tp_last_error());
		conn_free(c);
		return pcmfi_errno(rc);
	}
	c->outstanding++;
	*out = c;
	return 0;
}

static void on_connect(struct pcmfi_conn *c, const struct pcm_tp_completion *comp)
{
	c->outstanding--;
	if (comp->status < 0) {
		c->state = PCMFI_CONN_CLOSED;
		c->failed = true;
		if (c->ops)
			c->ops->connected(c, pcmfi_errno(comp->status));
		return;
	}
	c->tp = comp->conn;
	c->state = PCMFI_CONN_OPEN;
	if (!c->ops) {
		close_tp(c); /* released while dialing */
		return;
	}
	refill(c);
	c->ops->connected(c, 0);
	pump(c);
}

/**
 * pcmfi_conn_accepted() - a connection @port accepted (@tp), owned by @owner.
 *
 * Return: 0 or -FI_ENOMEM (then @tp is closed).
 */
int pcmfi_conn_accepted(struct pcmfi_port *port, struct pcm_tp_conn *tp,
			const struct pcmfi_conn_ops *ops, void *owner, struct pcmfi_conn **out)
{
	struct pcmfi_conn *c;
	int rc = conn_new(port, ops, owner, &c);

	if (rc) {
		pcm_tp_conn_close(tp);
		return rc;
	}
	c->tp = tp;
	c->state = PCMFI_CONN_OPEN;
	refill(c);
	*out = c;
	return 0;
}

/**
 * pcmfi_conn_completion() - route a completion of libpcmtransport (its
 * cookie is @wr) to its connection.
 */
void pcmfi_conn_completion(struct pcmfi_wr *wr, const struct pcm_tp_completion *comp)
{
	struct pcmfi_conn *c = wr->owner;

	switch (wr->kind) {
	case PCMFI_WR_CONNECT:
		on_connect(c, comp);
		break;
	case PCMFI_WR_RX:
		on_rx(c, wr->index, comp);
		break;
	case PCMFI_WR_TX:
		on_tx(c, wr->index, comp);
		break;
	default:
		break;
	}
}

/**
 * pcmfi_conn_progress() - what a connection does between completions: retry
 * a close, repost receives and send what libpcmtransport refused with
 * -EAGAIN; free a released connection that holds nothing any more.
 */
void pcmfi_conn_progress(struct pcmfi_conn *c)
{
	if (c->close_due)
		close_tp(c);
	if (c->state == PCMFI_CONN_OPEN && !c->failed && c->rx_retry)
		refill(c);
	if (c->state == PCMFI_CONN_OPEN && !c->failed && c->txq)
		pump(c);
	if (c->state != PCMFI_CONN_DIALING && !c->ops && c->outstanding == 0 && !c->close_due)
		conn_free(c);
}

/**
 * pcmfi_conn_port_dead() - pcmd is gone: nothing posted on @port's
 * connections will complete. Each fails with @err and forgets its posts.
 */
void pcmfi_conn_port_dead(struct pcmfi_port *port, int err)
{
	for (struct pcmfi_conn *c = port->fab->conns, *next; c; c = next) {
		next = c->next;
		if (c->port != port)
			continue;
		c->state = PCMFI_CONN_CLOSED;
		c->close_due = false;
		c->tp = NULL;
		c->outstanding = 0;
		for (unsigned i = 0; i < pcmfi_cfg.slots; i++) {
			struct pcmfi_op *op = c->tx[i].op;

			c->tx[i].busy = false;
			c->tx[i].op = NULL;
			if (op) {
				op->in_flight--;
				op->status = op->status ? op->status : err;
				finish(op);
			}
		}
		if (c->ops)
			pcmfi_conn_fail(c, err);
	}
}

/**
 * pcmfi_conn_forget_all() - free every connection of @fab without a call to
 * libpcmtransport: its endpoints are about to be closed, which drops them.
 */
void pcmfi_conn_forget_all(struct pcmfi_fabric *fab)
{
	while (fab->conns) {
		struct pcmfi_conn *c = fab->conns;

		fab->conns = c->next;
		free(c->rx);
		free(c->tx);
		free(c);
	}
}
