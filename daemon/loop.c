// SPDX-License-Identifier: MIT
/*
 * loop.c - the io_uring behind pcmd's loop. An SQE's user_data is its
 * struct pcmd_op; cancellation SQEs carry no op (user_data 0) and their
 * completions are dropped.
 */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"

struct pcmd_loop {
	struct io_uring ring;
	uint32_t pending;
};

int pcmd_loop_create(unsigned entries, struct pcmd_loop **out)
{
	struct pcmd_loop *l = calloc(1, sizeof(*l));
	struct io_uring_params params;
	int rc;

	if (!l)
		return -ENOMEM;

	/* Every client keeps a few ops pending: room for all their completions. */
	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_CQSIZE;
	params.cq_entries = entries * 8;
	rc = io_uring_queue_init_params(entries, &l->ring, &params);
	if (rc < 0) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

void pcmd_loop_destroy(struct pcmd_loop *l)
{
	if (!l)
		return;
	io_uring_queue_exit(&l->ring);
	free(l);
}

static struct io_uring_sqe *get_sqe(struct pcmd_loop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

	if (!sqe) {
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	return sqe;
}

/* Take an SQE for @op, or fail if @op is busy or the ring is full. */
static struct io_uring_sqe *start(struct pcmd_loop *l, struct pcmd_op *op, int *rc)
{
	struct io_uring_sqe *sqe;

	if (op->pending) {
		*rc = -EBUSY;
		return NULL;
	}
	sqe = get_sqe(l);
	if (!sqe) {
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = 0;
	return sqe;
}

static int queued(struct pcmd_loop *l, struct pcmd_op *op, struct io_uring_sqe *sqe)
{
	io_uring_sqe_set_data(sqe, op);
	op->pending = true;
	l->pending++;
	return 0;
}

int pcmd_loop_accept(struct pcmd_loop *l, struct pcmd_op *op, int fd)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, op, &rc);

	if (!sqe)
		return rc;
	io_uring_prep_accept(sqe, fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	return queued(l, op, sqe);
}

int pcmd_loop_recvmsg(struct pcmd_loop *l, struct pcmd_op *op, int fd, struct msghdr *msg)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, op, &rc);

	if (!sqe)
		return rc;
	io_uring_prep_recvmsg(sqe, fd, msg, MSG_CMSG_CLOEXEC);
	return queued(l, op, sqe);
}

int pcmd_loop_sendmsg(struct pcmd_loop *l, struct pcmd_op *op, int fd, const struct msghdr *msg)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, op, &rc);

	if (!sqe)
		return rc;
	io_uring_prep_sendmsg(sqe, fd, msg, MSG_NOSIGNAL);
	return queued(l, op, sqe);
}

int pcmd_loop_read(struct pcmd_loop *l, struct pcmd_op *op, int fd, void *buf, size_t len)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, op, &rc);

	if (!sqe)
		return rc;
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, (uint64_t)-1);
	return queued(l, op, sqe);
}

int pcmd_loop_write(struct pcmd_loop *l, struct pcmd_op *op, int fd, const void *buf, size_t len,
		    int64_t offset)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, op, &rc);

	if (!sqe)
		return rc;
	io_uring_prep_write(sqe, fd, buf, (unsigned)len, (uint64_t)offset);
	return queued(l, op, sqe);
}

int pcmd_loop_poll(struct pcmd_loop *l, struct pcmd_op *op, int fd, unsigned events)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, op, &rc);

	if (!sqe)
		return rc;
	io_uring_prep_poll_add(sqe, fd, events);
	return queued(l, op, sqe);
}

int pcmd_loop_timeout(struct pcmd_loop *l, struct pcmd_op *op, uint64_t ns)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, op, &rc);

	if (!sqe)
		return rc;
	op->ts.tv_sec = (long long)(ns / 1000000000u);
	op->ts.tv_nsec = (long long)(ns % 1000000000u);
	io_uring_prep_timeout(sqe, &op->ts, 0, 0);
	return queued(l, op, sqe);
}

static void bell_io_done(struct pcmd_op *op, int res);

/* Queue the bell's next step: a read that takes the count, or (refused once) a poll. */
static int bell_queue(struct pcmd_loop *l, struct pcmd_bell *b)
{
	int rc;
	struct io_uring_sqe *sqe = start(l, &b->op, &rc);

	if (!sqe)
		return rc;
	b->op.done = bell_io_done;
	if (b->polling)
		io_uring_prep_poll_add(sqe, b->fd, POLLIN);
	else
		io_uring_prep_read(sqe, b->fd, &b->count, sizeof(b->count), (uint64_t)-1);
	return queued(l, &b->op, sqe);
}

static void bell_io_done(struct pcmd_op *op, int res)
{
	struct pcmd_bell *b = (struct pcmd_bell *)((char *)op - offsetof(struct pcmd_bell, op));
	struct pcmd_loop *l = b->loop;
	bool was_polling = b->polling;
	int rc;

	/* A refused read waits for readiness; readiness reads again; a read is the ring. */
	if (!was_polling && res == -EAGAIN)
		b->polling = true;
	else if (was_polling && res >= 0)
		b->polling = false;
	else {
		b->rang(b, res < 0 ? res : 0);
		return;
	}
	rc = bell_queue(l, b);
	if (rc < 0)
		b->rang(b, rc);
}

int pcmd_loop_bell(struct pcmd_loop *l, struct pcmd_bell *bell, int fd, pcmd_bell_fn rang)
{
	bell->loop = l;
	bell->fd = fd;
	bell->rang = rang;
	return bell_queue(l, bell);
}

int pcmd_loop_cancel(struct pcmd_loop *l, struct pcmd_op *op)
{
	struct io_uring_sqe *sqe;

	if (!op->pending)
		return 0;
	sqe = get_sqe(l);
	if (!sqe)
		return -ENOMEM;
	io_uring_prep_cancel(sqe, op, 0);
	io_uring_sqe_set_data(sqe, NULL);
	return 0;
}

static void dispatch(struct pcmd_loop *l, struct io_uring_cqe *cqe)
{
	struct pcmd_op *op = io_uring_cqe_get_data(cqe);
	int res = cqe->res;

	io_uring_cqe_seen(&l->ring, cqe);
	if (!op)
		return;
	op->pending = false;
	l->pending--;
	op->done(op, res);
}

int pcmd_loop_turn(struct pcmd_loop *l, int timeout_ms)
{
	struct __kernel_timespec ts = {timeout_ms / 1000, (long long)(timeout_ms % 1000) * 1000000};
	struct io_uring_cqe *cqe;
	int n = 0, rc;

	do {
		if (timeout_ms < 0)
			rc = io_uring_submit_and_wait(&l->ring, 1);
		else
			rc = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, &ts, NULL);
	} while (rc == -EINTR);
	if (rc < 0 && rc != -ETIME)
		return rc;
	/* Run each done() with the CQE already returned, so it may queue more. */
	while (io_uring_peek_cqe(&l->ring, &cqe) == 0) {
		dispatch(l, cqe);
		n++;
	}
	return n;
}

uint32_t pcmd_loop_pending(const struct pcmd_loop *l)
{
	return l->pending;
}
