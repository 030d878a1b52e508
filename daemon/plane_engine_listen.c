// SPDX-License-Identifier: MIT
/*
 * plane_engine_listen.c - the engine data plane's listeners: each on its
 * client's region, known by its id (the names are pcmd's, names.h), with an accept queue
 * (xp_accept_queue.h) where the flows a connect() made on the listener's
 * engine wait for the client's accept()s, at most the backlog of them, and
 * meet them oldest first. A listener that closes refuses its waiting
 * accept()s (-ECONNABORTED) and closes its waiting flows silently: pcmd never
 * heard of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "plane_engine_int.h"

int pcmd_eng_listen(struct pcmd_plane *pl, struct pcmd_plane_region *r, uint32_t backlog,
		    uint32_t *id)
{
	struct pcmd_eng_listener *l;
	uint32_t i;

	for (i = 0; i < pl->n_listeners; i++)
		if (!pl->listeners[i].used)
			break;
	if (i == pl->n_listeners) {
		uint32_t cap = pl->n_listeners;

		pl->listeners = pcmd_eng_grow(pl->listeners, &cap, sizeof(*pl->listeners));
		memset(pl->listeners + i, 0, (cap - i) * sizeof(*pl->listeners));
		pl->n_listeners = cap;
	}
	l = &pl->listeners[i];
	*l = (struct pcmd_eng_listener){.used = true, .r = r};
	if (xp_accept_queue_init(&l->q, backlog ? backlog : 1) < 0) {
		l->used = false;
		return -ENOMEM;
	}
	r->refs++;
	*id = i;
	return 0;
}

struct pcmd_eng_listener *pcmd_eng_listener_of(struct pcmd_plane *pl, uint32_t id)
{
	if (id >= pl->n_listeners || !pl->listeners[id].used) {
		pcmd_err("data plane: pcmd named listener %u, which it does not hold", id);
		return NULL;
	}
	return &pl->listeners[id];
}

void pcmd_eng_listener_match(struct pcmd_plane *pl, struct pcmd_eng_listener *l)
{
	uint64_t f, token;

	while (xp_accept_queue_match(&l->q, &f, &token)) {
		struct pcmd_eng_flow *fl = &pl->flows[f];
		struct pcmd_plane_event ev = {.kind = PCMD_PLANE_EV_ACCEPTED,
					      .token = token,
					      .flow = (uint32_t)f,
					      .peer_token = fl->dialer_token};

		snprintf(ev.peer, sizeof(ev.peer), "%s", fl->dialer);
		ev.peer_opts = fl->dialer_opts;
		fl->token = ev.token;
		fl->known = true;
		pcmd_eng_emit(pl, &ev);
	}
	pcmd_eng_kick(pl);
}

void pcmd_eng_unlisten(struct pcmd_plane *pl, uint32_t id)
{
	struct pcmd_eng_listener *l = pcmd_eng_listener_of(pl, id);
	uint64_t v;

	if (!l)
		return;
	while (xp_accept_queue_take_accept(&l->q, &v))
		pcmd_eng_emit_simple(pl, PCMD_PLANE_EV_ACCEPTED, -ECONNABORTED, v, 0);
	/* Connections nobody accepted: pcmd never heard of them; their close is silent. */
	while (xp_accept_queue_take_dial(&l->q, &v))
		pcmd_eng_flow_close(pl, (uint32_t)v, true);
	xp_accept_queue_fini(&l->q);
	l->used = false;
	l->r->refs--;
	pcmd_eng_region_try_release(pl, l->r);
	pcmd_eng_kick(pl);
}

int pcmd_eng_accept(struct pcmd_plane *pl, uint32_t id, uint64_t token)
{
	struct pcmd_eng_listener *l = pcmd_eng_listener_of(pl, id);
	int rc;

	if (!l)
		return -EINVAL;
	rc = xp_accept_queue_accept(&l->q, token);
	if (rc < 0)
		return rc;
	pcmd_eng_listener_match(pl, l);
	return 0;
}
