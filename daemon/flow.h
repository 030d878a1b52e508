/* SPDX-License-Identifier: MIT */
/*
 * flow.h - a client's connections ("flows") and listeners in pcmd: the ids the
 * client sees, their states, the policy each runs, their descriptors, and the
 * data-plane events that move them along.
 *
 * A conn id is (generation << 16) | (index + 1) in the owning client's own
 * table, so a stale or forged id names nothing (-EBADF). States:
 *
 *   CONNECTING --CONNECTED ok--> ESTABLISHED --close--> CLOSING --CLOSED--> free
 *   ACCEPTING  --ACCEPTED ok---> ESTABLISHED
 *   CONNECTING/ACCEPTING --error--> free (the completion carries the error)
 *
 * While CONNECTING or ACCEPTING a conn holds one completion slot, the one its
 * PCMD_OP_CONNECT / PCMD_OP_ACCEPT completion will use.
 *
 * Descriptors do not come here: the client's descriptor path (intake.h)
 * checks them against a table this file keeps up to date (conn_sync() after
 * every state change, and before a close reaches the data plane).
 */
#ifndef PCMD_FLOW_H
#define PCMD_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "plane.h"
#include "policy.h"
#include "pcmd_proto.h"
#include "pcmd_region.h"

struct pcmd_client;

enum pcmd_conn_state {
	PCMD_CONN_FREE = 0,
	PCMD_CONN_CONNECTING,
	PCMD_CONN_ACCEPTING,
	PCMD_CONN_ESTABLISHED,
	PCMD_CONN_CLOSING,
};

struct pcmd_conn {
	uint32_t state;
	uint16_t gen;
	bool has_plane_flow;
	bool user_closed; /* the client closed it: no completion of its own */
	uint32_t plane_flow;
	uint32_t flow_id;     /* daemon-wide, for pcmctl */
	uint32_t listener;    /* ACCEPTING: listener index, or UINT32_MAX for any */
	uint64_t cookie;      /* CONNECTING/ACCEPTING: the request's cookie */
	struct pcmd_policy_choice choice;
	bool choice_held;
	char peer[PCMD_ADDR_MAX];
	struct pcmd_peer_cred peer_cred; /* the other end's client, as pcmd paired them */
	uint64_t opened_ns;
	/* Descriptors in flight and byte counts: the descriptor path's (intake.h). */
};

/* A flow is listed (pcmctl flows, the metrics file) once it has an id: connecting, established
 * or closing. */
static inline bool pcmd_conn_listed(const struct pcmd_conn *cn)
{
	return cn->state == PCMD_CONN_CONNECTING || cn->state == PCMD_CONN_ESTABLISHED ||
	       cn->state == PCMD_CONN_CLOSING;
}

/**
 * pcmd_conn_find() - the conn a client-supplied id names.
 * @c: the client.
 * @conn_id: the id.
 * @index: the conn's index.
 *
 * Return: 0, -EBADF (no such conn of this client).
 */
int pcmd_conn_find(const struct pcmd_client *c, uint32_t conn_id, uint32_t *index);

/* Control requests; each returns 0 or -errno and fills @err on failure. */
int pcmd_flow_listen(struct pcmd_client *c, const struct pcmd_req_listen *req, uint32_t *id,
		     char *err, size_t err_len);
int pcmd_flow_connect(struct pcmd_client *c, const struct pcmd_req_connect *req, uint32_t *conn_id,
		      char *err, size_t err_len);
int pcmd_flow_accept(struct pcmd_client *c, const struct pcmd_req_accept *req, char *err,
		     size_t err_len);
int pcmd_flow_close(struct pcmd_client *c, const struct pcmd_req_close *req, char *err,
		    size_t err_len);

/**
 * pcmd_flow_set_policy() - choose and swap the policy of a live conn.
 * @c: the owner.
 * @index: the conn.
 * @opts: what to change ("" fields: the rule's, then the defaults).
 * @err: why not.
 * @err_len: its size.
 *
 * Return: 0, -ENOTCONN (not established), or pcmd_policies_choose()'s and the
 * data plane's -errno.
 */
int pcmd_flow_set_policy(struct pcmd_client *c, uint32_t index, const struct pcmd_flow_opts *opts,
			 char *err, size_t err_len);

/**
 * pcmd_flow_on_connected() - the data plane finished a connect of conn
 * @index (from the event's token).
 * @c: the client.
 * @index: the conn.
 * @ev: the CONNECTED event.
 * @done: the PCMD_OP_CONNECT completion that the caller posts, reserved when
 *        the connect was asked for (intake.h).
 *
 * Return: true when @done is to be posted; false when the event did not fit
 * the conn (logged, nothing changed).
 */
bool pcmd_flow_on_connected(struct pcmd_client *c, uint32_t index,
			    const struct pcmd_plane_event *ev, struct pcmd_cqe *done);

/* The same for an ACCEPTED event: @done is the PCMD_OP_ACCEPT completion; @dialer is the
 * client that dialed (the conn's peer credentials), NULL when it is gone. */
bool pcmd_flow_on_accepted(struct pcmd_client *c, uint32_t index, const struct pcmd_plane_event *ev,
			   const struct pcmd_client *dialer, struct pcmd_cqe *done);

/* A CLOSED event: the flow's record is written and the conn freed. A
 * descriptor's completion goes to the descriptor path (intake.h), not here. */
void pcmd_flow_on_closed(struct pcmd_client *c, uint32_t index);

/* Abort every flow and close every listener (client death, shutdown). */
void pcmd_flow_abort_all(struct pcmd_client *c);

/* No conn left in any state: the region may be released. */
bool pcmd_flow_all_free(const struct pcmd_client *c);

/* One row of `pcmctl flows`. */
void pcmd_flow_info(struct pcmd_client *c, uint32_t index, struct pcmd_flow_info *out);

#endif /* PCMD_FLOW_H */
