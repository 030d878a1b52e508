// SPDX-License-Identifier: MIT
/*
 * pcmfi_domain.c - the pcm domain (fi_domain(3)): completion queues,
 * connected endpoints and memory regions. It offers no address vectors,
 * counters, poll sets, shared contexts, scalable endpoints, atomics or
 * collectives: those calls return -FI_ENOSYS.
 */
#include <stdlib.h>
#include <string.h>

#include "pcmfi.h"

static int dom_close(struct fid *fid)
{
	struct pcmfi_domain *dom = PCMFI_CONTAINER(fid, struct pcmfi_domain, dom.fid);
	struct pcmfi_fabric *fab = dom->fab;

	pthread_mutex_lock(&fab->lock);
	if (dom->refs) {
		pthread_mutex_unlock(&fab->lock);
		return -FI_EBUSY;
	}
	fab->refs--;
	pthread_mutex_unlock(&fab->lock);
	pcmfi_mr_table_fini(dom);
	fi_freeinfo(dom->info);
	free(dom);
	return 0;
}

static struct fi_ops dom_fi_ops = PCMFI_FI_OPS(dom_close, pcmfi_nosys_bind, pcmfi_nosys_control);

static int no_av(struct fid_domain *d, struct fi_av_attr *a, struct fid_av **av, void *c)
{
	return -FI_ENOSYS; /* FI_EP_MSG: connections, no address vectors */
}

static int no_sep(struct fid_domain *d, struct fi_info *i, struct fid_ep **ep, void *c)
{
	return -FI_ENOSYS;
}

static int no_cntr(struct fid_domain *d, struct fi_cntr_attr *a, struct fid_cntr **cntr,
		   void *c)
{
	return -FI_ENOSYS;
}

static int no_poll(struct fid_domain *d, struct fi_poll_attr *a, struct fid_poll **p)
{
	return -FI_ENOSYS;
}

static int no_stx(struct fid_domain *d, struct fi_tx_attr *a, struct fid_stx **stx, void *c)
{
	return -FI_ENOSYS;
}

static int no_srx(struct fid_domain *d, struct fi_rx_attr *a, struct fid_ep **ep, void *c)
{
	return -FI_ENOSYS;
}

static int no_atomic(struct fid_domain *d, enum fi_datatype t, enum fi_op op,
		     struct fi_atomic_attr *a, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int no_coll(struct fid_domain *d, enum fi_collective_op coll,
		   struct fi_collective_attr *a, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int dom_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
			 uint64_t flags, void *context)
{
	return flags ? -FI_EBADFLAGS : pcmfi_ep_open(domain, info, ep, context);
}

static struct fi_ops_domain dom_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = no_av,
	.cq_open = pcmfi_cq_open,
	.endpoint = pcmfi_ep_open,
	.scalable_ep = no_sep,
	.cntr_open = no_cntr,
	.poll_open = no_poll,
	.stx_ctx = no_stx,
	.srx_ctx = no_srx,
	.query_atomic = no_atomic,
	.query_collective = no_coll,
	.endpoint2 = dom_endpoint2,
};

/**
 * pcmfi_domain_open() - fi_domain() on a pcm fabric.
 * @info: from fi_getinfo() (its mr_mode decides keys and RMA addressing).
 *
 * Return: 0, -FI_EINVAL (no info, or another domain's name), -FI_ENOMEM.
 */
int pcmfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		      struct fid_domain **domain, void *context)
{
	struct pcmfi_fabric *fab = PCMFI_CONTAINER(fabric, struct pcmfi_fabric, fab);
	struct pcmfi_domain *dom;

	if (!info || !info->domain_attr)
		return -FI_EINVAL;
	if (info->domain_attr->name && strcmp(info->domain_attr->name, pcmfi_domain_name()))
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->info = fi_dupinfo(info);
	if (!dom->info || pcmfi_mr_table_init(dom)) {
		fi_freeinfo(dom->info);
		free(dom);
		return -FI_ENOMEM;
	}
	dom->dom.fid.fclass = FI_CLASS_DOMAIN;
	dom->dom.fid.context = context;
	dom->dom.fid.ops = &dom_fi_ops;
	dom->dom.ops = &dom_ops;
	dom->dom.mr = &pcmfi_mr_ops;
	dom->fab = fab;
	dom->mr_mode = info->domain_attr->mr_mode;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*domain = &dom->dom;
	return 0;
}
