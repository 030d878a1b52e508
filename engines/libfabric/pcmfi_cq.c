// SPDX-License-Identifier: MIT
/*
 * pcmfi_cq.c - completion queues (fi_cq(3)) of the pcm provider.
 *
 * A queue is a ring of entries, successes and errors in the order they
 * happened, that grows instead of dropping anything (FI_RM_ENABLED: a
 * provider never overruns a queue; the endpoints' tx and rx sizes bound what
 * is outstanding). fi_cq_read() first lets the fabric make progress (data
 * progress is FI_PROGRESS_MANUAL: reading a queue is what moves the
 * connections), then hands out successes up to the first error, which
 * fi_cq_readerr() takes (-FI_EAVAIL says one is at the head).
 *
 * Waiting (fi_cq_sread(), FI_WAIT_FD, fi_cq_signal()) is pcmfi_wait.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

#define CQ_DEFAULT_SIZE 1024

static struct pcmfi_cq *cq_of(struct fid_cq *cq)
{
	return PCMFI_CONTAINER(cq, struct pcmfi_cq, cq);
}

static size_t entry_bytes(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

/* Make room for one more entry. Return: 0 or -FI_ENOMEM. */
static int grow(struct pcmfi_cq *cq)
{
	struct pcmfi_cqe *q;
	size_t cap = cq->cap * 2;

	if (cq->count < cq->cap)
		return 0;
	q = malloc(cap * sizeof(*q));
	if (!q)
		return -FI_ENOMEM;
	for (size_t i = 0; i < cq->count; i++)
		q[i] = cq->q[(cq->head + i) % cq->cap];
	free(cq->q);
	cq->q = q;
	cq->cap = cap;
	cq->head = 0;
	return 0;
}

static struct pcmfi_cqe *push(struct pcmfi_cq *cq)
{
	struct pcmfi_cqe *e;

	if (grow(cq) < 0) {
		FI_WARN(&pcmfi_prov, FI_LOG_CQ, "out of memory: a completion is lost\n");
		return NULL;
	}
	e = &cq->q[(cq->head + cq->count) % cq->cap];
	cq->count++;
	memset(e, 0, sizeof(*e));
	pcmfi_wait_ring(&cq->w);
	return e;
}

/**
 * pcmfi_cq_write() - queue a success.
 * @cq: the queue.
 * @context: the operation's context.
 * @flags: FI_SEND, FI_RECV, FI_RMA, ... as fi_cq(3) lists them.
 * @len: the bytes received (receives) or 0.
 * @buf: a receive's buffer, or NULL.
 * @data: remote CQ data (with FI_REMOTE_CQ_DATA in @flags).
 */
void pcmfi_cq_write(struct pcmfi_cq *cq, void *context, uint64_t flags, size_t len, void *buf,
		    uint64_t data)
{
	struct pcmfi_cqe *e = cq ? push(cq) : NULL;

	if (!e)
		return;
	e->e.op_context = context;
	e->e.flags = flags;
	e->e.len = len;
	e->e.buf = buf;
	e->e.data = data;
}

/**
 * pcmfi_cq_write_err() - queue an error completion.
 * @err: the negative FI_E* code (the entry carries its positive value).
 * @prov_errno: libpcmtransport's code behind it (positive), or 0.
 * @len: the bytes placed; @olen: the bytes that did not fit (FI_ETRUNC).
 */
void pcmfi_cq_write_err(struct pcmfi_cq *cq, void *context, uint64_t flags, int err,
			int prov_errno, size_t len, size_t olen)
{
	struct pcmfi_cqe *e = cq ? push(cq) : NULL;

	if (!e)
		return;
	e->is_err = true;
	e->e.op_context = context;
	e->e.flags = flags;
	e->e.len = len;
	e->e.olen = olen;
	e->e.err = -err;
	e->e.prov_errno = prov_errno;
}

/* Copy up to @count successes into @buf. Return: how many, -FI_EAVAIL or -FI_EAGAIN. */
static ssize_t take(struct pcmfi_cq *cq, void *buf, size_t count)
{
	size_t n = 0, sz = entry_bytes(cq->format);

	while (n < count && cq->count > 0) {
		struct pcmfi_cqe *e = &cq->q[cq->head];

		if (e->is_err)
			break;
		memcpy((uint8_t *)buf + n * sz, &e->e, sz);
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
		n++;
	}
	if (n)
		return (ssize_t)n;
	return cq->count ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	struct pcmfi_cq *cq = cq_of(cq_fid);
	ssize_t n;

	pthread_mutex_lock(&cq->fab->lock);
	cq->fab->progress(cq->fab);
	n = take(cq, buf, count);
	pthread_mutex_unlock(&cq->fab->lock);
	return n;
}

static ssize_t cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count, fi_addr_t *src_addr)
{
	ssize_t n = cq_read(cq_fid, buf, count);

	/* connected endpoints: the source is the connection's peer, no AV address */
	for (ssize_t i = 0; src_addr && i < n; i++)
		src_addr[i] = FI_ADDR_NOTAVAIL;
	return n;
}

static ssize_t cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct pcmfi_cq *cq = cq_of(cq_fid);
	struct pcmfi_cqe *e;
	size_t user_err_bytes;
	ssize_t rc = 1;

	if (!buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->fab->lock);
	e = cq->count ? &cq->q[cq->head] : NULL;
	if (!e || !e->is_err) {
		rc = -FI_EAGAIN;
		goto out;
	}
	if (FI_VERSION_GE(cq->fab->fab.api_version, FI_VERSION(1, 5))) {
		user_err_bytes = buf->err_data_size;
		*buf = e->e;
		/* no error data: a caller's buffer (err_data_size > 0) stays untouched */
		buf->err_data_size = 0;
		if (!user_err_bytes)
			buf->err_data = NULL;
	} else {
		memcpy(buf, &e->e, offsetof(struct fi_cq_err_entry, err_data_size));
		buf->err_data = NULL;
	}
	cq->head = (cq->head + 1) % cq->cap;
	cq->count--;
out:
	pthread_mutex_unlock(&cq->fab->lock);
	return rc;
}

struct sread_args {
	struct pcmfi_cq *cq;
	void *buf;
	size_t count;
};

static ssize_t sread_take(void *arg)
{
	struct sread_args *a = arg;

	return take(a->cq, a->buf, a->count);
}

static ssize_t cq_sread(struct fid_cq *cq_fid, void *buf, size_t count, const void *cond,
			int timeout)
{
	struct sread_args a = {cq_of(cq_fid), buf, count};
	ssize_t n;

	pthread_mutex_lock(&a.cq->fab->lock);
	n = pcmfi_wait_read(a.cq->fab, &a.cq->w, timeout, sread_take, &a, &a.cq->signaled);
	pthread_mutex_unlock(&a.cq->fab->lock);
	return n;
}

static ssize_t cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count, fi_addr_t *src_addr,
			    const void *cond, int timeout)
{
	ssize_t n = cq_sread(cq_fid, buf, count, cond, timeout);

	for (ssize_t i = 0; src_addr && i < n; i++)
		src_addr[i] = FI_ADDR_NOTAVAIL;
	return n;
}

static int cq_signal(struct fid_cq *cq_fid)
{
	struct pcmfi_cq *cq = cq_of(cq_fid);

	pthread_mutex_lock(&cq->fab->lock);
	cq->signaled++;
	pcmfi_wait_ring(&cq->w);
	pthread_mutex_unlock(&cq->fab->lock);
	return 0;
}

static const char *cq_strerror(struct fid_cq *cq_fid, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	return pcmfi_strerror(prov_errno, buf, len);
}

static int cq_control(struct fid *fid, int command, void *arg)
{
	return pcmfi_wait_control(&PCMFI_CONTAINER(fid, struct pcmfi_cq, cq.fid)->w, command, arg);
}

static void cq_free(struct pcmfi_cq *cq)
{
	pcmfi_wait_close(cq->fab, &cq->w);
	free(cq->q);
	free(cq);
}

static int cq_close(struct fid *fid)
{
	struct pcmfi_cq *cq = PCMFI_CONTAINER(fid, struct pcmfi_cq, cq.fid);
	struct pcmfi_fabric *fab = cq->fab;

	pthread_mutex_lock(&fab->lock);
	if (cq->refs) {
		pthread_mutex_unlock(&fab->lock);
		return -FI_EBUSY;
	}
	cq->dom->refs--;
	cq_free(cq);
	pthread_mutex_unlock(&fab->lock);
	return 0;
}

static struct fi_ops cq_fi_ops = PCMFI_FI_OPS(cq_close, pcmfi_nosys_bind, cq_control);

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

/* Check @attr. Return: 0, -FI_EINVAL or -FI_ENOSYS (what this provider refuses). */
static int check_attr(const struct fi_cq_attr *attr)
{
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_EINVAL;
	}
	if (attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_ENOSYS;
	return pcmfi_wait_check(attr->wait_obj);
}

/**
 * pcmfi_cq_open() - fi_cq_open() of a pcm domain.
 *
 * Return: 0, -FI_EINVAL (a bad attribute), -FI_ENOSYS (a wait object or
 * condition not provided: FI_WAIT_SET, FI_WAIT_MUTEX_COND, FI_WAIT_YIELD,
 * FI_WAIT_POLLFD, FI_CQ_COND_THRESHOLD), -FI_ENOMEM.
 */
int pcmfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq_fid,
		  void *context)
{
	struct pcmfi_domain *dom = PCMFI_CONTAINER(domain, struct pcmfi_domain, dom);
	struct fi_cq_attr def = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
	struct pcmfi_cq *cq;
	int rc;

	attr = attr ? attr : &def;
	rc = check_attr(attr);
	if (rc)
		return rc;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	cq->fab = dom->fab;
	cq->dom = dom;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->cap = attr->size ? attr->size : CQ_DEFAULT_SIZE;
	cq->q = calloc(cq->cap, sizeof(*cq->q));
	rc = cq->q ? pcmfi_wait_open(cq->fab, &cq->w, attr->wait_obj) : -FI_ENOMEM;
	if (rc) {
		free(cq->q);
		free(cq);
		return rc;
	}
	pthread_mutex_lock(&cq->fab->lock);
	dom->refs++;
	pthread_mutex_unlock(&cq->fab->lock);
	*cq_fid = &cq->cq;
	return 0;
}
