// SPDX-License-Identifier: MIT
/*
 * pcmfi_eq.c - event queues (fi_eq(3)) of the pcm provider.
 *
 * Connection management reports here: FI_CONNREQ on a listening pep's
 * queue (with the fi_info a caller passes to fi_endpoint() and whose handle
 * fi_accept() or fi_reject() answers), FI_CONNECTED and FI_SHUTDOWN on an
 * endpoint's, and errors (a refused or failed connect, with the peer's
 * private data of a reject as err_data). fi_eq_write() adds a caller's own
 * events. Reading first lets the fabric make progress, since control
 * progress is FI_PROGRESS_MANUAL.
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

static struct pcmfi_eq *eq_of(struct fid_eq *eq)
{
	return PCMFI_CONTAINER(eq, struct pcmfi_eq, eq);
}

static void append(struct pcmfi_eq *eq, struct pcmfi_eqe *e)
{
	e->next = NULL;
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
	pcmfi_wait_ring(&eq->w);
}

static void eqe_free(struct pcmfi_eqe *e)
{
	if (e->owns_info) {
		struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)e->buf;

		fi_freeinfo(cm->info);
	}
	if (e->is_err)
		free(e->err.err_data);
	free(e);
}

/* A new entry of @event with room for @len bytes of entry, or NULL. */
static struct pcmfi_eqe *eqe_new(uint32_t event, size_t len)
{
	struct pcmfi_eqe *e = calloc(1, sizeof(*e) + len);

	if (e) {
		e->event = event;
		e->len = len;
	}
	return e;
}

/**
 * pcmfi_eq_push() - queue event @event with @len bytes of @buf as its entry.
 *
 * Return: 0 or -FI_ENOMEM.
 */
int pcmfi_eq_push(struct pcmfi_eq *eq, uint32_t event, const void *buf, size_t len)
{
	struct pcmfi_eqe *e = eqe_new(event, len);

	if (!e)
		return -FI_ENOMEM;
	if (len)
		memcpy(e->buf, buf, len);
	append(eq, e);
	return 0;
}

/**
 * pcmfi_eq_push_cm() - queue a connection event: a struct fi_eq_cm_entry of
 * @fid and @info (owned by the queue until read) followed by @datalen bytes
 * of private data.
 *
 * Return: 0 or -FI_ENOMEM.
 */
int pcmfi_eq_push_cm(struct pcmfi_eq *eq, uint32_t event, fid_t fid, struct fi_info *info,
		     const void *data, size_t datalen)
{
	struct pcmfi_eqe *e = eqe_new(event, sizeof(struct fi_eq_cm_entry) + datalen);
	struct fi_eq_cm_entry *cm;

	if (!e)
		return -FI_ENOMEM;
	e->owns_info = info != NULL;
	cm = (struct fi_eq_cm_entry *)e->buf;
	cm->fid = fid;
	cm->info = info;
	if (datalen)
		memcpy(cm->data, data, datalen);
	append(eq, e);
	return 0;
}

/**
 * pcmfi_eq_push_err() - queue an error of @fid.
 * @err: the negative FI_E* code; @prov_errno: libpcmtransport's (positive) or 0.
 * @err_data: the peer's private data (a reject's), copied; may be NULL.
 *
 * Return: 0 or -FI_ENOMEM.
 */
int pcmfi_eq_push_err(struct pcmfi_eq *eq, fid_t fid, void *context, int err, int prov_errno,
		      const void *err_data, size_t err_data_size)
{
	struct pcmfi_eqe *e = calloc(1, sizeof(*e));

	if (!e)
		return -FI_ENOMEM;
	e->is_err = true;
	e->err.fid = fid;
	e->err.context = context;
	e->err.err = -err;
	e->err.prov_errno = prov_errno;
	if (err_data_size) {
		e->err.err_data = malloc(err_data_size);
		if (!e->err.err_data) {
			free(e);
			return -FI_ENOMEM;
		}
		memcpy(e->err.err_data, err_data, err_data_size);
		e->err.err_data_size = err_data_size;
	}
	append(eq, e);
	return 0;
}

/* The head event into @buf. Return: its bytes, -FI_EAGAIN, -FI_EAVAIL or -FI_ETOOSMALL. */
static ssize_t take(struct pcmfi_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	struct pcmfi_eqe *e = eq->head;
	ssize_t n;

	if (!e)
		return -FI_EAGAIN;
	if (e->is_err)
		return -FI_EAVAIL;
	if (len < e->len)
		return -FI_ETOOSMALL;
	if (event)
		*event = e->event;
	memcpy(buf, e->buf, e->len);
	n = (ssize_t)e->len;
	if (!(flags & FI_PEEK)) {
		eq->head = e->next;
		if (!eq->head)
			eq->tail = NULL;
		e->owns_info = false; /* the caller has it now */
		eqe_free(e);
	}
	return n;
}

static ssize_t eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf, size_t len,
		       uint64_t flags)
{
	struct pcmfi_eq *eq = eq_of(eq_fid);
	ssize_t n;

	pthread_mutex_lock(&eq->fab->lock);
	eq->fab->progress(eq->fab);
	n = take(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->fab->lock);
	return n;
}

struct sread_args {
	struct pcmfi_eq *eq;
	uint32_t *event;
	void *buf;
	size_t len;
	uint64_t flags;
};

static ssize_t sread_take(void *arg)
{
	struct sread_args *a = arg;

	return take(a->eq, a->event, a->buf, a->len, a->flags);
}

static ssize_t eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf, size_t len,
			int timeout, uint64_t flags)
{
	struct sread_args a = {eq_of(eq_fid), event, buf, len, flags};
	ssize_t n;

	pthread_mutex_lock(&a.eq->fab->lock);
	n = pcmfi_wait_read(a.eq->fab, &a.eq->w, timeout, sread_take, &a, NULL);
	pthread_mutex_unlock(&a.eq->fab->lock);
	return n;
}

static ssize_t eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct pcmfi_eq *eq = eq_of(eq_fid);
	struct pcmfi_eqe *e;
	void *user_data;
	size_t user_bytes;

	if (!buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->fab->lock);
	e = eq->head;
	if (!e || !e->is_err) {
		pthread_mutex_unlock(&eq->fab->lock);
		return -FI_EAGAIN;
	}
	user_data = buf->err_data;
	user_bytes = buf->err_data_size;
	*buf = e->err;
	free(eq->last_err_data);
	eq->last_err_data = NULL;
	if (FI_VERSION_GE(eq->fab->fab.api_version, FI_VERSION(1, 5)) && user_bytes) {
		/* the caller's buffer (fi_eq(3): err_data_size > 0 on input) */
		buf->err_data = user_data;
		buf->err_data_size = e->err.err_data_size < user_bytes ? e->err.err_data_size
									: user_bytes;
		if (buf->err_data_size)
			memcpy(user_data, e->err.err_data, buf->err_data_size);
		free(e->err.err_data);
	} else {
		/* ours, valid until the next fi_eq_readerr() */
		eq->last_err_data = e->err.err_data;
	}
	e->err.err_data = NULL;
	eq->head = e->next;
	if (!eq->head)
		eq->tail = NULL;
	eqe_free(e);
	pthread_mutex_unlock(&eq->fab->lock);
	return sizeof(*buf);
}

static ssize_t eq_write(struct fid_eq *eq_fid, uint32_t event, const void *buf, size_t len,
			uint64_t flags)
{
	struct pcmfi_eq *eq = eq_of(eq_fid);
	int rc;

	pthread_mutex_lock(&eq->fab->lock);
	rc = pcmfi_eq_push(eq, event, buf, len);
	pthread_mutex_unlock(&eq->fab->lock);
	return rc ? rc : (ssize_t)len;
}

static const char *eq_strerror(struct fid_eq *eq_fid, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	return pcmfi_strerror(prov_errno, buf, len);
}

static int eq_control(struct fid *fid, int command, void *arg)
{
	return pcmfi_wait_control(&PCMFI_CONTAINER(fid, struct pcmfi_eq, eq.fid)->w, command, arg);
}

static void eq_free(struct pcmfi_eq *eq)
{
	while (eq->head) {
		struct pcmfi_eqe *e = eq->head;

		eq->head = e->next;
		eqe_free(e);
	}
	pcmfi_wait_close(eq->fab, &eq->w);
	free(eq);
}

static int eq_close(struct fid *fid)
{
	struct pcmfi_eq *eq = PCMFI_CONTAINER(fid, struct pcmfi_eq, eq.fid);
	struct pcmfi_fabric *fab = eq->fab;

	pthread_mutex_lock(&fab->lock);
	if (eq->refs) {
		pthread_mutex_unlock(&fab->lock);
		return -FI_EBUSY;
	}
	eq_free(eq);
	fab->refs--;
	pthread_mutex_unlock(&fab->lock);
	return 0;
}

static struct fi_ops eq_fi_ops = PCMFI_FI_OPS(eq_close, pcmfi_nosys_bind, eq_control);

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

/**
 * pcmfi_eq_open() - fi_eq_open() of a pcm fabric.
 *
 * Return: 0, -FI_EINVAL, -FI_ENOSYS (FI_WAIT_SET, FI_WAIT_MUTEX_COND,
 * FI_WAIT_YIELD, FI_WAIT_POLLFD), -FI_ENOMEM.
 */
int pcmfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq_fid,
		  void *context)
{
	struct pcmfi_fabric *fab = PCMFI_CONTAINER(fabric, struct pcmfi_fabric, fab);
	enum fi_wait_obj w = attr ? attr->wait_obj : FI_WAIT_NONE;
	struct pcmfi_eq *eq;
	int rc = pcmfi_wait_check(w);

	if (rc)
		return rc;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &eq_fi_ops;
	eq->eq.ops = &eq_ops;
	eq->fab = fab;
	rc = pcmfi_wait_open(fab, &eq->w, w);
	if (rc) {
		free(eq);
		return rc;
	}
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*eq_fid = &eq->eq;
	return 0;
}
