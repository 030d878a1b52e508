// SPDX-License-Identifier: MIT
/*
 * verbs_xfer.c - rxe-verbs-xfer: one side of a transfer over the verbs
 * datapath between two processes, with the engine and the core on top and
 * the TCP bootstrap between them; run inside the rxe VM by
 * checks/verbs-*.sh (tests/rxe/README.md).
 *
 * The listener accepts --conns connections and posts receives; the dialer
 * opens them and sends --msgs messages on each. Both sides derive the same
 * plan from --seed: message k of connection c has a size drawn in
 * [--min-size, --max-size] and bytes from a generator seeded by (seed, c,
 * k). Each side keeps a window of WINDOW buffers per connection, so memory
 * stays bounded whatever the message count. The listener checks that every
 * message arrives exactly once (its cookie is seen once, in FIFO order),
 * with its planned length and bytes; both check that every operation
 * completes with status 0 and that, after the graceful closes, the core
 * holds nothing (no operation, message, byte in flight or completion).
 *
 * Output: one JSON line (role, QP type, plan, seconds, goodput, the core's
 * and the datapath's counters). Exit 0: every check passed; 1: a check
 * failed (the message says which connection, message and byte); 2: bad
 * usage; 3: setup failed (the datapath's or bootstrap's diagnostic).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "drop.h"
#include "engine.h"

#define WINDOW 16
#define MAX_CONNS 64
#define COMP_BATCH 64
#define SLEEP_MAX_MS 5

static bool trace; /* RXE_XFER_TRACE set: each completion's time on stderr */

struct plan {
	uint64_t seed;
	uint32_t conns;
	uint32_t msgs;
	uint64_t min_size, max_size;
};

struct opts {
	bool listen;
	const char *addr;
	const char *dev;
	int gid_index;
	bool rc;
	bool no_recv_keys;
	const char *policy;
	uint32_t paths;
	uint32_t chunk_bytes;
	uint64_t timeout_s;
	struct plan plan;
};

struct side {
	struct opts o;
	struct xp_engine *e;
	struct xp_boot *boot;
	uint8_t *buf;
	size_t slot_bytes;
	uint32_t mr;
	uint32_t conn[MAX_CONNS];
	uint32_t n_conns;
	uint32_t next_post[MAX_CONNS];   /* the next message to post on each connection */
	uint32_t base[MAX_CONNS];        /* the oldest message not completed */
	uint32_t seen[MAX_CONNS];        /* bit i: message base + i completed */
	uint32_t done[MAX_CONNS];        /* messages completed */
	uint32_t closed;
	uint64_t bytes;
	uint64_t deadline_ns;
	uint64_t t0_ns;
	uint8_t *scratch;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "rxe-verbs-xfer: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(code);
}

/* splitmix64: the plan's only source of randomness. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t msg_key(const struct plan *p, uint32_t conn, uint32_t k)
{
	return mix(p->seed ^ mix(((uint64_t)conn << 32) | k));
}

static uint64_t msg_size(const struct plan *p, uint32_t conn, uint32_t k)
{
	uint64_t span = p->max_size - p->min_size + 1;

	return p->min_size + mix(msg_key(p, conn, k) ^ 0x5a5a) % span;
}

static void msg_fill(const struct plan *p, uint32_t conn, uint32_t k, uint8_t *dst, uint64_t len)
{
	uint64_t x = msg_key(p, conn, k);

	for (uint64_t i = 0; i < len; i += 8) {
		uint64_t w = mix(x + i);

		memcpy(dst + i, &w, len - i < 8 ? len - i : 8);
	}
}

static uint8_t *slot_of(struct side *s, uint32_t c, uint32_t k)
{
	return s->buf + ((size_t)c * WINDOW + k % WINDOW) * s->slot_bytes;
}

static uint64_t cookie_of(uint32_t c, uint32_t k)
{
	return ((uint64_t)c << 32) | k;
}

/* ---- driving the engine ----------------------------------------------------------------- */

static void report(struct side *s, uint64_t ns);

static void check_deadline(struct side *s, const char *what)
{
	if (mono_ns() > s->deadline_ns && s->t0_ns)
		report(s, mono_ns() - s->t0_ns); /* the counters say where it stuck */
	if (mono_ns() > s->deadline_ns)
		die(1, "%s: timed out after %" PRIu64 " s (conn msgs done: %u of %u on conn 0)",
		    what, s->o.timeout_s, s->done[0], s->o.plan.msgs);
}

/* One round of progress; sleeps on the datapath and bootstrap fds when idle. */
static void step(struct side *s)
{
	struct pollfd pfd[2];
	uint64_t next, now;
	int fd = -1, timeout_ms;

	if (xp_engine_progress(s->e))
		return;
	if (xp_engine_prepare_wait(s->e, &fd) != 0)
		return;
	now = mono_ns();
	next = xp_engine_next_deadline(s->e);
	/* in u64: the deadline may be UINT64_MAX (none) */
	timeout_ms = next <= now ? 0
		     : (next - now) / 1000000 >= SLEEP_MAX_MS ? SLEEP_MAX_MS
							     : (int)((next - now) / 1000000) + 1;
	pfd[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = s->boot->ops->fd(s->boot), .events = POLLIN };
	poll(pfd, 2, timeout_ms);
}

static void ctl_run(struct side *s, struct xp_ctl *ctl, const char *what)
{
	struct xp_cmd cmd = { .op = XP_CMD_CTL, .ctl = ctl };

	atomic_store(&ctl->done, 0);
	while (xp_engine_submit(s->e, &cmd) == -EAGAIN)
		step(s);
	while (!atomic_load_explicit(&ctl->done, memory_order_acquire)) {
		step(s);
		check_deadline(s, what);
	}
	if (ctl->status)
		die(3, "%s: %s (%s)", what, strerror(-ctl->status), ctl->diag.msg);
}

static void submit(struct side *s, const struct xp_cmd *cmd)
{
	while (xp_engine_submit(s->e, cmd) == -EAGAIN)
		step(s);
}

/* Wait for one bootstrap event of @kind (the others are protocol errors here). */
static void boot_wait(struct side *s, uint8_t kind, struct xp_boot_event *ev, const char *what)
{
	for (;;) {
		int n = s->boot->ops->poll(s->boot, ev, 1);

		if (n < 0)
			die(3, "%s: bootstrap poll: %s", what, strerror(-n));
		if (n == 1 && ev->kind == kind)
			return;
		if (n == 1)
			die(3, "%s: unexpected bootstrap event %u from %s", what, ev->kind, ev->from);
		step(s);
		check_deadline(s, what);
	}
}

static void conn_opts(const struct opts *o, struct xp_conn_opts *co)
{
	*co = (struct xp_conn_opts){ .rc = o->rc, .paths = o->paths, .mode = XP_CC_PCM_SYNC };
	if (strcmp(o->policy, "none") == 0)
		return;
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, o->policy) == 0)
			co->cc = pcm_builtin_policies[i];
	if (!co->cc)
		die(2, "no built-in policy '%s'", o->policy);
	snprintf(co->cc_name, sizeof(co->cc_name), "%s", o->policy);
}

static void connect_all(struct side *s)
{
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));
	struct xp_boot_event ev;
	struct pcm_diag diag = { 0 };
	int rc;

	if (!ctl)
		die(3, "out of memory");
	for (uint32_t c = 0; c < s->o.plan.conns; c++) {
		memset(ctl, 0, sizeof(*ctl));
		if (s->o.listen) {
			boot_wait(s, XP_BOOT_EV_INCOMING, &ev, "waiting for a dial");
			ctl->op = XP_CTL_CONN_ACCEPT;
			conn_opts(&s->o, &ctl->opts);
			if (ev.len > sizeof(ctl->peer_msg))
				die(3, "a dial of %u bytes from %s", ev.len, ev.from);
			memcpy(ctl->peer_msg, ev.msg, ev.len);
			ctl->peer_len = ev.len;
			ctl_run(s, ctl, "accepting a connection");
			rc = s->boot->ops->answer(s->boot, ev.req, 0, ctl->msg, ctl->msg_len);
			if (rc < 0)
				die(3, "answering %s: %s", ev.from, strerror(-rc));
		} else {
			ctl->op = XP_CTL_CONN_OPEN;
			conn_opts(&s->o, &ctl->opts);
			ctl_run(s, ctl, "opening a connection");
			rc = s->boot->ops->dial(s->boot, s->o.addr, ctl->msg, ctl->msg_len, c, &diag);
			if (rc < 0)
				die(3, "dialing %s: %s (%s)", s->o.addr, strerror(-rc), diag.msg);
			boot_wait(s, XP_BOOT_EV_ANSWERED, &ev, "waiting for the listener's answer");
			if (ev.status)
				die(3, "dialing %s: %s", s->o.addr, strerror(-ev.status));
			ctl->op = XP_CTL_CONN_BIND;
			memcpy(ctl->peer_msg, ev.msg, ev.len);
			ctl->peer_len = ev.len;
			ctl_run(s, ctl, "binding a connection");
		}
		s->conn[c] = ctl->conn;
	}
	free(ctl);
}

/* ---- the transfer ------------------------------------------------------------------------ */

static void post_next(struct side *s, uint32_t c)
{
	uint32_t k = s->next_post[c]++;
	uint8_t *slot = slot_of(s, c, k);
	struct xp_cmd cmd = { .conn = s->conn[c], .mr = s->mr, .addr = (uintptr_t)slot,
			      .cookie = cookie_of(c, k) };

	if (s->o.listen) {
		cmd.op = XP_CMD_RECV;
		cmd.len = s->slot_bytes;
		memset(slot, 0xee, s->slot_bytes); /* stale bytes must not pass for the message */
	} else {
		cmd.op = XP_CMD_SEND;
		cmd.len = msg_size(&s->o.plan, c, k);
		msg_fill(&s->o.plan, c, k, slot, cmd.len);
	}
	submit(s, &cmd);
}

static void verify_recv(struct side *s, uint32_t c, uint32_t k, uint64_t bytes)
{
	uint64_t want = msg_size(&s->o.plan, c, k);
	const uint8_t *got = slot_of(s, c, k);

	if (bytes != want)
		die(1, "conn %u msg %u: %" PRIu64 " bytes arrived, %" PRIu64 " sent", c, k, bytes,
		    want);
	msg_fill(&s->o.plan, c, k, s->scratch, want);
	for (uint64_t i = 0; i < want; i++)
		if (got[i] != s->scratch[i])
			die(1, "conn %u msg %u: byte %" PRIu64 " of %" PRIu64 " is %#x, sent %#x", c,
			    k, i, want, got[i], s->scratch[i]);
}

static void on_comp(struct side *s, const struct xp_engine_comp *x)
{
	uint32_t c = (uint32_t)(x->cookie >> 32), k = (uint32_t)x->cookie;

	if (x->kind == XP_ECOMP_CLOSE) {
		if (x->status)
			die(1, "a close completed with %s", strerror(-x->status));
		s->closed++;
		return;
	}
	if (c >= s->o.plan.conns || x->conn != s->conn[c])
		die(1, "a completion for unknown conn %u (engine conn %u)", c, x->conn);
	if (x->status)
		die(1, "conn %u msg %u: %s completed with %s", c, k,
		    x->kind == XP_ECOMP_SEND ? "send" : "receive", strerror(-x->status));
	/* exactly once: k was posted, is not older than the window and was not seen */
	if (k < s->base[c] || k >= s->next_post[c] || (s->seen[c] >> (k - s->base[c]) & 1))
		die(1, "conn %u: msg %u completed twice or was never posted (window %u..%u)", c, k,
		    s->base[c], s->next_post[c]);
	if (x->kind == XP_ECOMP_RECV)
		verify_recv(s, c, k, x->bytes);
	else if (x->bytes != msg_size(&s->o.plan, c, k))
		die(1, "conn %u msg %u: send completed with %" PRIu64 " bytes", c, k, x->bytes);
	if (trace)
		fprintf(stderr, "%.6f conn %u msg %u %s done\n", (mono_ns() - s->t0_ns) / 1e9, c, k,
			x->kind == XP_ECOMP_SEND ? "send" : "recv");
	s->seen[c] |= 1u << (k - s->base[c]);
	while (s->seen[c] & 1) {
		s->seen[c] >>= 1;
		s->base[c]++;
	}
	s->done[c]++;
	s->bytes += x->bytes;
	/* a slot is free again once every message WINDOW before the next one completed */
	while (s->next_post[c] < s->o.plan.msgs && s->next_post[c] < s->base[c] + WINDOW)
		post_next(s, c);
}

static bool all_done(const struct side *s)
{
	for (uint32_t c = 0; c < s->o.plan.conns; c++)
		if (s->done[c] < s->o.plan.msgs)
			return false;
	return true;
}

static void drain(struct side *s)
{
	struct xp_engine_comp x[COMP_BATCH];
	uint32_t n = xp_engine_poll(s->e, x, COMP_BATCH);

	for (uint32_t i = 0; i < n; i++)
		on_comp(s, &x[i]);
}

static void transfer(struct side *s)
{
	for (uint32_t c = 0; c < s->o.plan.conns; c++)
		for (uint32_t w = 0; w < WINDOW && s->next_post[c] < s->o.plan.msgs; w++)
			post_next(s, c);
	while (!all_done(s)) {
		drain(s);
		step(s);
		check_deadline(s, "the transfer");
	}
}

static void close_all(struct side *s)
{
	for (uint32_t c = 0; c < s->o.plan.conns; c++) {
		struct xp_cmd cmd = { .op = XP_CMD_CLOSE, .conn = s->conn[c],
				      .close_mode = XP_CLOSE_GRACEFUL, .cookie = cookie_of(c, 0) };

		submit(s, &cmd);
	}
	while (s->closed < s->o.plan.conns) {
		drain(s);
		step(s);
		check_deadline(s, "closing");
	}
}

/*
 * The last exchange: the dialer, its closes done, says "bye" through the
 * bootstrap; the listener keeps its engine running until then, so that it
 * answers the dialer's last control packets instead of vanishing under them.
 */
static void say_goodbye(struct side *s)
{
	static const char bye[] = "bye";
	struct pcm_diag diag = { 0 };
	struct xp_boot_event ev;
	int rc;

	if (!s->o.listen) {
		rc = s->boot->ops->dial(s->boot, s->o.addr, bye, sizeof(bye), UINT32_MAX, &diag);
		if (rc < 0)
			die(3, "saying bye to %s: %s (%s)", s->o.addr, strerror(-rc), diag.msg);
		boot_wait(s, XP_BOOT_EV_ANSWERED, &ev, "waiting for the answer to bye");
		return;
	}
	boot_wait(s, XP_BOOT_EV_INCOMING, &ev, "waiting for the dialer's bye");
	if (ev.len != sizeof(bye) || memcmp(ev.msg, bye, sizeof(bye)) != 0)
		die(1, "%s sent %u bytes where its bye belonged", ev.from, ev.len);
	s->boot->ops->answer(s->boot, ev.req, 0, bye, sizeof(bye));
	/* let the answer go out */
	for (uint64_t end = mono_ns() + 200000000ull; mono_ns() < end;)
		if (s->boot->ops->poll(s->boot, &ev, 1) == 0)
			step(s);
}

/* After the closes the core holds nothing but quarantined ids. */
static void check_nothing_left(struct side *s)
{
	struct xp_core_usage u;

	xp_core_usage(xp_engine_core(s->e), &u);
	if (u.conns_open || u.send_msgs || u.recv_msgs || u.ops || u.in_flight_bytes ||
	    u.in_flight_chunks || u.completions_pending)
		die(1, "left over after the closes: %u conns open, %u send and %u receive messages, "
		    "%u operations, %" PRIu64 " bytes in %u chunks in flight, %u completions",
		    u.conns_open, u.send_msgs, u.recv_msgs, u.ops, u.in_flight_bytes,
		    u.in_flight_chunks, u.completions_pending);
}

static void report(struct side *s, uint64_t ns)
{
	const struct xp_core_stats *cs = xp_core_stats(xp_engine_core(s->e));
	struct xp_dp_stats ds;
	struct xp_dp *dp = xp_engine_dp(s->e);
	struct xp_dp_info info;

	dp->ops->stats(dp, &ds);
	xp_dp_info(dp, &info);
	printf("{\"bench\":\"rxe-verbs-xfer\",\"role\":\"%s\",\"datapath\":\"verbs\",\"qp\":\"%s\","
	       "\"policy\":\"%s\",\"recv_keys\":%s,\"seed\":%" PRIu64 ",\"conns\":%u,\"msgs\":%u,"
	       "\"min_size\":%" PRIu64 ",\"max_size\":%" PRIu64 ",\"chunk_size\":%u,\"paths\":%u,"
	       "\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"goodput_gbps\":%.6f,"
	       "\"chunks_sent\":%" PRIu64 ",\"chunks_retx\":%" PRIu64 ",\"rack_losses\":%" PRIu64
	       ",\"rto_fires\":%" PRIu64 ",\"tlp_fires\":%" PRIu64 ",\"chunks_received\":%" PRIu64
	       ",\"writes_posted\":%" PRIu64 ",\"writes_full\":%" PRIu64 ",\"writes_bad_key\":%" PRIu64
	       ",\"ctrl_sent\":%" PRIu64 ",\"ctrl_dropped\":%" PRIu64 ",\"ctrl_received\":%" PRIu64
	       ",\"ack_records_rx\":%" PRIu64 ",\"wakeups\":%" PRIu64 "}\n",
	       s->o.listen ? "listener" : "dialer", s->o.rc ? "RC" : "UC", s->o.policy,
	       info.caps & XP_DP_CAP_RECV_KEYS ? "true" : "false", s->o.plan.seed, s->o.plan.conns,
	       s->o.plan.msgs, s->o.plan.min_size, s->o.plan.max_size,
	       s->o.chunk_bytes < info.max_write_bytes ? s->o.chunk_bytes : info.max_write_bytes,
	       s->o.paths, s->bytes, ns / 1e9, ns ? s->bytes * 8.0 / (double)ns : 0.0,
	       cs->chunks_sent, cs->chunks_retx, cs->rack_losses, cs->rto_fires, cs->tlp_fires,
	       cs->chunks_received, ds.writes_posted, ds.writes_full, ds.writes_bad_key,
	       ds.ctrl_sent, ds.ctrl_dropped, ds.ctrl_received, cs->ack_records_rx, ds.wakeups);
	for (unsigned i = 0; i < XP_DROP_COUNT; i++)
		if (cs->drops[i])
			fprintf(stderr, "core drop %s: %" PRIu64 "\n", xp_drop_name(i), cs->drops[i]);
	fflush(stdout);
}

/* ---- setup ------------------------------------------------------------------------------- */

static void setup(struct side *s)
{
	struct xp_engine_config cfg;
	struct pcm_diag diag = { 0 };
	struct xp_ctl *ctl;
	size_t bytes;
	int rc;

	xp_engine_config_default(&cfg);
	cfg.dp_ops = &xp_dp_verbs_ops;
	cfg.dp.device = s->o.dev;
	cfg.dp.gid_index = s->o.gid_index;
	cfg.dp.no_recv_keys = s->o.no_recv_keys;
	cfg.uc_without_recv_keys = s->o.no_recv_keys; /* the experiment: UC with the region's rkey */
	cfg.progress = XP_PROGRESS_INLINE;
	if (s->o.chunk_bytes)
		cfg.core.chunk_bytes = s->o.chunk_bytes;
	else
		s->o.chunk_bytes = cfg.core.chunk_bytes;
	if (cfg.core.min_chunk_bytes > cfg.core.chunk_bytes)
		cfg.core.min_chunk_bytes = cfg.core.chunk_bytes;
	rc = xp_engine_create(&cfg, &s->e, &diag);
	if (rc < 0)
		die(3, "engine on %s: %s (%s)", s->o.dev, strerror(-rc), diag.msg);
	rc = xp_boot_tcp_ops.create(&s->boot, &diag);
	if (rc == 0 && s->o.listen)
		rc = s->boot->ops->listen(s->boot, s->o.addr, &diag);
	if (rc < 0)
		die(3, "bootstrap at %s: %s (%s)", s->o.addr, strerror(-rc), diag.msg);
	s->slot_bytes = s->o.plan.max_size ? s->o.plan.max_size : 1;
	bytes = (size_t)s->o.plan.conns * WINDOW * s->slot_bytes;
	s->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	s->scratch = malloc(s->slot_bytes);
	ctl = calloc(1, sizeof(*ctl));
	if (!s->buf || !s->scratch || !ctl)
		die(3, "out of memory for %zu bytes of buffers", bytes);
	memset(s->buf, 0, bytes);
	ctl->op = XP_CTL_MR_REG;
	ctl->addr = s->buf;
	ctl->len = bytes;
	ctl_run(s, ctl, "registering the buffers");
	s->mr = ctl->mr;
	free(ctl);
}

static uint64_t parse_u64(const char *flag, const char *v, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || x < min || x > max)
		die(2, "%s: '%s' is not a number in [%" PRIu64 ", %" PRIu64 "]", flag, v, min, max);
	return x;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rxe-verbs-xfer --listen|--dial --addr HOST:PORT --dev DEV [--gid N] [--rc] [--no-recv-keys]\n"
		"         [--conns C] [--msgs N] [--size S | --min-size A --max-size B] [--seed X]\n"
		"         [--policy swift|none|...] [--paths P] [--chunk-size B] [--timeout S]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "listen", no_argument, NULL, 'l' },  { "dial", no_argument, NULL, 'd' },
		{ "addr", required_argument, NULL, 'a' }, { "dev", required_argument, NULL, 'D' },
		{ "gid", required_argument, NULL, 'g' }, { "rc", no_argument, NULL, 'r' },
		{ "no-recv-keys", no_argument, NULL, 'K' },
		{ "conns", required_argument, NULL, 'c' }, { "msgs", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' }, { "min-size", required_argument, NULL, 'm' },
		{ "max-size", required_argument, NULL, 'M' }, { "seed", required_argument, NULL, 'S' },
		{ "policy", required_argument, NULL, 'p' }, { "paths", required_argument, NULL, 'P' },
		{ "chunk-size", required_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 't' }, { NULL, 0, NULL, 0 },
	};
	bool role = false;
	int ch;

	*o = (struct opts){ .gid_index = -1, .policy = "swift", .timeout_s = 100,
			    .plan = { .seed = 1, .conns = 1, .msgs = 16, .min_size = 4096,
				      .max_size = 4096 } };
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case 'l': o->listen = true; role = true; break;
		case 'd': o->listen = false; role = true; break;
		case 'a': o->addr = optarg; break;
		case 'D': o->dev = optarg; break;
		case 'g': o->gid_index = (int)parse_u64("--gid", optarg, 0, 255); break;
		case 'r': o->rc = true; break;
		case 'K': o->no_recv_keys = true; break;
		case 'c': o->plan.conns = (uint32_t)parse_u64("--conns", optarg, 1, MAX_CONNS); break;
		case 'n': o->plan.msgs = (uint32_t)parse_u64("--msgs", optarg, 0, 1u << 24); break;
		case 's':
			o->plan.min_size = o->plan.max_size =
				parse_u64("--size", optarg, 0, 64ull << 20);
			break;
		case 'm': o->plan.min_size = parse_u64("--min-size", optarg, 0, 64ull << 20); break;
		case 'M': o->plan.max_size = parse_u64("--max-size", optarg, 0, 64ull << 20); break;
		case 'S': o->plan.seed = parse_u64("--seed", optarg, 0, UINT64_MAX); break;
		case 'p': o->policy = optarg; break;
		case 'P': o->paths = (uint32_t)parse_u64("--paths", optarg, 1, 8); break;
		case 'C': o->chunk_bytes = (uint32_t)parse_u64("--chunk-size", optarg, 64, 1u << 20); break;
		case 't': o->timeout_s = parse_u64("--timeout", optarg, 1, 3600); break;
		default: usage();
		}
	}
	if (!role || !o->addr || !o->dev || optind != argc)
		usage();
	if (o->plan.min_size > o->plan.max_size)
		die(2, "--min-size %" PRIu64 " is above --max-size %" PRIu64, o->plan.min_size,
		    o->plan.max_size);
}

int main(int argc, char **argv)
{
	struct side s = { 0 };
	uint64_t t0;

	parse(argc, argv, &s.o);
	trace = getenv("RXE_XFER_TRACE") != NULL;
	s.deadline_ns = mono_ns() + s.o.timeout_s * 1000000000ull;
	setup(&s);
	connect_all(&s);
	t0 = s.t0_ns = mono_ns();
	transfer(&s);
	report(&s, mono_ns() - t0);
	close_all(&s);
	check_nothing_left(&s);
	say_goodbye(&s);
	s.boot->ops->destroy(s.boot);
	xp_engine_destroy(s.e);
	free(s.buf);
	free(s.scratch);
	return 0;
}
