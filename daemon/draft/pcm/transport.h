/* SPDX-License-Identifier: MIT */
/*
 * transport.h - libpcmtransport: messages over pcm's RDMA transport, in process or through pcmd.
 *
 * (This copy lives in daemon/draft/ only so that the daemon backend,
 * transport/api/daemon_client.c, and its tests build on the daemon branch
 * before the transport branch's transport/api/include/pcm/transport.h lands;
 * it is the coordinator's draft plus one call, pcm_tp_last_error(). Delete
 * this directory when that header is merged.)
 *
 * (Coordinator's draft of the public contract. The implementer may refine names and add calls,
 * but keeps the shape: one API, two backends chosen at endpoint open, -errno returns, no
 * callbacks, completion polling.)
 *
 * An endpoint runs on one datapath ("softnic", "null", "verbs") either inside the process
 * (PCM_TP_BACKEND_INPROC: the library starts its own engine threads) or through a running pcmd
 * (PCM_TP_BACKEND_DAEMON: control over pcmd's Unix socket, data through a shared-memory region
 * that pcmd maps and, with verbs, registers as the MR). PCM_TP_BACKEND_AUTO picks the daemon when
 * $PCM_TRANSPORT=daemon (or when the config says so) and in-process otherwise.
 *
 * Messages: a send of N bytes on a connection is delivered whole into the peer's next posted
 * receive (FIFO matching). Completions report each send and receive exactly once, with status 0
 * or a negative errno. Buffers must lie in memory registered with pcm_tp_mr_reg() (in daemon
 * mode, inside pcm_tp_mem_alloc()'d memory, which is the shared region).
 *
 * Thread safety: an endpoint may be used from several threads; each call is thread-safe; the
 * completions of one endpoint are polled by one thread at a time.
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

struct pcm_tp_config {
	enum pcm_tp_backend backend;
	const char *datapath;    /* "softnic", "null", "verbs" (in-process); ignored for daemon */
	const char *device;      /* verbs: device name (NULL: first), port, GID index */
	uint8_t port;
	int gid_index;
	uint32_t engines;        /* engine threads (in-process); 0: one */
	uint32_t chunk_bytes;    /* 0: 64 KiB */
	const char *daemon_socket; /* NULL: /run/pcmd/pcmd.sock */
	size_t daemon_region_bytes; /* shared region to ask pcmd for */
};

struct pcm_tp_conn_opts {
	const char *policy;      /* built-in package name or .so path; NULL: the default/rules */
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

/* Addition to the draft: the text of the last failure on this thread (pcmd's own message for
 * a refused request, e.g. which config key refused this uid), or "" if none. */
const char *pcm_tp_last_error(void);

#endif /* PCM_TRANSPORT_H */
