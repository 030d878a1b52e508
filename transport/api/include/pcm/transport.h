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
};

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

int pcm_tp_endpoint_open(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out);
void pcm_tp_endpoint_close(struct pcm_tp_endpoint *ep);

/* Addresses are datapath-specific strings: "host:port" for verbs' TCP bootstrap, a name for
 * softnic/null endpoints in one process or on one pcmd fabric. */
int pcm_tp_listen(struct pcm_tp_endpoint *ep, const char *addr);
int pcm_tp_connect(struct pcm_tp_endpoint *ep, const char *addr, const struct pcm_tp_conn_opts *o,
		   uint64_t cookie);           /* completes with PCM_TP_OP_CONNECT */
int pcm_tp_accept(struct pcm_tp_endpoint *ep, uint64_t cookie); /* completes PCM_TP_OP_ACCEPT */
int pcm_tp_conn_close(struct pcm_tp_conn *c); /* pending work completes with -ECONNABORTED */
int pcm_tp_conn_set_policy(struct pcm_tp_conn *c, const struct pcm_tp_conn_opts *o); /* live swap */

int pcm_tp_mr_reg(struct pcm_tp_endpoint *ep, void *addr, size_t len, struct pcm_tp_mr **out);
int pcm_tp_mr_dereg(struct pcm_tp_mr *mr);
void *pcm_tp_mem_alloc(struct pcm_tp_endpoint *ep, size_t len); /* registered memory */
void pcm_tp_mem_free(struct pcm_tp_endpoint *ep, void *p);

int pcm_tp_send(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, const void *buf, size_t len,
		uint64_t cookie);
int pcm_tp_recv(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, void *buf, size_t cap,
		uint64_t cookie);

int pcm_tp_poll(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max);
int pcm_tp_wait(struct pcm_tp_endpoint *ep, int timeout_ms); /* 0: ready, -ETIMEDOUT */
int pcm_tp_fd(struct pcm_tp_endpoint *ep); /* readable when completions may be ready */

const char *pcm_tp_strerror(int err);

/* The text of the last failure on this thread (naming the device, peer, policy or key involved),
 * or "" if none. */
const char *pcm_tp_last_error(void);

#endif /* PCM_TRANSPORT_H */
