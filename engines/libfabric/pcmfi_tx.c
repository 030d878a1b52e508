// SPDX-License-Identifier: MIT
/*
 * pcmfi_tx.c - an endpoint's transmit operations (sends, reads, writes):
 * checked, counted against the endpoint's tx size, queued on its
 * connection, and completed on its transmit queue (an error always, unless
 * an inject; a success when the endpoint or the call asks for one).
 */
#include <string.h>

#include "pcmfi.h"

/**
 * pcmfi_tx_post() - queue @r on @ep's connection. Takes the fabric's lock.
 *
 * Return: 0, -FI_EAGAIN (the tx queue is full, or the connect is not
 * answered yet), -FI_ENOTCONN, -FI_EINVAL (too many iovecs, an inject too
 * long, a remote range of another length), -FI_EBADFLAGS (a flag outside
 * @r->allowed), -FI_ENOMEM.
 */
ssize_t pcmfi_tx_post(struct pcmfi_ep *ep, const struct pcmfi_tx_req *r)
{
	size_t len = pcmfi_iov_len(r->iov, r->count);
	bool inject = r->flags & FI_INJECT;
	struct pcmfi_op *op;
	ssize_t rc;

	if (r->count > PCMFI_IOV_MAX || (r->count && !r->iov) ||
	    (inject && len > PCMFI_INJECT_MAX) || (r->rma && r->rma->len != len))
		return -FI_EINVAL;
	if (r->flags & ~r->allowed)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->fab->lock);
	rc = pcmfi_ep_can_send(ep);
	if (rc == 0 && ep->tx_used >= ep->tx_size)
		rc = -FI_EAGAIN;
	op = rc == 0 ? pcmfi_op_new(r->type, inject ? len : 0) : NULL;
	if (rc == 0 && !op)
		rc = -FI_ENOMEM;
	if (rc) {
		pthread_mutex_unlock(&ep->fab->lock);
		return rc;
	}
	if (inject)
		pcmfi_iov_copy_from(r->iov, r->count, 0, op->copy, len);
	memcpy(op->iov, r->iov, r->count * sizeof(*r->iov));
	op->iov_count = r->count;
	op->hdr.total = len;
	op->payload = r->type == PCMFI_W_READ_REQ ? 0 : len;
	if (r->rma) {
		op->hdr.addr = r->rma->addr;
		op->hdr.key = r->rma->key;
		op->hdr.op_id = ++ep->next_op_id;
	}
	if ((r->flags & FI_REMOTE_CQ_DATA) && r->type != PCMFI_W_READ_REQ) {
		op->hdr.flags |= PCMFI_WF_CQ_DATA;
		op->hdr.data = r->data;
	}
	op->owner = ep;
	op->context = r->context;
	op->cq_flags = r->cq_flags;
	op->silent = r->silent;
	op->want_comp = !r->silent && (!ep->tx_selective || (r->flags & FI_COMPLETION));
	op->done = r->done;
	ep->tx_used++;
	pcmfi_conn_send(ep->conn, op);
	pthread_mutex_unlock(&ep->fab->lock);
	return 0;
}

/**
 * pcmfi_tx_complete() - @op is over (@status 0 or a negative FI_E* code):
 * report it as it asked and free it.
 */
void pcmfi_tx_complete(struct pcmfi_ep *ep, struct pcmfi_op *op, int status)
{
	ep->tx_used--;
	if (status && !op->silent)
		pcmfi_cq_write_err(ep->tx_cq, op->context, op->cq_flags, status, 0, 0, 0);
	else if (!status && op->want_comp)
		pcmfi_cq_write(ep->tx_cq, op->context, op->cq_flags, 0, NULL, 0);
	pcmfi_op_free(op);
}
