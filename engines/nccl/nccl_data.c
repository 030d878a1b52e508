// SPDX-License-Identifier: MIT
/*
 * nccl_data.c - NCCL's isend, irecv, iflush and test over one libpcmtransport connection.
 *
 * NCCL's contract: sends and (grouped) receives of a comm match in the order they are posted;
 * within one irecv of n buffers, each of the next n isends goes to the buffer whose tag it
 * carries, whatever order the isends come in; a receive may be larger than its send, and test()
 * reports the bytes that arrived. pcm's contract: the k-th message of a connection lands in its
 * k-th receive (FIFO).
 *
 * The protocol joining the two:
 *   irecv   posts its n receives in buffer order, then sends the sender a CTS {seq, n, tag and
 *           capacity of each buffer} on the same connection (the other direction).
 *   sender  keeps 32 receives posted for CTSs and holds each CTS by its seq. An isend is
 *           matched against the oldest CTS not yet filled: the first unfilled buffer with its
 *           tag takes it. Matched isends are sent in buffer order (an isend for buffer 2 waits,
 *           accepted, until buffers 0 and 1 have theirs), so message k is receive k. With no
 *           CTS yet, or no buffer with that tag in the oldest one, isend returns *request ==
 *           NULL and NCCL calls again, as it does when a network has no room.
 *   test    a receive request is done once its n receives and its CTS send have completed, a
 *           send request once pcm reports the message delivered.
 * A recvComm holds NCCL_NET_MAX_REQUESTS (32) irecv and iflush requests, so a sender holds at
 * most 32 CTSs; a sendComm holds 32 x maxRecvs isends not yet tested done. Beyond them the call
 * returns *request == NULL. In daemon mode the bytes go through staging buffers in pcmd's
 * region, taken as each operation is posted in its lane (nccl_mem.c).
 * NCCL_NET_OPTIONAL_RECV_COMPLETION on entry to irecv (v9, v10) allows an early completion; the
 * request here completes when the bytes are in place, which the contract also allows.
 */
#include <errno.h>
#include <string.h>

#include "nccl_pcm.h"

/* ---- the sender's CTSs ------------------------------------------------------------------------ */

static void on_cts(struct pcmn_op *op, const struct pcm_tp_completion *done);

/* CTS slot @slot of @c's control block: a sender receives into it, a receiver's request @slot
 * sends from it. */
static struct pcmn_cts *cts_slot(struct pcmn_comm *c, uint32_t slot)
{
	return (struct pcmn_cts *)(c->ctl + (size_t)slot * sizeof(struct pcmn_cts));
}

int pcmn_send_start(struct pcmn_comm *c)
{
	for (uint32_t slot = 0; slot < PCMN_GROUPS; slot++) {
		struct pcmn_op *op = &c->send->cts_ops[slot];
		int rc;

		*op = (struct pcmn_op){ .done = on_cts, .owner = c, .index = slot,
					.kind = PCMN_OP_RECV, .buf = cts_slot(c, slot),
					.len = sizeof(struct pcmn_cts) };
		rc = pcmn_comm_post(c, op);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Hold the CTS @m (@bytes long) as a group. Return: 0, or -EPROTO if it is malformed. */
static int take_cts(struct pcmn_send_side *s, const struct pcmn_cts *m, uint64_t bytes)
{
	struct pcmn_group *g;

	if (bytes != sizeof(*m) || m->magic != PCMN_CTS_MAGIC || m->n == 0 ||
	    m->n > PCMN_MAX_RECVS || m->seq < s->next_seq || m->seq - s->next_seq >= PCMN_GROUPS)
		return -EPROTO;
	g = &s->groups[m->seq % PCMN_GROUPS];
	if (g->valid)
		return -EPROTO;
	memset(g, 0, sizeof(*g));
	g->seq = m->seq;
	g->n = (uint8_t)m->n;
	for (uint32_t i = 0; i < m->n; i++) {
		g->tags[i] = m->buf[i].tag;
		g->caps[i] = m->buf[i].cap;
	}
	g->valid = true;
	return 0;
}

static void on_cts(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_comm *c = op->owner;
	int rc = done->status;

	if (!c->closed && c->state != PCMN_FAILED) {
		if (rc == 0 && (rc = take_cts(c->send, cts_slot(c, op->index), done->bytes)) < 0)
			PCMN_WARN("sendComm %p: the receiver sent a malformed CTS", (void *)c);
		if (rc == 0)
			rc = pcmn_comm_post(c, op);
		if (rc < 0) {
			PCMN_INFO("sendComm %p: the receiver's side is gone: %s", (void *)c,
				  pcm_tp_strerror(rc));
			pcmn_comm_fail(c, rc);
		}
	}
	pcmn_comm_release(c);
}

/* The oldest CTS with a buffer no isend took yet, or NULL. */
static struct pcmn_group *head_group(struct pcmn_send_side *s)
{
	struct pcmn_group *g = &s->groups[s->next_seq % PCMN_GROUPS];

	return g->valid && g->seq == s->next_seq && g->assigned < g->n ? g : NULL;
}

static int find_tag(const struct pcmn_group *g, int tag)
{
	for (int i = 0; i < g->n; i++)
		if (!g->req[i] && g->tags[i] == tag)
			return i;
	return -1;
}

/* ---- requests --------------------------------------------------------------------------------- */

static struct pcmn_req *req_head(void *request)
{
	struct pcmn_req *r = request;

	return r && r->magic == PCMN_REQ_MAGIC ? r : NULL;
}

static struct pcmn_send_req *free_send_req(struct pcmn_send_side *s)
{
	for (uint32_t i = 0; i < PCMN_SEND_REQUESTS; i++)
		if (!s->reqs[i].r.magic)
			return &s->reqs[i];
	return NULL;
}

/* A free receive request and its index (its CTS slot), or NULL. */
static struct pcmn_recv_req *free_recv_req(struct pcmn_recv_side *s, uint32_t *index)
{
	for (uint32_t i = 0; i < PCMN_RECV_REQUESTS; i++)
		if (!s->reqs[i].r.magic) {
			*index = i;
			return &s->reqs[i];
		}
	return NULL;
}

static void req_begin(struct pcmn_req *r, struct pcmn_comm *c, enum pcmn_req_kind kind, int n,
		      int pending)
{
	*r = (struct pcmn_req){ .magic = PCMN_REQ_MAGIC, .kind = (uint8_t)kind, .n = (uint8_t)n,
				.pending = (uint16_t)pending, .comm = c };
}

/* Record @err as @r's outcome unless an earlier error is. */
static void req_error(struct pcmn_req *r, int err)
{
	if (err < 0 && r->status == 0)
		r->status = err;
}

/* Start a call that hands out a request: clear it, take the lock, find the comm (NULL: none). */
static struct pcmn_comm *enter(void *comm, enum pcmn_kind kind, const char *call, void **request)
{
	*request = NULL; /* irecv: also when NCCL passed NCCL_NET_OPTIONAL_RECV_COMPLETION in it */
	pcmn_lock();
	return pcmn_comm_of(comm, kind, call);
}

/* ---- isend ------------------------------------------------------------------------------------ */

static void on_sent(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_send_req *r = op->owner;
	struct pcmn_comm *c = r->r.comm;

	req_error(&r->r, done->status);
	pcmn_stage_put(r->stage);
	r->stage = NULL;
	r->r.pending--;
	pcmn_comm_release(c);
}

/* Send the group's matched messages in buffer order, up to the first buffer still unmatched. */
static void post_group(struct pcmn_comm *c, struct pcmn_group *g)
{
	while (g->posted < g->n && g->req[g->posted]) {
		struct pcmn_send_req *r = g->req[g->posted++];
		int rc = pcmn_comm_post(c, &r->op);

		if (rc < 0) {
			PCMN_WARN("isend: %s (%s)", pcm_tp_strerror(rc), pcm_tp_last_error());
			req_error(&r->r, rc);
			pcmn_stage_put(r->stage);
			r->stage = NULL;
			r->r.pending = 0;
		}
	}
	if (g->posted == g->n)
		g->valid = false;
}

/* Daemon mode, as the message goes out in its lane: copy it into pcmd's region. */
static int stage_send(struct pcmn_op *op)
{
	struct pcmn_send_req *r = op->owner;

	r->stage = pcmn_stage_get(op->len);
	if (!r->stage)
		return -EAGAIN; /* the region is full for now: it waits in its lane */
	if (op->len)
		memcpy(r->stage, op->buf, op->len);
	op->buf = r->stage;
	op->mr = NULL;
	return 0;
}

/* @r's operation: send @size bytes at @data, registered in @mr (staged in daemon mode). */
static void send_op(struct pcmn_send_req *r, void *data, size_t size, struct pcm_tp_mr *mr)
{
	r->stage = NULL;
	r->op = (struct pcmn_op){ .done = on_sent, .owner = r, .kind = PCMN_OP_SEND,
				  .buf = data, .len = size, .mr = mr };
	if (pcmn_ctx.set.backend == PCMN_BACKEND_DAEMON) {
		r->op.prepare = stage_send;
	} else if (size == 0) {
		r->op.buf = pcmn_zero_buf();
		r->op.mr = NULL;
	}
}

static ncclResult_t isend_locked(struct pcmn_comm *c, void *data, size_t size, int tag,
				 void *mhandle, void **request)
{
	struct pcmn_send_side *s = c->send;
	struct pcmn_send_req *r;
	struct pcmn_group *g;
	struct pcm_tp_mr *mr;
	int i;

	if (c->state == PCMN_FAILED) {
		PCMN_WARN("isend on sendComm %p: its connection failed: %s", (void *)c,
			  pcm_tp_strerror(c->error));
		return pcmn_result(c->error);
	}
	if (size > pcmn_ctx.max_msg_bytes) {
		PCMN_WARN("isend of %zu bytes: the largest message is %zu (maxP2pBytes)", size,
			  pcmn_ctx.max_msg_bytes);
		return ncclInvalidUsage;
	}
	if (pcmn_mr_find(mhandle, data, size, &mr) < 0)
		return ncclInternalError;
	pcmn_progress();
	g = head_group(s);
	i = g ? find_tag(g, tag) : -1;
	if (i < 0)
		return ncclSuccess; /* no receive for it yet: NCCL calls again */
	if (size > g->caps[i]) {
		PCMN_WARN("isend of %zu bytes with tag %d: its receive holds only %llu", size, tag,
			  (unsigned long long)g->caps[i]);
		return ncclInvalidUsage;
	}
	r = free_send_req(s);
	if (!r)
		return ncclSuccess; /* 32 x maxRecvs isends not yet tested done: call again */
	req_begin(&r->r, c, PCMN_REQ_SEND, 1, 1);
	r->size = size;
	send_op(r, data, size, mr);
	g->req[i] = r;
	if (++g->assigned == g->n)
		s->next_seq++;
	post_group(c, g);
	*request = r;
	return ncclSuccess;
}

ncclResult_t pcmn_isend(void *comm, void *data, size_t size, int tag, void *mhandle,
			void **request)
{
	struct pcmn_comm *c;
	ncclResult_t rc;

	if (!request)
		return ncclInternalError;
	c = enter(comm, PCMN_SEND, "isend", request);
	rc = c ? isend_locked(c, data, size, tag, mhandle, request) : ncclInternalError;
	pcmn_unlock();
	return rc;
}

/* ---- irecv ------------------------------------------------------------------------------------ */

static void on_received(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_recv_req *r = op->owner;
	struct pcmn_comm *c = r->r.comm;
	uint32_t i = op->index;

	req_error(&r->r, done->status);
	if (done->status == 0) {
		r->sizes[i] = done->bytes;
		if (r->stage[i] && done->bytes && !c->closed)
			memcpy(r->user[i], r->stage[i], done->bytes);
	}
	pcmn_stage_put(r->stage[i]);
	r->stage[i] = NULL;
	r->r.pending--;
	pcmn_comm_release(c);
}

/* The CTS's own outcome does not matter: if it never arrived, the receives fail too. */
static void on_cts_sent(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_recv_req *r = op->owner;

	(void)done;
	r->r.pending--;
	pcmn_comm_release(r->r.comm);
}

/* Daemon mode, as the receive is posted in its lane: a staging buffer in pcmd's region. */
static int stage_recv(struct pcmn_op *op)
{
	struct pcmn_recv_req *r = op->owner;
	void *p = pcmn_stage_get(op->len);

	if (!p)
		return -EAGAIN; /* the region is full for now: it waits in its lane */
	r->stage[op->index] = p;
	op->buf = p;
	op->mr = NULL;
	return 0;
}

/* Receive @i of @r: into NCCL's buffer @data (registered in @mr), or staged in daemon mode. */
static void recv_op(struct pcmn_recv_req *r, int i, void *data, size_t cap, struct pcm_tp_mr *mr)
{
	struct pcmn_op *op = &r->ops[i];

	*op = (struct pcmn_op){ .done = on_received, .owner = r, .index = (uint32_t)i,
				.kind = PCMN_OP_RECV, .buf = data, .len = cap, .mr = mr };
	r->user[i] = data;
	r->sizes[i] = 0;
	r->stage[i] = NULL;
	if (pcmn_ctx.set.backend == PCMN_BACKEND_DAEMON) {
		op->prepare = stage_recv;
	} else if (cap == 0) {
		op->buf = pcmn_zero_buf();
		op->mr = NULL;
	}
}

/* Post @r's n receives and its CTS, in that order. */
static void post_recv(struct pcmn_comm *c, struct pcmn_recv_req *r, int n)
{
	for (int i = 0; i <= n; i++) {
		int rc = pcmn_comm_post(c, &r->ops[i]);

		if (rc < 0) {
			PCMN_WARN("irecv: %s (%s)", pcm_tp_strerror(rc), pcm_tp_last_error());
			req_error(&r->r, rc);
			r->r.pending = (uint16_t)i; /* the operations posted before it complete */
			if (i < n) { /* staged before the post failed */
				pcmn_stage_put(r->stage[i]);
				r->stage[i] = NULL;
			}
			pcmn_comm_fail(c, rc);
			return;
		}
	}
}

static ncclResult_t check_recv(struct pcmn_comm *c, int n, void **data, const size_t *sizes,
			       void **mhandles, struct pcm_tp_mr **mrs, size_t *caps)
{
	if (c->state == PCMN_FAILED) {
		PCMN_WARN("irecv on recvComm %p: its connection failed: %s", (void *)c,
			  pcm_tp_strerror(c->error));
		return pcmn_result(c->error);
	}
	if (n < 1 || n > (int)PCMN_MAX_RECVS || !data || !sizes) {
		PCMN_WARN("irecv of %d buffers: want 1 .. %u (maxRecvs) and their addresses and "
			  "sizes", n, PCMN_MAX_RECVS);
		return ncclInternalError;
	}
	for (int i = 0; i < n; i++) {
		caps[i] = sizes[i] < pcmn_ctx.max_msg_bytes ? sizes[i] : pcmn_ctx.max_msg_bytes;
		if (pcmn_mr_find(mhandles ? mhandles[i] : NULL, data[i], caps[i], &mrs[i]) < 0)
			return ncclInternalError;
	}
	return ncclSuccess;
}

static ncclResult_t irecv_locked(struct pcmn_comm *c, int n, void **data, const size_t *sizes,
				 const int *tags, void **mhandles, void **request)
{
	struct pcm_tp_mr *mrs[PCMN_MAX_RECVS];
	size_t caps[PCMN_MAX_RECVS];
	struct pcmn_recv_req *r;
	struct pcmn_cts *cts;
	uint32_t index;
	ncclResult_t res = check_recv(c, n, data, sizes, mhandles, mrs, caps);

	if (res != ncclSuccess)
		return res;
	pcmn_progress();
	r = free_recv_req(c->recv, &index);
	if (!r)
		return ncclSuccess; /* NCCL_NET_MAX_REQUESTS outstanding: call again */
	for (int i = 0; i < n; i++)
		recv_op(r, i, data[i], caps[i], mrs[i]);
	cts = cts_slot(c, index);
	memset(cts, 0, sizeof(*cts));
	cts->magic = PCMN_CTS_MAGIC;
	cts->n = (uint32_t)n;
	cts->seq = c->recv->next_seq++;
	for (int i = 0; i < n; i++) {
		cts->buf[i].tag = tags ? tags[i] : 0;
		cts->buf[i].cap = caps[i];
	}
	r->ops[n] = (struct pcmn_op){ .done = on_cts_sent, .owner = r, .index = (uint32_t)n,
				      .kind = PCMN_OP_SEND, .buf = cts, .len = sizeof(*cts) };
	req_begin(&r->r, c, PCMN_REQ_RECV, n, n + 1);
	post_recv(c, r, n);
	*request = r;
	return ncclSuccess;
}

ncclResult_t pcmn_irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
			void **request)
{
	struct pcmn_comm *c;
	ncclResult_t rc;

	if (!request)
		return ncclInternalError;
	c = enter(comm, PCMN_RECV, "irecv", request);
	rc = c ? irecv_locked(c, n, data, sizes, tags, mhandles, request) : ncclInternalError;
	pcmn_unlock();
	return rc;
}

/* ---- iflush and test -------------------------------------------------------------------------- */

/*
 * Host memory holds the bytes once test() has reported the receive, so there is nothing to
 * flush: the request is done at its first test. With every request in use it is NULL, which
 * NCCL also takes as complete.
 */
ncclResult_t pcmn_iflush(void *comm, int n, void **data, int *sizes, void **mhandles,
			 void **request)
{
	struct pcmn_recv_req *r;
	struct pcmn_comm *c;
	uint32_t index;
	ncclResult_t rc = ncclSuccess;

	if (!request)
		return ncclInternalError;
	c = enter(comm, PCMN_RECV, "iflush", request);
	if (!c || n < 1 || n > (int)PCMN_MAX_RECVS || !data || !sizes) {
		if (c)
			PCMN_WARN("iflush of %d buffers: want 1 .. %u", n, PCMN_MAX_RECVS);
		rc = ncclInternalError;
	}
	for (int i = 0; rc == ncclSuccess && i < n; i++) {
		struct pcm_tp_mr *mr;

		if (sizes[i] < 0 || pcmn_mr_find(mhandles ? mhandles[i] : NULL, data[i],
						 (size_t)sizes[i], &mr) < 0)
			rc = ncclInternalError;
	}
	if (rc == ncclSuccess && (r = free_recv_req(c->recv, &index))) {
		req_begin(&r->r, c, PCMN_REQ_FLUSH, n, 0);
		*request = r;
	}
	pcmn_unlock();
	return rc;
}

/* Report @r's sizes into @sizes (may be NULL) and free it. Return: its outcome. */
static int finish(struct pcmn_req *r, int *sizes)
{
	int status = r->status;

	if (sizes && r->kind == PCMN_REQ_SEND) {
		sizes[0] = (int)((struct pcmn_send_req *)r)->size;
	} else if (sizes && r->kind == PCMN_REQ_RECV) {
		struct pcmn_recv_req *rr = (struct pcmn_recv_req *)r;

		for (int i = 0; i < r->n; i++)
			sizes[i] = (int)rr->sizes[i];
	}
	r->magic = 0;
	return status;
}

ncclResult_t pcmn_test(void *request, int *done, int *sizes)
{
	static const char *const kinds[] = { "", "isend", "irecv", "iflush" };
	struct pcmn_req *r;
	int status, kind;

	if (!done)
		return ncclInternalError;
	*done = 0;
	pcmn_lock();
	r = req_head(request);
	if (!r) {
		pcmn_unlock();
		PCMN_WARN("test: %p is no outstanding request of this plugin", request);
		return ncclInternalError;
	}
	if (r->pending)
		pcmn_progress();
	if (r->pending) {
		pcmn_unlock();
		return ncclSuccess;
	}
	*done = 1;
	kind = r->kind;
	status = finish(r, sizes);
	pcmn_unlock();
	if (status < 0) {
		PCMN_WARN("%s failed: %s", kinds[kind], pcm_tp_strerror(status));
		return pcmn_result(status);
	}
	return ncclSuccess;
}
