// SPDX-License-Identifier: MIT
/*
 * nccl_comm.c - a communicator's life: allocation, the operations it holds, failure, close.
 *
 * A sendComm or recvComm owns one libpcmtransport connection (its lane) and every operation it
 * posted carries a pointer into it (the cookie). It may therefore be freed only once each of
 * those operations has completed: closeSend/closeRecv complete what still waits in the lane with
 * -ECONNABORTED, then close the connection through the lane (pcm may ask to retry a close after a
 * poll, as it may a post), and pcm completes what was posted with -ECONNABORTED; the comm is
 * freed when the last handler releases it (pcmn_comm_release), at the end of that progress call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_pcm.h"

static void comm_free(struct pcmn_reap *r)
{
	struct pcmn_comm *c = (struct pcmn_comm *)((uint8_t *)r - offsetof(struct pcmn_comm, reap));

	if (c->kind == PCMN_SEND)
		free(c->send);
	else if (c->kind == PCMN_RECV)
		free(c->recv);
	pcmn_ctl_put(c->ctl);
	c->magic = 0;
	free(c);
}

struct pcmn_comm *pcmn_comm_new(enum pcmn_kind kind)
{
	struct pcmn_comm *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->magic = PCMN_COMM_MAGIC;
	c->kind = (uint8_t)kind;
	c->reap.fn = comm_free;
	if (kind == PCMN_LISTEN)
		return c;
	if (kind == PCMN_SEND)
		c->send = calloc(1, sizeof(*c->send));
	else
		c->recv = calloc(1, sizeof(*c->recv));
	c->ctl = pcmn_ctl_get();
	if ((kind == PCMN_SEND ? (void *)c->send : (void *)c->recv) && c->ctl)
		return c;
	comm_free(&c->reap);
	return NULL;
}

struct pcmn_comm *pcmn_comm_of(void *p, enum pcmn_kind kind, const char *call)
{
	static const char *const names[] = { "", "listenComm", "sendComm", "recvComm" };
	struct pcmn_comm *c = p;

	if (c && c->magic == PCMN_COMM_MAGIC && c->kind == kind && !c->closed)
		return c;
	PCMN_WARN("%s: %p is no open %s of this plugin", call, p, names[kind]);
	return NULL;
}

void pcmn_comm_hold(struct pcmn_comm *c)
{
	c->held++;
}

void pcmn_comm_release(struct pcmn_comm *c)
{
	if (--c->held == 0 && c->closed)
		pcmn_defer_free(&c->reap);
}

int pcmn_comm_post(struct pcmn_comm *c, struct pcmn_op *op)
{
	int rc;

	pcmn_comm_hold(c);
	rc = pcmn_lane_post(&c->lane, op);
	if (rc < 0)
		pcmn_comm_release(c);
	return rc;
}

/* Complete what waits in @c's lane with @err (each handler releases its hold). */
static void drop_queued(struct pcmn_comm *c, int err)
{
	struct pcmn_op *op = pcmn_lane_take(&c->lane);

	while (op) {
		struct pcmn_op *next = op->next;

		pcmn_op_fail(op, err);
		op = next;
	}
}

void pcmn_comm_fail(struct pcmn_comm *c, int err)
{
	if (c->state == PCMN_FAILED)
		return;
	c->state = PCMN_FAILED;
	c->error = err;
	pcmn_comm_hold(c);
	drop_queued(c, err);
	pcmn_comm_release(c);
}

static void on_closed(struct pcmn_op *op, const struct pcm_tp_completion *done)
{
	struct pcmn_comm *c = op->owner;

	if (done->status < 0 && done->status != -ENOTCONN)
		PCMN_WARN("close: %s (%s)", pcm_tp_strerror(done->status), pcm_tp_last_error());
	pcmn_comm_release(c);
}

void pcmn_comm_close(struct pcmn_comm *c)
{
	c->closed = true;
	pcmn_comm_hold(c);
	drop_queued(c, -ECONNABORTED);
	if (c->lane.conn) {
		c->close_op = (struct pcmn_op){ .done = on_closed, .owner = c, .kind = PCMN_OP_CLOSE };
		pcmn_comm_post(c, &c->close_op);
	}
	pcmn_comm_release(c);
}
