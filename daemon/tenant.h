/* SPDX-License-Identifier: MIT */
/*
 * tenant.h - each user's share of pcmd. A tenant is one uid: what its
 * clients hold together (clients, regions, region bytes, hosts of the
 * emulated fabric, flows, listeners) is counted here against
 * limits.user.*, so one user may take a fair share of pcmd but never all of
 * it. An admin (access.h) is not charged: its pcmctl and its applications
 * always get in (limits.admin_clients keeps client slots for admins).
 *
 * A tenant lives while one of its uid's clients does; its counts are the live
 * clients', so they go back to 0 as those clients are reclaimed. Each client
 * holds its share through a struct pcmd_tenant_share, which remembers what it
 * took, so that what it still holds when it goes is given back at once.
 */
#ifndef PCMD_TENANT_H
#define PCMD_TENANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

struct pcmd;

enum pcmd_tenant_res {
	PCMD_TENANT_CLIENTS = 0,
	PCMD_TENANT_REGIONS,
	PCMD_TENANT_REGION_BYTES,
	PCMD_TENANT_HOSTS, /* charged only on a data plane whose regions are hosts (softnic) */
	PCMD_TENANT_FLOWS,
	PCMD_TENANT_LISTENERS,
	PCMD_TENANT_RES_COUNT,
};

struct pcmd_tenant {
	uint32_t uid;
	uint32_t refs; /* clients of this uid */
	uint64_t used[PCMD_TENANT_RES_COUNT];
	/* What a non-admin's pcmctl reads of its own: its closed flows' bytes and messages
	 * (snap.tx_bytes, ...), its goodput (snap.goodput_bps); the other counters stay 0. */
	struct pcmd_counters counters;
};

/* One client's part of its tenant. */
struct pcmd_tenant_share {
	struct pcmd_tenant *t; /* NULL: none (a refused peer) */
	bool admin;	       /* never refused, still counted */
	uint64_t held[PCMD_TENANT_RES_COUNT];
};

/**
 * pcmd_tenant_join() - make @s a share of @uid's tenant (made if this is the
 * user's first client).
 * @d: the daemon.
 * @uid: the user.
 * @admin: the client is an admin.
 * @s: the client's share.
 *
 * Return: 0, -ENOMEM.
 */
int pcmd_tenant_join(struct pcmd *d, uint32_t uid, bool admin, struct pcmd_tenant_share *s);

/* Give back all @s holds and leave its tenant (the last share frees it). No share: a no-op. */
void pcmd_tenant_leave(struct pcmd *d, struct pcmd_tenant_share *s);

/* What @uid's clients hold of @res now (0 for a user without clients). */
uint64_t pcmd_tenant_used(const struct pcmd *d, uint32_t uid, enum pcmd_tenant_res res);

/**
 * pcmd_tenant_limit() - a user's limit of @res: its limits.user.* key, or
 * for hosts without that key half the emulated fabric's hosts (at least one);
 * 0 when @res is not charged (hosts on a data plane without them).
 * @d: the daemon.
 * @res: the resource.
 *
 * Return: the limit.
 */
uint64_t pcmd_tenant_limit(const struct pcmd *d, enum pcmd_tenant_res res);

/**
 * pcmd_tenant_charge() - take @amount of @res for the client of share @s,
 * unless that would pass its user's limit. An admin's share is never refused
 * (its use is still counted).
 * @d: the daemon.
 * @s: the client's share.
 * @res: the resource.
 * @amount: how much.
 * @err: on refusal, the user, the key, its value and what the user holds.
 * @err_len: its size.
 *
 * Return: 0, -EDQUOT (the user's limit; -EUSERS for clients).
 */
int pcmd_tenant_charge(const struct pcmd *d, struct pcmd_tenant_share *s, enum pcmd_tenant_res res,
		       uint64_t amount, char *err, size_t err_len);

/* Give back @amount of what pcmd_tenant_charge() took for @s. */
void pcmd_tenant_credit(struct pcmd_tenant_share *s, enum pcmd_tenant_res res, uint64_t amount);

#endif /* PCMD_TENANT_H */
