// SPDX-License-Identifier: MIT
/*
 * pcmfi_pep.c - passive endpoints (fi_passive_ep(), fi_listen(),
 * fi_reject()) and the connection requests they report.
 *
 * A listening pep owns a port listening at its address. Each connection the
 * port accepts belongs to a connection request until the dialer's CM_REQ
 * arrives (its address and private data); then a FI_CONNREQ goes to the
 * pep's event queue with an fi_info whose handle is the request. fi_accept()
 * on an endpoint opened with that fi_info takes the connection over
 * (pcmfi_ep.c); fi_reject() sends CM_REJECT with the caller's private data
 * and closes it once the dialer has it.
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

static struct pcmfi_pep *pep_of(struct fid *fid)
{
	return PCMFI_CONTAINER(fid, struct pcmfi_pep, pep.fid);
}

static void unlink_req(struct pcmfi_connreq *req)
{
	struct pcmfi_connreq **p = req->pep ? &req->pep->reqs : NULL;

	while (p && *p && *p != req)
		p = &(*p)->next;
	if (p && *p)
		*p = req->next;
	req->pep = NULL;
}

/* ---- a connection after its answer: nothing more is delivered ------------------------- */

static void closing_connected(struct pcmfi_conn *c, int status)
{
}

static int closing_recv(struct pcmfi_conn *c, const struct pcmfi_wire_hdr *h, const uint8_t *p)
{
	return 0;
}

static void closing_failed(struct pcmfi_conn *c, int err)
{
	pcmfi_conn_release(c);
}

static const struct pcmfi_conn_ops closing_ops = {
	.connected = closing_connected,
	.recv = closing_recv,
	.failed = closing_failed,
};

/* ---- a connection waiting for its CM_REQ and then for an answer ---------------------------- */

static int report(struct pcmfi_connreq *req, const struct pcmfi_wire_cm_req *r,
		  const uint8_t *param)
{
	struct pcmfi_pep *pep = req->pep;
	struct fi_info *info = fi_dupinfo(pep->info);
	int rc;

	if (!info)
		return -FI_ENOMEM;
	free(info->dest_addr);
	free(info->src_addr);
	info->dest_addr = malloc(sizeof(r->src));
	info->src_addr = malloc(sizeof(pep->addr));
	if (!info->dest_addr || !info->src_addr) {
		fi_freeinfo(info);
		return -FI_ENOMEM;
	}
	req->peer = r->src;
	memcpy(info->dest_addr, &r->src, sizeof(r->src));
	info->dest_addrlen = sizeof(r->src);
	memcpy(info->src_addr, &pep->addr, sizeof(pep->addr));
	info->src_addrlen = sizeof(pep->addr);
	info->handle = &req->fid;
	rc = pcmfi_eq_push_cm(pep->eq, FI_CONNREQ, &pep->pep.fid, info, param, r->paramlen);
	if (rc) {
		fi_freeinfo(info);
		return rc;
	}
	req->reported = true;
	return 0;
}

static int req_recv(struct pcmfi_conn *c, const struct pcmfi_wire_hdr *h, const uint8_t *p)
{
	struct pcmfi_connreq *req = c->owner;
	struct pcmfi_wire_cm_req r;

	if (h->type != PCMFI_W_CM_REQ || req->reported || !req->pep || h->len < sizeof(r))
		return -FI_EIO;
	memcpy(&r, p, sizeof(r));
	if (r.paramlen > PCMFI_CM_DATA_MAX || r.paramlen > h->len - sizeof(r) ||
	    r.src.sin_family != AF_INET || pcmfi_conn_peer_segment(c, h->addr))
		return -FI_EIO;
	memset(r.src.sin_zero, 0, sizeof(r.src.sin_zero));
	return report(req, &r, p + sizeof(r));
}

static void req_failed(struct pcmfi_conn *c, int err)
{
	struct pcmfi_connreq *req = c->owner;

	req->conn = NULL;
	pcmfi_conn_release(c);
	if (!req->reported) {
		unlink_req(req);
		free(req);
	}
}

static const struct pcmfi_conn_ops req_ops = {
	.connected = closing_connected,
	.recv = req_recv,
	.failed = req_failed,
};

static void on_accept(void *arg, struct pcmfi_port *port, struct pcm_tp_conn *tp, int status)
{
	struct pcmfi_pep *pep = arg;
	struct pcmfi_connreq *req;

	if (status) {
		FI_WARN(&pcmfi_prov, FI_LOG_EP_CTRL, "accept at %s: %s\n", port->name_str,
			fi_strerror(-status));
		return;
	}
	req = calloc(1, sizeof(*req));
	if (!req || pcmfi_conn_accepted(port, tp, &req_ops, req, &req->conn)) {
		if (!req)
			pcm_tp_conn_close(tp);
		free(req);
		return;
	}
	req->fid.fclass = FI_CLASS_CONNREQ;
	req->pep = pep;
	req->next = pep->reqs;
	pep->reqs = req;
}

/**
 * pcmfi_connreq_taken() - fi_accept() took @req's connection: forget @req.
 */
void pcmfi_connreq_taken(struct pcmfi_connreq *req)
{
	unlink_req(req);
	free(req);
}

/* ---- the pep's calls ------------------------------------------------------------------------ */

static void reject_done(struct pcmfi_op *op, int status)
{
	struct pcmfi_conn *c = op->owner;

	pcmfi_op_free(op);
	if (c->ops)
		pcmfi_conn_release(c);
}

static int pep_reject(struct fid_pep *pep_fid, fid_t handle, const void *param, size_t len)
{
	struct pcmfi_pep *pep = pep_of(&pep_fid->fid);
	struct pcmfi_connreq *req = (struct pcmfi_connreq *)handle;
	struct pcmfi_op *op;

	if (!req || req->fid.fclass != FI_CLASS_CONNREQ || len > PCMFI_CM_DATA_MAX ||
	    (len && !param))
		return -FI_EINVAL;
	pthread_mutex_lock(&pep->fab->lock);
	if (req->pep != pep) {
		pthread_mutex_unlock(&pep->fab->lock);
		return -FI_EINVAL;
	}
	if (req->conn) {
		op = pcmfi_op_new(PCMFI_W_CM_REJECT, len);
		if (!op) {
			pthread_mutex_unlock(&pep->fab->lock);
			return -FI_ENOMEM;
		}
		if (len)
			memcpy(op->copy, param, len);
		op->hdr.total = len;
		op->payload = len;
		op->owner = req->conn;
		op->done = reject_done;
		pcmfi_conn_set_owner(req->conn, &closing_ops, NULL);
		pcmfi_conn_send(req->conn, op);
	}
	unlink_req(req);
	free(req);
	pthread_mutex_unlock(&pep->fab->lock);
	return 0;
}

static int pep_listen(struct fid_pep *pep_fid)
{
	struct pcmfi_pep *pep = pep_of(&pep_fid->fid);
	int rc;

	if (!pep->eq)
		return -FI_ENOEQ;
	pthread_mutex_lock(&pep->fab->lock);
	rc = pep->port ? -FI_EOPBADSTATE
		       : pcmfi_port_listen(pep->fab, &pep->addr, on_accept, pep, &pep->port);
	pthread_mutex_unlock(&pep->fab->lock);
	return rc;
}

static int pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct pcmfi_pep *pep = pep_of(fid);
	struct sockaddr_in a;

	if (!addr || addrlen != sizeof(a) || ((struct sockaddr *)addr)->sa_family != AF_INET)
		return -FI_EINVAL;
	if (pep->port)
		return -FI_EOPBADSTATE;
	memcpy(&a, addr, sizeof(a));
	memset(a.sin_zero, 0, sizeof(a.sin_zero));
	pep->addr = a;
	return 0;
}

static int pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct pcmfi_pep *pep = pep_of(fid);
	size_t n = *addrlen < sizeof(pep->addr) ? *addrlen : sizeof(pep->addr);

	if (addr && n)
		memcpy(addr, &pep->addr, n);
	*addrlen = sizeof(pep->addr);
	return n < sizeof(pep->addr) ? -FI_ETOOSMALL : 0;
}

static int cm_nosys_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

static int cm_nosys_connect(struct fid_ep *ep, const void *addr, const void *param, size_t len)
{
	return -FI_ENOSYS;
}

static int cm_nosys_accept(struct fid_ep *ep, const void *param, size_t len)
{
	return -FI_ENOSYS;
}

static int cm_nosys_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int cm_nosys_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
			 void *context)
{
	return -FI_ENOSYS;
}

static struct fi_ops_cm pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = pep_setname,
	.getname = pep_getname,
	.getpeer = cm_nosys_getpeer,
	.connect = cm_nosys_connect,
	.listen = pep_listen,
	.accept = cm_nosys_accept,
	.reject = pep_reject,
	.shutdown = cm_nosys_shutdown,
	.join = cm_nosys_join,
};

/**
 * pcmfi_pep_getopt() - the options of endpoints and peps: FI_OPT_CM_DATA_SIZE.
 *
 * Return: 0, -FI_ENOPROTOOPT, -FI_ETOOSMALL.
 */
int pcmfi_pep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen || *optlen < sizeof(size_t))
		return -FI_ETOOSMALL;
	*(size_t *)optval = PCMFI_CM_DATA_MAX;
	*optlen = sizeof(size_t);
	return 0;
}

static int pep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

static ssize_t ep_nosys_cancel(fid_t fid, void *context)
{
	return -FI_ENOSYS;
}

static int ep_nosys_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
			   struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

static int ep_nosys_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			   struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t ep_nosys_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

static struct fi_ops_ep pep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_nosys_cancel,
	.getopt = pcmfi_pep_getopt,
	.setopt = pep_setopt,
	.tx_ctx = ep_nosys_tx_ctx,
	.rx_ctx = ep_nosys_rx_ctx,
	.rx_size_left = ep_nosys_size_left,
	.tx_size_left = ep_nosys_size_left,
};

static int pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct pcmfi_pep *pep = pep_of(fid);

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	pthread_mutex_lock(&pep->fab->lock);
	if (pep->eq)
		pep->eq->refs--;
	pep->eq = PCMFI_CONTAINER(bfid, struct pcmfi_eq, eq.fid);
	pep->eq->refs++;
	pthread_mutex_unlock(&pep->fab->lock);
	return 0;
}

static int pep_close(struct fid *fid)
{
	struct pcmfi_pep *pep = pep_of(fid);
	struct pcmfi_fabric *fab = pep->fab;

	pthread_mutex_lock(&fab->lock);
	while (pep->reqs) {
		struct pcmfi_connreq *req = pep->reqs;

		pep->reqs = req->next;
		req->pep = NULL;
		if (req->conn)
			pcmfi_conn_release(req->conn);
		req->conn = NULL;
		if (!req->reported)
			free(req);
		/* a reported request stays, dead, for the fi_info the caller may hold */
	}
	if (pep->port)
		pcmfi_port_stop(pep->port);
	if (pep->eq)
		pep->eq->refs--;
	fab->refs--;
	pthread_mutex_unlock(&fab->lock);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static struct fi_ops pep_fi_ops = PCMFI_FI_OPS(pep_close, pep_bind, pcmfi_nosys_control);

/**
 * pcmfi_pep_open() - fi_passive_ep() on a pcm fabric; @info's src_addr (if
 * any) is where it will listen.
 *
 * Return: 0, -FI_EINVAL (no info, or an address not struct sockaddr_in), -FI_ENOMEM.
 */
int pcmfi_pep_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep_fid,
		   void *context)
{
	struct pcmfi_fabric *fab = PCMFI_CONTAINER(fabric, struct pcmfi_fabric, fab);
	struct pcmfi_pep *pep;

	if (!info || (info->src_addr && info->src_addrlen != sizeof(struct sockaddr_in)))
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		free(pep);
		return -FI_ENOMEM;
	}
	pep->pep.fid.fclass = FI_CLASS_PEP;
	pep->pep.fid.context = context;
	pep->pep.fid.ops = &pep_fi_ops;
	pep->pep.ops = &pep_ep_ops;
	pep->pep.cm = &pep_cm_ops;
	pep->fab = fab;
	pep->addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr = pcmfi_cfg.addr};
	if (info->src_addr)
		memcpy(&pep->addr, info->src_addr, sizeof(pep->addr));
	memset(pep->addr.sin_zero, 0, sizeof(pep->addr.sin_zero));
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*pep_fid = &pep->pep;
	return 0;
}
