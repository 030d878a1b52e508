// SPDX-License-Identifier: MIT
/*
 * pcmfi_fabric.c - the pcm fabric (fi_fabric(3)): its lock, progress and
 * waiting.
 *
 * Progress (both control and data are FI_PROGRESS_MANUAL) happens when a
 * caller reads a queue or posts: every port's completions are taken and
 * routed to their connections, then each connection reposts receives and
 * sends what it could not yet. The queues call it through fab->progress,
 * and sleep through fab->wait: on the one port's pcm_tp_wait() (in slices,
 * so that a doorbell rung by another thread is seen), or by turns on each
 * port when there are several. fi_trywait() arms the ports' fds
 * (pcm_tp_fd()) for queues that give the caller a wait fd (FI_WAIT_FD);
 * until then, pcmd rings no doorbell for a polling process.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

#define WAIT_SLICE_MS 10

static void fabric_progress(struct pcmfi_fabric *fab)
{
	for (struct pcmfi_port *p = fab->ports; p; p = p->next)
		pcmfi_port_poll(p);
	for (struct pcmfi_conn *c = fab->conns, *next; c; c = next) {
		next = c->next;
		pcmfi_conn_progress(c);
	}
}

static int alive_ports(struct pcmfi_fabric *fab, struct pcmfi_port **one)
{
	int n = 0;

	for (struct pcmfi_port *p = fab->ports; p; p = p->next)
		if (!p->dead) {
			*one = p;
			n++;
		}
	return n;
}

/*
 * Sleep (the lock released) until a port may have a completion, the queue's
 * doorbell rang, or a slice of @timeout_ms passed. Return: 0, or -FI_ESHUTDOWN once pcmd is
 * gone and nothing else can come.
 */
static int fabric_wait(struct pcmfi_fabric *fab, struct pcmfi_wait *w, int timeout_ms)
{
	int slice = timeout_ms < 0 || timeout_ms > WAIT_SLICE_MS ? WAIT_SLICE_MS : timeout_ms;
	struct pcmfi_port *one = NULL;
	int n = alive_ports(fab, &one), rc = 0;

	if (n == 1) {
		pthread_mutex_unlock(&fab->lock);
		rc = pcmfi_port_wait(one, slice);
		pthread_mutex_lock(&fab->lock);
		pcmfi_port_check(one, rc);
	} else if (n == 0) {
		struct pollfd p = {.fd = w->bell, .events = POLLIN};

		pthread_mutex_unlock(&fab->lock);
		poll(&p, 1, slice);
		pthread_mutex_lock(&fab->lock);
		rc = fab->ports ? -FI_ESHUTDOWN : 0;
	} else {
		for (struct pcmfi_port *p = fab->ports; p; p = p->next) {
			if (p->dead)
				continue;
			pthread_mutex_unlock(&fab->lock);
			rc = pcmfi_port_wait(p, 1);
			pthread_mutex_lock(&fab->lock);
			pcmfi_port_check(p, rc);
			if (rc == 0)
				break;
		}
	}
	pcmfi_wait_drain(w);
	return rc == -FI_ESHUTDOWN ? rc : 0;
}

static int fabric_arm(struct pcmfi_fabric *fab)
{
	for (struct pcmfi_port *p = fab->ports; p; p = p->next) {
		int rc = pcmfi_port_arm(p);

		if (rc)
			return rc;
	}
	return 0;
}

/* A queue @fid of this provider with a wait fd: whether it holds something. */
static int queue_ready(struct fid *fid, bool *ready)
{
	if (fid->fclass == FI_CLASS_CQ) {
		struct pcmfi_cq *cq = PCMFI_CONTAINER(fid, struct pcmfi_cq, cq.fid);

		if (cq->w.obj != FI_WAIT_FD)
			return -FI_EINVAL;
		pcmfi_wait_drain(&cq->w);
		*ready = cq->count > 0;
		return 0;
	}
	if (fid->fclass == FI_CLASS_EQ) {
		struct pcmfi_eq *eq = PCMFI_CONTAINER(fid, struct pcmfi_eq, eq.fid);

		if (eq->w.obj != FI_WAIT_FD)
			return -FI_EINVAL;
		pcmfi_wait_drain(&eq->w);
		*ready = eq->head != NULL;
		return 0;
	}
	return -FI_EINVAL;
}

static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	struct pcmfi_fabric *fab = PCMFI_CONTAINER(fabric, struct pcmfi_fabric, fab);
	bool ready = false;
	int rc;

	pthread_mutex_lock(&fab->lock);
	rc = fabric_arm(fab);
	if (rc == 0)
		fabric_progress(fab);
	for (int i = 0; i < count && rc == 0; i++) {
		bool r = false;

		rc = queue_ready(fids[i], &r);
		ready = ready || r;
	}
	pthread_mutex_unlock(&fab->lock);
	if (rc == -FI_ENOSYS)
		return -FI_EAGAIN; /* no fd wakes this process: the caller polls */
	return rc ? rc : ready ? -FI_EAGAIN : 0;
}

static int fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_domain **dom, uint64_t flags, void *context)
{
	return flags ? -FI_EBADFLAGS : pcmfi_domain_open(fabric, info, dom, context);
}

static int fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			    struct fid_wait **waitset)
{
	return -FI_ENOSYS; /* wait sets are not provided */
}

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = pcmfi_domain_open,
	.passive_ep = pcmfi_pep_open,
	.eq_open = pcmfi_eq_open,
	.wait_open = fabric_wait_open,
	.trywait = fabric_trywait,
	.domain2 = fabric_domain2,
};

static int fabric_close(struct fid *fid)
{
	struct pcmfi_fabric *fab = PCMFI_CONTAINER(fid, struct pcmfi_fabric, fab.fid);

	pthread_mutex_lock(&fab->lock);
	if (fab->refs) {
		pthread_mutex_unlock(&fab->lock);
		return -FI_EBUSY;
	}
	pcmfi_conn_forget_all(fab);
	pcmfi_ports_close(fab);
	pthread_mutex_unlock(&fab->lock);
	pthread_mutex_destroy(&fab->lock);
	free(fab);
	return 0;
}

static struct fi_ops fabric_fi_ops = PCMFI_FI_OPS(fabric_close, pcmfi_nosys_bind,
					     pcmfi_nosys_control);

/**
 * pcmfi_fabric_open() - the provider's fabric entry point (fi_fabric()).
 *
 * Return: 0, -FI_EINVAL (another fabric's name), -FI_ENOMEM.
 */
int pcmfi_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct pcmfi_fabric *fab;

	if (attr && attr->name && strcmp(attr->name, PCMFI_FABRIC_NAME))
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	pthread_mutex_init(&fab->lock, NULL);
	fab->fab.fid.fclass = FI_CLASS_FABRIC;
	fab->fab.fid.context = context;
	fab->fab.fid.ops = &fabric_fi_ops;
	fab->fab.ops = &fabric_ops;
	fab->progress = fabric_progress;
	fab->wait = fabric_wait;
	fab->arm = fabric_arm;
	*fabric = &fab->fab;
	return 0;
}
