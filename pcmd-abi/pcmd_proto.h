/* SPDX-License-Identifier: MIT */
/*
 * pcmd_proto.h - pcmd's control protocol: the messages a client (libpcmtransport in
 * daemon mode, or pcmctl) and pcmd exchange over the SOCK_SEQPACKET control
 * socket. One message per datagram, fixed little-endian host layouts (client
 * and daemon share a machine), every field range-checked by the receiver.
 *
 * Framing: every message starts with struct pcmd_msg_hdr. A request carries a
 * client-chosen seq that the reply echoes; the reply's type is the request's
 * type | PCMD_MSG_REPLY. Every reply starts with struct pcmd_reply_status; when
 * status < 0 the rest of the reply is struct pcmd_reply_error's text.
 *
 * Versioning: hdr.version is the protocol version the sender speaks. A daemon
 * answers a message of a version it does not speak with an error reply laid
 * out as in PCMD_PROTO_VERSION 1 (header + status + text), the one layout that
 * every version keeps, so any client can print why it was refused.
 *
 * Data never travels here: a client gets its shared-memory region and the two
 * doorbell eventfds in the REGION reply (SCM_RIGHTS) and then posts sends and
 * receives as descriptors on the region's rings (pcmd_region.h).
 *
 * This header is shared by pcmd, pcmctl and libpcmtransport's daemon backend;
 * it includes nothing but fixed-width types.
 */
#ifndef PCMD_PROTO_H
#define PCMD_PROTO_H

#include <stdint.h>

#define PCMD_PROTO_MAGIC 0x444d4350u /* "PCMD" in memory order */
/* 2: struct pcmd_flow_measure carries the engine's per-connection figures
 * 3: listening names per user (LISTEN's flags, "NAME@OWNER" dials), PEER, and
 *    struct pcmd_flow_info's gid and peer credentials */
#define PCMD_PROTO_VERSION 3
#define PCMD_PROTO_VERSION_MIN 3

#define PCMD_MSG_MAX_BYTES 16384 /* largest message either side ever sends */
#define PCMD_ADDR_MAX 64	 /* listen/connect address, NUL included */
#define PCMD_POLICY_MAX 64	 /* a policy's name, NUL included */
#define PCMD_PATH_MAX 256	 /* a package path for POLICY_LOAD, NUL included */
#define PCMD_ERRTEXT_MAX 256	 /* an error reply's text, NUL included */
#define PCMD_CLIENT_NAME_MAX 32	 /* a client's self-chosen label, NUL included */
#define PCMD_DEFAULT_SOCKET "/run/pcmd/pcmd.sock"

enum pcmd_msg_type {
	PCMD_MSG_HELLO = 1,
	PCMD_MSG_REGION = 2,
	PCMD_MSG_LISTEN = 3,
	PCMD_MSG_CONNECT = 4,
	PCMD_MSG_ACCEPT = 5,
	PCMD_MSG_CLOSE = 6,
	PCMD_MSG_SET_POLICY = 7, /* a client changes the policy of one of its own flows */
	PCMD_MSG_STATUS = 8,
	PCMD_MSG_FLOWS = 9,
	PCMD_MSG_STATS = 10,
	PCMD_MSG_POLICY_LIST = 11,
	PCMD_MSG_POLICY_LOAD = 12,   /* admin */
	PCMD_MSG_POLICY_UNLOAD = 13, /* admin */
	PCMD_MSG_POLICY_SET = 14,    /* admin: any flow, or a rule */
	PCMD_MSG_LOG_LEVEL = 15,     /* admin: pcmd's log level until the next reload */
	PCMD_MSG_PEER = 16,	     /* the credentials of a connection's other end */
	PCMD_MSG_TYPE_END,
	PCMD_MSG_NOTICE = 0x4000, /* unsolicited, daemon -> client; see pcmd_notice */
	PCMD_MSG_REPLY = 0x8000,
};

enum pcmd_role {
	PCMD_ROLE_APP = 1,   /* moves data: needs a region */
	PCMD_ROLE_ADMIN = 2, /* pcmctl: queries; admin operations need admin credentials */
};

/* Shell modes, as in pcm_tp_shell_mode. */
enum pcmd_shell_mode {
	PCMD_SHELL_SYNC = 0,
	PCMD_SHELL_ASYNC_RELAXED = 1,
	PCMD_SHELL_ASYNC_LOCKED = 2,
	PCMD_SHELL_ASYNC_BOUNDED = 3,
	PCMD_SHELL_MODE_COUNT,
	PCMD_SHELL_DEFAULT = 0xff, /* in requests: the matching rule's or the default mode */
};

struct pcmd_msg_hdr {
	uint32_t magic;	  /* PCMD_PROTO_MAGIC */
	uint16_t version; /* protocol version of the sender */
	uint16_t type;	  /* enum pcmd_msg_type, | PCMD_MSG_REPLY in replies */
	uint32_t len;	  /* bytes of the whole message, header included */
	uint32_t seq;	  /* request id, echoed in the reply */
};

struct pcmd_reply_status {
	struct pcmd_msg_hdr hdr;
	int32_t status; /* 0 or -errno */
	uint32_t reserved;
};

struct pcmd_reply_error {
	struct pcmd_reply_status st;
	char text[PCMD_ERRTEXT_MAX]; /* what is wrong, NUL-terminated */
};

/* HELLO: first message on a connection. */
struct pcmd_req_hello {
	struct pcmd_msg_hdr hdr;
	uint16_t version_min; /* oldest protocol version the client speaks */
	uint16_t version_max; /* newest */
	uint32_t role;	      /* enum pcmd_role */
	char name[PCMD_CLIENT_NAME_MAX];
};

struct pcmd_rep_hello {
	struct pcmd_reply_status st;
	uint32_t version; /* the version both now speak */
	uint32_t client_id;
	uint32_t max_flows; /* this client's limits */
	uint32_t max_outstanding;
	uint64_t max_region_bytes;
	uint64_t max_message_bytes;
	uint32_t admin; /* 1: this client may load, unload and set policies */
	uint32_t reserved;
};

/* REGION: create the client's shared-memory channel. The reply carries three
 * fds (SCM_RIGHTS): the sealed memfd, the submission doorbell (client writes),
 * the completion doorbell (daemon writes). */
struct pcmd_req_region {
	struct pcmd_msg_hdr hdr;
	uint64_t data_bytes;	  /* buffer area the client wants */
	uint32_t sq_entries;	  /* power of two; 0: the daemon's default */
	uint32_t cq_entries;	  /* power of two, >= sq_entries; 0: default */
	char host[PCMD_ADDR_MAX]; /* softnic: the emulated host to attach as; "" any */
};

/* Where the rings and the data area sit in a region (computed in pcmd_region.h). */
struct pcmd_region_layout {
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint64_t sq_off; /* byte offsets in the region */
	uint64_t cq_off;
	uint64_t data_off;
	uint64_t data_bytes;
	uint64_t region_bytes; /* size of the memfd */
};

struct pcmd_rep_region {
	struct pcmd_reply_status st;
	struct pcmd_region_layout lay;
};

#define PCMD_REGION_FDS 3

/*
 * LISTEN: a name in the listening client's own user's namespace (no '@'):
 * two users may listen on the same name. A dial of "NAME" reaches the
 * dialer's own user's NAME (or the owner a shared_names rule gives NAME);
 * "NAME@OWNER" (a user name or uid) reaches OWNER's NAME when OWNER's
 * listener takes dials from other users: with PCMD_LISTEN_ANY_USER, or when
 * a shared_names rule of pcmd's config lets the dialer in (pcmd.conf(5)).
 */
#define PCMD_LISTEN_ANY_USER 1u /* any user who may use pcmd may dial this name */

struct pcmd_req_listen {
	struct pcmd_msg_hdr hdr;
	char addr[PCMD_ADDR_MAX];
	uint32_t backlog; /* connections waiting for an accept; 0: default */
	uint32_t flags;	  /* PCMD_LISTEN_* */
};

struct pcmd_rep_listen {
	struct pcmd_reply_status st;
	uint32_t listener_id;
	uint32_t reserved;
};

/* Options of a new flow, or of a policy change on one. Empty policy: the
 * matching rule's, else the default. An app client may only name a policy
 * pcmd already has (built-in or loaded by an admin), never a .so path. */
struct pcmd_flow_opts {
	char policy[PCMD_POLICY_MAX];
	char lb_policy[PCMD_POLICY_MAX]; /* "" none (or the rule's) */
	uint32_t mode;			 /* enum pcmd_shell_mode or PCMD_SHELL_DEFAULT */
	uint32_t paths;			 /* 0: datapath default; else 1..64 */
	uint32_t reliable_connected;	 /* 0 or 1 */
	uint32_t reserved;
};

/* CONNECT: the reply gives the new connection's id at once; the outcome
 * arrives later as a PCMD_OP_CONNECT completion on the completion ring. */
struct pcmd_req_connect {
	struct pcmd_msg_hdr hdr;
	char addr[PCMD_ADDR_MAX];
	struct pcmd_flow_opts opts;
	uint64_t cookie;
};

struct pcmd_rep_conn {
	struct pcmd_reply_status st;
	uint32_t conn_id;
	uint32_t reserved;
};

/* ACCEPT: completes as a PCMD_OP_ACCEPT completion carrying the new conn id. */
struct pcmd_req_accept {
	struct pcmd_msg_hdr hdr;
	uint32_t listener_id; /* 0: any of this client's listeners */
	uint32_t reserved;
	uint64_t cookie;
};

#define PCMD_CLOSE_ABORT 1u

/* CLOSE: outstanding work of the connection completes with -ECONNABORTED. */
struct pcmd_req_close {
	struct pcmd_msg_hdr hdr;
	uint32_t conn_id;
	uint32_t flags; /* PCMD_CLOSE_* */
};

/* PEER: who is at the other end of one of this client's connections. */
struct pcmd_req_peer {
	struct pcmd_msg_hdr hdr;
	uint32_t conn_id;
	uint32_t reserved;
};

/* A process's credentials as pcmd saw them (SO_PEERCRED of its control socket). */
struct pcmd_peer_cred {
	uint32_t uid;
	uint32_t gid;
	uint32_t pid;
	uint32_t known; /* 0: the other end left before pcmd paired them (uid, gid, pid 0) */
};

struct pcmd_rep_peer {
	struct pcmd_reply_status st;
	struct pcmd_peer_cred peer;
};

struct pcmd_req_set_policy {
	struct pcmd_msg_hdr hdr;
	uint32_t conn_id;
	uint32_t reserved;
	struct pcmd_flow_opts opts;
};

/* A request with no body beyond the header: STATUS, STATS. */
struct pcmd_req_empty {
	struct pcmd_msg_hdr hdr;
};

struct pcmd_rep_status {
	struct pcmd_reply_status st;
	uint64_t uptime_ns;
	uint64_t goodput_bps; /* bytes delivered over the last status interval */
	uint32_t pid;
	uint32_t clients;
	uint32_t flows;
	uint32_t listeners;
	uint32_t policies;
	uint32_t rules;
	uint32_t state;		    /* enum pcmd_run_state */
	uint32_t config_generation; /* 1 at start, +1 per successful reload */
	char datapath[16];
	char version[16];
	char config_path[PCMD_PATH_MAX];
	uint64_t run_id; /* random at each start: with a flow id, names a flow across restarts */
};

enum pcmd_run_state {
	PCMD_STATE_RUNNING = 1,
	PCMD_STATE_DRAINING = 2,
};

/* Paged list requests: FLOWS, POLICY_LIST. */
struct pcmd_req_page {
	struct pcmd_msg_hdr hdr;
	uint32_t start; /* first index wanted */
	uint32_t max;	/* entries wanted; the reply may hold fewer */
};

/* Which pcmd_flow_measure figures the datapath measured (others are 0). */
enum pcmd_flow_field {
	PCMD_FIELD_CWND = 1u << 0,
	PCMD_FIELD_RATE = 1u << 1,
	PCMD_FIELD_RTT = 1u << 2, /* srtt_ns and rttvar_ns */
	PCMD_FIELD_INFLIGHT = 1u << 3,
	PCMD_FIELD_RETRANSMITS = 1u << 4,
	PCMD_FIELD_RTOS = 1u << 5,
};

#define PCMD_CWND_UNLIMITED UINT64_MAX /* cwnd_bytes of a flow without a window */

/* A flow's transport figures, as its data plane measures them. */
struct pcmd_flow_measure {
	uint32_t valid; /* enum pcmd_flow_field bits */
	uint32_t reserved;
	uint64_t cwnd_bytes;	  /* PCMD_CWND_UNLIMITED: no window */
	uint64_t rate_bps;	  /* the pacing rate; 0: not paced */
	uint64_t srtt_ns;	  /* 0 before the first RTT sample */
	uint64_t rttvar_ns;
	uint64_t in_flight_bytes; /* sent and not yet acknowledged */
	uint64_t retransmits;	  /* chunks sent again (RACK, RTO, TLP) */
	uint64_t rtos;		  /* retransmission timeouts */
};

struct pcmd_flow_info {
	uint32_t flow_id; /* daemon-wide */
	uint32_t client_id;
	uint32_t pid; /* the owning client's, from SO_PEERCRED */
	uint32_t uid;
	uint32_t gid;
	uint32_t conn_id;		 /* the id the owner sees */
	struct pcmd_peer_cred peer_cred; /* the other end's client */
	uint32_t state;			 /* enum pcmd_flow_state */
	uint32_t mode;			 /* enum pcmd_shell_mode */
	int32_t rule;			 /* index of the rule that chose the policy, -1 none */
	char peer[PCMD_ADDR_MAX];
	char policy[PCMD_POLICY_MAX];
	char lb_policy[PCMD_POLICY_MAX];
	struct pcmd_flow_measure m;
	uint64_t tx_bytes; /* completed sends and receives, as pcmd counted them */
	uint64_t rx_bytes;
	uint64_t tx_msgs;
	uint64_t rx_msgs;
};

enum pcmd_flow_state {
	PCMD_FLOW_CONNECTING = 1,
	PCMD_FLOW_ESTABLISHED = 2,
	PCMD_FLOW_CLOSING = 3,
};

#define PCMD_FLOWS_PER_PAGE                                                                        \
	((PCMD_MSG_MAX_BYTES - sizeof(struct pcmd_reply_status) - 16) /                            \
	 sizeof(struct pcmd_flow_info))

struct pcmd_rep_flows {
	struct pcmd_reply_status st;
	uint32_t total; /* flows at the time of the reply */
	uint32_t n;	/* entries in this page */
	uint32_t next;	/* start of the next page; == total when done */
	uint32_t reserved;
	struct pcmd_flow_info flows[];
};

struct pcmd_rep_stats {
	struct pcmd_reply_status st;
	uint64_t uptime_ns;
	uint64_t clients;	    /* now */
	uint64_t clients_accepted;  /* since start */
	uint64_t clients_refused;   /* credentials, version or limits */
	uint64_t clients_reclaimed; /* died or disconnected */
	uint64_t flows;
	uint64_t flows_opened;
	uint64_t listeners;
	uint64_t region_bytes; /* shared memory mapped for clients now */
	uint64_t tx_bytes;
	uint64_t rx_bytes;
	uint64_t tx_msgs;
	uint64_t rx_msgs;
	uint64_t retransmits;
	uint64_t descriptors_ok;
	uint64_t descriptors_rejected;
	uint64_t completions;
	uint64_t cq_full_waits; /* times a client's full completion ring held back intake */
	uint64_t control_requests;
	uint64_t control_errors;
	uint64_t policy_swaps;
	uint64_t reloads;
	uint64_t reload_failures;
	uint64_t goodput_bps;
	uint64_t records_dropped_lines; /* lines of the records file not written */
	uint64_t stats_dropped_lines;	/* lines of the stats file not written */
	uint64_t output_write_errors;	/* failed writes of the stats, records, metrics files */
};

struct pcmd_policy_info {
	char name[PCMD_POLICY_MAX];
	char source[PCMD_PATH_MAX]; /* "built-in" or the .so path */
	char arith[16];
	uint32_t flows; /* flows using it now */
	uint32_t builtin;
};

#define PCMD_POLICIES_PER_PAGE                                                                     \
	((PCMD_MSG_MAX_BYTES - sizeof(struct pcmd_reply_status) - 16) /                            \
	 sizeof(struct pcmd_policy_info))

struct pcmd_rep_policies {
	struct pcmd_reply_status st;
	uint32_t total;
	uint32_t n;
	uint32_t next;
	uint32_t reserved;
	struct pcmd_policy_info policies[];
};

struct pcmd_req_policy_load {
	struct pcmd_msg_hdr hdr;
	char path[PCMD_PATH_MAX];
};

struct pcmd_rep_policy_load {
	struct pcmd_reply_status st;
	char name[PCMD_POLICY_MAX];
};

struct pcmd_req_policy_unload {
	struct pcmd_msg_hdr hdr;
	char name[PCMD_POLICY_MAX];
};

enum pcmd_policy_target {
	PCMD_TARGET_FLOW = 1, /* one flow, by its daemon-wide flow id */
	PCMD_TARGET_RULE = 2, /* a rule by index: new flows, and live flows it chose */
};

struct pcmd_req_policy_set {
	struct pcmd_msg_hdr hdr;
	uint32_t target; /* enum pcmd_policy_target */
	uint32_t id;	 /* flow id or rule index */
	struct pcmd_flow_opts opts;
};

struct pcmd_rep_policy_set {
	struct pcmd_reply_status st;
	uint32_t flows_changed;
	uint32_t reserved;
};

/* LOG_LEVEL: the reply is a bare status. */
struct pcmd_req_log_level {
	struct pcmd_msg_hdr hdr;
	uint32_t level; /* 0 error, 1 warn, 2 info, 3 debug */
	uint32_t reserved;
};

enum pcmd_notice_kind {
	PCMD_NOTICE_SHUTDOWN = 1, /* pcmd is stopping; outstanding work completes with errors */
	PCMD_NOTICE_ERROR = 2,	  /* the client broke the protocol; pcmd disconnects it */
	PCMD_NOTICE_REVOKED = 3,  /* a reloaded config no longer allows it; pcmd disconnects it */
};

struct pcmd_notice {
	struct pcmd_msg_hdr hdr; /* type PCMD_MSG_NOTICE */
	uint32_t kind;
	int32_t status;
	char text[PCMD_ERRTEXT_MAX];
};

#endif /* PCMD_PROTO_H */
