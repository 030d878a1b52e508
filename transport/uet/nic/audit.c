// SPDX-License-Identifier: MIT
/*
 * audit.c - the NICs as a whole: creating and freeing them (with every PDC
 * and group still open), and the leak audit after a run, which reports the
 * checking build's invariant failures (trace.c counts them) first.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "nic.h"

int uet_nics_init(struct uet_nics *ns, uint32_t n_hosts)
{
	ns->nics = uet_mem_zalloc(ns->mem, (size_t)n_hosts * sizeof(*ns->nics));
	if (!ns->nics)
		return -1;
	ns->n_hosts = n_hosts;
	for (uint32_t h = 0; h < n_hosts; h++) {
		ns->nics[h].id = h;
		ns->nics[h].ip = (10u << 24) | (h & 0xffffff); /* 10.0.0.0/8 by host index */
		ns->nics[h].port = &ns->fab->ports[h];
		ns->nics[h].pfw.link = offsetof(struct uet_group, pfw);
		ns->nics[h].crr.link = offsetof(struct uet_group, crr);
	}
	return 0;
}

void uet_nics_fini(struct uet_nics *ns)
{
	for (uint32_t i = 0; ns->pdcs && i < ns->n_pdcs; i++) {
		if (ns->pdcs[i])
			uet_pdc_free(ns, ns->pdcs[i]);
		ns->pdcs[i] = NULL;
	}
	for (uint32_t h = 0; h < ns->n_hosts && ns->nics; h++) {
		struct uet_nic *nic = &ns->nics[h];

		for (uint32_t i = 0; i < nic->n_groups; i++) {
			uet_cc_detach(&nic->groups[i]->cc);
			uet_mem_free(ns->mem, nic->groups[i], sizeof(*nic->groups[i]));
		}
		uet_mem_free(ns->mem, nic->groups, nic->cap_groups * sizeof(*nic->groups));
		uet_bytepool_free(&nic->egress, ns->mem);
		uet_bytepool_free(&nic->rx_pool, ns->mem);
	}
	uet_mem_free(ns->mem, ns->nics, (size_t)ns->n_hosts * sizeof(*ns->nics));
	uet_mem_free(ns->mem, ns->pdcs, (size_t)ns->n_pdcs * sizeof(*ns->pdcs));
	ns->nics = NULL;
	ns->pdcs = NULL;
}

int uet_nic_audit(struct uet_nics *ns, struct pcm_diag *diag)
{
	if (ns->check_failures) {
		uet_diag_set(diag, "invariant failed %llu times; first: %s",
			     (unsigned long long)ns->check_failures, ns->check_msg);
		return -EFAULT;
	}
	if (ns->leaked_groups) {
		uet_diag_set(diag,
			     "%u groups were freed holding %llu bytes in flight and %llu bytes of "
			     "backlog",
			     ns->leaked_groups, (unsigned long long)ns->leaked_inflight,
			     (unsigned long long)ns->leaked_backlog);
		return -EFAULT;
	}
	for (uint32_t i = 0; ns->pdcs && i < ns->n_pdcs; i++) {
		if (ns->pdcs[i]) {
			uet_diag_set(diag, "PDC %u (host %u to %u) is still open", i,
				     ns->pdcs[i]->nic, ns->pdcs[i]->peer);
			return -EFAULT;
		}
	}
	for (uint32_t h = 0; h < ns->n_hosts; h++) {
		struct uet_nic *nic = &ns->nics[h];
		const char *what = NULL;

		/* releases already scheduled (a write or a serialization still ending) count */
		uet_bytepool_drain(&nic->egress, UINT64_MAX);
		uet_bytepool_drain(&nic->rx_pool, UINT64_MAX);
		if (nic->egress.used)
			what = "egress pool bytes reserved";
		else if (nic->rx_pool.used)
			what = "receive pool bytes held";
		else if (nic->prefetch_used)
			what = "prefetch buffer bytes held";
		else if (nic->n_groups)
			what = "PDC groups alive";
		else if (nic->rq_head)
			what = "groups in the ready queue";
		else if (nic->pfw.head)
			what = "groups waiting for prefetch room";
		else if (nic->crr.head)
			what = "peers waiting for credit";
		else if (nic->pass_ev || nic->pool_ev || nic->credit_tick_ev)
			what = "events pending";
		if (what) {
			uet_diag_set(diag,
				     "host %u: %s (egress %llu B, receive %llu B, prefetch %llu B, "
				     "%u groups)",
				     h, what, (unsigned long long)nic->egress.used,
				     (unsigned long long)nic->rx_pool.used,
				     (unsigned long long)nic->prefetch_used, nic->n_groups);
			return -EFAULT;
		}
	}
	return 0;
}
