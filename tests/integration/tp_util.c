// SPDX-License-Identifier: MIT
/*
 * tp_util.c - seeded message streams over libpcmtransport.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tp_util.h"

int tp_open(const char *sock, size_t region_bytes, struct pcm_tp_endpoint **out)
{
	struct pcm_tp_config cfg = {.backend = PCM_TP_BACKEND_DAEMON};

	cfg.daemon_socket = sock;
	cfg.daemon_region_bytes = region_bytes;
	return pcm_tp_endpoint_open(&cfg, out);
}

int tp_wait_op(struct pcm_tp_endpoint *ep, enum pcm_tp_op op, struct pcm_tp_completion *out,
	       int timeout_ms)
{
	uint64_t deadline = harness_now_ms() + (uint64_t)timeout_ms;

	while (harness_now_ms() < deadline) {
		struct pcm_tp_completion c;

		if (pcm_tp_poll(ep, &c, 1) == 1) {
			if (c.op == op) {
				*out = c;
				return 0;
			}
			if (c.op == PCM_TP_OP_CLOSE)
				continue; /* a closed connection's last word: expected, not waited for */
			fprintf(stderr, "tp_wait_op: unexpected completion op %d status %d\n", c.op,
				c.status);
			continue;
		}
		pcm_tp_wait(ep, 100);
	}
	return -ETIMEDOUT;
}

int tp_pair(struct pcm_tp_endpoint *a, struct pcm_tp_endpoint *b, const char *addr,
	    const struct pcm_tp_conn_opts *opts, struct pcm_tp_conn **ca, struct pcm_tp_conn **cb)
{
	struct pcm_tp_completion c;
	int rc = pcm_tp_listen(b, addr);

	if (rc == 0)
		rc = pcm_tp_accept(b, 1);
	if (rc == 0)
		rc = pcm_tp_connect(a, addr, opts, 2);
	if (rc == 0)
		rc = tp_wait_op(a, PCM_TP_OP_CONNECT, &c, 5000);
	if (rc == 0 && (rc = c.status) == 0)
		*ca = c.conn;
	if (rc == 0)
		rc = tp_wait_op(b, PCM_TP_OP_ACCEPT, &c, 5000);
	if (rc == 0 && (rc = c.status) == 0)
		*cb = c.conn;
	return rc;
}

int tp_exchange(struct pcm_tp_endpoint *a, struct pcm_tp_conn *ca, struct pcm_tp_endpoint *b,
		struct pcm_tp_conn *cb, size_t len, uint64_t seed)
{
	uint8_t *x = pcm_tp_mem_alloc(a, len), *y = pcm_tp_mem_alloc(b, len);
	struct pcm_tp_completion c;
	size_t bad;
	int rc = x && y ? 0 : -ENOMEM;

	if (rc == 0) {
		harness_fill(x, len, seed);
		memset(y, 0xee, len);
		rc = pcm_tp_recv(cb, NULL, y, len, 3);
	}
	if (rc == 0)
		rc = pcm_tp_send(ca, NULL, x, len, 4);
	if (rc == 0)
		rc = tp_wait_op(b, PCM_TP_OP_RECV, &c, 5000);
	if (rc == 0)
		rc = c.status ? c.status : c.bytes != len ? -EIO : 0;
	if (rc == 0 && harness_check(y, len, seed, &bad) < 0)
		rc = -EIO;
	if (rc == 0)
		rc = tp_wait_op(a, PCM_TP_OP_SEND, &c, 5000);
	pcm_tp_mem_free(a, x);
	pcm_tp_mem_free(b, y);
	return rc;
}

size_t tp_msg_size(uint64_t seed, uint32_t k, size_t max_bytes)
{
	static const size_t edges[] = {0, 1, 7, 4096, 65535, 65536, 65537};
	uint64_t x = seed * 6364136223846793005ull + k * 1442695040888963407ull + 1;

	if (k < sizeof(edges) / sizeof(edges[0]) && edges[k] <= max_bytes)
		return edges[k];
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (size_t)(x % (max_bytes + 1));
}

static uint64_t msg_seed(uint64_t seed, uint32_t k)
{
	return seed * 1000003ull + k;
}

struct slot {
	void *buf;
	size_t len;
	uint32_t k;
	int busy;
};

static int fail(struct tp_stream *s, const char *fmt, int a, int b)
{
	snprintf(s->why, sizeof(s->why), fmt, a, b);
	return -EIO;
}

/* Wait for one completion of our data ops and return its slot. */
static int next_done(struct pcm_tp_endpoint *ep, struct slot *slots, struct tp_stream *s,
		     struct pcm_tp_completion *c)
{
	uint64_t deadline = harness_now_ms() + 30000;

	while (harness_now_ms() < deadline) {
		if (pcm_tp_poll(ep, c, 1) == 1) {
			if (c->op != PCM_TP_OP_SEND && c->op != PCM_TP_OP_RECV)
				return fail(s, "unexpected completion op %d (status %d)", c->op,
					    c->status);
			if (c->cookie >= s->window || !slots[c->cookie].busy)
				return fail(s, "completion with cookie %d that is not outstanding",
					    (int)c->cookie, 0);
			return (int)c->cookie;
		}
		pcm_tp_wait(ep, 100);
	}
	return fail(s, "no completion within 30 s (%d of %d done)", (int)s->done, (int)s->n_msgs);
}

static int post(struct pcm_tp_conn *conn, struct slot *sl, int send_side, uint64_t cookie)
{
	int rc;

	do {
		rc = send_side ? pcm_tp_send(conn, NULL, sl->buf, sl->len, cookie)
			       : pcm_tp_recv(conn, NULL, sl->buf, sl->len, cookie);
	} while (rc == -EAGAIN);
	return rc;
}

/* Both sides: keep @window messages posted, check each completion. */
int tp_stream_on(struct pcm_tp_endpoint *ep, struct pcm_tp_conn *conn, int send_side,
		 struct tp_stream *s)
{
	struct slot *slots = calloc(s->window, sizeof(*slots));
	uint32_t next = s->first, end = s->first + s->n_msgs;
	int rc = 0;

	if (!slots)
		return -ENOMEM;
	s->done = 0;
	while (rc == 0 && s->done < s->n_msgs) {
		for (uint32_t i = 0; i < s->window && next < end; i++) {
			struct slot *sl = &slots[i];
			size_t n = tp_msg_size(s->seed, next, s->max_bytes);

			if (sl->busy)
				continue;
			sl->k = next++;
			sl->len = n;
			sl->buf = pcm_tp_mem_alloc(ep, n ? n : 1);
			if (!sl->buf) {
				rc = fail(s, "region full at message %d", (int)sl->k, 0);
				break;
			}
			if (send_side)
				harness_fill(sl->buf, n, msg_seed(s->seed, sl->k));
			else
				memset(sl->buf, 0xee, n);
			sl->busy = 1;
			rc = post(conn, sl, send_side, i);
			if (rc < 0) {
				rc = fail(s, "posting message %d: %d", (int)sl->k, rc);
				break;
			}
		}
		if (rc < 0)
			break;
		struct pcm_tp_completion c;
		int i = next_done(ep, slots, s, &c);
		size_t bad = 0;

		if (i < 0) {
			rc = i;
			break;
		}
		if (c.status != 0) {
			s->first_error = c.status;
			rc = fail(s, "message %d completed with status %d", (int)slots[i].k,
				  c.status);
			break;
		}
		if (c.bytes != slots[i].len) {
			rc = fail(s, "message %d: %d bytes", (int)slots[i].k, (int)c.bytes);
			break;
		}
		if (!send_side && harness_check(slots[i].buf, slots[i].len,
						msg_seed(s->seed, slots[i].k), &bad) < 0) {
			rc = fail(s, "message %d differs at byte %d", (int)slots[i].k, (int)bad);
			break;
		}
		s->bytes += c.bytes;
		s->done++;
		pcm_tp_mem_free(ep, slots[i].buf);
		slots[i].busy = 0;
	}
	free(slots);
	return rc;
}

int tp_send_stream(struct pcm_tp_endpoint *ep, const char *addr, struct tp_stream *s)
{
	struct pcm_tp_completion c;
	int rc = pcm_tp_connect(ep, addr, NULL, 77);

	if (rc < 0)
		return fail(s, "connect: %d", rc, 0);
	if (tp_wait_op(ep, PCM_TP_OP_CONNECT, &c, 10000) < 0 || c.status != 0 || !c.conn)
		return fail(s, "connect completion: status %d", c.status, 0);
	rc = tp_stream_on(ep, c.conn, 1, s);
	pcm_tp_conn_close(c.conn);
	return rc;
}

int tp_recv_stream(struct pcm_tp_endpoint *ep, const char *addr, int ready, struct tp_stream *s)
{
	struct pcm_tp_completion c;
	char one = 1;
	int rc;

	if (addr && (rc = pcm_tp_listen(ep, addr)) < 0)
		return fail(s, "listen: %d", rc, 0);
	rc = pcm_tp_accept(ep, 5);
	if (rc < 0)
		return fail(s, "accept: %d", rc, 0);
	if (ready >= 0 && write(ready, &one, 1) != 1)
		return fail(s, "ready pipe", 0, 0);
	if (tp_wait_op(ep, PCM_TP_OP_ACCEPT, &c, 20000) < 0 || c.status != 0 || !c.conn)
		return fail(s, "accept completion: status %d", c.status, 0);
	rc = tp_stream_on(ep, c.conn, 0, s);
	pcm_tp_conn_close(c.conn);
	return rc;
}
