/* SPDX-License-Identifier: MIT */
/*
 * backend.h - the seam between libpcmtransport's public calls (api.c) and
 * its backends: in-process (inproc.c: the library runs its own engines) and
 * daemon (daemon_client.c: through pcmd).
 *
 * Every public object starts with the frontend's part: an endpoint with its
 * backend's ops, a connection and a region with their endpoint. A backend
 * embeds these as the first member of its own structs, and api.c calls
 * through ep->ops: the ops tables below are the only names of a backend that
 * another file uses. A backend sets the thread's last error text with
 * pcm_tp_set_error() (tp_error.h, a leaf below api.c and the backends).
 *
 * To plug a backend in: fill a struct pcm_tp_backend_ops (every op), embed
 * the three bases, and list it in api.c's backend table.
 */
#ifndef PCM_TP_BACKEND_H
#define PCM_TP_BACKEND_H

#include "pcm/transport.h"

struct pcm_tp_backend_ops {
	const char *name;
	int (*endpoint_open)(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out);
	void (*endpoint_close)(struct pcm_tp_endpoint *ep);
	int (*listen)(struct pcm_tp_endpoint *ep, const char *addr);
	int (*connect)(struct pcm_tp_endpoint *ep, const char *addr,
		       const struct pcm_tp_conn_opts *o, uint64_t cookie);
	int (*accept)(struct pcm_tp_endpoint *ep, uint64_t cookie);
	int (*conn_close)(struct pcm_tp_conn *c);
	int (*conn_set_policy)(struct pcm_tp_conn *c, const struct pcm_tp_conn_opts *o);
	int (*mr_reg)(struct pcm_tp_endpoint *ep, void *addr, size_t len, struct pcm_tp_mr **out);
	int (*mr_dereg)(struct pcm_tp_mr *mr);
	void *(*mem_alloc)(struct pcm_tp_endpoint *ep, size_t len);
	void (*mem_free)(struct pcm_tp_endpoint *ep, void *p);
	int (*send)(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, const void *buf, size_t len,
		    uint64_t cookie);
	int (*recv)(struct pcm_tp_conn *c, struct pcm_tp_mr *mr, void *buf, size_t cap,
		    uint64_t cookie);
	int (*poll)(struct pcm_tp_endpoint *ep, struct pcm_tp_completion *out, int max);
	int (*wait)(struct pcm_tp_endpoint *ep, int timeout_ms);
	int (*fd)(struct pcm_tp_endpoint *ep);
};

struct pcm_tp_endpoint {
	const struct pcm_tp_backend_ops *ops;
};

struct pcm_tp_conn {
	struct pcm_tp_endpoint *ep;
};

struct pcm_tp_mr {
	struct pcm_tp_endpoint *ep;
};

extern const struct pcm_tp_backend_ops pcm_tp_inproc_ops;
extern const struct pcm_tp_backend_ops pcm_tp_daemon_ops;

#endif /* PCM_TP_BACKEND_H */
