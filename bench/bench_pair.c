// SPDX-License-Identifier: MIT
/*
 * bench_pair.c - pcm-bench goodput --datapath verbs --listen/--connect: one
 * flow between two processes (two hosts, or rxe0 and rxe1 in the VM), each
 * with one engine in INLINE progress on its own device, connected through
 * the TCP bootstrap.
 *
 * The sender keeps 2 to DEPTH messages of --msg-size bytes in flight (8 MiB
 * in all, or DEPTH), warms up for a tenth of --seconds and at least one
 * message, then measures in wall time from one send completion to another
 * at least --seconds and WINDOW_MIN_MSGS messages later (large messages on
 * a slow link take whole messages, not a time cut through them), then
 * waits for its last sends and says "bye" with the count it sent. Its
 * payloads are windows of one read-only pattern generated from --seed:
 * message k starts (k mod PAT_SHIFTS) x PAT_STEP bytes in, so a receive slot
 * reused every depth messages never holds the same bytes twice. The
 * receiver keeps as many receives posted, checks each message (posted, seen
 * once, its length, every byte) and answers the bye with its verdict, which
 * the sender prints and exits on. Both exit non-zero on a mismatch.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pair.h"

#define PAT_SHIFTS (DEPTH + 1)    /* > any depth: k and k - depth start apart */
#define IN_FLIGHT_BYTES (8u << 20) /* the depth: this much in flight, 2 to DEPTH messages */
#define WINDOW_MIN_MSGS 2         /* the measured window holds at least this many messages */
#define PAT_STEP 64
#define BOOT_POLL_EVERY 256     /* engine rounds between two bootstrap polls */
#define SLACK_NS 60000000000ull /* setup may take this long beyond the run */
/*
 * Once data moves, a run fails only when it stops moving: no message completed and no
 * chunk sent for the first time (sender) or received (receiver) for this long. Not a bound
 * on the whole run: on rdma_rxe in the TCG guest of a loaded host (load average 17),
 * 1 MiB UC messages moved at ~1 Mbit/s, and draining the 8 MiB in flight alone outlasted
 * the old fixed deadline of the run + 60 s ("the last sends: timed out (3 messages done)")
 * while every chunk still went through.
 */
#define STALL_NS 60000000000ull
#define LINGER_NS 200000000ull  /* the receiver stays up this long after its verdict */

struct pair {
	struct tp_rig r;
	struct xp_boot *boot;
	uint8_t *pat;           /* msg_size + PAT_SHIFTS * PAT_STEP bytes of pattern */
	uint8_t *rbuf;          /* receiver: depth slots */
	uint32_t mr, conn, depth;
	uint64_t posted, done, base, bytes;
	uint32_t seen;          /* receiver: bit i, message base + i checked */
	uint64_t deadline_ns;   /* setup's, then STALL_NS after the last progress */
	uint64_t progress;      /* messages done + chunks_of(): what moved so far */
	char verdict[256];      /* receiver: "ok" or the first mismatch */
};

static uint64_t chunks_of(const struct pair *p);

/* splitmix64 */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static const uint8_t *msg_bytes(const struct pair *p, uint64_t k)
{
	return p->pat + (k % PAT_SHIFTS) * PAT_STEP;
}

/* Past the deadline, which any progress since the last look moves to STALL_NS from now. */
static bool past_deadline(struct pair *p, const char *what)
{
	uint64_t now = tp_clock_ns(CLOCK_MONOTONIC);
	uint64_t progress = p->done + (p->r.e[0] ? chunks_of(p) : 0);

	if (progress != p->progress) {
		p->progress = progress;
		p->deadline_ns = now + STALL_NS;
	}
	if (now < p->deadline_ns)
		return false;
	fprintf(stderr,
		"pcm-bench: %s: timed out (%" PRIu64 " messages done, nothing moved in %llu s)\n",
		what, p->done, (unsigned long long)(STALL_NS / 1000000000ull));
	return true;
}

/* Wait for one bootstrap event of @kind, progressing the engine meanwhile. */
static int boot_wait(struct pair *p, uint8_t kind, struct xp_boot_event *ev, const char *what)
{
	for (;;) {
		int n = p->boot->ops->poll(p->boot, ev, 1);

		if (n < 0) {
			fprintf(stderr, "pcm-bench: %s: bootstrap: %s\n", what, strerror(-n));
			return n;
		}
		if (n == 1 && ev->kind == kind)
			return 0;
		if (n == 1) {
			fprintf(stderr, "pcm-bench: %s: unexpected bootstrap event %u from %s\n", what,
				ev->kind, ev->from);
			return -EPROTO;
		}
		tp_rig_step(&p->r);
		if (past_deadline(p, what))
			return -ETIMEDOUT;
	}
}

static int ctl_conn(struct pair *p, struct xp_ctl *ctl, uint8_t op, const struct xp_boot_event *ev)
{
	ctl->op = op;
	ctl->opts = p->r.copts;
	if (ev) {
		if (ev->len > sizeof(ctl->peer_msg)) {
			fprintf(stderr, "pcm-bench: a connection blob of %u bytes from %s\n", ev->len,
				ev->from);
			return -EPROTO;
		}
		memcpy(ctl->peer_msg, ev->msg, ev->len);
		ctl->peer_len = ev->len;
	}
	return tp_ctl_sync(&p->r, 0, ctl);
}

/* Receiver: accept one dial; sender: dial, then bind to the answer. */
static int pair_connect(struct pair *p)
{
	const struct tp_opts *o = p->r.o;
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));
	struct pcm_diag diag = { 0 };
	struct xp_boot_event ev;
	int rc = -ENOMEM;

	if (!ctl)
		return rc;
	if (o->listen) {
		rc = boot_wait(p, XP_BOOT_EV_INCOMING, &ev, "waiting for the sender");
		if (rc == 0)
			rc = ctl_conn(p, ctl, XP_CTL_CONN_ACCEPT, &ev);
		if (rc == 0)
			rc = p->boot->ops->answer(p->boot, ev.req, 0, ctl->msg, ctl->msg_len);
	} else {
		rc = ctl_conn(p, ctl, XP_CTL_CONN_OPEN, NULL);
		if (rc == 0) {
			rc = p->boot->ops->dial(p->boot, o->connect, ctl->msg, ctl->msg_len, 0, &diag);
			if (rc < 0)
				fprintf(stderr, "pcm-bench: --connect %s: %s (%s)\n", o->connect,
					strerror(-rc), diag.msg);
		}
		if (rc == 0)
			rc = boot_wait(p, XP_BOOT_EV_ANSWERED, &ev, "waiting for the receiver");
		if (rc == 0 && ev.status) {
			fprintf(stderr, "pcm-bench: --connect %s: %s\n", o->connect,
				strerror(-ev.status));
			rc = ev.status;
		}
		if (rc == 0)
			rc = ctl_conn(p, ctl, XP_CTL_CONN_BIND, &ev);
	}
	p->conn = ctl->conn;
	free(ctl);
	return rc;
}

static int pair_setup(struct pair *p)
{
	const struct tp_opts *o = p->r.o;
	struct pcm_diag diag = { 0 };
	size_t pat_len = o->msg_size + PAT_SHIFTS * PAT_STEP;
	int rc;

	p->depth = (uint32_t)(IN_FLIGHT_BYTES / o->msg_size);
	p->depth = p->depth < 2 ? 2 : p->depth > DEPTH ? DEPTH : p->depth;
	if (tp_parse_policy(o, &p->r.copts) < 0 || tp_make_engines(&p->r, 1, false) < 0)
		return -EINVAL;
	rc = xp_boot_tcp_ops.create(&p->boot, &diag);
	if (rc == 0 && o->listen)
		rc = p->boot->ops->listen(p->boot, o->listen, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: bootstrap %s: %s (%s)\n", o->listen ? o->listen : "",
			strerror(-rc), diag.msg);
		return rc;
	}
	p->pat = aligned_alloc(4096, (pat_len + 4095) & ~(size_t)4095);
	if (!p->pat)
		return -ENOMEM;
	for (size_t i = 0; i < pat_len; i += 8) {
		uint64_t w = mix(o->seed ^ mix(i));

		memcpy(p->pat + i, &w, pat_len - i < 8 ? pat_len - i : 8);
	}
	if (o->listen) {
		p->rbuf = aligned_alloc(4096, (p->depth * o->msg_size + 4095) & ~(size_t)4095);
		if (!p->rbuf)
			return -ENOMEM;
		memset(p->rbuf, 0, p->depth * o->msg_size);
		rc = tp_reg(&p->r, 0, p->rbuf, p->depth * o->msg_size, &p->mr);
	} else {
		rc = tp_reg(&p->r, 0, p->pat, pat_len, &p->mr);
	}
	return rc < 0 ? rc : pair_connect(p);
}

static void post(struct pair *p)
{
	const struct tp_opts *o = p->r.o;
	uint64_t k = p->posted++;
	struct xp_cmd cmd = { .conn = p->conn, .mr = p->mr, .len = o->msg_size, .cookie = k };

	cmd.op = o->listen ? XP_CMD_RECV : XP_CMD_SEND;
	cmd.addr = o->listen ? (uintptr_t)(p->rbuf + (k % p->depth) * o->msg_size)
			     : (uintptr_t)msg_bytes(p, k);
	tp_submit(&p->r, 0, &cmd);
}

/* Receiver: message @k arrived with @bytes; the first mismatch goes in p->verdict. */
static void check_recv(struct pair *p, uint64_t k, uint64_t bytes)
{
	const struct tp_opts *o = p->r.o;
	const uint8_t *got = p->rbuf + (k % p->depth) * o->msg_size, *want = msg_bytes(p, k);

	if (p->verdict[0])
		return; /* keep the first */
	if (k < p->base || k >= p->posted || (p->seen >> (k - p->base) & 1))
		snprintf(p->verdict, sizeof(p->verdict),
			 "message %" PRIu64 " completed twice or was never posted", k);
	else if (bytes != o->msg_size)
		snprintf(p->verdict, sizeof(p->verdict),
			 "message %" PRIu64 ": %" PRIu64 " bytes arrived, %" PRIu64 " sent", k, bytes,
			 o->msg_size);
	else if (memcmp(got, want, bytes) != 0)
		for (uint64_t i = 0; i < bytes; i++)
			if (got[i] != want[i]) {
				snprintf(p->verdict, sizeof(p->verdict),
					 "message %" PRIu64 ": byte %" PRIu64 " is %#x, sent %#x", k,
					 i, got[i], want[i]);
				break;
			}
}

/*
 * Take the completions. Sender: count and, while @repost, send again.
 * Receiver: check, then repost in order (a slot is free once every message
 * depth before the next one was checked). Return: -EIO on a failed operation.
 */
static int pair_drain(struct pair *p, bool repost)
{
	struct xp_engine_comp k[64];
	uint32_t n = xp_engine_poll(p->r.e[0], k, 64);

	for (uint32_t j = 0; j < n; j++) {
		if (k[j].kind == XP_ECOMP_CTL)
			continue;
		if (k[j].status < 0) {
			fprintf(stderr, "pcm-bench: message %" PRIu64 ": %s completed with %s\n",
				k[j].cookie, k[j].kind == XP_ECOMP_SEND ? "send" : "receive",
				strerror(-k[j].status));
			return -EIO;
		}
		if (p->r.measuring)
			p->bytes += k[j].bytes;
		p->done++;
		if (k[j].kind == XP_ECOMP_SEND) {
			if (repost)
				post(p);
			continue;
		}
		check_recv(p, k[j].cookie, k[j].bytes);
		if (k[j].cookie >= p->base && k[j].cookie < p->base + 32)
			p->seen |= 1u << (k[j].cookie - p->base);
		while (p->seen & 1) {
			p->seen >>= 1;
			p->base++;
		}
		while (p->posted < p->base + p->depth)
			post(p);
	}
	return 0;
}

static int pair_print(struct pair *p, uint64_t ns, uint64_t chunks, uint64_t cpu_ns, bool ok)
{
	const struct tp_opts *o = p->r.o;
	const struct xp_core_stats *cs = xp_core_stats(xp_engine_core(p->r.e[0]));
	struct xp_dp_info info;
	double secs = (double)ns / 1e9;

	xp_dp_info(xp_engine_dp(p->r.e[0]), &info);
	printf("{\"bench\":\"goodput\",\"datapath\":\"%s\",\"qp\":\"%s\",\"policy\":\"%s\","
	       "\"mode\":\"%s\",\"role\":\"%s\",\"processes\":2,\"device\":\"%s\",\"flows\":1,"
	       "\"msg_size\":%" PRIu64 ",\"chunk_size\":%u,\"engines\":1,\"depth\":%u,"
	       "\"seed\":%" PRIu64 ","
	       "\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"goodput_gbps\":%.6f,"
	       "\"chunks_per_s\":%.0f,\"cpu_ns_per_chunk\":%.1f,\"chunks_retx\":%" PRIu64 ","
	       "\"time\":\"wall\",\"seconds\":%.6f,\"verified\":%s}\n",
	       p->r.dp->name, o->rc ? "RC" : "UC", o->policy, o->mode,
	       o->listen ? "receiver" : "sender", o->device ? o->device : "", o->msg_size,
	       o->chunk_size < info.max_write_bytes ? o->chunk_size : info.max_write_bytes, p->depth,
	       o->seed,
	       p->done, p->bytes, secs > 0 ? (double)p->bytes * 8 / secs / 1e9 : 0.0,
	       secs > 0 ? (double)chunks / secs : 0.0, chunks ? (double)cpu_ns / (double)chunks : 0.0,
	       cs->chunks_retx, secs, ok ? "true" : "false");
	fflush(stdout);
	return 0;
}

static uint64_t chunks_of(const struct pair *p)
{
	const struct xp_core_stats *cs = xp_core_stats(xp_engine_core(p->r.e[0]));

	return p->r.o->listen ? cs->chunks_received : cs->chunks_sent;
}

/* Sender: send until @stop_ns has passed and @msgs completed (checked after each drain). */
static int run_until(struct pair *p, uint64_t stop_ns, uint64_t msgs, const char *what)
{
	for (;;) {
		if (pair_drain(p, true) < 0)
			return -EIO;
		if (p->done >= msgs && tp_clock_ns(CLOCK_MONOTONIC) >= stop_ns)
			return 0;
		if (past_deadline(p, what))
			return -ETIMEDOUT;
		tp_rig_step(&p->r);
	}
}

/* Sender: warm up, measure, drain, then the bye and the receiver's verdict. */
static int run_sender(struct pair *p)
{
	const struct tp_opts *o = p->r.o;
	struct pcm_diag diag = { 0 };
	struct xp_boot_event ev;
	uint64_t t0, t1, c0, c1, cpu0, cpu1, stop, bye[2] = { 0x657962 /* "bye" */ };
	int rc;

	while (p->posted < p->depth)
		post(p);
	stop = tp_clock_ns(CLOCK_MONOTONIC) + (uint64_t)(o->seconds * 1e8);
	if (run_until(p, stop, 1, "the warm-up") < 0)
		return -EIO;
	p->r.measuring = true;
	t0 = tp_clock_ns(CLOCK_MONOTONIC);
	c0 = chunks_of(p);
	cpu0 = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (run_until(p, t0 + (uint64_t)(o->seconds * 1e9), p->done + WINDOW_MIN_MSGS,
		      "the measured run") < 0)
		return -EIO;
	t1 = tp_clock_ns(CLOCK_MONOTONIC);
	c1 = chunks_of(p);
	cpu1 = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	p->r.measuring = false;
	while (p->done < p->posted) {
		if (pair_drain(p, false) < 0 || past_deadline(p, "the last sends"))
			return -EIO;
		tp_rig_step(&p->r);
	}
	bye[1] = p->done;
	rc = p->boot->ops->dial(p->boot, o->connect, bye, sizeof(bye), 1, &diag);
	if (rc < 0) {
		fprintf(stderr, "pcm-bench: bye to %s: %s (%s)\n", o->connect, strerror(-rc),
			diag.msg);
		return rc;
	}
	rc = boot_wait(p, XP_BOOT_EV_ANSWERED, &ev, "waiting for the receiver's verdict");
	if (rc < 0)
		return rc;
	if (ev.status || ev.len < 2 || memcmp(ev.msg, "ok", 2) != 0) {
		fprintf(stderr, "pcm-bench: the receiver found a mismatch: %.*s\n", (int)ev.len,
			(const char *)ev.msg);
		return -EIO;
	}
	return pair_print(p, t1 - t0, c1 - c0, cpu1 - cpu0, true);
}

/* Receiver: check every message until the bye, then answer with the verdict. */
static int run_receiver(struct pair *p)
{
	struct xp_boot_event ev;
	uint64_t sent = UINT64_MAX, t0 = 0, end, c0 = chunks_of(p);
	uint64_t cpu0 = tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	int rc;

	p->r.measuring = true;
	while (p->posted < p->depth)
		post(p);
	for (uint64_t i = 0; sent == UINT64_MAX || p->done < sent; i++) {
		if (pair_drain(p, true) < 0 || past_deadline(p, "the transfer"))
			return -EIO;
		if (!t0 && p->done)
			t0 = tp_clock_ns(CLOCK_MONOTONIC);
		tp_rig_step(&p->r);
		if (sent != UINT64_MAX || i % BOOT_POLL_EVERY)
			continue;
		rc = p->boot->ops->poll(p->boot, &ev, 1);
		if (rc == 1 && ev.kind == XP_BOOT_EV_INCOMING && ev.len == 16 &&
		    memcmp(ev.msg, "bye", 3) == 0) {
			memcpy(&sent, ev.msg + 8, 8);
		} else if (rc != 0) {
			fprintf(stderr, "pcm-bench: waiting for the bye: %s\n",
				rc < 0 ? strerror(-rc) : "an unexpected bootstrap message");
			return -EPROTO;
		}
	}
	if (!p->verdict[0] && p->done != sent)
		snprintf(p->verdict, sizeof(p->verdict),
			 "%" PRIu64 " messages arrived, %" PRIu64 " sent", p->done, sent);
	if (!p->verdict[0])
		snprintf(p->verdict, sizeof(p->verdict), "ok: %" PRIu64 " messages intact", p->done);
	else
		fprintf(stderr, "pcm-bench: mismatch: %s\n", p->verdict);
	pair_print(p, t0 ? tp_clock_ns(CLOCK_MONOTONIC) - t0 : 0, chunks_of(p) - c0,
		   tp_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0, memcmp(p->verdict, "ok", 2) == 0);
	rc = p->boot->ops->answer(p->boot, ev.req, 0, p->verdict, (uint32_t)strlen(p->verdict));
	/* let the answer and the engine's last control packets go out */
	for (end = tp_clock_ns(CLOCK_MONOTONIC) + LINGER_NS; tp_clock_ns(CLOCK_MONOTONIC) < end;)
		if (p->boot->ops->poll(p->boot, &ev, 1) == 0)
			tp_rig_step(&p->r);
	return rc < 0 ? rc : memcmp(p->verdict, "ok", 2) == 0 ? 0 : -EIO;
}

int tp_pair_goodput(const struct tp_opts *o, const struct xp_dp_ops *dp)
{
	struct pair *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	p->r.o = o;
	p->r.dp = dp;
	p->deadline_ns = tp_clock_ns(CLOCK_MONOTONIC) + (uint64_t)(o->seconds * 1.1e9) + SLACK_NS;
	rc = pair_setup(p);
	if (rc == 0)
		rc = o->listen ? run_receiver(p) : run_sender(p);
	if (p->boot)
		p->boot->ops->destroy(p->boot);
	tp_rig_free(&p->r);
	free(p->pat);
	free(p->rbuf);
	free(p);
	return rc;
}
