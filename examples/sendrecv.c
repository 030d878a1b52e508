// SPDX-License-Identifier: MIT
/*
 * sendrecv.c - a sender and a receiver over libpcmtransport, each with its
 * own endpoint and thread: the receiver listens and accepts, the sender
 * connects and sends --messages messages of seeded sizes (up to --max-size
 * bytes) and contents; the receiver checks every byte of every message,
 * then both close. Exit status 0 only if everything arrived intact.
 *
 * Messages match receives in order (FIFO), but their completions may come in
 * any order (a short message on one path can finish before a long one on
 * others): each side reuses a buffer slot only once its own operation has
 * completed.
 *
 * The two sides are two threads of one process: the null and softnic
 * datapaths bootstrap through an in-process registry (the TCP bootstrap
 * that lets two processes meet is verbs' and not in this build yet).
 *
 * Usage: example_sendrecv [--datapath null] [--messages 200] [--max-size 1048576]
 *                         [--seed 1] [--policy swift] [--daemon]
 *
 * --daemon opens both endpoints through a running pcmd (daemon mode).
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcm/transport.h>

#define SLOTS 8 /* receives (and sends) outstanding at once */

struct opts {
	const char *datapath;
	const char *policy;
	enum pcm_tp_backend backend;
	uint32_t messages;
	uint32_t max_size;
	uint64_t seed;
};

/* Which of the SLOTS operations after the first incomplete one have completed. */
struct window {
	uint32_t done; /* every operation before this one completed */
	uint8_t fin[SLOTS];
};

/* Record the completion of operation @k. Return: 0, or -1 if @k is not outstanding. */
static int window_complete(struct window *w, uint64_t k)
{
	if (k < w->done || k >= (uint64_t)w->done + SLOTS || w->fin[k % SLOTS])
		return -1;
	w->fin[k % SLOTS] = 1;
	while (w->fin[w->done % SLOTS]) {
		w->fin[w->done % SLOTS] = 0;
		w->done++;
	}
	return 0;
}

struct side {
	const struct opts *o;
	struct pcm_tp_endpoint *ep;
	struct pcm_tp_conn *conn;
	uint8_t *buf;          /* SLOTS x max_size */
	uint64_t bytes;
	int failed;
};

/* splitmix64: the message sizes and bytes both sides derive from the seed */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static size_t size_of(const struct opts *o, uint32_t k)
{
	return (size_t)(mix(o->seed * 1000003u + k) % (o->max_size + 1u));
}

static uint8_t byte_of(const struct opts *o, uint32_t k, size_t i)
{
	return (uint8_t)(mix(o->seed ^ ((uint64_t)k << 32) ^ (i >> 3)) >> (8 * (i & 7)));
}

static int fail(struct side *s, const char *what, int rc)
{
	fprintf(stderr, "sendrecv: %s: %s (%s)\n", what, pcm_tp_strerror(rc), pcm_tp_last_error());
	s->failed = 1;
	return rc;
}

static int next(struct side *s, struct pcm_tp_completion *c)
{
	for (;;) {
		int rc = pcm_tp_poll(s->ep, c, 1);

		if (rc == 1)
			return c->status < 0 ? fail(s, "completion", c->status) : 0;
		if (rc < 0)
			return fail(s, "poll", rc);
		rc = pcm_tp_wait(s->ep, 10000);
		if (rc < 0)
			return fail(s, "wait (10 s without a completion)", rc);
	}
}

static int open_side(struct side *s)
{
	struct pcm_tp_config cfg = { .backend = s->o->backend,
				     .datapath = s->o->datapath, .policy = s->o->policy };
	int rc = pcm_tp_endpoint_open(&cfg, &s->ep);

	if (rc < 0)
		return fail(s, "endpoint_open", rc);
	/* receives take max_size + 1 bytes each (one more than any message: none is cut) */
	s->buf = pcm_tp_mem_alloc(s->ep, (size_t)SLOTS * (s->o->max_size + 1));
	return s->buf ? 0 : fail(s, "mem_alloc", -12);
}

static void *receiver(void *arg)
{
	struct side *s = arg;
	struct pcm_tp_completion c;
	struct window w = {0};
	uint32_t posted = 0, k;
	size_t cap = s->o->max_size + 1;

	if (pcm_tp_accept(s->ep, 0) < 0 || next(s, &c) < 0)
		return NULL;
	s->conn = c.conn;
	while (w.done < s->o->messages) {
		while (posted < s->o->messages && posted - w.done < SLOTS) {
			int rc = pcm_tp_recv(s->conn, NULL, s->buf + (posted % SLOTS) * cap, cap,
					     posted);

			if (rc < 0)
				return fail(s, "recv", rc), NULL;
			posted++;
		}
		if (next(s, &c) < 0)
			return NULL;
		if (c.op != PCM_TP_OP_RECV || c.cookie >= posted) {
			fprintf(stderr, "sendrecv: completion %d/%" PRIu64 " names no receive\n",
				(int)c.op, c.cookie);
			s->failed = 1;
			return NULL;
		}
		k = (uint32_t)c.cookie;
		if (c.bytes != size_of(s->o, k)) {
			fprintf(stderr, "sendrecv: message %u: %" PRIu64 " bytes, %zu sent\n", k,
				c.bytes, size_of(s->o, k));
			s->failed = 1;
			return NULL;
		}
		for (size_t i = 0; i < c.bytes; i++)
			if (s->buf[(k % SLOTS) * cap + i] != byte_of(s->o, k, i)) {
				fprintf(stderr, "sendrecv: message %u differs at byte %zu\n", k, i);
				s->failed = 1;
				return NULL;
			}
		if (window_complete(&w, k) < 0) {
			fprintf(stderr, "sendrecv: receive %u completed twice\n", k);
			s->failed = 1;
			return NULL;
		}
		s->bytes += c.bytes;
	}
	return NULL;
}

static void *sender(void *arg)
{
	struct side *s = arg;
	struct pcm_tp_completion c;
	struct window w = {0};
	uint32_t posted = 0;
	int rc;

	rc = pcm_tp_connect(s->ep, "sendrecv", NULL, 0);
	if (rc < 0 || next(s, &c) < 0)
		return rc < 0 ? (fail(s, "connect", rc), NULL) : NULL;
	s->conn = c.conn;
	while (w.done < s->o->messages) {
		while (posted < s->o->messages && posted - w.done < SLOTS) {
			uint8_t *p = s->buf + (size_t)(posted % SLOTS) * s->o->max_size;
			size_t n = size_of(s->o, posted);

			for (size_t i = 0; i < n; i++)
				p[i] = byte_of(s->o, posted, i);
			rc = pcm_tp_send(s->conn, NULL, p, n, posted);
			if (rc < 0)
				return fail(s, "send", rc), NULL;
			posted++;
		}
		if (next(s, &c) < 0)
			return NULL;
		if (c.op != PCM_TP_OP_SEND || c.cookie >= posted ||
		    window_complete(&w, c.cookie) < 0) {
			fprintf(stderr, "sendrecv: completion %d/%" PRIu64 " names no send\n",
				(int)c.op, c.cookie);
			s->failed = 1;
			return NULL;
		}
		s->bytes += c.bytes;
	}
	return NULL;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "datapath", required_argument, NULL, 'd' },
		{ "messages", required_argument, NULL, 'n' },
		{ "max-size", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "policy", required_argument, NULL, 'p' },
		{ "daemon", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	*o = (struct opts){ .datapath = "null", .messages = 200, .max_size = 1 << 20, .seed = 1,
			    .backend = PCM_TP_BACKEND_INPROC };
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case 'd':
			o->datapath = optarg;
			break;
		case 'n':
			o->messages = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			o->max_size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			o->policy = optarg;
			break;
		case 'D': /* through a running pcmd ($PCMD_SOCKET or /run/pcmd/pcmd.sock) */
			o->backend = PCM_TP_BACKEND_DAEMON;
			break;
		default:
			fprintf(stderr, "usage: %s [--datapath D] [--messages N] [--max-size B] "
					"[--seed S] [--policy P] [--daemon]\n", argv[0]);
			return -1;
		}
	}
	if (!o->max_size || o->max_size > (64u << 20)) {
		fprintf(stderr, "sendrecv: --max-size must be 1 .. 67108864\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct side rx = { .o = &o }, tx = { .o = &o };
	pthread_t t_rx, t_tx;
	int rc;

	if (parse(argc, argv, &o) < 0)
		return 2;
	if (open_side(&rx) < 0 || open_side(&tx) < 0)
		return 1;
	rc = pcm_tp_listen(rx.ep, "sendrecv");
	if (rc < 0)
		return fail(&rx, "listen", rc), 1;
	pthread_create(&t_rx, NULL, receiver, &rx);
	pthread_create(&t_tx, NULL, sender, &tx);
	pthread_join(t_tx, NULL);
	pthread_join(t_rx, NULL);
	if (!rx.failed && !tx.failed && rx.bytes == tx.bytes)
		printf("{\"example\":\"sendrecv\",\"datapath\":\"%s\",\"messages\":%u,"
		       "\"bytes\":%" PRIu64 ",\"seed\":%" PRIu64 ",\"intact\":true}\n",
		       o.backend == PCM_TP_BACKEND_DAEMON ? "pcmd's" : o.datapath, o.messages,
		       rx.bytes, o.seed);
	if (rx.conn)
		pcm_tp_conn_close(rx.conn);
	if (tx.conn)
		pcm_tp_conn_close(tx.conn);
	pcm_tp_mem_free(rx.ep, rx.buf);
	pcm_tp_mem_free(tx.ep, tx.buf);
	pcm_tp_endpoint_close(rx.ep);
	pcm_tp_endpoint_close(tx.ep);
	return rx.failed || tx.failed || rx.bytes != tx.bytes;
}
