/* SPDX-License-Identifier: MIT */
/*
 * client.h - one connected client of pcmd: its credentials, its slot in the
 * client table, its channel (region and rings) and descriptor path, its
 * flows, listeners and outstanding descriptors, the data plane's events for
 * them, and the reclaim of all of it when the client closes its socket or
 * dies. Its control socket's requests and replies are control.c's; what a
 * request does is request.c's.
 *
 * Everything a client can name (conn ids, listener ids, descriptor slots) is
 * an index into this client's own tables, checked with a generation; nothing
 * it sends can name another client's objects.
 */
#ifndef PCMD_CLIENT_H
#define PCMD_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "channel.h"
#include "flow.h"
#include "intake.h"
#include "loop.h"
#include "pcmd_proto.h"
#include "tenant.h"

struct pcmd;
struct pcmd_rep_stats;

#define PCMD_RECV_BYTES 1024		     /* larger than any request: a longer one is refused */
#define PCMD_REFUSED_LINGER_NS 5000000000ull /* a refused peer's time to read why */
#define PCMD_REFUSE_DRAIN 16		     /* messages read from a peer refused outright */
#define PCMD_MAX_GROUPS 64

enum pcmd_client_state {
	PCMD_CLIENT_ALIVE = 1,
	PCMD_CLIENT_DYING = 2, /* flows closing, region being released, ops draining */
};

struct pcmd_listener {
	bool used;
	bool any_user; /* PCMD_LISTEN_ANY_USER: any user may dial it (names.h) */
	uint32_t plane_listener;
	uint32_t gen;
	char addr[PCMD_ADDR_MAX]; /* a name in the client's user's namespace */
};

struct pcmd_client {
	struct pcmd *d;
	uint32_t key; /* slot | gen << 16: in every data-plane token */
	uint32_t id;  /* daemon-wide, for display */
	uint32_t state;
	int fd;
	struct ucred cred;
	uint32_t n_groups;
	uint32_t groups[PCMD_MAX_GROUPS];
	bool hello_done;
	bool admin;
	struct pcmd_tenant_share share; /* of its user's tenant (tenant.h); none if refused */
	int refused; /* -errno: the peer may not use pcmd; its first request gets the reason */
	char refusal[PCMD_ERRTEXT_MAX];
	uint32_t role;
	char name[PCMD_CLIENT_NAME_MAX];
	uint64_t connected_ns;

	/* Limits fixed at HELLO from the running config. */
	uint32_t max_flows;
	uint32_t max_outstanding;
	uint32_t max_listeners;
	uint64_t max_region_bytes;
	uint64_t max_message_bytes;

	struct pcmd_channel *chan;
	struct pcmd_intake *intake; /* the descriptor path, with chan */
	struct pcmd_plane_region *region;
	bool region_releasing;

	struct pcmd_conn *conns; /* max_flows */
	uint32_t n_conns_used;
	struct pcmd_listener *listeners; /* max_listeners */

	/* Control socket I/O (control.c): one request at a time, its reply, then the next. */
	struct pcmd_op recv_op, send_op;
	struct pcmd_bell bell; /* the submission doorbell */
	struct msghdr rmsg, smsg;
	struct iovec riov, siov;
	_Alignas(8) uint8_t rbuf[PCMD_RECV_BYTES];
	/* Room for SCM_CREDENTIALS (32 bytes) and up to 20 stray fds (CMSG_SPACE: 96), each
	 * closed at once (control.c); the kernel drops those beyond (MSG_CTRUNC). And for the
	 * REGION reply's 3 fds (32). Aligned as a cmsghdr (size_t); not a union with struct
	 * cmsghdr, whose flexible array member clang rejects here. */
	union {
		size_t align;
		uint8_t buf[128];
	} rctl;
	union {
		size_t align;
		uint8_t buf[64];
	} sctl;
	_Alignas(8) uint8_t sbuf[PCMD_MSG_MAX_BYTES];
	uint64_t bell_val;
	bool close_after_send; /* a refusal: disconnect once the error reply is out */
	bool bell_armed;

	uint64_t requests;
	uint64_t errors;
};

/* Data-plane tokens: whose, and which object. */
#define PCMD_TOKEN_CONN 0x80000000u /* low bits: a conn index (connect/accept/closed) */
#define PCMD_TOKEN_REGION 0xffffffffu

static inline uint64_t pcmd_token(uint32_t key, uint32_t obj)
{
	return (uint64_t)key << 32 | obj;
}

/**
 * pcmd_client_new() - check the peer of @fd and make its client object (no
 * I/O armed). pcmd_control_accept() is this plus the first receive. A peer the
 * access rules (access.h) refuse still gets an object, marked refused: its first
 * request is answered with the reason and it is disconnected (closing at once
 * would make the peer's kernel report ECONNRESET before it reads why).
 * @d: the daemon.
 * @fd: a connected socket; the client owns it from now on if this succeeds.
 * @out: the client.
 * @why: when no object could be made, why (for the peer).
 * @why_len: its size.
 *
 * Limits: limits.max_clients clients in all, limits.admin_clients more for
 * admins only, limits.user.clients per user (tenant.h); refused peers wait in
 * at most PCMD_SPARE_SLOTS spare slots, and beyond those are refused outright.
 *
 * Return: 0, -EUSERS (a limit, and no spare slot), -ENOMEM, -errno of SO_PEERCRED.
 */
int pcmd_client_new(struct pcmd *d, int fd, struct pcmd_client **out, char *why, size_t why_len);

/**
 * pcmd_client_by_key() - the live client a token names.
 * @d: the daemon.
 * @key: from the token.
 *
 * Return: the client (alive or dying), or NULL when it is gone.
 */
struct pcmd_client *pcmd_client_by_key(struct pcmd *d, uint32_t key);

/**
 * pcmd_client_kill() - start reclaiming a client: abort its flows, close its
 * listeners, release its region, cancel its I/O. It is freed once the data
 * plane and the loop have returned everything.
 * @c: the client.
 * @why: for the log.
 */
void pcmd_client_kill(struct pcmd_client *c, const char *why);

/**
 * pcmd_client_send_notice() - best-effort unsolicited notice on the control socket.
 * @c: the client.
 * @kind: enum pcmd_notice_kind.
 * @status: -errno.
 * @text: what happened.
 */
void pcmd_client_send_notice(struct pcmd_client *c, uint32_t kind, int status, const char *text);

/**
 * pcmd_client_start_data_path() - give the client its channel and start its
 * descriptor path (intake.h): served by the data plane's thread when it does
 * ports, the submission doorbell then being one that wakes that thread; else
 * by pcmd's loop, on the channel's own doorbell.
 * @c: the client, with its region added to the data plane.
 * @ch: its channel (the client's from now on, if this succeeds).
 *
 * Return: 0, -ENOMEM, or the data plane's port_add() -errno.
 */
int pcmd_client_start_data_path(struct pcmd_client *c, struct pcmd_channel *ch);

/**
 * pcmd_client_intake() - without ports: take and post the client's waiting
 * submissions (bounded per call), then flush its completions and re-arm its
 * doorbell. With ports the data plane's thread does this; a no-op here.
 * @c: the client.
 */
void pcmd_client_intake(struct pcmd_client *c);

/**
 * pcmd_client_plane_event() - route one data-plane event to the client it names.
 * @d: the daemon.
 * @ev: the event.
 */
void pcmd_client_plane_event(struct pcmd *d, const struct pcmd_plane_event *ev);

/* Every live client's ring flush after a batch of events. */
void pcmd_clients_flush_all(struct pcmd *d);

/*
 * The daemon's counters with the totals summed over clients and flows added
 * (for STATUS, STATS and the stats file; pcmd_stats_fill() completes it).
 */
void pcmd_clients_totals(struct pcmd *d, struct pcmd_rep_stats *t);

/* The same from one user's counters, over its clients (a non-admin's view). */
void pcmd_clients_totals_of(struct pcmd *d, uint32_t uid, struct pcmd_rep_stats *t);

/* Each user's goodput over the time since the last update (status interval). */
void pcmd_clients_user_goodput(struct pcmd *d, uint64_t now_ns);

/*
 * Disconnect the peers whose time is up: refused ones that did not read their
 * reason within PCMD_REFUSED_LINGER_NS, and connections that did not say HELLO
 * within limits.hello_timeout_ms (a slot held without a handshake is taken
 * from everyone).
 */
void pcmd_clients_expire(struct pcmd *d, uint64_t now_ns);

/* Free everything a client holds at once, with no reclaim (pcmd_destroy(), after the data
 * plane is gone: nothing touches its region any more). */
void pcmd_client_destroy(struct pcmd_client *c);

/* Free a client whose reclaim is complete (when its last pending op or event comes back). */
void pcmd_client_maybe_free(struct pcmd_client *c);

#endif /* PCMD_CLIENT_H */
