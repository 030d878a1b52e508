/* SPDX-License-Identifier: MIT */
/*
 * transport.h - libpcmtransport: messages over pcm's RDMA transport, in process or through pcmd.
 *
 * An endpoint runs on one datapath ("softnic", "null", "verbs") either inside the process
 * (PCM_TP_BACKEND_INPROC: the library runs its own engines) or through a running pcmd
 * (PCM_TP_BACKEND_DAEMON: control over pcmd's Unix socket, data through a shared-memory region
 * that pcmd maps and, with verbs, registers as the MR). PCM_TP_BACKEND_AUTO picks the daemon when
 * $PCM_TRANSPORT=daemon and in-process otherwise.
 *
 * Messages: a send of N bytes on a connection is delivered whole into the peer's next posted
 * receive (FIFO matching). Completions report each send and receive exactly once, with status 0
 * or a negative errno. Buffers must lie in memory registered with pcm_tp_mr_reg() (in daemon
 * mode, inside pcm_tp_mem_alloc()'d memory, which is the shared region).
 *
 * Progress (in-process): with PCM_TP_PROGRESS_THREAD each engine has its own thread, which
 * busy-polls briefly after its last work and then sleeps; with PCM_TP_PROGRESS_INLINE there is
 * no engine thread and pcm_tp_poll()/pcm_tp_wait() run the engines on the caller's thread (the
 * lowest latency on a machine with few cores). softnic always runs inline, in virtual time:
 * every softnic endpoint of a process shares one emulated fabric, which any endpoint's
 * pcm_tp_poll() or pcm_tp_wait() advances.
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
	const char *policy;      /* CC package of connections whose options name none; NULL: "swift" */
	uint32_t flags;          /* PCM_TP_FLAG_* */
};

struct pcm_tp_conn_opts {
	const char *policy;      /* built-in package name or .so path; NULL: the default; "none": none */
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

enum pcm_tp_op { PCM_TP_OP_SEND = 1, PCM_TP_OP_RECV = 2, PCM_TP_OP_ACCEPT = 3, PCM_TP_OP_CONNECT = 4 };

struct pcm_tp_completion {
	enum pcm_tp_op op;
	int status;              /* 0 or -errno (see pcm_transport(3)) */
	struct pcm_tp_conn *conn;
	uint64_t cookie;         /* as posted */
	uint64_t bytes;          /* bytes sent or received */
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
 * and free everything.
 * @ep: the endpoint; NULL is a no-op.
 */
void pcm_tp_endpoint_close(struct pcm_tp_endpoint *ep);

/**
 * pcm_tp_listen() - take dials at @addr from now on (one per pcm_tp_accept()).
 * @ep: the endpoint.
 * @addr: datapath-specific: "host:port" for verbs' TCP bootstrap, a name for
 *        softnic/null endpoints in one process or on one pcmd fabric.
 *
 * Return: 0, -EINVAL (no address), -EADDRINUSE.
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
 * -EINVAL, -ENOENT (no such policy), -EOPNOTSUPP, -ENOSPC, -ENOMEM.
 */
int pcm_tp_connect(struct pcm_tp_endpoint *ep, const char *addr, const struct pcm_tp_conn_opts *o,
		   uint64_t cookie);

/**
 * pcm_tp_accept() - take the next dial; completes once with PCM_TP_OP_ACCEPT.
 * @ep: a listening endpoint.
 * @cookie: the completion's.
 *
 * Return: 0, -EINVAL (not listening), -ENOMEM.
 */
int pcm_tp_accept(struct pcm_tp_endpoint *ep, uint64_t cookie);

/**
 * pcm_tp_conn_close() - abort @c: its pending work completes with -ECONNABORTED,
 * the peer's with -ECONNRESET. @c stays valid until the pcm_tp_poll() call
 * after the one that returned its last completion.
 *
 * Return: 0, -ENOTCONN (closed already), -EAGAIN (retry after a poll).
 */
int pcm_tp_conn_close(struct pcm_tp_conn *c);

/**
 * pcm_tp_conn_set_policy() - swap @c's policy live (pcm_transport(3), "Policy swap").
 * @c: the connection.
 * @o: the new policy, LB policy and shell mode, and a non-zero no_progress_ms (paths and
 *     reliability are ignored).
 *
 * Return: 0, -ENOTCONN, -EINVAL, -ENOENT, -EOPNOTSUPP; on failure @c keeps its policy.
 */
int pcm_tp_conn_set_policy(struct pcm_tp_conn *c, const struct pcm_tp_conn_opts *o);

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
 * Return: 0, -EINVAL (empty; daemon: outside the shared region), -ENOSPC, -ENOMEM.
 */
int pcm_tp_mr_reg(struct pcm_tp_endpoint *ep, void *addr, size_t len, struct pcm_tp_mr **out);

/**
 * pcm_tp_mr_dereg() - deregister @mr (no post may use it any more).
 *
 * Return: 0, -EINVAL (NULL, or pcm_tp_mem_alloc()'s memory).
 */
int pcm_tp_mr_dereg(struct pcm_tp_mr *mr);

/**
 * pcm_tp_mem_alloc() - @len bytes of registered memory.
 *
 * Return: the memory, or NULL (pcm_tp_last_error() says why).
 */
void *pcm_tp_mem_alloc(struct pcm_tp_endpoint *ep, size_t len);

/* pcm_tp_mem_free() - free pcm_tp_mem_alloc()'s memory @p; NULL is a no-op. */
void pcm_tp_mem_free(struct pcm_tp_endpoint *ep, void *p);

/**
 * pcm_tp_send() - send message [@buf, @buf + @len) on @c; completes once
 * with PCM_TP_OP_SEND when the peer has it all.
 * @mr: the region holding @buf; NULL: the endpoint finds it.
 *
 * Return: 0, -ENOTCONN, -EINVAL (outside the region), -EAGAIN (poll, retry).
 */
int pcm_tp_send(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, const void *buf, size_t len,
		uint64_t cookie);

/**
 * pcm_tp_recv() - post a receive of up to @cap bytes at @buf on @c; it takes
 * the peer's next message and completes once with PCM_TP_OP_RECV.
 *
 * Return: as pcm_tp_send().
 */
int pcm_tp_recv(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, void *buf, size_t cap,
		uint64_t cookie);

/**
 * pcm_tp_poll() - take up to @max completions (one thread at a time);
 * (ep, NULL, 0) only makes progress.
 *
 * Return: how many, or -EINVAL.
 */
int pcm_tp_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max);

/**
 * pcm_tp_wait() - wait until a completion is ready.
 * @timeout_ms: at most this long; negative: no limit.
 *
 * Return: 0 (ready), -ETIMEDOUT, -ESHUTDOWN (daemon gone), -EINVAL.
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

/* The text of the last failure on this thread (naming the device, peer, policy or key involved),
 * or "" if none. */
const char *pcm_tp_last_error(void);

#endif /* PCM_TRANSPORT_H */
