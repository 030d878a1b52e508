// SPDX-License-Identifier: MIT
/*
 * pcmfi_msg.c - messages (fi_msg(3)) of the pcm provider.
 *
 * A send is one operation on the endpoint's connection: its bytes are
 * copied, a segment at a time, into pcm's registered memory and sent; it
 * completes (FI_TRANSMIT_COMPLETE) once the peer's provider holds every
 * segment. An inject copies the bytes at once and never completes. Remote CQ
 * data rides in the segments' header.
 *
 * A receive waits in the endpoint's queue; the next message's first segment
 * takes the oldest one, and every segment of that message is copied into it
 * at its offset. A message longer than the receive fills it and completes it
 * with FI_ETRUNC (olen: the bytes that did not fit). Until a receive is
 * posted, a message waits in the connection's ring (pcmfi_conn.c).
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

#define SEND_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		    FI_REMOTE_CQ_DATA | FI_MORE)

static struct pcmfi_ep *ep_of(struct fid_ep *ep)
{
	return PCMFI_CONTAINER(ep, struct pcmfi_ep, ep);
}

/* ---- sending -------------------------------------------------------------------------------- */

static void send_done(struct pcmfi_op *op, int status)
{
	pcmfi_tx_complete(op->owner, op, status);
}

/* Queue a send of @iov (an inject, FI_INJECT: copied now). Return: pcmfi_tx_post()'s. */
static ssize_t post_send(struct pcmfi_ep *ep, const struct iovec *iov, size_t count,
			 uint64_t data, uint64_t flags, void *context, bool silent)
{
	struct pcmfi_tx_req r = {
		.type = PCMFI_W_MSG,
		.iov = iov,
		.count = count,
		.flags = flags,
		.allowed = SEND_FLAGS,
		.data = data,
		.context = context,
		.silent = silent,
		.cq_flags = FI_SEND | FI_MSG,
		.done = send_done,
	};

	return pcmfi_tx_post(ep, &r);
}

static ssize_t msg_send(struct fid_ep *ep_fid, const void *buf, size_t len, void *desc,
			fi_addr_t dest_addr, void *context)
{
	struct pcmfi_ep *ep = ep_of(ep_fid);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return post_send(ep, &iov, 1, 0, ep->tx_op_flags, context, false);
}

static ssize_t msg_sendv(struct fid_ep *ep_fid, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t dest_addr, void *context)
{
	struct pcmfi_ep *ep = ep_of(ep_fid);

	return post_send(ep, iov, count, 0, ep->tx_op_flags, context, false);
}

static ssize_t msg_sendmsg(struct fid_ep *ep_fid, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return post_send(ep_of(ep_fid), msg->msg_iov, msg->iov_count, msg->data, flags,
			 msg->context, false);
}

static ssize_t msg_senddata(struct fid_ep *ep_fid, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest_addr, void *context)
{
	struct pcmfi_ep *ep = ep_of(ep_fid);
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return post_send(ep, &iov, 1, data, ep->tx_op_flags | FI_REMOTE_CQ_DATA, context, false);
}

static ssize_t msg_inject(struct fid_ep *ep_fid, const void *buf, size_t len,
			  fi_addr_t dest_addr)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return post_send(ep_of(ep_fid), &iov, 1, 0, FI_INJECT, NULL, true);
}

static ssize_t msg_injectdata(struct fid_ep *ep_fid, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest_addr)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return post_send(ep_of(ep_fid), &iov, 1, data, FI_INJECT | FI_REMOTE_CQ_DATA, NULL, true);
}

/* ---- receiving ------------------------------------------------------------------------------ */

/*
 * Queue a receive into @iov.
 * Return: 0, -FI_EAGAIN (the rx queue is full), -FI_EOPBADSTATE (not
 * enabled), -FI_ENOTCONN (shut down), -FI_EINVAL, -FI_EBADFLAGS, -FI_ENOMEM.
 */
static ssize_t post_recv(struct pcmfi_ep *ep, const struct iovec *iov, size_t count,
			 uint64_t flags, void *context)
{
	struct pcmfi_recv *r;
	ssize_t rc = 0;

	if (count > PCMFI_IOV_MAX || (count && !iov))
		return -FI_EINVAL;
	if (flags & ~FI_COMPLETION)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->fab->lock);
	if (!ep->enabled)
		rc = -FI_EOPBADSTATE;
	else if (ep->state == PCMFI_EP_SHUTDOWN)
		rc = -FI_ENOTCONN;
	else if (ep->rx_used >= ep->rx_size)
		rc = -FI_EAGAIN;
	r = rc == 0 ? calloc(1, sizeof(*r)) : NULL;
	if (rc == 0 && !r)
		rc = -FI_ENOMEM;
	if (rc) {
		pthread_mutex_unlock(&ep->fab->lock);
		return rc;
	}
	memcpy(r->iov, iov, count * sizeof(*iov));
	r->iov_count = count;
	r->cap = pcmfi_iov_len(iov, count);
	r->context = context;
	r->want_comp = !ep->rx_selective || (flags & FI_COMPLETION);
	if (ep->rq_tail)
		ep->rq_tail->next = r;
	else
		ep->rq = r;
	ep->rq_tail = r;
	ep->rx_used++;
	if (ep->conn)
		pcmfi_conn_drain(ep->conn);
	pthread_mutex_unlock(&ep->fab->lock);
	return 0;
}

static ssize_t msg_recv(struct fid_ep *ep_fid, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context)
{
	struct pcmfi_ep *ep = ep_of(ep_fid);
	struct iovec iov = {.iov_base = buf, .iov_len = len};

	return post_recv(ep, &iov, 1, ep->rx_op_flags, context);
}

static ssize_t msg_recvv(struct fid_ep *ep_fid, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src_addr, void *context)
{
	struct pcmfi_ep *ep = ep_of(ep_fid);

	return post_recv(ep, iov, count, ep->rx_op_flags, context);
}

static ssize_t msg_recvmsg(struct fid_ep *ep_fid, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return post_recv(ep_of(ep_fid), msg->msg_iov, msg->iov_count, flags, msg->context);
}

struct fi_ops_msg pcmfi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};

/* The current message has all its bytes: complete its receive. */
static void complete(struct pcmfi_ep *ep)
{
	struct pcmfi_recv *r = ep->cur;
	uint64_t flags = FI_RECV | FI_MSG | (ep->cur_has_data ? FI_REMOTE_CQ_DATA : 0);

	ep->cur = NULL;
	ep->rx_used--;
	if (ep->cur_total > r->cap)
		pcmfi_cq_write_err(ep->rx_cq, r->context, flags, -FI_ETRUNC, 0, r->cap,
				   ep->cur_total - r->cap);
	else if (r->want_comp)
		pcmfi_cq_write(ep->rx_cq, r->context, flags, ep->cur_total,
			       r->iov_count ? r->iov[0].iov_base : NULL, ep->cur_data);
	free(r);
}

/**
 * pcmfi_msg_on_segment() - a MSG segment arrived on @ep's connection.
 *
 * Return: 0 (placed), 1 (no receive is posted: keep it), -FI_EIO (it does
 * not continue the message being received).
 */
int pcmfi_msg_on_segment(struct pcmfi_ep *ep, const struct pcmfi_wire_hdr *h,
			 const uint8_t *payload)
{
	if (ep->state != PCMFI_EP_CONNECTED && ep->state != PCMFI_EP_ACCEPTING &&
	    ep->state != PCMFI_EP_SHUTDOWN)
		return -FI_EIO;
	if (!ep->cur) {
		if (h->offset != 0)
			return -FI_EIO;
		if (!ep->rq)
			return 1;
		ep->cur = ep->rq;
		ep->rq = ep->rq->next;
		if (!ep->rq)
			ep->rq_tail = NULL;
		ep->cur->next = NULL;
		ep->cur_total = h->total;
		ep->cur_got = 0;
		ep->cur_has_data = h->flags & PCMFI_WF_CQ_DATA;
		ep->cur_data = h->data;
	}
	if (h->offset != ep->cur_got || h->len > ep->cur_total - ep->cur_got ||
	    h->total != ep->cur_total)
		return -FI_EIO;
	pcmfi_iov_copy_to(ep->cur->iov, ep->cur->iov_count, h->offset, payload, h->len);
	ep->cur_got += h->len;
	if (h->flags & PCMFI_WF_LAST) {
		if (ep->cur_got != ep->cur_total)
			return -FI_EIO;
		complete(ep);
	}
	return 0;
}

/**
 * pcmfi_msg_flush() - the connection is gone: the message being received
 * fails with @err, every other posted receive with FI_ECANCELED.
 */
void pcmfi_msg_flush(struct pcmfi_ep *ep, int err)
{
	if (ep->cur) {
		pcmfi_cq_write_err(ep->rx_cq, ep->cur->context, FI_RECV | FI_MSG, err, 0, 0, 0);
		free(ep->cur);
		ep->cur = NULL;
		ep->rx_used--;
	}
	while (ep->rq) {
		struct pcmfi_recv *r = ep->rq;

		ep->rq = r->next;
		pcmfi_cq_write_err(ep->rx_cq, r->context, FI_RECV | FI_MSG, -FI_ECANCELED, 0, 0, 0);
		free(r);
		ep->rx_used--;
	}
	ep->rq_tail = NULL;
}
