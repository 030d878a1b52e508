// SPDX-License-Identifier: MIT
/*
 * post.c - posting a send or a receive: the one check every post passes,
 * the operation queued on its direction's queue (op.c), then the sender
 * (send.c) starts it or the receiver (recv.c) advertises it if it can, and
 * the connection acts on what that changed.
 *
 * The check, in order: the connection exists; it takes new operations
 * (OPEN; DEAD returns its error, CLOSING or closed -ESHUTDOWN); the peer's
 * FIN has not ruled the operation out (it bounds the receives it will post
 * for our sends, and the sends it will make to our receives: -ECONNRESET
 * beyond those); there is a buffer, not wrapping the address space
 * (-EINVAL, either direction); and a send is at most max_msg_bytes long
 * (-EMSGSIZE), while a receive may be longer than any message (its
 * capacity).
 */
#include <errno.h>

#include "xp_conn.h"
#include "xp_core_state.h"
#include "xp_op.h"
#include "xp_recv.h"
#include "xp_send.h"

/* The rule in the header comment. Return: 0 or what the post returns. */
static int check_post(const struct xp_core *core, const struct xp_conn *c, uint8_t kind,
		      const struct xp_buf *buf)
{
	bool send = kind == XP_OP_SEND;
	uint32_t posted = send ? c->send_posted : c->recv_posted;
	uint32_t peer_bound = send ? c->peer_recvs_total : c->peer_sends_total;

	switch (c->state) {
	case XP_CS_OPEN:
		break;
	case XP_CS_DEAD:
		return c->err;
	default: /* closing or closed */
		return -ESHUTDOWN;
	}
	if (c->peer_fin && seq_diff(posted, peer_bound) >= 0)
		return -ECONNRESET; /* the peer will never post the receive, or send it */
	if (!buf || buf->addr + buf->len < buf->addr)
		return -EINVAL;
	if (send && buf->len > core->max_msg_bytes)
		return -EMSGSIZE;
	return 0;
}

static int post(struct xp_core *core, uint32_t id, uint8_t kind, const struct xp_buf *buf,
		uint64_t cookie, uint64_t now_ns)
{
	struct xp_conn *c = xp_conn_get(core, id);
	bool send = kind == XP_OP_SEND;
	unsigned news;
	int rc;

	if (!c)
		return -ENOENT;
	rc = check_post(core, c, kind, buf);
	if (rc < 0)
		return rc;
	rc = xp_op_post(core, c, send ? &c->sq : &c->rq, kind, buf, cookie,
			send ? c->send_posted : c->recv_posted);
	if (rc < 0)
		return rc;
	news = send ? xp_send_queued(core, c, buf->len, now_ns) : xp_recv_queued(core, c, now_ns);
	xp_conn_act(core, c, news, now_ns);
	xp_conn_rearm(core, c, now_ns);
	return 0;
}

int xp_post_send(struct xp_core *core, uint32_t id, const struct xp_buf *buf, uint64_t cookie,
		 uint64_t now_ns)
{
	return post(core, id, XP_OP_SEND, buf, cookie, now_ns);
}

int xp_post_recv(struct xp_core *core, uint32_t id, const struct xp_buf *buf, uint64_t cookie,
		 uint64_t now_ns)
{
	return post(core, id, XP_OP_RECV, buf, cookie, now_ns);
}
