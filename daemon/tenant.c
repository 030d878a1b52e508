// SPDX-License-Identifier: MIT
/*
 * tenant.c - each user's share of pcmd (tenant.h): the tenants by uid, their
 * counts, and the refusal that names the user's limit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pcmd.h"
#include "tenant.h"

static const struct {
	const char *key;
	const char *unit;
} res_names[PCMD_TENANT_RES_COUNT] = {
    [PCMD_TENANT_CLIENTS] = {"limits.user.clients", "clients"},
    [PCMD_TENANT_REGIONS] = {"limits.user.regions", "regions"},
    [PCMD_TENANT_REGION_BYTES] = {"limits.user.region_bytes", "bytes of regions"},
    [PCMD_TENANT_HOSTS] = {"limits.user.hosts", "hosts of the emulated fabric"},
    [PCMD_TENANT_FLOWS] = {"limits.user.flows", "flows"},
    [PCMD_TENANT_LISTENERS] = {"limits.user.listeners", "listeners"},
};

int pcmd_tenant_join(struct pcmd *d, uint32_t uid, bool admin, struct pcmd_tenant_share *s)
{
	struct pcmd_tenant *t = NULL, **grown;

	for (uint32_t i = 0; i < d->n_tenants && !t; i++)
		if (d->tenants[i]->uid == uid)
			t = d->tenants[i];
	if (!t) {
		t = calloc(1, sizeof(*t));
		grown = t ? realloc(d->tenants, (d->n_tenants + 1) * sizeof(*grown)) : NULL;
		if (!grown) {
			free(t);
			return -ENOMEM;
		}
		d->tenants = grown;
		d->tenants[d->n_tenants++] = t;
		t->uid = uid;
	}
	t->refs++;
	*s = (struct pcmd_tenant_share){.t = t, .admin = admin};
	return 0;
}

void pcmd_tenant_leave(struct pcmd *d, struct pcmd_tenant_share *s)
{
	struct pcmd_tenant *t = s->t;

	if (!t)
		return;
	for (int r = 0; r < PCMD_TENANT_RES_COUNT; r++)
		pcmd_tenant_credit(s, (enum pcmd_tenant_res)r, s->held[r]);
	s->t = NULL;
	if (--t->refs)
		return;
	for (uint32_t i = 0; i < d->n_tenants; i++) {
		if (d->tenants[i] == t) {
			d->tenants[i] = d->tenants[--d->n_tenants];
			break;
		}
	}
	free(t);
}

uint64_t pcmd_tenant_used(const struct pcmd *d, uint32_t uid, enum pcmd_tenant_res res)
{
	for (uint32_t i = 0; i < d->n_tenants; i++)
		if (d->tenants[i]->uid == uid)
			return d->tenants[i]->used[res];
	return 0;
}

uint64_t pcmd_tenant_limit(const struct pcmd *d, enum pcmd_tenant_res res)
{
	const struct pcmd_config *cfg = d->cfg;
	uint32_t hosts;

	switch (res) {
	case PCMD_TENANT_CLIENTS:
		return cfg->limits.user.clients;
	case PCMD_TENANT_REGIONS:
		return cfg->limits.user.regions;
	case PCMD_TENANT_REGION_BYTES:
		return cfg->limits.user.region_bytes;
	case PCMD_TENANT_HOSTS:
		hosts = pcmd_plane_hosts(d->plane_ops, d->plane);
		if (!hosts)
			return 0;
		return cfg->limits.user.hosts ? cfg->limits.user.hosts
					      : (hosts / 2 ? hosts / 2 : 1);
	case PCMD_TENANT_FLOWS:
		return cfg->limits.user.flows;
	case PCMD_TENANT_LISTENERS:
		return cfg->limits.user.listeners;
	default:
		return 0;
	}
}

int pcmd_tenant_charge(const struct pcmd *d, struct pcmd_tenant_share *s, enum pcmd_tenant_res res,
		       uint64_t amount, char *err, size_t err_len)
{
	uint64_t limit = pcmd_tenant_limit(d, res);
	struct pcmd_tenant *t = s->t;

	/* Hosts on a data plane without them: counted, never limited. */
	if (!s->admin && (limit || res != PCMD_TENANT_HOSTS) && t->used[res] + amount > limit) {
		snprintf(err, err_len,
			 "uid %u holds %llu %s and %s is %llu (%s, per user; pcmd.conf(5))",
			 (unsigned)t->uid, (unsigned long long)t->used[res], res_names[res].unit,
			 res_names[res].key, (unsigned long long)limit,
			 amount > 1 && res == PCMD_TENANT_REGION_BYTES ? "this region does not fit"
								       : "no more");
		return res == PCMD_TENANT_CLIENTS ? -EUSERS : -EDQUOT;
	}
	t->used[res] += amount;
	s->held[res] += amount;
	return 0;
}

void pcmd_tenant_credit(struct pcmd_tenant_share *s, enum pcmd_tenant_res res, uint64_t amount)
{
	s->t->used[res] -= amount;
	s->held[res] -= amount;
}
