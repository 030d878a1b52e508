// SPDX-License-Identifier: MIT
/*
 * pcmfi_ep.c - active endpoints (fi_endpoint(3), fi_cm(3)) of the pcm
 * provider: binding, enabling, connecting, accepting, shutting down, and
 * the dispatch of what their connection receives.
 *
 * Connecting: fi_connect() dials the peer's listen name from a port and
 * queues CM_REQ (this endpoint's address and the private data) ahead of
 * everything else; the peer's CM_ACCEPT makes it FI_CONNECTED (with the
 * peer's private data), its CM_REJECT an FI_ECONNREFUSED error (with it as
 * err_data). Accepting: fi_accept() takes the request's connection and sends
 * CM_ACCEPT; once the peer has it, the endpoint is FI_CONNECTED.
 *
 * A connection that fails (the peer closed or left, or pcmd went away)
 * delivers what it had received, fails what was posted (receives with
 * FI_ECANCELED, sends, reads and writes with the cause) and reports
 * FI_SHUTDOWN when the peer reset it, or an error event with the cause
 * otherwise. fi_shutdown() discards the sends, reads and writes in flight
 * and cancels the receives (FI_ECANCELED completions before it returns);
 * the peer sees FI_SHUTDOWN.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_tagged.h>

#include "pcmfi.h"

static struct pcmfi_ep *ep_of(struct fid *fid)
{
	return PCMFI_CONTAINER(fid, struct pcmfi_ep, ep.fid);
}

/* ---- what the connection reports ------------------------------------------------------ */

static void report_err(struct pcmfi_ep *ep, int err, const void *data, size_t len)
{
	if (ep->eq)
		pcmfi_eq_push_err(ep->eq, &ep->ep.fid, ep->ep.fid.context, err, 0, data, len);
}

static void ep_connected(struct pcmfi_conn *c, int status)
{
	struct pcmfi_ep *ep = c->owner;

	if (status == 0)
		return; /* CM_REQ is queued first: the peer answers it */
	ep->state = PCMFI_EP_SHUTDOWN;
	report_err(ep, status == -FI_ECONNREFUSED ? status : -FI_ECONNREFUSED, NULL, 0);
}

static int on_cm(struct pcmfi_ep *ep, const struct pcmfi_wire_hdr *h, const uint8_t *p)
{
	if (ep->state != PCMFI_EP_CONNECTING || h->len > PCMFI_CM_DATA_MAX)
		return -FI_EIO;
	if (h->type == PCMFI_W_CM_ACCEPT) {
		if (pcmfi_conn_peer_segment(ep->conn, h->addr))
			return -FI_EIO;
		ep->state = PCMFI_EP_CONNECTED;
		if (ep->eq)
			pcmfi_eq_push_cm(ep->eq, FI_CONNECTED, &ep->ep.fid, NULL, p, h->len);
		return 0;
	}
	ep->state = PCMFI_EP_SHUTDOWN;
	report_err(ep, -FI_ECONNREFUSED, p, h->len);
	return 0;
}

static int ep_recv(struct pcmfi_conn *c, const struct pcmfi_wire_hdr *h, const uint8_t *p)
{
	struct pcmfi_ep *ep = c->owner;

	switch (h->type) {
	case PCMFI_W_CM_ACCEPT:
	case PCMFI_W_CM_REJECT:
		return on_cm(ep, h, p);
	case PCMFI_W_MSG:
		return pcmfi_msg_on_segment(ep, h, p);
	case PCMFI_W_WRITE:
	case PCMFI_W_READ_REQ:
	case PCMFI_W_READ_RESP:
	case PCMFI_W_RMA_ACK:
		return pcmfi_rma_on_segment(ep, h, p);
	default:
		return -FI_EIO;
	}
}

static void ep_failed(struct pcmfi_conn *c, int err)
{
	struct pcmfi_ep *ep = c->owner;
	enum pcmfi_ep_state was = ep->state;

	ep->state = PCMFI_EP_SHUTDOWN;
	pcmfi_conn_drain(c);
	pcmfi_msg_flush(ep, err);
	pcmfi_rma_flush(ep, err);
	if (was == PCMFI_EP_CONNECTING)
		report_err(ep, -FI_ECONNREFUSED, NULL, 0);
	else if (was != PCMFI_EP_SHUTDOWN && err == -FI_ECONNRESET && ep->eq)
		pcmfi_eq_push_cm(ep->eq, FI_SHUTDOWN, &ep->ep.fid, NULL, NULL, 0);
	else if (was != PCMFI_EP_SHUTDOWN)
		report_err(ep, err, NULL, 0);
}

static const struct pcmfi_conn_ops ep_conn_ops = {
	.connected = ep_connected,
	.recv = ep_recv,
	.failed = ep_failed,
};

/* ---- connection management ------------------------------------------------------------------ */

static int enable(struct pcmfi_ep *ep)
{
	if (ep->enabled)
		return 0;
	if (!ep->eq)
		return -FI_ENOEQ;
	if (!ep->tx_cq || !ep->rx_cq)
		return -FI_ENOCQ;
	ep->enabled = true;
	return 0;
}

static void cm_done(struct pcmfi_op *op, int status)
{
	struct pcmfi_ep *ep = op->owner;

	/* the acceptor's CM_ACCEPT reached the dialer: connected */
	if (op->hdr.type == PCMFI_W_CM_ACCEPT && status == 0 && ep &&
	    ep->state == PCMFI_EP_ACCEPTING) {
		ep->state = PCMFI_EP_CONNECTED;
		pcmfi_eq_push_cm(ep->eq, FI_CONNECTED, &ep->ep.fid, NULL, NULL, 0);
	}
	pcmfi_op_free(op);
}

static struct pcmfi_op *cm_op(struct pcmfi_ep *ep, uint8_t type, const void *head, size_t hlen,
			      const void *param, size_t len)
{
	struct pcmfi_op *op = pcmfi_op_new(type, hlen + len);

	if (!op)
		return NULL;
	if (hlen)
		memcpy(op->copy, head, hlen);
	if (len)
		memcpy(op->copy + hlen, param, len);
	op->hdr.total = hlen + len;
	op->hdr.addr = pcmfi_cfg.segment_bytes; /* what our receives hold */
	op->payload = hlen + len;
	op->owner = ep;
	op->done = cm_done;
	return op;
}

static int ep_connect(struct fid_ep *ep_fid, const void *addr, const void *param, size_t len)
{
	struct pcmfi_ep *ep = ep_of(&ep_fid->fid);
	struct pcmfi_wire_cm_req req = {.src = ep->src, .paramlen = (uint32_t)len};
	struct pcmfi_port *port;
	struct pcmfi_op *op;
	char name[32];
	int rc;

	if (len > PCMFI_CM_DATA_MAX || (len && !param) ||
	    (addr && ((const struct sockaddr *)addr)->sa_family != AF_INET))
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->fab->lock);
	rc = ep->state != PCMFI_EP_IDLE || ep->req ? -FI_EISCONN : enable(ep);
	if (rc == 0 && !addr && !ep->info->dest_addr)
		rc = -FI_EINVAL; /* nowhere to go */
	if (rc == 0 && addr)
		memcpy(&ep->peer, addr, sizeof(ep->peer));
	memset(ep->peer.sin_zero, 0, sizeof(ep->peer.sin_zero));
	if (rc == 0)
		rc = pcmfi_port_for_dial(ep->fab, &ep->peer, &port);
	op = rc == 0 ? cm_op(ep, PCMFI_W_CM_REQ, &req, sizeof(req), param, len) : NULL;
	if (rc == 0 && !op)
		rc = -FI_ENOMEM;
	if (rc == 0) {
		pcmfi_addr_name(&ep->peer, name, sizeof(name));
		rc = pcmfi_conn_dial(port, name, &ep_conn_ops, ep, &ep->conn);
	}
	if (rc == 0) {
		ep->state = PCMFI_EP_CONNECTING;
		pcmfi_conn_send(ep->conn, op); /* goes first, once the dial completes */
	} else {
		pcmfi_op_free(op);
	}
	pthread_mutex_unlock(&ep->fab->lock);
	return rc;
}

static int ep_accept(struct fid_ep *ep_fid, const void *param, size_t len)
{
	struct pcmfi_ep *ep = ep_of(&ep_fid->fid);
	struct pcmfi_op *op;
	int rc;

	if (len > PCMFI_CM_DATA_MAX || (len && !param))
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->fab->lock);
	rc = !ep->req || ep->state != PCMFI_EP_IDLE ? -FI_EOPBADSTATE : enable(ep);
	if (rc == 0 && !ep->req->conn)
		rc = -FI_ECONNABORTED; /* the dialer left */
	op = rc == 0 ? cm_op(ep, PCMFI_W_CM_ACCEPT, NULL, 0, param, len) : NULL;
	if (rc == 0 && !op)
		rc = -FI_ENOMEM;
	if (rc == 0) {
		ep->conn = ep->req->conn;
		ep->peer = ep->req->peer;
		pcmfi_conn_set_owner(ep->conn, &ep_conn_ops, ep);
		pcmfi_connreq_taken(ep->req);
		ep->req = NULL;
		ep->state = PCMFI_EP_ACCEPTING;
		pcmfi_conn_send(ep->conn, op);
	}
	pthread_mutex_unlock(&ep->fab->lock);
	return rc;
}

static void free_rma_wait(struct pcmfi_ep *ep)
{
	while (ep->rma_wait) {
		struct pcmfi_op *op = ep->rma_wait;

		ep->rma_wait = op->next;
		pcmfi_op_free(op);
	}
}

static int ep_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct pcmfi_ep *ep = ep_of(&ep_fid->fid);

	pthread_mutex_lock(&ep->fab->lock);
	if (ep->conn) {
		pcmfi_conn_release(ep->conn);
		ep->conn = NULL;
	}
	free_rma_wait(ep);
	ep->tx_used = 0;
	pcmfi_msg_flush(ep, -FI_ECANCELED);
	ep->state = PCMFI_EP_SHUTDOWN;
	pthread_mutex_unlock(&ep->fab->lock);
	return 0;
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct pcmfi_ep *ep = ep_of(fid);

	if (!addr || addrlen != sizeof(ep->src) || ((struct sockaddr *)addr)->sa_family != AF_INET)
		return -FI_EINVAL;
	memcpy(&ep->src, addr, sizeof(ep->src));
	memset(ep->src.sin_zero, 0, sizeof(ep->src.sin_zero));
	return 0;
}

static int copy_name(const struct sockaddr_in *a, void *addr, size_t *addrlen)
{
	size_t n = *addrlen < sizeof(*a) ? *addrlen : sizeof(*a);

	if (addr && n)
		memcpy(addr, a, n);
	*addrlen = sizeof(*a);
	return n < sizeof(*a) ? -FI_ETOOSMALL : 0;
}

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	return copy_name(&ep_of(fid)->src, addr, addrlen);
}

static int ep_getpeer(struct fid_ep *ep_fid, void *addr, size_t *addrlen)
{
	struct pcmfi_ep *ep = ep_of(&ep_fid->fid);

	if (ep->state == PCMFI_EP_IDLE && !ep->req)
		return -FI_ENOTCONN;
	return copy_name(ep->req ? &ep->req->peer : &ep->peer, addr, addrlen);
}

static int cm_nolisten(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

static int cm_noreject(struct fid_pep *pep, fid_t handle, const void *param, size_t len)
{
	return -FI_ENOSYS;
}

static int cm_nojoin(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		     void *context)
{
	return -FI_ENOSYS;
}

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = ep_getpeer,
	.connect = ep_connect,
	.listen = cm_nolisten,
	.accept = ep_accept,
	.reject = cm_noreject,
	.shutdown = ep_shutdown,
	.join = cm_nojoin,
};

/* ---- fi_ops_ep ----------------------------------------------------------------------------- */

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct pcmfi_ep *ep = ep_of(fid);
	struct pcmfi_recv **p;
	ssize_t rc = -FI_ENOENT;

	pthread_mutex_lock(&ep->fab->lock);
	for (p = &ep->rq; *p; p = &(*p)->next) {
		struct pcmfi_recv *r = *p;

		if (r->context != context)
			continue;
		*p = r->next;
		if (ep->rq_tail == r) {
			struct pcmfi_recv *t = ep->rq;

			while (t && t->next)
				t = t->next;
			ep->rq_tail = t;
		}
		ep->rx_used--;
		pcmfi_cq_write_err(ep->rx_cq, r->context, FI_RECV | FI_MSG, -FI_ECANCELED, 0, 0, 0);
		free(r);
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&ep->fab->lock);
	return rc;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

static int ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t ep_rx_left(struct fid_ep *ep_fid)
{
	struct pcmfi_ep *ep = ep_of(&ep_fid->fid);

	return (ssize_t)(ep->rx_size - ep->rx_used);
}

static ssize_t ep_tx_left(struct fid_ep *ep_fid)
{
	struct pcmfi_ep *ep = ep_of(&ep_fid->fid);

	return (ssize_t)(ep->tx_size - ep->tx_used);
}

static struct fi_ops_ep ep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = pcmfi_pep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = ep_tx_ctx,
	.rx_ctx = ep_rx_ctx,
	.rx_size_left = ep_rx_left,
	.tx_size_left = ep_tx_left,
};

/* ---- fi_ops: bind, control, close -------------------------------------------------------- */

static int bind_cq(struct pcmfi_ep *ep, struct pcmfi_cq *cq, uint64_t flags)
{
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EINVAL;
	if (flags & FI_TRANSMIT) {
		if (ep->tx_cq)
			ep->tx_cq->refs--;
		ep->tx_cq = cq;
		cq->refs++;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		if (ep->rx_cq)
			ep->rx_cq->refs--;
		ep->rx_cq = cq;
		cq->refs++;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct pcmfi_ep *ep = ep_of(fid);
	int rc = 0;

	if (!bfid)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->fab->lock);
	switch (bfid->fclass) {
	case FI_CLASS_EQ:
		if (ep->eq)
			ep->eq->refs--;
		ep->eq = PCMFI_CONTAINER(bfid, struct pcmfi_eq, eq.fid);
		ep->eq->refs++;
		break;
	case FI_CLASS_CQ:
		rc = bind_cq(ep, PCMFI_CONTAINER(bfid, struct pcmfi_cq, cq.fid), flags);
		break;
	case FI_CLASS_CNTR:
	case FI_CLASS_SRX_CTX:
	case FI_CLASS_STX_CTX:
		rc = -FI_ENOSYS; /* counters and shared contexts are not provided */
		break;
	default:
		rc = -FI_EINVAL;
		break;
	}
	pthread_mutex_unlock(&ep->fab->lock);
	return rc;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct pcmfi_ep *ep = ep_of(fid);
	uint64_t *flags = arg;
	int rc = 0;

	pthread_mutex_lock(&ep->fab->lock);
	switch (command) {
	case FI_ENABLE:
		rc = enable(ep);
		break;
	case FI_GETOPSFLAG:
		if (*flags & FI_TRANSMIT)
			*flags = ep->tx_op_flags;
		else if (*flags & FI_RECV)
			*flags = ep->rx_op_flags;
		else
			rc = -FI_EINVAL;
		break;
	case FI_SETOPSFLAG:
		if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~FI_TRANSMIT;
		else if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~FI_RECV;
		else
			rc = -FI_EINVAL;
		break;
	default:
		rc = -FI_ENOSYS;
		break;
	}
	pthread_mutex_unlock(&ep->fab->lock);
	return rc;
}

static int ep_close(struct fid *fid)
{
	struct pcmfi_ep *ep = ep_of(fid);
	struct pcmfi_fabric *fab = ep->fab;

	pthread_mutex_lock(&fab->lock);
	if (ep->conn)
		pcmfi_conn_release(ep->conn);
	free_rma_wait(ep);
	while (ep->rq) {
		struct pcmfi_recv *r = ep->rq;

		ep->rq = r->next;
		free(r);
	}
	free(ep->cur);
	if (ep->eq)
		ep->eq->refs--;
	if (ep->tx_cq)
		ep->tx_cq->refs--;
	if (ep->rx_cq)
		ep->rx_cq->refs--;
	ep->dom->refs--;
	pthread_mutex_unlock(&fab->lock);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = PCMFI_FI_OPS(ep_close, ep_bind, ep_control);

static size_t queue_size(size_t asked)
{
	return asked ? asked : PCMFI_QUEUE_DEFAULT;
}

/**
 * pcmfi_ep_open() - fi_endpoint() of a pcm domain: an FI_EP_MSG endpoint, or,
 * with @info from a FI_CONNREQ, the one that will accept that request.
 *
 * Return: 0, -FI_EINVAL (not FI_EP_MSG, or a handle that is no request),
 * -FI_ENOMEM.
 */
int pcmfi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep_fid,
		  void *context)
{
	struct pcmfi_domain *dom = PCMFI_CONTAINER(domain, struct pcmfi_domain, dom);
	struct pcmfi_ep *ep;

	if (!info || (info->ep_attr && info->ep_attr->type != FI_EP_MSG &&
		      info->ep_attr->type != FI_EP_UNSPEC))
		return -FI_EINVAL;
	if (info->handle && info->handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		free(ep);
		return -FI_ENOMEM;
	}
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ep_ops;
	ep->ep.cm = &ep_cm_ops;
	ep->ep.msg = &pcmfi_msg_ops;
	ep->ep.rma = &pcmfi_rma_ops;
	ep->ep.tagged = &pcmfi_nosys_tagged;
	ep->ep.atomic = &pcmfi_nosys_atomic;
	ep->ep.collective = &pcmfi_nosys_collective;
	ep->dom = dom;
	ep->fab = dom->fab;
	ep->req = (struct pcmfi_connreq *)info->handle;
	ep->tx_size = queue_size(info->tx_attr ? info->tx_attr->size : 0);
	ep->rx_size = queue_size(info->rx_attr ? info->rx_attr->size : 0);
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->src = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr = pcmfi_cfg.addr};
	if (info->src_addr && info->src_addrlen == sizeof(ep->src))
		memcpy(&ep->src, info->src_addr, sizeof(ep->src));
	if (info->dest_addr && info->dest_addrlen == sizeof(ep->peer))
		memcpy(&ep->peer, info->dest_addr, sizeof(ep->peer));
	pthread_mutex_lock(&ep->fab->lock);
	dom->refs++;
	pthread_mutex_unlock(&ep->fab->lock);
	*ep_fid = &ep->ep;
	return 0;
}
