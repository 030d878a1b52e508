// SPDX-License-Identifier: MIT
/*
 * plane_engine_region.c - the engine data plane's client regions: each one
 * client's data area, registered with one engine (XP_CTL_MR_REG) and named
 * as a peer. null and verbs: the engines in turn, named after the datapath
 * or the host the client gave. softnic: each region attaches as its own host
 * of the emulated fabric (the one it names, "host3" or "3", or the first free
 * one) and is that host's engine's only region; its host is detached once the
 * region is released, free for the next client.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_softnic.h"
#include "plane_engine_int.h"

/* softnic: the host a client names ("host3", "3"; "" the first free one). */
static int pick_host(struct pcmd_plane *pl, const char *name, uint32_t *out, char *err,
		     size_t err_len)
{
	const char *digits = strncmp(name, "host", 4) == 0 ? name + 4 : name;
	unsigned long h;
	char *end;

	if (!name[0]) {
		for (uint32_t i = 0; i < pl->n_engines; i++)
			if (!pl->engines[i]) {
				*out = i;
				return 0;
			}
		snprintf(err, err_len,
			 "all %u hosts of the emulated fabric are attached, one per client "
			 "(datapath.softnic.hosts, or the hosts of datapath.softnic.topology)",
			 pl->n_engines);
		return -EUSERS;
	}
	errno = 0;
	h = strtoul(digits, &end, 10);
	if (digits[0] < '0' || digits[0] > '9' || *end || errno || h >= pl->n_engines) {
		snprintf(err, err_len,
			 "'%s' is no host of the emulated fabric (host0..host%u; "
			 "datapath.softnic.hosts)",
			 name, pl->n_engines - 1);
		return -EINVAL;
	}
	if (pl->engines[h]) {
		snprintf(err, err_len, "host%lu is attached by another client", h);
		return -EADDRINUSE;
	}
	*out = (uint32_t)h;
	return 0;
}

/* softnic: open host @h's engine on the fabric. */
static int host_attach(struct pcmd_plane *pl, uint32_t h, char *err, size_t err_len)
{
	struct xp_engine_config ec = pl->host_ec;
	struct pcm_diag diag = {0};
	int rc;

	ec.index = h;
	ec.dp.engine = h;
	ec.dp.host = h;
	rc = pcmd_fabric_attach(pl->fabric, &ec, &pl->engines[h], &diag);
	if (rc < 0) {
		snprintf(err, err_len, "host%u's engine: %s", h,
			 diag.msg[0] ? diag.msg : strerror(-rc));
		return rc;
	}
	rc = pcmd_eng_conn_flow_alloc(pl, h);
	if (rc < 0) {
		pcmd_fabric_detach(pl->fabric, h);
		pl->engines[h] = NULL;
	}
	return rc;
}

/* softnic: take host @h's last completions, then close its engine: the host is free. */
static void host_detach(struct pcmd_plane *pl, uint32_t h)
{
	pcmd_eng_drain(pl, h);
	pcmd_fabric_detach(pl->fabric, h);
	pl->engines[h] = NULL;
	free(pl->conn_flow[h]);
	pl->conn_flow[h] = NULL;
	pl->detaching[h] = false;
}

/* softnic: detach the hosts whose region was released (not while their completions are read). */
void pcmd_eng_hosts_reap(struct pcmd_plane *pl)
{
	for (uint32_t h = 0; pl->n_detaching && h < pl->n_engines; h++)
		if (pl->detaching[h]) {
			pl->n_detaching--;
			host_detach(pl, h);
		}
}

/* Which engine a new region goes on, and its name as a peer. */
static int region_place(struct pcmd_plane *pl, struct pcmd_plane_region *r, const char *host,
			char *err, size_t err_len)
{
	uint32_t h;
	int rc;

	pl->n_regions++;
	if (!pl->fabric) {
		r->engine = pl->next_engine++ % pl->n_engines;
		if (host && host[0])
			snprintf(r->name, sizeof(r->name), "%s", host);
		else
			snprintf(r->name, sizeof(r->name), "%s-%u", pl->dp_ops->name,
				 pl->n_regions);
		return 0;
	}
	rc = pick_host(pl, host ? host : "", &h, err, err_len);
	if (rc == 0)
		rc = host_attach(pl, h, err, err_len);
	if (rc < 0)
		return rc;
	r->engine = h;
	snprintf(r->name, sizeof(r->name), "host%u", h);
	return 0;
}

int pcmd_eng_region_add(struct pcmd_plane *pl, void *base, size_t bytes, const char *host,
			uint64_t token, struct pcmd_plane_region **out, char *err, size_t err_len)
{
	struct pcmd_plane_region *r = calloc(1, sizeof(*r));
	struct xp_ctl *ctl = xp_ctl_new(XP_CTL_MR_REG);
	int rc;

	if (!r || !ctl) {
		free(r);
		free(ctl);
		return -ENOMEM;
	}
	r->token = token;
	r->base = base;
	r->bytes = bytes;
	rc = region_place(pl, r, host, err, err_len);
	if (rc < 0) {
		free(r);
		free(ctl);
		return rc;
	}
	ctl->addr = base;
	ctl->len = bytes;
	rc = pcmd_eng_ctl_run(pl, r->engine, ctl);
	r->mr = ctl->mr;
	free(ctl);
	if (rc < 0) {
		if (pl->fabric)
			host_detach(pl, r->engine);
		free(r);
		return rc;
	}
	pl->regions_live++;
	*out = r;
	return 0;
}

void pcmd_eng_region_release(struct pcmd_plane *pl, struct pcmd_plane_region *r)
{
	r->releasing = true;
	pcmd_eng_region_try_release(pl, r);
}
