/* SPDX-License-Identifier: MIT */
/*
 * transport.h - libpcmtransport: messages over pcm's RDMA transport, in process or through pcmd.
 *
 * An endpoint runs on one datapath ("softnic", "null", "verbs") either inside the process
 * (PCM_TP_BACKEND_INPROC: the library runs its own engines) or through a running pcmd
 * (PCM_TP_BACKEND_DAEMON: control over pcmd's Unix socket, data through a shared-memory region
 * that pcmd maps and, with verbs, registers as the MR). PCM_TP_BACKEND_AUTO follows
 * $PCM_TRANSPORT: "daemon" is the daemon; unset, "" or "inproc" is in process; "auto" is the
 * daemon when its socket exists and in process otherwise (only then does a socket decide).
 *
 * Messages: a send of N bytes on a connection is delivered whole into the peer's next posted
 * receive (FIFO matching). Buffers lie in registered memory: pcm_tp_mr_reg()'s ranges (in
 * daemon mode inside the shared region) or pcm_tp_mem_alloc()'s memory.
 *
 * The contract (both backends alike): a post that returns 0 completes exactly once, with
 * status 0 or a negative errno, and is never refused later for lack of room; a post beyond
 * the endpoint's limits (pcm_tp_endpoint_limits()) returns -EAGAIN at once, so an application
 * that retries a refused post before any later one keeps FIFO matching. Misuse (a NULL, a
 * closed connection, a region deregistered twice or still in use) is an error code, never a
 * crash, and pcm_tp_last_error() names the argument or object. A connection's last completion
 * is its PCM_TP_OP_CLOSE. A daemon-mode endpoint whose pcmd died completes everything
 * outstanding with -ESHUTDOWN and then says so from pcm_tp_poll() and pcm_tp_wait().
 *
 * Progress (in-process): with PCM_TP_PROGRESS_THREAD each engine has its own thread, which
 * busy-polls briefly after its last work and then sleeps; with PCM_TP_PROGRESS_INLINE there is
 * no engine thread and pcm_tp_poll()/pcm_tp_wait() run the engines on the caller's thread (the
 * lowest latency on a machine with few cores). The softnic datapath runs inside pcmd (daemon
 * mode) and pcm-sim, not in process.
 *
 * Thread safety: an endpoint may be used from several threads; each call is thread-safe; the
 * completions of one endpoint are polled by one thread at a time.
 *
 * pcm_transport(3) documents every call and every error code.
 */
#ifndef PCM_TRANSPORT_H
#define PCM_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

enum pcm_tp_backend {
	PCM_TP_BACKEND_AUTO = 0,
	PCM_TP_BACKEND_INPROC,
	PCM_TP_BACKEND_DAEMON,
};

enum pcm_tp_shell_mode { /* how the CC package runs (pcm-handler(7)) */
	PCM_TP_SHELL_SYNC = 0,
	PCM_TP_SHELL_ASYNC_RELAXED,
	PCM_TP_SHELL_ASYNC_LOCKED,
	PCM_TP_SHELL_ASYNC_BOUNDED,
};

enum pcm_tp_progress { /* in-process: who runs the engines */
	PCM_TP_PROGRESS_AUTO = 0, /* inline with fewer than 2 CPUs per engine, else threads */
	PCM_TP_PROGRESS_THREAD,
	PCM_TP_PROGRESS_INLINE,
};

/* pcm_tp_config.flags */
#define PCM_TP_FLAG_NULL_NO_COPY (1u << 0) /* null: move chunk events, not bytes (benchmarks) */
#define PCM_TP_FLAG_NO_SPIN (1u << 1) /* engine threads sleep once idle, never busy-poll */

struct pcm_tp_config {
	enum pcm_tp_backend backend;
	const char *datapath;    /* "softnic", "null", "verbs" (in-process); ignored for daemon */
	const char *device;      /* verbs: device name (NULL: first), port, GID index */
	uint8_t port;
	int gid_index;
	uint32_t engines;        /* engines (in-process); 0: one */
	uint32_t chunk_bytes;    /* 0: 64 KiB */
	const char *daemon_socket; /* NULL: /run/pcmd/pcmd.sock */
	size_t daemon_region_bytes; /* shared region to ask pcmd for */
	enum pcm_tp_progress progress;
	const char *policy;      /* CC package of this endpoint's connects whose options name none
				  * (in process also an accepted connection's when the dialer's is
				  * not known here); NULL: "swift" in process, pcmd's choice through
				  * pcmd */
	uint32_t flags;          /* PCM_TP_FLAG_* */
};

struct pcm_tp_conn_opts {
	const char *policy;      /* built-in package name, or a .so path (in process only); NULL:
				  * the endpoint's default; "none": no CC (in process only) */
	const char *lb_policy;   /* optional LB package */
	enum pcm_tp_shell_mode mode;
	uint32_t paths;          /* data paths (QPs); 0: default */
	int reliable_connected;  /* 1: RC data QPs, NIC does reliability; 0: UC + pcm's recovery */
	uint32_t no_progress_ms; /* fail with -ETIMEDOUT after this long without progress; 0: 5 s */
};

#define PCM_TP_NO_PROGRESS_MS_MAX 3600000u /* the longest no_progress_ms: an hour */

struct pcm_tp_endpoint;
struct pcm_tp_conn;
struct pcm_tp_mr;

/*
 * A connection and a region are handles, not pointers: one used after its object is gone
 * (the poll after its CLOSE completion, pcm_tp_mr_dereg(), pcm_tp_endpoint_close()) is
 * refused with an error, never read.
 */
enum pcm_tp_op {
	PCM_TP_OP_SEND = 1,
	PCM_TP_OP_RECV = 2,
	PCM_TP_OP_ACCEPT = 3,
	PCM_TP_OP_CONNECT = 4,
	PCM_TP_OP_CLOSE = 5,     /* a closed connection's last completion (cookie 0) */
};

struct pcm_tp_completion {
	enum pcm_tp_op op;
	int status;              /* 0 or -errno (see pcm_transport(3)) */
	struct pcm_tp_conn *conn;
	uint64_t cookie;         /* as posted */
	uint64_t bytes;          /* bytes sent or received */
};

/* An endpoint's limits (pcm_tp_endpoint_limits()): a post beyond one returns -EAGAIN at once. */
struct pcm_tp_limits {
	uint32_t sends_per_conn;     /* sends posted on one connection and not yet completed */
	uint32_t recvs_per_conn;     /* receives posted on one connection and not yet completed */
	uint32_t posts_per_endpoint; /* sends, receives, connects, accepts of the endpoint, all
				      * connections, not yet completed */
	uint32_t reserved;
	uint64_t max_message_bytes;  /* the longest send; a larger receive capacity is capped */
};

#define PCM_TP_NAME_MAX 64 /* a policy's name, NUL included */

/* How a connection runs now (pcm_tp_conn_query()). */
struct pcm_tp_conn_info {
	char policy[PCM_TP_NAME_MAX];    /* its CC package; "none": a fixed unlimited window */
	char lb_policy[PCM_TP_NAME_MAX]; /* its LB package; "" none */
	enum pcm_tp_shell_mode mode;
	uint32_t reserved;
};

/* pcm_tp_listen_flags() */
#define PCM_TP_LISTEN_ANY_USER (1u << 0) /* daemon: any user of pcmd may dial the name */

/* Who is at a connection's other end (pcm_tp_conn_peer()). */
struct pcm_tp_peer {
	uint32_t uid;
	uint32_t gid;
	int32_t pid;
	uint32_t reserved;
};

/**
 * pcm_tp_endpoint_open() - open an endpoint on a datapath, in process or through pcmd.
 * @cfg: the backend, datapath, engines, progress, default policy (see above).
 * @out: the endpoint.
 *
 * Return: 0, -EINVAL (a bad option), -ENODEV (no such datapath or device),
 * -ENOENT (no such default policy; daemon: pcmd unreachable), -EOPNOTSUPP,
 * -ENOMEM, -EPERM, or pcmd's refusal; pcm_tp_last_error() says more.
 */
int pcm_tp_endpoint_open(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out);

/**
 * pcm_tp_endpoint_close() - drop every connection (no completions; each peer gets a reset)
 * and free everything; the endpoint's connection and region handles are refused from then on.
 * @ep: the endpoint; NULL is a no-op.
 */
void pcm_tp_endpoint_close(struct pcm_tp_endpoint *ep);

/**
 * pcm_tp_endpoint_limits() - @ep's limits on posted operations and messages.
 * @ep: the endpoint.
 * @out: filled in.
 *
 * Return: 0, -EINVAL (NULL).
 */
int pcm_tp_endpoint_limits(struct pcm_tp_endpoint *ep, struct pcm_tp_limits *out);

/**
 * pcm_tp_listen() - take dials at @addr from now on (one per pcm_tp_accept()).
 * @ep: the endpoint.
 * @addr: datapath-specific: "host:port" for verbs' TCP bootstrap, a name for
 *        softnic/null endpoints in one process or on one pcmd fabric.
 *
 * Return: 0, -EINVAL (no address), -ENAMETOOLONG (64 bytes or more), -EADDRINUSE (this
 * endpoint listens already, or another one at @addr), -ESHUTDOWN (daemon: pcmd is gone).
 */
int pcm_tp_listen(struct pcm_tp_endpoint *ep, const char *addr);

/**
 * pcm_tp_listen_flags() - pcm_tp_listen() with flags.
 * @ep: the endpoint.
 * @addr: as pcm_tp_listen()'s. Daemon mode: a name of this user's own (names are per user:
 *        another user may listen on the same name; no '@').
 * @flags: PCM_TP_LISTEN_ANY_USER: daemon mode, any user who may use pcmd may dial the name
 *         as "NAME@USER" (without it only this user, and those a shared_names rule of pcmd's
 *         config names, reach it); in process it changes nothing.
 *
 * Return: 0, -EINVAL (no address, '@' in it, an unknown flag), -EADDRINUSE (this user
 * listens on @addr already), -EDQUOT (pcmd's limits.user.listeners).
 */
int pcm_tp_listen_flags(struct pcm_tp_endpoint *ep, const char *addr, uint32_t flags);

/**
 * pcm_tp_connect() - dial @addr; completes once with PCM_TP_OP_CONNECT.
 * @ep: the endpoint.
 * @addr: where the peer listens. Daemon mode: "NAME" is a name of this user's own (or of the
 *        user a shared_names rule of pcmd's config gives NAME); "NAME@USER" (a user name or
 *        uid) is USER's NAME, reached when that listener takes this user's dials.
 * @o: the connection's policy, shell mode, paths, reliability; NULL: defaults.
 * @cookie: the completion's.
 *
 * Return: 0 (the completion carries the connection or -ECONNREFUSED, ...),
 * -EINVAL, -ENAMETOOLONG, -ENOENT (no such policy), -EOPNOTSUPP, -ENOSPC, -ENOMEM,
 * -EAGAIN (the endpoint's limit of posts), -ESHUTDOWN (daemon: pcmd is gone).
 */
int pcm_tp_connect(struct pcm_tp_endpoint *ep, const char *addr, const struct pcm_tp_conn_opts *o,
		   uint64_t cookie);

/**
 * pcm_tp_accept() - take the next dial; completes once with PCM_TP_OP_ACCEPT.
 * @ep: a listening endpoint.
 * @cookie: the completion's.
 *
 * Return: 0, -EINVAL (not listening), -EAGAIN (the endpoint's limit of posts), -ENOMEM,
 * -ESHUTDOWN (daemon: pcmd is gone).
 */
int pcm_tp_accept(struct pcm_tp_endpoint *ep, uint64_t cookie);

/**
 * pcm_tp_conn_close() - abort @c: its pending work completes with -ECONNABORTED,
 * the peer's with -ECONNRESET; then a PCM_TP_OP_CLOSE completion names @c, its last.
 * @c stays valid until the pcm_tp_poll() call after the one that returned that
 * completion; from then on its handle is refused (-ENOTCONN).
 *
 * Return: 0, -EINVAL (NULL, not a connection), -ENOTCONN (closed already),
 * -EAGAIN (retry after a poll).
 */
int pcm_tp_conn_close(struct pcm_tp_conn *c);

/**
 * pcm_tp_conn_set_policy() - swap @c's policy live (pcm_transport(3), "Policy swap").
 * @c: the connection.
 * @o: the new policy, LB policy and shell mode, and a non-zero no_progress_ms (paths and
 *     reliability are ignored).
 *
 * Return: 0, -ENOTCONN, -EINVAL, -ENAMETOOLONG, -ENOENT, -EOPNOTSUPP, -EPERM (daemon: a .so
 * path), or the error that killed @c; on failure @c keeps its policy.
 */
int pcm_tp_conn_set_policy(struct pcm_tp_conn *c, const struct pcm_tp_conn_opts *o);

/**
 * pcm_tp_conn_query() - the policy, LB policy and shell mode @c runs now.
 * @c: the connection.
 * @out: filled in.
 *
 * Return: 0, -EINVAL (NULL), -ENOTCONN (closed).
 */
int pcm_tp_conn_query(struct pcm_tp_conn *c, struct pcm_tp_conn_info *out);

/**
 * pcm_tp_conn_peer() - the uid, gid and pid of the process at @c's other end: in daemon
 * mode pcmd's record of the client that dialed or listened (its socket's credentials, which
 * a peer cannot forge); in process with null or softnic the process's own (both ends are
 * in it).
 * @c: the connection.
 * @out: filled in.
 *
 * Return: 0, -EINVAL (NULL), -ENOTCONN (daemon: the other end left before pcmd paired
 * them), -EOPNOTSUPP (in process with verbs: the peer is another machine's).
 */
int pcm_tp_conn_peer(struct pcm_tp_conn *c, struct pcm_tp_peer *out);

/**
 * pcm_tp_mr_reg() - register [@addr, @addr + @len) for sends and receives.
 *
 * Return: 0, -EINVAL (NULL, empty, wrapping; daemon: outside the shared region), -ENOSPC,
 * -ENOMEM.
 */
int pcm_tp_mr_reg(struct pcm_tp_endpoint *ep, void *addr, size_t len, struct pcm_tp_mr **out);

/**
 * pcm_tp_mr_dereg() - deregister @mr; its handle is refused from then on.
 *
 * Return: 0, -EINVAL (NULL, not a region, deregistered already), -EBUSY (a posted operation
 * that has not completed uses it: nothing changed).
 */
int pcm_tp_mr_dereg(struct pcm_tp_mr *mr);

/**
 * pcm_tp_mem_alloc() - @len bytes of registered memory.
 *
 * Return: the memory, or NULL (pcm_tp_last_error() says why).
 */
void *pcm_tp_mem_alloc(struct pcm_tp_endpoint *ep, size_t len);

/*
 * pcm_tp_mem_free() - free pcm_tp_mem_alloc()'s memory @p; NULL is a no-op, and so is a @p
 * that is not such memory (pcm_tp_last_error() says so). Memory a posted operation still uses
 * is freed when the last of them completes.
 */
void pcm_tp_mem_free(struct pcm_tp_endpoint *ep, void *p);

/**
 * pcm_tp_send() - send message [@buf, @buf + @len) on @c; completes once
 * with PCM_TP_OP_SEND when the peer has it all.
 * @mr: the region holding @buf; NULL: the endpoint finds it.
 *
 * Return: 0, -EINVAL (NULL, not a connection, a buffer outside the region or wrapping, a
 * region not registered), -ENOTCONN (closed), -EMSGSIZE (longer than max_message_bytes),
 * -EAGAIN (a limit of pcm_tp_endpoint_limits(): poll, retry), -ESHUTDOWN (daemon: pcmd is
 * gone), or the error that killed the connection (-ECONNRESET, -ETIMEDOUT, -EIO).
 */
int pcm_tp_send(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, const void *buf, size_t len,
		uint64_t cookie);

/**
 * pcm_tp_recv() - post a receive of up to @cap bytes at @buf on @c; it takes
 * the peer's next message and completes once with PCM_TP_OP_RECV.
 *
 * Return: as pcm_tp_send() (a capacity above max_message_bytes is capped, not refused).
 */
int pcm_tp_recv(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, void *buf, size_t cap,
		uint64_t cookie);

/**
 * pcm_tp_poll() - take up to @max completions (one thread at a time);
 * (ep, NULL, 0) only makes progress.
 *
 * Return: how many, -EINVAL, or -ESHUTDOWN (daemon: pcmd is gone and every completion,
 * those it wrote and the -ESHUTDOWN of everything else outstanding, has been taken).
 */
int pcm_tp_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max);

/**
 * pcm_tp_wait() - wait until a completion is ready.
 * @timeout_ms: at most this long; negative: no limit.
 *
 * Return: 0 (ready), -ETIMEDOUT, -ESHUTDOWN (daemon: pcmd is gone and every completion
 * has been taken), -EINVAL.
 */
int pcm_tp_wait(struct pcm_tp_endpoint *ep, int timeout_ms);

/**
 * pcm_tp_fd() - an fd for an event loop, armed by each call: readable once
 * a completion may be ready.
 *
 * Return: the fd, -EOPNOTSUPP (inline progress), -EINVAL.
 */
int pcm_tp_fd(struct pcm_tp_endpoint *ep);

/* pcm_tp_strerror() - what @err (0 or -errno) means here (pcm_transport(3), "Errors"). */
const char *pcm_tp_strerror(int err);

/* The text of this thread's last failing call (naming the argument, object, device, peer,
 * policy or key involved), or "" if none failed yet. */
const char *pcm_tp_last_error(void);

#endif /* PCM_TRANSPORT_H */
