/* SPDX-License-Identifier: MIT */
/*
 * backend.h - the seam between libpcmtransport's frontend (api.c and
 * tp_front.c: the public calls, their checks, the application's handles,
 * posted operations and completions) and its backends: in process (inproc.c:
 * the library runs its own engines) and daemon (daemon_client.c: through
 * pcmd).
 *
 * What the frontend does once for both backends: every argument check, the
 * limits (a post beyond them is refused with -EAGAIN at once, so a post the
 * backend takes is never refused later), the regions a buffer lies in and
 * whether one is busy, the handles the application holds, the cookies (a
 * backend sees the slot of each post, never the application's cookie), and
 * the order of a connection's end: its operations' completions, then its
 * CLOSE, then the poll after which it is freed.
 *
 * What a backend does: move the bytes, and report each post's end as a
 * struct tp_comp naming its slot. Its objects embed the frontend's parts
 * below as their first member. It sets the thread's last error text with
 * pcm_tp_set_error() (tp_error.h, a leaf below all of these).
 *
 * To plug a backend in: fill a struct pcm_tp_backend_ops (every op), embed
 * the three bases, and list it in api.c's backend table.
 */
#ifndef PCM_TP_BACKEND_H
#define PCM_TP_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>

#include "pcm/transport.h"

struct tp_front; /* tp_front.h: the frontend's state of an endpoint */

/* A region: registered memory (pcm_tp_mr_reg()) or allocated (pcm_tp_mem_alloc()). */
struct tp_region {
	struct pcm_tp_endpoint *ep;
	uintptr_t handle;   /* the application's name for it; 0: pcm_tp_mem_alloc()'s */
	uint8_t *addr;
	size_t len;
	uint32_t busy;      /* posted operations using it, not yet completed */
	bool free_pending;  /* pcm_tp_mem_free()d while busy: freed when the last completes */
	struct tp_region *next;
};

/* A connection. */
struct tp_conn {
	struct pcm_tp_endpoint *ep;
	uintptr_t handle;          /* the application's name for it, once handed out */
	uint32_t posted[2];        /* sends, receives posted and not yet completed */
	int failed;                /* 0, or the error a completion said killed it */
	bool closed;               /* pcm_tp_conn_close() took it */
	_Atomic bool released;     /* the backend is done with it: its CLOSE may be reported */
	struct tp_conn *next;      /* the frontend's list of closing, then freed, connections */
};

/* An endpoint: the backend's ops, the regions (the frontend's list, read by both). */
struct pcm_tp_endpoint {
	const struct pcm_tp_backend_ops *ops;
	struct tp_front *front;
	struct tp_region *regions;
};

/*
 * A completion as a backend reports it. SEND, RECV, CONNECT, ACCEPT name the
 * post's @slot; CONNECT and ACCEPT that succeeded carry the connection. A
 * CLOSE says the backend is done with @conn (the frontend reports it to the
 * application once its operations all completed).
 */
struct tp_comp {
	enum pcm_tp_op op;
	int status;
	struct tp_conn *conn;
	uint64_t slot;
	uint64_t bytes;
};

struct pcm_tp_backend_ops {
	const char *name;
	int (*endpoint_open)(const struct pcm_tp_config *cfg, struct pcm_tp_endpoint **out);
	/* Free everything, every region of ep->regions and every connection not released. */
	void (*endpoint_close)(struct pcm_tp_endpoint *ep);
	void (*limits)(struct pcm_tp_endpoint *ep, struct pcm_tp_limits *out);
	/* @flags: pcm_tp_listen_flags()'s, checked. */
	int (*listen)(struct pcm_tp_endpoint *ep, const char *addr, uint32_t flags);
	/* The new connection (for the CONNECT completion) in *out. */
	int (*connect)(struct pcm_tp_endpoint *ep, const char *addr,
		       const struct pcm_tp_conn_opts *o, uint64_t slot, struct tp_conn **out);
	int (*accept)(struct pcm_tp_endpoint *ep, uint64_t slot);
	/* Abort @c; its operations complete with -ECONNABORTED, then it is released. */
	int (*conn_close)(struct tp_conn *c);
	/* Free a released connection, or one whose connect failed. */
	void (*conn_free)(struct tp_conn *c);
	int (*conn_set_policy)(struct tp_conn *c, const struct pcm_tp_conn_opts *o);
	int (*conn_query)(struct tp_conn *c, struct pcm_tp_conn_info *out);
	/* Who is at @c's other end (pcm_tp_conn_peer()). */
	int (*conn_peer)(struct tp_conn *c, struct pcm_tp_peer *out);
	/* Register [addr, addr + len) (checked non-empty and not wrapping). */
	int (*region_add)(struct pcm_tp_endpoint *ep, void *addr, size_t len,
			  struct tp_region **out);
	/* @len bytes of new registered memory. */
	int (*region_alloc)(struct pcm_tp_endpoint *ep, size_t len, struct tp_region **out);
	/* Deregister @r and free it (and its memory, if allocated); nothing uses it. */
	void (*region_remove)(struct tp_region *r);
	/* SEND or RECV of [buf, buf + len) inside @r (checked), completing with @slot. */
	int (*post)(struct tp_conn *c, enum pcm_tp_op op, struct tp_region *r, const void *buf,
		    size_t len, uint64_t slot);
	/* Up to @max completions; 0 only makes progress. -ESHUTDOWN: gone, nothing more to come. */
	int (*poll)(struct pcm_tp_endpoint *ep, struct tp_comp *out, int max);
	/* 0 (a completion is ready), -ETIMEDOUT, -ESHUTDOWN (gone, nothing more to come). */
	int (*wait)(struct pcm_tp_endpoint *ep, int timeout_ms);
	int (*fd)(struct pcm_tp_endpoint *ep);
};

extern const struct pcm_tp_backend_ops pcm_tp_inproc_ops;
extern const struct pcm_tp_backend_ops pcm_tp_daemon_ops;

#endif /* PCM_TP_BACKEND_H */
