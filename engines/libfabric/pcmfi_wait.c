// SPDX-License-Identifier: MIT
/*
 * pcmfi_wait.c - how the provider's queues (completion and event queues)
 * are waited on, once for both.
 *
 * A queue has a doorbell (an eventfd) that whoever adds an entry rings while
 * a thread may sleep on the queue: another thread's progress, fi_eq_write()
 * or fi_cq_signal(). fi_cq_sread() and fi_eq_sread() loop: progress, take,
 * and else let the fabric sleep (fab->wait: on the ports' pcm_tp_wait(), in
 * slices, so that the doorbell is seen too). A queue opened with FI_WAIT_FD
 * gives the caller an epoll fd holding its doorbell and every port's
 * pcm_tp_fd() (fab->arm adds those, and fi_trywait() arms them); its
 * doorbell always rings, since the caller may sleep on that fd at any time.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "pcmfi.h"

/**
 * pcmfi_wait_check() - whether a queue may be waited on with @obj.
 *
 * Return: 0, -FI_ENOSYS (FI_WAIT_SET, FI_WAIT_MUTEX_COND, FI_WAIT_YIELD,
 * FI_WAIT_POLLFD: not provided) or -FI_EINVAL.
 */
int pcmfi_wait_check(enum fi_wait_obj obj)
{
	switch (obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		return 0;
	case FI_WAIT_SET:
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_YIELD:
	case FI_WAIT_POLLFD:
		FI_INFO(&pcmfi_prov, FI_LOG_CQ, "wait object %d: not provided\n", obj);
		return -FI_ENOSYS;
	default:
		return -FI_EINVAL;
	}
}

/* FI_WAIT_FD: the epoll fd of the doorbell, joined by the ports' fds. */
static int open_fd(struct pcmfi_fabric *fab, struct pcmfi_wait *w)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int rc;

	if (fab->n_waitfds >= sizeof(fab->waitfds) / sizeof(fab->waitfds[0]))
		return -FI_ENOSPC;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		return -errno;
	ev.data.fd = w->bell;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->bell, &ev) < 0)
		return -errno;
	w->sleepers = 1;
	fab->waitfds[fab->n_waitfds++] = w->epfd;
	rc = fab->arm(fab);
	/* inline progress in process wakes no fd: fi_trywait() then says -FI_EAGAIN */
	return rc == -FI_ENOSYS ? 0 : rc;
}

/**
 * pcmfi_wait_open() - a queue's waiting, with wait object @obj (checked).
 * Takes the fabric's lock.
 *
 * Return: 0, -FI_EMFILE, -FI_ENOSPC (64 wait fds per fabric), -FI_ENOMEM.
 */
int pcmfi_wait_open(struct pcmfi_fabric *fab, struct pcmfi_wait *w, enum fi_wait_obj obj)
{
	int rc = 0;

	w->obj = obj;
	w->sleepers = 0;
	w->epfd = -1;
	w->bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->bell < 0)
		return -errno;
	pthread_mutex_lock(&fab->lock);
	if (obj == FI_WAIT_FD)
		rc = open_fd(fab, w);
	pthread_mutex_unlock(&fab->lock);
	if (rc)
		pcmfi_wait_close(fab, w);
	return rc;
}

/**
 * pcmfi_wait_close() - undo pcmfi_wait_open() (the fabric's lock held or not
 * needed: the queue is being freed).
 */
void pcmfi_wait_close(struct pcmfi_fabric *fab, struct pcmfi_wait *w)
{
	if (w->epfd >= 0) {
		for (unsigned i = 0; i < fab->n_waitfds; i++)
			if (fab->waitfds[i] == w->epfd) {
				fab->waitfds[i] = fab->waitfds[--fab->n_waitfds];
				break;
			}
		close(w->epfd);
	}
	if (w->bell >= 0)
		close(w->bell);
	w->epfd = w->bell = -1;
}

/* pcmfi_wait_ring() - wake the queue's sleepers; free when none sleeps. */
void pcmfi_wait_ring(struct pcmfi_wait *w)
{
	uint64_t one = 1;

	if (w->sleepers > 0 && write(w->bell, &one, sizeof(one)) < 0)
		(void)0; /* the counter is at its maximum: it is readable anyway */
}

/* pcmfi_wait_drain() - make the doorbell unreadable until it rings again. */
void pcmfi_wait_drain(struct pcmfi_wait *w)
{
	uint64_t v;

	if (read(w->bell, &v, sizeof(v)) < 0)
		(void)0; /* EAGAIN: nothing rang */
}

/**
 * pcmfi_wait_control() - FI_GETWAIT (the epoll fd of an FI_WAIT_FD queue)
 * and FI_GETWAITOBJ.
 *
 * Return: 0, -FI_ENODATA (no fd: not FI_WAIT_FD), -FI_ENOSYS.
 */
int pcmfi_wait_control(const struct pcmfi_wait *w, int command, void *arg)
{
	switch (command) {
	case FI_GETWAIT:
		if (w->obj != FI_WAIT_FD)
			return -FI_ENODATA;
		*(int *)arg = w->epfd;
		return 0;
	case FI_GETWAITOBJ:
		*(enum fi_wait_obj *)arg = w->obj;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/**
 * pcmfi_wait_read() - the loop of an sread(), with the fabric's lock held:
 * progress, @take an entry, else sleep, until @take gives something other
 * than -FI_EAGAIN, @timeout_ms (negative: none) passes, or (@signaled
 * non-zero) fi_cq_signal() was called.
 *
 * Return: what @take gave, -FI_EAGAIN, -FI_ENOSYS (FI_WAIT_NONE), or
 * -FI_ESHUTDOWN (pcmd went away and nothing else can come).
 */
ssize_t pcmfi_wait_read(struct pcmfi_fabric *fab, struct pcmfi_wait *w, int timeout_ms,
			ssize_t (*take)(void *arg), void *arg, unsigned *signaled)
{
	int64_t deadline = timeout_ms < 0 ? -1 : pcmfi_now_ms() + timeout_ms;
	ssize_t n;

	if (w->obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	for (;;) {
		int left = deadline < 0 ? -1 : (int)(deadline - pcmfi_now_ms());

		fab->progress(fab);
		n = take(arg);
		if (n != -FI_EAGAIN)
			return n;
		if (signaled && *signaled) {
			(*signaled)--;
			return -FI_EAGAIN;
		}
		if (deadline >= 0 && left <= 0)
			return -FI_EAGAIN;
		w->sleepers++;
		n = fab->wait(fab, w, left);
		w->sleepers--;
		if (n < 0)
			return n;
	}
}

/**
 * pcmfi_strerror() - the text of a completion's or event's prov_errno
 * (libpcmtransport's code, positive), into @buf if given.
 */
const char *pcmfi_strerror(int prov_errno, char *buf, size_t len)
{
	const char *s = pcm_tp_strerror(-prov_errno);

	if (!buf || !len)
		return s;
	strncpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	return buf;
}
