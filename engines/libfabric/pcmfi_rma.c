// SPDX-License-Identifier: MIT
/*
 * pcmfi_rma.c - RMA (fi_rma(3)) of the pcm provider, emulated over pcm
 * messages: the target's provider does what a NIC would.
 *
 * A write sends its bytes in WRITE segments (address and key in each); the
 * target checks every segment against its key table (pcmfi_mr.c: the key,
 * FI_REMOTE_WRITE, the range) and copies it into the region, and after the
 * last one answers RMA_ACK with the result, which completes the write at the
 * initiator (so a refused key fails the write there, as a remote access
 * error does on a NIC). With remote CQ data, the target also completes
 * FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA on its receive queue, without taking a
 * posted receive.
 *
 * A read sends READ_REQ; the target checks the range for FI_REMOTE_READ and
 * answers with READ_RESP segments copied from the region as they are sent
 * (or one empty segment with the refusal); the initiator places them at
 * their offsets and completes the read after the last one.
 *
 * Both wait on the endpoint's rma_wait list for their answer (op_id names
 * them), and fail with the connection if it breaks first.
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

#define RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		   FI_DELIVERY_COMPLETE | FI_REMOTE_CQ_DATA | FI_MORE)

static struct pcmfi_ep *ep_of(struct fid_ep *ep)
{
	return PCMFI_CONTAINER(ep, struct pcmfi_ep, ep);
}

/* The request's segments are all at the target: wait for its answer. */
static void request_sent(struct pcmfi_op *op, int status)
{
	struct pcmfi_ep *ep = op->owner;

	if (status) {
		pcmfi_tx_complete(ep, op, status);
		return;
	}
	op->next = ep->rma_wait;
	ep->rma_wait = op;
}

static struct pcmfi_op *take_waiting(struct pcmfi_ep *ep, uint64_t op_id, uint8_t type)
{
	for (struct pcmfi_op **p = &ep->rma_wait; *p; p = &(*p)->next) {
		struct pcmfi_op *op = *p;

		if (op->hdr.op_id == op_id && op->hdr.type == type) {
			*p = op->next;
			op->next = NULL;
			return op;
		}
	}
	return NULL;
}

/* Queue a read or write of @iov against @rma (one remote range). Return: pcmfi_tx_post()'s. */
static ssize_t post_rma(struct pcmfi_ep *ep, uint8_t type, const struct iovec *iov, size_t count,
			const struct fi_rma_iov *rma, uint64_t data, uint64_t flags, void *context,
			bool silent)
{
	struct pcmfi_tx_req r = {
		.type = type,
		.iov = iov,
		.count = count,
		.rma = rma,
		.flags = type == PCMFI_W_WRITE ? flags : flags & ~FI_INJECT,
		.allowed = RMA_FLAGS,
		.data = data,
		.context = context,
		.silent = silent,
		.cq_flags = FI_RMA | (type == PCMFI_W_WRITE ? FI_WRITE : FI_READ),
		.done = request_sent,
	};

	if (!rma)
		return -FI_EINVAL;
	return pcmfi_tx_post(ep, &r);
}

/* One remote range [@addr, + the length of @iov) under @key, for @count local pieces. */
static ssize_t post_rma_iov(struct fid_ep *ep_fid, uint8_t type, const struct iovec *iov,
			    size_t count, uint64_t addr, uint64_t key, uint64_t data,
			    uint64_t flags, void *context, bool silent)
{
	struct fi_rma_iov rma = {.addr = addr, .len = pcmfi_iov_len(iov, count), .key = key};

	return post_rma(ep_of(ep_fid), type, iov, count, &rma, data, flags, context, silent);
}

/* The same for one local buffer. */
static ssize_t post_rma_buf(struct fid_ep *ep_fid, uint8_t type, const void *buf, size_t len,
			    uint64_t addr, uint64_t key, uint64_t data, uint64_t flags,
			    void *context, bool silent)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return post_rma_iov(ep_fid, type, &iov, 1, addr, key, data, flags, context, silent);
}

/* One message's read or write: one remote range; CQ data goes with writes only. */
static ssize_t post_rma_msg(struct fid_ep *ep_fid, uint8_t type, const struct fi_msg_rma *msg,
			    uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1)
		return -FI_EINVAL;
	return post_rma(ep_of(ep_fid), type, msg->msg_iov, msg->iov_count, msg->rma_iov,
			type == PCMFI_W_WRITE ? msg->data : 0, flags, msg->context, false);
}

/*
 * RMA_ENTRY_POINTS(op, TYPE, BUF): libfabric's three plain entry points of one direction,
 * rma_<op>(), rma_<op>v() and rma_<op>msg(), which differ from the other direction's only
 * in the wire type (and the constness of a write's buffer, BUF). (Their unused arguments, desc and the fi_addr_t, mean nothing on a
 * connected endpoint with local copies.)
 */
#define RMA_ENTRY_POINTS(op, TYPE, BUF)                                                          \
	static ssize_t rma_##op(struct fid_ep *ep_fid, BUF buf, size_t len, void *desc,       \
				fi_addr_t peer, uint64_t addr, uint64_t key, void *context)   \
	{                                                                                     \
		return post_rma_buf(ep_fid, TYPE, buf, len, addr, key, 0,                     \
				    ep_of(ep_fid)->tx_op_flags, context, false);              \
	}                                                                                     \
	static ssize_t rma_##op##v(struct fid_ep *ep_fid, const struct iovec *iov,            \
				   void **desc, size_t count, fi_addr_t peer, uint64_t addr,  \
				   uint64_t key, void *context)                               \
	{                                                                                     \
		return post_rma_iov(ep_fid, TYPE, iov, count, addr, key, 0,                   \
				    ep_of(ep_fid)->tx_op_flags, context, false);              \
	}                                                                                     \
	static ssize_t rma_##op##msg(struct fid_ep *ep_fid, const struct fi_msg_rma *msg,     \
				     uint64_t flags)                                          \
	{                                                                                     \
		return post_rma_msg(ep_fid, TYPE, msg, flags);                                \
	}

RMA_ENTRY_POINTS(read, PCMFI_W_READ_REQ, void *)
RMA_ENTRY_POINTS(write, PCMFI_W_WRITE, const void *)

static ssize_t rma_inject(struct fid_ep *ep_fid, const void *buf, size_t len,
			  fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	return post_rma_buf(ep_fid, PCMFI_W_WRITE, buf, len, addr, key, 0, FI_INJECT, NULL, true);
}

static ssize_t rma_writedata(struct fid_ep *ep_fid, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			     void *context)
{
	return post_rma_buf(ep_fid, PCMFI_W_WRITE, buf, len, addr, key, data,
			    ep_of(ep_fid)->tx_op_flags | FI_REMOTE_CQ_DATA, context, false);
}

static ssize_t rma_injectdata(struct fid_ep *ep_fid, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	return post_rma_buf(ep_fid, PCMFI_W_WRITE, buf, len, addr, key, data,
			    FI_INJECT | FI_REMOTE_CQ_DATA, NULL, true);
}

struct fi_ops_rma pcmfi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};

/* ---- the target's side ---------------------------------------------------------------------- */

static void answer_done(struct pcmfi_op *op, int status)
{
	pcmfi_op_free(op);
}

/* READ_RESP's payload: the region's bytes now, checked again (it may be gone). */
static int read_fill(struct pcmfi_op *op, uint64_t offset, void *dst, size_t len)
{
	struct pcmfi_ep *ep = op->owner;
	uint8_t *src;
	int rc = pcmfi_mr_target(ep->dom, op->hdr.key, op->hdr.addr + offset, len,
				 FI_REMOTE_READ, &src);

	if (rc == 0)
		memcpy(dst, src, len);
	return rc;
}

static void answer(struct pcmfi_ep *ep, uint8_t type, const struct pcmfi_wire_hdr *req,
		   int status)
{
	struct pcmfi_op *op = pcmfi_op_new(type, 0);

	if (!op) {
		pcmfi_conn_fail(ep->conn, -FI_ENOMEM);
		return;
	}
	op->hdr.op_id = req->op_id;
	op->hdr.status = status;
	op->hdr.total = req->total;
	op->hdr.addr = req->addr;
	op->hdr.key = req->key;
	op->payload = type == PCMFI_W_READ_RESP && status == 0 ? req->total : 0;
	op->owner = ep;
	op->fill = read_fill;
	op->done = answer_done;
	pcmfi_conn_send(ep->conn, op);
}

static int on_write(struct pcmfi_ep *ep, const struct pcmfi_wire_hdr *h, const uint8_t *p)
{
	uint8_t *dst;
	int rc;

	if (h->offset == 0)
		ep->write_status = 0;
	if (h->offset > h->total || h->len > h->total - h->offset)
		return -FI_EIO;
	rc = pcmfi_mr_target(ep->dom, h->key, h->addr + h->offset, h->len, FI_REMOTE_WRITE, &dst);
	if (rc == 0)
		memcpy(dst, p, h->len);
	else if (!ep->write_status)
		ep->write_status = rc;
	if (!(h->flags & PCMFI_WF_LAST))
		return 0;
	if (!ep->write_status && (h->flags & PCMFI_WF_CQ_DATA))
		pcmfi_cq_write(ep->rx_cq, NULL, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA, 0, NULL,
			       h->data);
	answer(ep, PCMFI_W_RMA_ACK, h, ep->write_status);
	return 0;
}

static int on_read_resp(struct pcmfi_ep *ep, const struct pcmfi_wire_hdr *h, const uint8_t *p)
{
	struct pcmfi_op *op = NULL;

	for (op = ep->rma_wait; op && !(op->hdr.op_id == h->op_id &&
					 op->hdr.type == PCMFI_W_READ_REQ); op = op->next)
		;
	if (!op || h->offset > op->hdr.total || h->len > op->hdr.total - h->offset)
		return -FI_EIO;
	pcmfi_iov_copy_to(op->iov, op->iov_count, h->offset, p, h->len);
	op->received += h->len;
	if (h->status < 0 && !op->status)
		op->status = h->status;
	if (!(h->flags & PCMFI_WF_LAST))
		return 0;
	take_waiting(ep, h->op_id, PCMFI_W_READ_REQ);
	if (!op->status && op->received != op->hdr.total)
		return -FI_EIO;
	pcmfi_tx_complete(ep, op, op->status);
	return 0;
}

/**
 * pcmfi_rma_on_segment() - a WRITE, READ_REQ, READ_RESP or RMA_ACK segment
 * arrived on @ep's connection.
 *
 * Return: 0, or -FI_EIO (it names no operation of ours, or leaves its range).
 */
int pcmfi_rma_on_segment(struct pcmfi_ep *ep, const struct pcmfi_wire_hdr *h,
			 const uint8_t *payload)
{
	struct pcmfi_op *op;
	uint8_t *src;

	if (ep->state != PCMFI_EP_CONNECTED && ep->state != PCMFI_EP_ACCEPTING)
		return ep->state == PCMFI_EP_SHUTDOWN ? 0 : -FI_EIO;
	if (h->status > 0)
		return -FI_EIO;
	switch (h->type) {
	case PCMFI_W_WRITE:
		return on_write(ep, h, payload);
	case PCMFI_W_READ_REQ:
		answer(ep, PCMFI_W_READ_RESP, h,
		       pcmfi_mr_target(ep->dom, h->key, h->addr, h->total, FI_REMOTE_READ, &src));
		return 0;
	case PCMFI_W_READ_RESP:
		return on_read_resp(ep, h, payload);
	case PCMFI_W_RMA_ACK:
		op = take_waiting(ep, h->op_id, PCMFI_W_WRITE);
		if (!op)
			return -FI_EIO;
		pcmfi_tx_complete(ep, op, h->status);
		return 0;
	default:
		return -FI_EIO;
	}
}

/**
 * pcmfi_rma_flush() - the connection is gone: every read and write waiting
 * for its answer fails with @err.
 */
void pcmfi_rma_flush(struct pcmfi_ep *ep, int err)
{
	while (ep->rma_wait) {
		struct pcmfi_op *op = ep->rma_wait;

		ep->rma_wait = op->next;
		pcmfi_tx_complete(ep, op, err);
	}
}
