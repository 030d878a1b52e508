// SPDX-License-Identifier: MIT
/*
 * nccl_conn.c - NCCL's listen, connect and accept over libpcmtransport, none of which blocks.
 *
 * A process's endpoint listens at one address (nccl-pcm.<pid>.<nonce>, on pcmd or in the
 * process) from its first listen() on, and keeps ACCEPT_DEPTH accepts posted. Every listenComm
 * shares that address and has an id of its own; listen() writes both into NCCL's handle.
 *
 *   connect  the first call dials the handle's address and keeps its comm in the handle (NCCL
 *            passes the same handle until the comm is returned); once the dial completes it
 *            sends a hello {listen id} and posts the CTS receives, and a later call returns it.
 *   accept   each dial the endpoint accepts posts a receive for its hello; the hello names the
 *            listenComm, whose accept() then returns the connection as a recvComm. A hello
 *            naming no open listenComm (closed, or from an older process) closes the dial.
 * Until its comm is ready each call returns NULL in it, and NCCL calls again.
 */
#include <errno.h>
#include <string.h>

#include "nccl_pcm.h"

#define ACCEPT_DEPTH 8 /* accepts kept posted */

static struct pcmn_comm *listeners; /* open listenComms */
static uint64_t last_listen_id;
static bool listening;
static struct pcmn_op accept_ops[ACCEPT_DEPTH];

static struct pcmn_comm *find_listener(uint64_t id)
{
	for (struct pcmn_comm *l = listeners; l; l = l->listen.next)
		if (l->listen.id == id)
			return l;
	return NULL;
}

static void unlink_listener(struct pcmn_comm *l)
{
	for (struct pcmn_comm **p = &listeners; *p; p = &(*p)->listen.next)
		if (*p == l) {
			*p = l->listen.next;
			return;
		}
}

/* ---- the accepting side ------------------------------------------------------------------------ */

static struct pcmn_hello *hello_of(struct pcmn_comm *c)
{
	return (struct pcmn_hello *)(c->ctl + PCMN_CTL_HELLO_OFF);
}

static void on_hello(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_comm *c = op->owner;
	const struct pcmn_hello *h = hello_of(c);
	struct pcmn_comm *l;

	if (c->closed) {
		pcmn_comm_release(c);
		return;
	}
	if (done->status < 0 || done->bytes != sizeof(*h) || h->magic != PCMN_HELLO_MAGIC ||
	    h->version != PCMN_WIRE_VERSION) {
		PCMN_WARN("a dial sent no hello of this plugin (%s): closed",
			  done->status < 0 ? pcm_tp_strerror(done->status) : "malformed");
		pcmn_comm_close(c);
	} else if (!(l = find_listener(h->listen_id))) {
		PCMN_INFO("a dial for listenComm %llu, which is closed: closed",
			  (unsigned long long)h->listen_id);
		pcmn_comm_close(c);
	} else {
		struct pcmn_comm **tail = &l->listen.ready;

		while (*tail)
			tail = &(*tail)->next;
		*tail = c;
		c->state = PCMN_UNCLAIMED;
	}
	pcmn_comm_release(c);
}

static void take_dial(struct pcm_tp_conn *conn)
{
	struct pcmn_comm *c = pcmn_comm_new(PCMN_RECV);
	struct pcmn_op *op;

	if (!c) {
		PCMN_WARN("no memory for a recvComm: a dial is closed");
		pcm_tp_conn_close(conn);
		return;
	}
	c->lane.conn = conn;
	c->state = PCMN_HELLO_WAIT;
	op = &c->recv->hello_op;
	*op = (struct pcmn_op){ .done = on_hello, .owner = c, .kind = PCMN_OP_RECV,
				.buf = hello_of(c), .len = sizeof(struct pcmn_hello) };
	if (pcmn_comm_post(c, op) < 0) {
		PCMN_WARN("cannot receive a dial's hello: %s", pcm_tp_last_error());
		pcmn_comm_close(c);
	}
}

static void on_accepted(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	int rc = 0;

	if (done->status != -ESHUTDOWN && done->status != -EINVAL)
		rc = pcm_tp_accept(pcmn_ctx.ep, (uint64_t)(uintptr_t)op);
	if (rc < 0 || done->status == -ESHUTDOWN || done->status == -EINVAL)
		PCMN_WARN("the endpoint takes one dial fewer: %s (%s)",
			  pcm_tp_strerror(rc < 0 ? rc : done->status), pcm_tp_last_error());
	if (done->status < 0)
		PCMN_WARN("a dial failed: %s", pcm_tp_strerror(done->status));
	else
		take_dial(done->conn);
}

static int start_listening(void)
{
	int rc;

	if (listening)
		return 0;
	rc = pcm_tp_listen(pcmn_ctx.ep, pcmn_ctx.addr);
	if (rc < 0) {
		PCMN_WARN("listen at %s: %s (%s)", pcmn_ctx.addr, pcm_tp_strerror(rc),
			  pcm_tp_last_error());
		return rc;
	}
	listening = true;
	for (int i = 0; i < ACCEPT_DEPTH; i++) {
		accept_ops[i] = (struct pcmn_op){ .done = on_accepted, .index = (uint32_t)i };
		rc = pcm_tp_accept(pcmn_ctx.ep, (uint64_t)(uintptr_t)&accept_ops[i]);
		if (rc < 0) {
			PCMN_WARN("accept: %s (%s)", pcm_tp_strerror(rc), pcm_tp_last_error());
			return i ? 0 : rc;
		}
	}
	return 0;
}

ncclResult_t pcmn_listen(int dev, void *handle, void **listen_comm)
{
	struct pcmn_handle *h = handle;
	struct pcmn_comm *l;
	int rc;

	if (!listen_comm || !handle || dev != 0) {
		PCMN_WARN("listen: %s", dev != 0 ? "no such device (there is one: 0)" :
			  "NULL handle or listenComm");
		return ncclInternalError;
	}
	*listen_comm = NULL;
	pcmn_lock();
	rc = pcmn_ctx.ep ? start_listening() : -ENODEV;
	l = rc == 0 ? pcmn_comm_new(PCMN_LISTEN) : NULL;
	if (l) {
		l->state = PCMN_READY;
		l->listen.id = ++last_listen_id;
		l->listen.next = listeners;
		listeners = l;
		memset(h, 0, NCCL_NET_HANDLE_MAXSIZE);
		h->magic = PCMN_HANDLE_MAGIC;
		h->version = PCMN_WIRE_VERSION;
		h->backend = (uint8_t)pcmn_ctx.set.backend;
		h->listen_id = l->listen.id;
		memcpy(h->addr, pcmn_ctx.addr, sizeof(h->addr));
		*listen_comm = l;
	}
	pcmn_unlock();
	if (rc == -ENODEV)
		PCMN_WARN("listen before init");
	return l ? ncclSuccess : rc < 0 ? pcmn_result(rc) : ncclSystemError;
}

ncclResult_t pcmn_accept(void *listen_comm, void **recv_comm, struct ncclNetDeviceHandle **dev_comm)
{
	struct pcmn_comm *l, *c = NULL;

	(void)dev_comm;
	if (!recv_comm)
		return ncclInternalError;
	*recv_comm = NULL;
	pcmn_lock();
	l = pcmn_comm_of(listen_comm, PCMN_LISTEN, "accept");
	if (l) {
		pcmn_progress();
		c = l->listen.ready;
		if (c) {
			l->listen.ready = c->next;
			c->next = NULL;
			c->state = PCMN_READY;
			*recv_comm = c;
		}
	}
	pcmn_unlock();
	return l ? ncclSuccess : ncclInternalError;
}

ncclResult_t pcmn_close_listen(void *listen_comm)
{
	struct pcmn_comm *l;

	pcmn_lock();
	l = pcmn_comm_of(listen_comm, PCMN_LISTEN, "closeListen");
	if (l) {
		unlink_listener(l);
		while (l->listen.ready) {
			struct pcmn_comm *c = l->listen.ready;

			l->listen.ready = c->next;
			pcmn_comm_close(c);
		}
		l->closed = true;
		pcmn_defer_free(&l->reap);
		pcmn_progress();
	}
	pcmn_unlock();
	return l ? ncclSuccess : ncclInternalError;
}

/* ---- the dialing side -------------------------------------------------------------------------- */

static void on_hello_sent(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_comm *c = op->owner;

	if (done->status < 0 && !c->closed)
		pcmn_comm_fail(c, done->status);
	pcmn_comm_release(c);
}

/* The dial completed: send the hello and post the CTS receives. */
static int connected(struct pcmn_comm *c, struct pcm_tp_conn *conn)
{
	struct pcmn_op *op = &c->send->hello_op;
	int rc;

	c->lane.conn = conn;
	*op = (struct pcmn_op){ .done = on_hello_sent, .owner = c, .kind = PCMN_OP_SEND,
				.buf = hello_of(c), .len = sizeof(struct pcmn_hello) };
	rc = pcmn_send_start(c);
	if (rc == 0)
		rc = pcmn_comm_post(c, op);
	return rc;
}

static void on_connected(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_comm *c = op->owner;
	int rc = done->status;

	if (c->closed) {
		if (rc == 0)
			pcm_tp_conn_close(done->conn);
	} else {
		if (rc == 0)
			rc = connected(c, done->conn);
		if (rc < 0)
			pcmn_comm_fail(c, rc);
		else
			c->state = PCMN_READY;
	}
	pcmn_comm_release(c);
}

/* Start dialing @h: a sendComm in the making, or NULL (logged). */
static struct pcmn_comm *dial(struct pcmn_handle *h)
{
	struct pcm_tp_conn_opts o = { .policy = pcmn_ctx.set.policy };
	struct pcmn_comm *c;
	int rc;

	if (h->magic != PCMN_HANDLE_MAGIC || h->version != PCMN_WIRE_VERSION ||
	    !memchr(h->addr, 0, sizeof(h->addr))) {
		PCMN_WARN("connect: the handle is no listen() handle of this plugin's version");
		return NULL;
	}
	if (h->backend != pcmn_ctx.set.backend) {
		PCMN_WARN("connect: the listener runs the %s backend and this process the %s one: "
			  "set PCM_NCCL_BACKEND alike in every rank",
			  h->backend == PCMN_BACKEND_DAEMON ? "daemon" : "inproc",
			  pcmn_ctx.set.backend == PCMN_BACKEND_DAEMON ? "daemon" : "inproc");
		return NULL;
	}
	c = pcmn_comm_new(PCMN_SEND);
	if (!c)
		return NULL;
	*hello_of(c) = (struct pcmn_hello){ .magic = PCMN_HELLO_MAGIC,
					    .version = PCMN_WIRE_VERSION,
					    .listen_id = h->listen_id };
	c->state = PCMN_DIALING;
	c->setup_op = (struct pcmn_op){ .done = on_connected, .owner = c };
	pcmn_comm_hold(c);
	rc = pcm_tp_connect(pcmn_ctx.ep, h->addr, o.policy[0] ? &o : NULL,
			    (uint64_t)(uintptr_t)&c->setup_op);
	if (rc < 0) {
		PCMN_WARN("connect to %s: %s (%s)", h->addr, pcm_tp_strerror(rc),
			  pcm_tp_last_error());
		c->closed = true;
		pcmn_comm_release(c);
		return NULL;
	}
	return c;
}

static ncclResult_t connect_locked(struct pcmn_handle *h, void **send_comm)
{
	struct pcmn_comm *c = h->dialing;

	if (!c) {
		c = dial(h);
		if (!c)
			return ncclSystemError;
		h->dialing = c;
	} else if (c->magic != PCMN_COMM_MAGIC || c->kind != PCMN_SEND) {
		PCMN_WARN("connect: the handle's dial in progress is garbled");
		return ncclInternalError;
	}
	pcmn_progress();
	if (c->state == PCMN_READY) {
		h->dialing = NULL;
		*send_comm = c;
	} else if (c->state == PCMN_FAILED) {
		int err = c->error;

		h->dialing = NULL;
		PCMN_WARN("connect to %s: %s%s", h->addr, pcm_tp_strerror(err),
			  strcmp(h->addr, pcmn_ctx.addr) == 0 &&
					  pcmn_ctx.set.backend == PCMN_BACKEND_DAEMON ?
				  " (a process is one host of pcmd's fabric: it cannot dial itself)" :
				  "");
		pcmn_comm_close(c);
		pcmn_progress();
		return pcmn_result(err);
	}
	return ncclSuccess;
}

ncclResult_t pcmn_connect(int dev, void *handle, void **send_comm,
			  struct ncclNetDeviceHandle **dev_comm)
{
	ncclResult_t rc;

	(void)dev_comm;
	if (!send_comm || !handle || dev != 0) {
		PCMN_WARN("connect: %s", dev != 0 ? "no such device (there is one: 0)" :
			  "NULL handle or sendComm");
		return ncclInternalError;
	}
	*send_comm = NULL;
	pcmn_lock();
	rc = pcmn_ctx.ep ? connect_locked(handle, send_comm) : ncclInternalError;
	pcmn_unlock();
	return rc;
}

static ncclResult_t close_comm(void *comm, enum pcmn_kind kind, const char *call)
{
	struct pcmn_comm *c;

	pcmn_lock();
	c = pcmn_comm_of(comm, kind, call);
	if (c) {
		pcmn_comm_close(c);
		pcmn_progress();
	}
	pcmn_unlock();
	return c ? ncclSuccess : ncclInternalError;
}

ncclResult_t pcmn_close_send(void *send_comm)
{
	return close_comm(send_comm, PCMN_SEND, "closeSend");
}

ncclResult_t pcmn_close_recv(void *recv_comm)
{
	return close_comm(recv_comm, PCMN_RECV, "closeRecv");
}
