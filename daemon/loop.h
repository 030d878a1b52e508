/* SPDX-License-Identifier: MIT */
/*
 * loop.h - pcmd's single event loop on one io_uring (liburing): the control
 * socket's accepts, each client's recvmsg/sendmsg and doorbell reads, the
 * signalfd, the data plane's event fd, timers and the stats and record
 * writes. No thread per client.
 *
 * An operation is a struct pcmd_op embedded in its owner; its done() runs on
 * the loop thread with the CQE's result (-errno or a count). An op is either
 * idle or pending; an owner that goes away cancels its pending ops and frees
 * itself only once each has come back (pending == false), so no CQE ever
 * points at freed memory.
 */
#ifndef PCMD_LOOP_H
#define PCMD_LOOP_H

#include <linux/time_types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct pcmd_loop;
struct pcmd_op;

typedef void (*pcmd_op_fn)(struct pcmd_op *op, int res);

struct pcmd_op {
	pcmd_op_fn done;
	bool pending;
	struct __kernel_timespec ts; /* timeouts */
};

/**
 * pcmd_loop_create() - set up the ring.
 * @entries: submission queue size.
 * @out: the loop.
 *
 * Return: 0, -ENOMEM, or io_uring_queue_init()'s -errno (-ENOSYS, -EPERM when
 * io_uring is disabled).
 */
int pcmd_loop_create(unsigned entries, struct pcmd_loop **out);

void pcmd_loop_destroy(struct pcmd_loop *l);

/*
 * Queue one operation; it is submitted on the next turn of the loop. Each
 * returns 0, -EBUSY if @op is already pending, or -ENOMEM if the ring has no
 * room even after submitting what was queued.
 */
int pcmd_loop_accept(struct pcmd_loop *l, struct pcmd_op *op, int fd);
int pcmd_loop_recvmsg(struct pcmd_loop *l, struct pcmd_op *op, int fd, struct msghdr *msg);
int pcmd_loop_sendmsg(struct pcmd_loop *l, struct pcmd_op *op, int fd, const struct msghdr *msg);
int pcmd_loop_read(struct pcmd_loop *l, struct pcmd_op *op, int fd, void *buf, size_t len);
/* @offset: file offset, or -1 for the current position (O_APPEND files). */
int pcmd_loop_write(struct pcmd_loop *l, struct pcmd_op *op, int fd, const void *buf, size_t len,
		    int64_t offset);
int pcmd_loop_poll(struct pcmd_loop *l, struct pcmd_op *op, int fd, unsigned events);
/* Completes with -ETIME after @ns nanoseconds. */
int pcmd_loop_timeout(struct pcmd_loop *l, struct pcmd_op *op, uint64_t ns);

/*
 * A doorbell: an eventfd whose count the loop takes itself, with an
 * IORING_OP_READ, so that a ring costs the woken loop no read() of its own
 * (a client's submission doorbell, the data plane's event fd). Should the
 * kernel answer the read with -EAGAIN (an O_NONBLOCK eventfd on a kernel
 * that does not retry reads on readiness), the bell waits with a POLL and
 * reads again. pcmd never reads the fd synchronously: a client that drains
 * or re-flags its own doorbell can only delay itself, never block the loop.
 */
struct pcmd_bell;
typedef void (*pcmd_bell_fn)(struct pcmd_bell *bell, int res);

struct pcmd_bell {
	struct pcmd_op op; /* pending while the bell waits; cancel this to stop it */
	pcmd_bell_fn rang; /* res 0: rung (the count is taken), or -errno (-ECANCELED) */
	struct pcmd_loop *loop;
	int fd;
	bool polling;      /* the kernel refused a waiting read: POLL first */
	uint64_t count;
};

/**
 * pcmd_loop_bell() - wait for the next ring of eventfd @fd, then run @rang.
 * @l: the loop.
 * @bell: the bell (its op must be idle).
 * @fd: the eventfd.
 * @rang: run once, on the loop thread, after the count was taken.
 *
 * Return: 0, -EBUSY, -ENOMEM (as the other ops).
 */
int pcmd_loop_bell(struct pcmd_loop *l, struct pcmd_bell *bell, int fd, pcmd_bell_fn rang);

/**
 * pcmd_loop_cancel() - ask for a pending op to finish early; its done() still
 * runs (typically with -ECANCELED). Idle ops are ignored.
 * @l: the loop.
 * @op: the op.
 *
 * Return: 0, -ENOMEM.
 */
int pcmd_loop_cancel(struct pcmd_loop *l, struct pcmd_op *op);

/**
 * pcmd_loop_turn() - submit what is queued, wait for at least one completion
 * (up to @timeout_ms; 0 does not wait) and run every completion's done().
 * @l: the loop.
 * @timeout_ms: longest wait, -1 for no limit.
 *
 * Return: completions handled, or -errno (-EINTR is retried internally).
 */
int pcmd_loop_turn(struct pcmd_loop *l, int timeout_ms);

/* Ops submitted and not yet completed. */
uint32_t pcmd_loop_pending(const struct pcmd_loop *l);

#endif /* PCMD_LOOP_H */
