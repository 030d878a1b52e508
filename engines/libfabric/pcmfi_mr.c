// SPDX-License-Identifier: MIT
/*
 * pcmfi_mr.c - memory registration (fi_mr(3)) of the pcm provider, and the
 * key table a target looks a peer's RMA up in.
 *
 * The provider copies every byte between the caller's memory and the
 * segments in pcm's registered memory (in daemon mode, pcmd's shared region,
 * which a caller's malloc()'d buffer is not part of), so local operations
 * need no registration (no FI_MR_LOCAL). A region exists for RMA: its key
 * names it to a peer, which may read or write inside it as its access flags
 * allow. Keys are the provider's, random 64-bit values (FI_MR_PROV_KEY), or
 * the caller's requested_key when the caller does not take FI_MR_PROV_KEY.
 * A peer's address is the virtual address with FI_MR_VIRT_ADDR, else an
 * offset from the region's start plus the offset given at registration.
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

#define ACCESS_ALL (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

static size_t bucket_of(const struct pcmfi_domain *dom, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)(key & (dom->mr_buckets - 1));
}

static struct pcmfi_mr *find(const struct pcmfi_domain *dom, uint64_t key)
{
	struct pcmfi_mr *m = dom->mr_table[bucket_of(dom, key)];

	while (m && m->mr.key != key)
		m = m->next_in_bucket;
	return m;
}

/* Double the table once it holds two regions per bucket. */
static void maybe_grow(struct pcmfi_domain *dom)
{
	size_t old = dom->mr_buckets;
	struct pcmfi_mr **t, **prev = dom->mr_table;

	if (dom->mr_count < 2 * old)
		return;
	t = calloc(2 * old, sizeof(*t));
	if (!t)
		return; /* longer chains, still correct */
	dom->mr_table = t;
	dom->mr_buckets = 2 * old;
	for (size_t i = 0; i < old; i++)
		while (prev[i]) {
			struct pcmfi_mr *m = prev[i];
			size_t b = bucket_of(dom, m->mr.key);

			prev[i] = m->next_in_bucket;
			m->next_in_bucket = t[b];
			t[b] = m;
		}
	free(prev);
}

/**
 * pcmfi_mr_table_init() - an empty key table for @dom.
 *
 * Return: 0 or -FI_ENOMEM.
 */
int pcmfi_mr_table_init(struct pcmfi_domain *dom)
{
	dom->mr_buckets = 64;
	dom->mr_count = 0;
	dom->mr_table = calloc(dom->mr_buckets, sizeof(*dom->mr_table));
	return dom->mr_table ? 0 : -FI_ENOMEM;
}

void pcmfi_mr_table_fini(struct pcmfi_domain *dom)
{
	free(dom->mr_table);
	dom->mr_table = NULL;
}

static void unlink_mr(struct pcmfi_mr *m)
{
	struct pcmfi_mr **p = &m->dom->mr_table[bucket_of(m->dom, m->mr.key)];

	while (*p && *p != m)
		p = &(*p)->next_in_bucket;
	if (*p)
		*p = m->next_in_bucket;
	m->dom->mr_count--;
}

static int mr_close(struct fid *fid)
{
	struct pcmfi_mr *m = PCMFI_CONTAINER(fid, struct pcmfi_mr, mr.fid);
	struct pcmfi_fabric *fab = m->dom->fab;

	pthread_mutex_lock(&fab->lock);
	unlink_mr(m);
	m->dom->refs--;
	pthread_mutex_unlock(&fab->lock);
	free(m);
	return 0;
}

static struct fi_ops mr_fi_ops = PCMFI_FI_OPS(mr_close, pcmfi_nosys_bind, pcmfi_nosys_control);

/* A key no region of @dom has. */
static uint64_t fresh_key(const struct pcmfi_domain *dom)
{
	uint64_t k;

	do
		k = pcmfi_random64();
	while (find(dom, k));
	return k;
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
		      struct fid_mr **out)
{
	struct pcmfi_domain *dom = PCMFI_CONTAINER(fid, struct pcmfi_domain, dom.fid);
	bool prov_key = dom->mr_mode & (FI_MR_PROV_KEY | FI_MR_BASIC);
	struct pcmfi_mr *m;

	if (!attr || !out || (attr->iov_count && !attr->mr_iov))
		return -FI_EINVAL;
	if (attr->iov_count > 1)
		return -FI_EINVAL; /* mr_iov_limit is 1 */
	if (flags || attr->iface != FI_HMEM_SYSTEM)
		return flags ? -FI_EBADFLAGS : -FI_ENOSYS;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	m->mr.fid.fclass = FI_CLASS_MR;
	m->mr.fid.context = attr->context;
	m->mr.fid.ops = &mr_fi_ops;
	m->mr.mem_desc = m;
	m->dom = dom;
	if (attr->iov_count) {
		m->base = attr->mr_iov[0].iov_base;
		m->len = attr->mr_iov[0].iov_len;
	}
	m->access = attr->access ? attr->access : ACCESS_ALL;
	m->offset = attr->offset;
	pthread_mutex_lock(&dom->fab->lock);
	if (!prov_key && find(dom, attr->requested_key)) {
		pthread_mutex_unlock(&dom->fab->lock);
		free(m);
		return -FI_ENOKEY;
	}
	m->mr.key = prov_key ? fresh_key(dom) : attr->requested_key;
	maybe_grow(dom);
	m->next_in_bucket = dom->mr_table[bucket_of(dom, m->mr.key)];
	dom->mr_table[bucket_of(dom, m->mr.key)] = m;
	dom->mr_count++;
	dom->refs++;
	pthread_mutex_unlock(&dom->fab->lock);
	*out = &m->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
		   uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr,
		   void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return mr_regattr(fid, &attr, flags, mr);
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
		  uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

struct fi_ops_mr pcmfi_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

/**
 * pcmfi_mr_target() - where a peer's RMA of @len bytes at @addr under @key
 * lands in this domain, if the region allows @access.
 * @out: the local address.
 *
 * Return: 0, -FI_EKEYREJECTED (no region has @key), -FI_EACCES (the region
 * does not allow @access, or the range leaves it).
 */
int pcmfi_mr_target(struct pcmfi_domain *dom, uint64_t key, uint64_t addr, uint64_t len,
		    uint64_t access, uint8_t **out)
{
	struct pcmfi_mr *m = find(dom, key);
	uint64_t start;

	if (!m)
		return -FI_EKEYREJECTED;
	if ((m->access & access) != access)
		return -FI_EACCES;
	start = addr - (dom->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC) ? (uintptr_t)m->base
								       : m->offset);
	if (start > m->len || len > m->len - start)
		return -FI_EACCES;
	*out = m->base + start;
	return 0;
}
