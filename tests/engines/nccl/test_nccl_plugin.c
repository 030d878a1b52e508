// SPDX-License-Identifier: MIT
/*
 * test_nccl_plugin.c - libnccl-net-pcm.so loaded and driven as NCCL drives it, in host memory
 * (there is no GPU here): for each of ncclNetPlugin_v8, _v9 and _v10, a receiving side and a
 * sending side, as two threads of one process (--mode threads, the in-process backend) or as two
 * processes (--mode procs, through a running pcmd: $PCMD_SOCKET), go through:
 *
 *   setup    init with a logger, devices, getProperties (and a device that does not exist);
 *            listen; accept before anyone dials returns NULL at once; the 128-byte handle goes
 *            to the sender, whose connect is called again with the same handle until it
 *            returns a comm, while the receiver calls accept until it does; a second listen
 *            closed unused; regMr(NCCL_PTR_HOST) on each side, regMr of GPU memory refused.
 *   limits   the receiver posts NCCL_NET_MAX_REQUESTS (32) irecvs of maxRecvs tagged buffers
 *            each (v9, v10: half with *request == NCCL_NET_OPTIONAL_RECV_COMPLETION on entry);
 *            a 33rd gets *request == NULL. The sender's isends, one per buffer in a shuffled tag
 *            order, are retried while *request is NULL (no CTS yet); a tag that the oldest
 *            receive does not hold gets NULL, and so does an isend beyond all 32 receives
 *            (32 x maxRecvs outstanding), and one more into a new receive while the sender
 *            has tested none of them. Every buffer then holds the message with its tag.
 *   random   seeded rounds: each a grouped irecv of 1..maxRecvs buffers with random tags,
 *            capacities at or above the send sizes (0 .. --max-size), isends in a random tag
 *            order, random windows on both sides; test() fills sizes[] with the bytes sent,
 *            every byte and the bytes past them are checked, and iflush follows each receive.
 *   misuse   too many buffers, a request that is none, an empty iflush, a send larger than its
 *            receive: each an error and a WARN, none a crash.
 *   close    deregMr, closeSend, closeRecv (with a receive still posted), closeListen; through
 *            pcmd (--pcmctl), pcmd then holds no flow of the two processes, which are alive.
 * Any other WARN from the plugin fails the run. A failing run prints a one-line reproduction.
 *
 * Usage: test_nccl_plugin [--mode threads|procs] [--version 8|9|10|all] [--seed S] [--seeds N]
 *                         [--rounds R] [--max-size B] [--pcmctl PATH] [--verbose]
 * The plugin is found as NCCL finds it: libnccl-net-$NCCL_NET_PLUGIN.so (default pcm) on the
 * library path. Its backend is $PCM_NCCL_BACKEND's (threads mode needs inproc: a process cannot
 * dial itself through pcmd's softnic fabric).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness_net.h"

#define SENTINEL ((void *)NCCL_NET_OPTIONAL_RECV_COMPLETION)
#define MAX_RECVS 8           /* the most buffers per irecv the harness posts */
#define RX_SLOTS NCCL_NET_MAX_REQUESTS
#define TX_SLOTS (NCCL_NET_MAX_REQUESTS * MAX_RECVS)
#define SLACK 4096u           /* a receive is up to this much larger than its send */
#define CANARY 64u            /* bytes past a receive buffer that must stay untouched */
#define FILL 0xa5
#define WAIT_MS 60000         /* the longest any step may take before the run fails */
#define NONBLOCK_MS 5000      /* the longest one connect or accept call may take */
#define LIMIT_TAG(g, i) (1000 + (g) * 16 + (i))
#define ABSENT_TAG (-7)

struct opts {
	const char *mode;
	int versions[3];
	int n_versions;
	uint64_t seed;
	uint32_t seeds;
	uint32_t rounds;
	uint32_t max_size;
	const char *pcmctl;
	bool verbose;
	const char *argv0;
};

/* One round of the random phase, as both sides derive it from the seed. */
struct round {
	int n;
	int tags[MAX_RECVS];
	size_t size[MAX_RECVS]; /* the message for buffer i */
	size_t cap[MAX_RECVS];
	int perm[MAX_RECVS];    /* the order the sender issues them in */
	bool sentinel;          /* irecv with NCCL_NET_OPTIONAL_RECV_COMPLETION (v9, v10) */
};

struct side {
	const struct opts *o;
	const struct hnet *net;
	uint64_t seed;
	bool sender;
	int fd;                 /* the channel to the other side */
	int max_recvs;
	size_t stride;          /* receive buffer stride */
	uint8_t *buf;
	size_t buf_bytes;
	void *mh;
	void *lcomm, *comm;
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	uint64_t msgs, bytes, nulls, sentinels, flushes;
	char fail[512];
};

/* ---- the logger NCCL would pass: WARNs counted per thread ------------------------------------ */

static bool g_verbose;
static _Thread_local int t_warns;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	char text[600];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (level == NCCL_LOG_WARN)
		t_warns++;
	if (level == NCCL_LOG_WARN || g_verbose)
		fprintf(stderr, "  [%s %s:%d] %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", file,
			line, text);
}

/* ---- helpers ------------------------------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return mix(*state);
}

static void fill_pattern(uint8_t *p, size_t len, uint64_t key)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = mix(key ^ (i >> 3));

		for (size_t b = 0; b < 8 && i + b < len; b++)
			p[i + b] = (uint8_t)(w >> (8 * b));
	}
}

/* The first byte of @p that differs from the pattern, or -1. */
static long check_pattern(const uint8_t *p, size_t len, uint64_t key)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = mix(key ^ (i >> 3));

		for (size_t b = 0; b < 8 && i + b < len; b++)
			if (p[i + b] != (uint8_t)(w >> (8 * b)))
				return (long)(i + b);
	}
	return -1;
}

static uint64_t msg_key(uint64_t seed, int phase, uint32_t round, int tag)
{
	return mix(seed * 1000003u + (uint64_t)phase) ^ ((uint64_t)round << 32) ^ (uint32_t)tag;
}

static int failf(struct side *s, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->fail[0])
		return -1;
	n = snprintf(s->fail, sizeof(s->fail), "%s, line %d: ", s->sender ? "sender" : "receiver",
		     line);
	va_start(ap, fmt);
	vsnprintf(s->fail + n, sizeof(s->fail) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

#define CHECK(s, cond, ...)                                                                \
	do {                                                                               \
		if (!(cond))                                                               \
			return failf((s), __LINE__, __VA_ARGS__);                          \
	} while (0)

#define EXPECT_OK(s, call)                                                                 \
	do {                                                                               \
		ncclResult_t rc_ = (call);                                                 \
		CHECK((s), rc_ == ncclSuccess, "%s returned %d", #call, (int)rc_);          \
	} while (0)

/* ---- the channel between the two sides (a socketpair) ----------------------------------------- */

/* Has the other side given up (its end of the channel closed)? Checked in every wait. */
static bool peer_gone(const struct side *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* A step that waits may go on: neither too long nor alone. */
#define STILL_WAITING(s, t0, limit_ms, ...)                                                \
	do {                                                                               \
		CHECK((s), !peer_gone(s), "the other side failed; here: " __VA_ARGS__);      \
		CHECK((s), now_ms() - (t0) < (limit_ms), __VA_ARGS__);                     \
	} while (0)

static int chan_put(struct side *s, const char *tag, const void *data, size_t len)
{
	char msg[4 + NCCL_NET_HANDLE_MAXSIZE];

	memcpy(msg, tag, 4);
	if (len)
		memcpy(msg + 4, data, len);
	CHECK(s, write(s->fd, msg, 4 + len) == (ssize_t)(4 + len), "channel write: %s",
	      strerror(errno));
	return 0;
}

static int chan_get(struct side *s, const char *tag, void *data, size_t len)
{
	char msg[4 + NCCL_NET_HANDLE_MAXSIZE];
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	size_t got = 0;

	while (got < 4 + len) {
		ssize_t n;

		CHECK(s, poll(&p, 1, WAIT_MS) == 1, "no '%s' from the other side in %d ms", tag,
		      WAIT_MS);
		n = read(s->fd, msg + got, 4 + len - got);
		CHECK(s, n > 0, "the other side is gone (waiting for '%s')", tag);
		got += (size_t)n;
	}
	CHECK(s, memcmp(msg, tag, 4) == 0, "got '%.4s' from the other side, want '%s'", msg, tag);
	if (len)
		memcpy(data, msg + 4, len);
	return 0;
}

/* ---- setup --------------------------------------------------------------------------------- */

static int start(struct side *s)
{
	struct hnet_props p;
	int ndev = 0, warns;

	EXPECT_OK(s, hnet_init(s->net, logger));
	CHECK(s, strcmp(hnet_name(s->net), "pcm") == 0, "name '%s', want pcm", hnet_name(s->net));
	EXPECT_OK(s, hnet_devices(s->net, &ndev));
	CHECK(s, ndev >= 1, "%d devices", ndev);
	EXPECT_OK(s, hnet_props(s->net, 0, &p));
	CHECK(s, p.name && p.ptr_support == NCCL_PTR_HOST && p.max_recvs >= 1 &&
		 p.max_recvs <= MAX_RECVS && p.max_comms > 0 && p.speed > 0 &&
		 p.dev_type == NCCL_NET_DEVICE_HOST && !p.reg_is_global,
	      "properties: name %s, ptrSupport %#x, maxRecvs %d, maxComms %d, speed %d, "
	      "device type %d, regIsGlobal %d", p.name ? p.name : "(null)", p.ptr_support,
	      p.max_recvs, p.max_comms, p.speed, p.dev_type, p.reg_is_global);
	if (s->net->version >= 9)
		CHECK(s, p.vndevs == 1 && p.vdev0 == 0 && p.max_p2p >= s->o->max_size &&
			 p.max_coll >= s->o->max_size,
		      "v9 properties: vProps %d/%d, maxP2pBytes %zu, maxCollBytes %zu", p.vndevs,
		      p.vdev0, p.max_p2p, p.max_coll);
	warns = t_warns;
	CHECK(s, hnet_props(s->net, ndev, &p) != ncclSuccess, "getProperties(%d) succeeded", ndev);
	CHECK(s, t_warns > warns, "getProperties(%d) failed without a WARN", ndev);
	s->max_recvs = p.max_recvs;
	return 0;
}

/* Register @s's buffer on @s->comm; GPU memory must be refused. */
static int register_buffer(struct side *s)
{
	void *cuda_mh = (void *)1;
	int warns = t_warns;

	EXPECT_OK(s, hnet_reg_mr(s->net, s->comm, s->buf, s->buf_bytes, NCCL_PTR_HOST, &s->mh));
	CHECK(s, s->mh != NULL, "regMr gave no mhandle");
	CHECK(s, hnet_reg_mr(s->net, s->comm, s->buf, 4096, NCCL_PTR_CUDA, &cuda_mh) != ncclSuccess,
	      "regMr(NCCL_PTR_CUDA) succeeded");
	CHECK(s, t_warns == warns + 1, "regMr(NCCL_PTR_CUDA): %d WARNs, want 1", t_warns - warns);
	return 0;
}

static int alloc_buffer(struct side *s, size_t bytes)
{
	s->buf_bytes = bytes;
	s->buf = malloc(bytes);
	CHECK(s, s->buf != NULL, "no memory for %zu bytes", bytes);
	return 0;
}

static int setup_receiver(struct side *s)
{
	void *lcomm2 = NULL;
	char handle2[NCCL_NET_HANDLE_MAXSIZE];
	uint64_t t0;
	int calls = 0;

	if (start(s) < 0)
		return -1;
	memset(s->handle, 0xee, sizeof(s->handle));
	EXPECT_OK(s, hnet_listen(s->net, 0, s->handle, &s->lcomm));
	CHECK(s, s->lcomm != NULL, "listen gave no listenComm");
	for (int i = 0; i < 3; i++) {
		t0 = now_ms();
		EXPECT_OK(s, hnet_accept(s->net, s->lcomm, &s->comm));
		CHECK(s, s->comm == NULL && now_ms() - t0 < NONBLOCK_MS,
		      "accept before any dial: comm %p after %" PRIu64 " ms", s->comm,
		      now_ms() - t0);
	}
	if (chan_put(s, "HNDL", s->handle, sizeof(s->handle)) < 0)
		return -1;
	for (t0 = now_ms(); !s->comm; calls++) {
		uint64_t t1 = now_ms();

		EXPECT_OK(s, hnet_accept(s->net, s->lcomm, &s->comm));
		CHECK(s, now_ms() - t1 < NONBLOCK_MS, "accept blocked %" PRIu64 " ms", now_ms() - t1);
		STILL_WAITING(s, t0, WAIT_MS, "no connection after %d accept calls", calls);
	}
	EXPECT_OK(s, hnet_listen(s->net, 0, handle2, &lcomm2));
	CHECK(s, memcmp(handle2, s->handle, sizeof(handle2)) != 0, "two listens, one handle");
	EXPECT_OK(s, hnet_close_listen(s->net, lcomm2));
	s->stride = s->o->max_size + SLACK + CANARY;
	if (alloc_buffer(s, (size_t)(RX_SLOTS + 1) * MAX_RECVS * s->stride) < 0) /* + a spare */
		return -1;
	return register_buffer(s);
}

static int setup_sender(struct side *s)
{
	uint64_t t0;
	int calls = 0;

	if (start(s) < 0 || chan_get(s, "HNDL", s->handle, sizeof(s->handle)) < 0)
		return -1;
	for (t0 = now_ms(); !s->comm; calls++) {
		uint64_t t1 = now_ms();

		EXPECT_OK(s, hnet_connect(s->net, 0, s->handle, &s->comm));
		CHECK(s, now_ms() - t1 < NONBLOCK_MS, "connect blocked %" PRIu64 " ms",
		      now_ms() - t1);
		STILL_WAITING(s, t0, WAIT_MS, "no connection after %d connect calls", calls);
	}
	if (alloc_buffer(s, (size_t)(TX_SLOTS + 1) * s->o->max_size) < 0) /* + a spare */
		return -1;
	return register_buffer(s);
}

/* ---- one receive: post, wait, check ------------------------------------------------------------ */

static uint8_t *rx_buf(struct side *s, int slot, int i)
{
	return s->buf + ((size_t)slot * MAX_RECVS + (size_t)i) * s->stride;
}

/* irecv of @rd into slot @slot. Return: 0 (*req NULL when the plugin had no room) or -1. */
static int post_recv(struct side *s, int slot, const struct round *rd, void **req)
{
	void *data[MAX_RECVS], *mhs[MAX_RECVS];
	size_t caps[MAX_RECVS];
	int tags[MAX_RECVS];
	bool sentinel = rd->sentinel && s->net->version >= 9;

	for (int i = 0; i < rd->n; i++) {
		data[i] = rx_buf(s, slot, i);
		memset(data[i], FILL, rd->cap[i] + CANARY);
		mhs[i] = s->mh;
		caps[i] = rd->cap[i];
		tags[i] = rd->tags[i];
	}
	*req = sentinel ? SENTINEL : NULL;
	EXPECT_OK(s, hnet_irecv(s->net, s->comm, rd->n, data, caps, tags, mhs, req));
	CHECK(s, *req != SENTINEL, "irecv left NCCL_NET_OPTIONAL_RECV_COMPLETION in *request");
	if (*req && sentinel)
		s->sentinels++;
	return 0;
}

/* Check a completed receive of @rd (round @k of @phase) in @slot, with test()'s @sizes. */
static int check_recv(struct side *s, int phase, uint32_t k, int slot, const struct round *rd,
		      const int *sizes)
{
	for (int i = 0; i < rd->n; i++) {
		const uint8_t *p = rx_buf(s, slot, i);
		long bad;

		CHECK(s, sizes[i] >= 0 && (size_t)sizes[i] == rd->size[i],
		      "phase %d round %u buffer %d (tag %d): test reports %d bytes, %zu were sent",
		      phase, k, i, rd->tags[i], sizes[i], rd->size[i]);
		bad = check_pattern(p, rd->size[i], msg_key(s->seed, phase, k, rd->tags[i]));
		CHECK(s, bad < 0, "phase %d round %u buffer %d (tag %d, %zu bytes): byte %ld differs",
		      phase, k, i, rd->tags[i], rd->size[i], bad);
		for (size_t b = rd->size[i]; b < rd->cap[i] + CANARY; b++)
			CHECK(s, p[b] == FILL, "phase %d round %u buffer %d: byte %zu past the %zu "
			      "received was written", phase, k, i, b, rd->size[i]);
		s->bytes += rd->size[i];
	}
	s->msgs += (uint64_t)rd->n;
	return 0;
}

/* iflush of a completed receive, tested until done (NULL: nothing to flush). */
static int flush_recv(struct side *s, int slot, const struct round *rd, const int *sizes)
{
	void *data[MAX_RECVS], *mhs[MAX_RECVS], *req = NULL;
	int sz[MAX_RECVS], done = 0;
	uint64_t t0 = now_ms();

	for (int i = 0; i < rd->n; i++) {
		data[i] = rx_buf(s, slot, i);
		mhs[i] = s->mh;
		sz[i] = sizes[i];
	}
	EXPECT_OK(s, hnet_iflush(s->net, s->comm, rd->n, data, sz, mhs, &req));
	while (req && !done) {
		EXPECT_OK(s, hnet_test(s->net, req, &done, NULL));
		STILL_WAITING(s, t0, WAIT_MS, "iflush not done in %d ms", WAIT_MS);
	}
	s->flushes++;
	return 0;
}

/* test() @req until done (Return: 0 with @sizes filled, or -1). */
static int wait_req(struct side *s, void *req, int *sizes, const char *what)
{
	uint64_t t0 = now_ms();
	int done = 0;

	while (!done) {
		EXPECT_OK(s, hnet_test(s->net, req, &done, sizes));
		STILL_WAITING(s, t0, WAIT_MS, "%s not done in %d ms", what, WAIT_MS);
	}
	return 0;
}

/* isend retried while *request is NULL (no receive for it yet). */
static int send_until_taken(struct side *s, void *data, size_t size, int tag, void **req)
{
	uint64_t t0 = now_ms();

	for (*req = NULL; !*req;) {
		EXPECT_OK(s, hnet_isend(s->net, s->comm, data, size, tag, s->mh, req));
		if (!*req)
			s->nulls++;
		if (!*req)
			STILL_WAITING(s, t0, WAIT_MS, "isend (tag %d) not taken in %d ms", tag,
				      WAIT_MS);
	}
	return 0;
}

/* ---- the limits phase ------------------------------------------------------------------------ */

static void limit_round(const struct side *s, int g, struct round *rd)
{
	uint64_t st = s->seed ^ (uint64_t)g << 40;

	memset(rd, 0, sizeof(*rd));
	rd->n = s->max_recvs;
	rd->sentinel = g & 1;
	for (int i = 0; i < rd->n; i++) {
		rd->tags[i] = LIMIT_TAG(g, i);
		rd->cap[i] = 100u + (size_t)i;
		rd->size[i] = 37u + (size_t)(g * 7 + i * 13) % 64u;
		rd->perm[i] = i;
	}
	for (int i = rd->n - 1; i > 0; i--) { /* the sender's shuffled order */
		int j = (int)(rnd(&st) % (uint64_t)(i + 1)), t = rd->perm[i];

		rd->perm[i] = rd->perm[j];
		rd->perm[j] = t;
	}
}

static int limits_receiver(struct side *s)
{
	void *reqs[RX_SLOTS], *extra;
	struct round rd, more = { .n = 1, .tags = { 1 }, .cap = { 8 }, .sentinel = true };
	int sizes[MAX_RECVS];

	for (int g = 0; g < RX_SLOTS; g++) {
		limit_round(s, g, &rd);
		if (post_recv(s, g, &rd, &reqs[g]) < 0)
			return -1;
		CHECK(s, reqs[g] != NULL, "irecv %d of %d refused", g + 1, RX_SLOTS);
	}
	/* the 33rd, into the spare slot */
	more.tags[0] = ABSENT_TAG;
	if (post_recv(s, RX_SLOTS, &more, &extra) < 0)
		return -1;
	CHECK(s, extra == NULL, "irecv %d of %d taken: want *request == NULL", RX_SLOTS + 1,
	      RX_SLOTS);
	if (chan_put(s, "PSTD", NULL, 0) < 0)
		return -1;
	for (int g = 0; g < RX_SLOTS; g++) {
		limit_round(s, g, &rd);
		if (wait_req(s, reqs[g], sizes, "a limits irecv") < 0 ||
		    check_recv(s, 1, (uint32_t)g, g, &rd, sizes) < 0)
			return -1;
	}
	/* one more, which the sender may fill only once it has tested one of its 256 isends */
	more = (struct round){ .n = 1, .tags = { LIMIT_TAG(RX_SLOTS, 0) }, .cap = { 64 },
			       .size = { 50 } };
	if (post_recv(s, 0, &more, &extra) < 0)
		return -1;
	CHECK(s, extra != NULL, "an irecv after 32 completed ones was refused");
	if (chan_put(s, "MORE", NULL, 0) < 0 || wait_req(s, extra, sizes, "the 33rd irecv") < 0)
		return -1;
	return check_recv(s, 1, RX_SLOTS, 0, &more, sizes);
}

/*
 * The sender holds 32 x maxRecvs isends that it has not tested: one more, even with a receive
 * for it, gets *request == NULL until it tests one (given 300 ms to show otherwise).
 */
static int send_past_full_pool(struct side *s, void **reqs, int held, void **extra)
{
	uint8_t *p = s->buf + (size_t)TX_SLOTS * s->o->max_size; /* the spare slot */
	int tag = LIMIT_TAG(RX_SLOTS, 0), size;
	uint64_t t0 = now_ms();

	fill_pattern(p, 50, msg_key(s->seed, 1, RX_SLOTS, tag));
	if (chan_get(s, "MORE", NULL, 0) < 0)
		return -1;
	while (held == TX_SLOTS && now_ms() - t0 < 300) {
		EXPECT_OK(s, hnet_isend(s->net, s->comm, p, 50, tag, s->mh, extra));
		CHECK(s, *extra == NULL, "isend taken with %d isends held untested", held);
	}
	if (wait_req(s, reqs[0], &size, "a limits isend") < 0)
		return -1;
	reqs[0] = NULL;
	return send_until_taken(s, p, 50, tag, extra);
}

static int limits_sender(struct side *s)
{
	static void *reqs[TX_SLOTS];
	struct round rd;
	void *absent = (void *)1, *extra = NULL;
	int n = 0, size;

	if (chan_get(s, "PSTD", NULL, 0) < 0)
		return -1;
	for (int g = 0; g < RX_SLOTS; g++) {
		limit_round(s, g, &rd);
		for (int j = 0; j < rd.n; j++) {
			int i = rd.perm[j];
			uint8_t *p = s->buf + (size_t)n * s->o->max_size;

			fill_pattern(p, rd.size[i], msg_key(s->seed, 1, (uint32_t)g, rd.tags[i]));
			if (send_until_taken(s, p, rd.size[i], rd.tags[i], &reqs[n]) < 0)
				return -1;
			n++;
			if (g == 0 && j == 0) { /* group 0's CTS is here: a tag it lacks waits */
				EXPECT_OK(s, hnet_isend(s->net, s->comm, p, 1, ABSENT_TAG, s->mh,
							&absent));
				CHECK(s, absent == NULL, "isend of a tag no receive holds was taken");
			}
		}
	}
	EXPECT_OK(s, hnet_isend(s->net, s->comm, s->buf, 1, LIMIT_TAG(0, 0), s->mh, &absent));
	CHECK(s, absent == NULL, "isend %d (beyond %d receives) was taken", n + 1, RX_SLOTS);
	if (send_past_full_pool(s, reqs, n, &extra) < 0)
		return -1;
	for (int k = 0, g = 0; g < RX_SLOTS; g++) {
		limit_round(s, g, &rd);
		for (int j = 0; j < rd.n; j++, k++) {
			if (reqs[k] && wait_req(s, reqs[k], &size, "a limits isend") < 0)
				return -1;
			CHECK(s, !reqs[k] || size == (int)rd.size[rd.perm[j]], "isend %d: test "
			      "reports %d bytes, %zu sent", k, size, rd.size[rd.perm[j]]);
		}
	}
	if (wait_req(s, extra, &size, "the isend after a full pool") < 0)
		return -1;
	CHECK(s, size == 50, "isend after a full pool: test reports %d bytes, 50 sent", size);
	s->msgs += (uint64_t)n + 1;
	return 0;
}

/* ---- the random phase -------------------------------------------------------------------------- */

static size_t random_size(uint64_t *st, size_t max)
{
	uint64_t p = rnd(st) % 100;

	if (p < 10 || max == 0)
		return 0;
	if (p < 40)
		return 1 + rnd(st) % (max < 64 ? max : 64);
	if (p < 70)
		return 1 + rnd(st) % (max < 4096 ? max : 4096);
	if (p < 95)
		return 1 + rnd(st) % max;
	return max;
}

static void plan_round(const struct side *s, uint32_t k, struct round *rd)
{
	uint64_t st = mix(s->seed * 7919u + k);

	memset(rd, 0, sizeof(*rd));
	rd->n = 1 + (int)(rnd(&st) % (uint64_t)s->max_recvs);
	rd->sentinel = rnd(&st) & 1;
	for (int i = 0; i < rd->n; i++) {
		bool fresh;

		do { /* distinct tags, any int */
			rd->tags[i] = (int)(int32_t)rnd(&st);
			fresh = true;
			for (int j = 0; j < i; j++)
				fresh = fresh && rd->tags[j] != rd->tags[i];
		} while (!fresh);
		rd->size[i] = random_size(&st, s->o->max_size);
		rd->cap[i] = rd->size[i] + (rnd(&st) % 3 ? rnd(&st) % (SLACK + 1) : 0);
		rd->perm[i] = i;
	}
	for (int i = rd->n - 1; i > 0; i--) {
		int j = (int)(rnd(&st) % (uint64_t)(i + 1)), t = rd->perm[i];

		rd->perm[i] = rd->perm[j];
		rd->perm[j] = t;
	}
}

struct rx_slot {
	void *req;
	uint32_t round;
};

static int random_receiver(struct side *s)
{
	struct rx_slot slots[RX_SLOTS] = { 0 };
	uint64_t st = mix(s->seed ^ 0x5eed), t0 = now_ms();
	uint32_t window = 1 + (uint32_t)(rnd(&st) % RX_SLOTS), next = 0, done = 0, busy = 0;
	struct round rd;

	while (done < s->o->rounds) {
		int free_slot = -1, pick, sizes[MAX_RECVS], fin = 0;

		STILL_WAITING(s, t0, WAIT_MS * 4, "random phase: %u of %u receives done", done,
			      s->o->rounds);
		for (int i = 0; i < RX_SLOTS && free_slot < 0; i++)
			if (!slots[i].req)
				free_slot = i;
		if (next < s->o->rounds && busy < window && free_slot >= 0) {
			plan_round(s, next, &rd);
			if (post_recv(s, free_slot, &rd, &slots[free_slot].req) < 0)
				return -1;
			if (slots[free_slot].req) {
				slots[free_slot].round = next++;
				busy++;
			} else {
				s->nulls++;
			}
		}
		if (!busy)
			continue;
		pick = (int)(rnd(&st) % RX_SLOTS);
		while (!slots[pick].req)
			pick = (pick + 1) % RX_SLOTS;
		EXPECT_OK(s, hnet_test(s->net, slots[pick].req, &fin, sizes));
		if (fin) {
			plan_round(s, slots[pick].round, &rd);
			if (check_recv(s, 2, slots[pick].round, pick, &rd, sizes) < 0 ||
			    flush_recv(s, pick, &rd, sizes) < 0)
				return -1;
			slots[pick].req = NULL;
			busy--;
			done++;
		}
	}
	return 0;
}

struct tx_slot {
	void *req;
	size_t size;
};

/* A free slot for the next isend (one exists: fewer than TX_SLOTS are outstanding). */
static int free_tx_slot(const struct tx_slot *slots)
{
	int t = 0;

	while (slots[t].req)
		t++;
	return t;
}

static int random_sender(struct side *s)
{
	static struct tx_slot slots[TX_SLOTS];
	uint64_t st = mix(s->seed ^ 0x5e4d), t0 = now_ms();
	uint32_t span = TX_SLOTS - (uint32_t)s->max_recvs + 1;
	uint32_t window = (uint32_t)s->max_recvs + (uint32_t)(rnd(&st) % span);
	uint32_t k = 0, busy = 0;
	int j = 0, slot = -1, cursor = 0;
	struct round rd;

	memset(slots, 0, sizeof(slots));
	plan_round(s, 0, &rd);
	while (k < s->o->rounds || busy) {
		int fin = 0, size = -1, i = rd.perm[j];
		uint8_t *p;

		STILL_WAITING(s, t0, WAIT_MS * 4, "random phase: round %u of %u, %u isends "
			      "outstanding", k, s->o->rounds, busy);
		if (k < s->o->rounds && (slot >= 0 || busy < window)) {
			if (slot < 0) { /* the next message gets a slot and its bytes once */
				slot = free_tx_slot(slots);
				fill_pattern(s->buf + (size_t)slot * s->o->max_size, rd.size[i],
					     msg_key(s->seed, 2, k, rd.tags[i]));
			}
			p = s->buf + (size_t)slot * s->o->max_size;
			EXPECT_OK(s, hnet_isend(s->net, s->comm, p, rd.size[i], rd.tags[i], s->mh,
						&slots[slot].req));
			if (!slots[slot].req) {
				s->nulls++;
			} else {
				slots[slot].size = rd.size[i];
				slot = -1;
				busy++;
				s->msgs++;
				if (++j == rd.n) {
					j = 0;
					if (++k < s->o->rounds)
						plan_round(s, k, &rd);
				}
			}
		}
		for (int t = 0; busy && !slots[cursor].req && t < TX_SLOTS; t++)
			cursor = (cursor + 1) % TX_SLOTS;
		if (!busy || !slots[cursor].req)
			continue;
		EXPECT_OK(s, hnet_test(s->net, slots[cursor].req, &fin, &size));
		if (fin) {
			CHECK(s, size == (int)slots[cursor].size, "isend: test reports %d bytes, %zu "
			      "sent", size, slots[cursor].size);
			slots[cursor].req = NULL;
			busy--;
		}
		cursor = (cursor + 1) % TX_SLOTS;
	}
	return 0;
}

/* ---- misuse and close ------------------------------------------------------------------------- */

static int misuse_receiver(struct side *s)
{
	void *data[MAX_RECVS + 1], *mhs[MAX_RECVS + 1], *req = NULL;
	size_t caps[MAX_RECVS + 1];
	int tags[MAX_RECVS + 1], n = s->max_recvs + 1, warns = t_warns, done = 0;
	struct round small = { .n = 1, .tags = { 5 }, .cap = { 16 } };
	uint64_t fake[8] = { 0 };

	for (int i = 0; i < n; i++) {
		data[i] = rx_buf(s, RX_SLOTS, 0);
		mhs[i] = s->mh;
		caps[i] = 8;
		tags[i] = i;
	}
	CHECK(s, hnet_irecv(s->net, s->comm, n, data, caps, tags, mhs, &req) != ncclSuccess,
	      "irecv of %d buffers (maxRecvs %d) succeeded", n, s->max_recvs);
	CHECK(s, hnet_test(s->net, fake, &done, NULL) != ncclSuccess, "test of no request passed");
	CHECK(s, hnet_iflush(s->net, s->comm, 0, data, (int[1]){ 0 }, mhs, &req) != ncclSuccess,
	      "iflush of 0 buffers passed");
	CHECK(s, t_warns - warns == 3, "3 misuses, %d WARNs", t_warns - warns);
	if (post_recv(s, 0, &small, &req) < 0)
		return -1;
	CHECK(s, req != NULL, "a 16-byte irecv was refused");
	if (chan_put(s, "MSUS", NULL, 0) < 0 || chan_get(s, "MSDN", NULL, 0) < 0)
		return -1;
	EXPECT_OK(s, hnet_dereg_mr(s->net, s->comm, s->mh));
	EXPECT_OK(s, hnet_close_recv(s->net, s->comm)); /* with that receive still posted */
	EXPECT_OK(s, hnet_close_listen(s->net, s->lcomm));
	return 0;
}

static int misuse_sender(struct side *s)
{
	void *req = NULL;
	uint64_t t0 = now_ms();
	ncclResult_t rc = ncclSuccess;
	int warns;

	if (chan_get(s, "MSUS", NULL, 0) < 0)
		return -1;
	warns = t_warns;
	fill_pattern(s->buf, 32, 1);
	while (rc == ncclSuccess && !req && now_ms() - t0 < WAIT_MS)
		rc = hnet_isend(s->net, s->comm, s->buf, 32, 5, s->mh, &req);
	CHECK(s, rc == ncclInvalidUsage && !req, "isend of 32 bytes into a 16-byte receive: "
	      "result %d, request %p", (int)rc, req);
	CHECK(s, t_warns == warns + 1, "oversized isend: %d WARNs, want 1", t_warns - warns);
	EXPECT_OK(s, hnet_dereg_mr(s->net, s->comm, s->mh));
	EXPECT_OK(s, hnet_close_send(s->net, s->comm));
	return chan_put(s, "MSDN", NULL, 0);
}

/* Through pcmd: once both sides closed, pcmd holds no flow of theirs (they are still alive). */
static int pcmd_flows_gone(struct side *s)
{
	char cmd[600], out[4096];
	uint64_t t0 = now_ms();
	size_t n = 0;

	if (!s->o->pcmctl)
		return 0;
	snprintf(cmd, sizeof(cmd), "%s --json status", s->o->pcmctl);
	for (;;) {
		FILE *f = popen(cmd, "r");

		CHECK(s, f != NULL, "cannot run %s", cmd);
		n = fread(out, 1, sizeof(out) - 1, f);
		out[n] = 0;
		pclose(f);
		if (strstr(out, "\"flows\":0,"))
			return 0;
		CHECK(s, now_ms() - t0 < 10000, "pcmd still holds flows 10 s after every close: %s",
		      out);
		usleep(50000);
	}
}

/* ---- the two sides ----------------------------------------------------------------------------- */

static int run_receiver(struct side *s)
{
	int warns;

	if (setup_receiver(s) < 0)
		return -1;
	warns = t_warns;
	if (limits_receiver(s) < 0 || chan_get(s, "LIMS", NULL, 0) < 0 || random_receiver(s) < 0 ||
	    chan_get(s, "RNDS", NULL, 0) < 0)
		return -1;
	CHECK(s, t_warns == warns, "%d WARNs from the plugin in the traffic phases", t_warns - warns);
	if (misuse_receiver(s) < 0 || pcmd_flows_gone(s) < 0)
		return -1;
	return chan_put(s, "BYE_", NULL, 0);
}

static int run_sender(struct side *s)
{
	int warns;

	if (setup_sender(s) < 0)
		return -1;
	warns = t_warns;
	if (limits_sender(s) < 0 || chan_put(s, "LIMS", NULL, 0) < 0 || random_sender(s) < 0 ||
	    chan_put(s, "RNDS", NULL, 0) < 0)
		return -1;
	CHECK(s, t_warns == warns, "%d WARNs from the plugin in the traffic phases", t_warns - warns);
	if (misuse_sender(s) < 0)
		return -1;
	return chan_get(s, "BYE_", NULL, 0);
}

static void *side_thread(void *arg)
{
	struct side *s = arg;

	if (s->sender ? run_sender(s) : run_receiver(s))
		close(s->fd); /* the other side sees it at once rather than after a timeout */
	return NULL;
}

/* ---- running a version --------------------------------------------------------------------- */

static void print_repro(const struct opts *o, int version, uint64_t seed)
{
	const char *backend = getenv("PCM_NCCL_BACKEND");
	const char *sock = getenv("PCMD_SOCKET");

	fprintf(stderr, "reproduce: NCCL_NET_PLUGIN=%s PCM_NCCL_BACKEND=%s%s%s %s --mode %s "
		"--version %d --seed %" PRIu64 " --rounds %u --max-size %u%s%s\n",
		getenv("NCCL_NET_PLUGIN") ? getenv("NCCL_NET_PLUGIN") : "pcm",
		backend ? backend : "daemon", sock ? " PCMD_SOCKET=" : "", sock ? sock : "",
		o->argv0, o->mode, version, seed, o->rounds, o->max_size,
		o->pcmctl ? " --pcmctl " : "", o->pcmctl ? o->pcmctl : "");
}

static void side_init(struct side *s, const struct opts *o, const struct hnet *net,
		      uint64_t seed, bool sender, int fd)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->net = net;
	s->seed = seed;
	s->sender = sender;
	s->fd = fd;
}

static void side_report(const struct side *s, int version)
{
	printf("  v%d %s: %" PRIu64 " messages, %" PRIu64 " bytes checked, %" PRIu64
	       " NULL requests retried, %" PRIu64 " irecvs with OPTIONAL_RECV_COMPLETION, %"
	       PRIu64 " flushes\n", version, s->sender ? "sender  " : "receiver", s->msgs,
	       s->bytes, s->nulls, s->sentinels, s->flushes);
}

static int run_threads(const struct opts *o, void *lib, int version, uint64_t seed)
{
	struct side rx, tx;
	struct hnet net;
	pthread_t t[2];
	char err[256];
	int fds[2];

	if (hnet_load(&net, lib, version, err, sizeof(err)) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0) {
		fprintf(stderr, "FAIL: %s\n", err);
		return -1;
	}
	side_init(&rx, o, &net, seed, false, fds[0]);
	side_init(&tx, o, &net, seed, true, fds[1]);
	pthread_create(&t[0], NULL, side_thread, &rx);
	pthread_create(&t[1], NULL, side_thread, &tx);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	close(fds[0]);
	close(fds[1]);
	free(rx.buf);
	free(tx.buf);
	if (rx.fail[0] || tx.fail[0]) {
		fprintf(stderr, "FAIL v%d seed %" PRIu64 ": %s%s%s\n", version, seed, rx.fail,
			rx.fail[0] && tx.fail[0] ? "; " : "", tx.fail);
		return -1;
	}
	side_report(&rx, version);
	side_report(&tx, version);
	return 0;
}

/* One side in a child process of its own, with its own plugin instance (endpoint, host). */
static pid_t spawn_side(const struct opts *o, int version, uint64_t seed, bool sender, int fd,
			int other_fd)
{
	pid_t pid = fork();
	struct side s;
	struct hnet net;
	char err[256];
	void *lib;

	if (pid != 0)
		return pid;
	close(other_fd);
	lib = hnet_open_library(err, sizeof(err));
	if (!lib || hnet_load(&net, lib, version, err, sizeof(err)) < 0) {
		fprintf(stderr, "FAIL: %s\n", err);
		_exit(1);
	}
	side_init(&s, o, &net, seed, sender, fd);
	if (sender ? run_sender(&s) : run_receiver(&s)) {
		fprintf(stderr, "FAIL v%d seed %" PRIu64 ": %s\n", version, seed, s.fail);
		_exit(1);
	}
	fflush(stderr);
	side_report(&s, version);
	fflush(stdout);
	_exit(0);
}

static int run_procs(const struct opts *o, int version, uint64_t seed)
{
	int fds[2], status, failed = 0;
	pid_t pids[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pids[0] = spawn_side(o, version, seed, false, fds[0], fds[1]);
	pids[1] = spawn_side(o, version, seed, true, fds[1], fds[0]);
	close(fds[0]);
	close(fds[1]);
	for (int i = 0; i < 2; i++) {
		if (pids[i] < 0 || waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	}
	if (failed)
		fprintf(stderr, "FAIL v%d seed %" PRIu64 ": a side failed (above)\n", version, seed);
	return failed ? -1 : 0;
}

/* ---- main ------------------------------------------------------------------------------------ */

static int parse_versions(struct opts *o, const char *arg)
{
	if (strcmp(arg, "all") == 0) {
		o->versions[0] = 8;
		o->versions[1] = 9;
		o->versions[2] = 10;
		o->n_versions = 3;
		return 0;
	}
	o->n_versions = 1;
	o->versions[0] = atoi(arg);
	return o->versions[0] == 8 || o->versions[0] == 9 || o->versions[0] == 10 ? 0 : -1;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "version", required_argument, NULL, 'v' },
		{ "seed", required_argument, NULL, 's' },
		{ "seeds", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "max-size", required_argument, NULL, 'b' },
		{ "pcmctl", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, bad = 0;

	*o = (struct opts){ .mode = "threads", .seed = 1, .seeds = 1, .rounds = 200,
			    .max_size = 65536, .argv0 = argv[0] };
	parse_versions(o, "all");
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case 'm':
			o->mode = optarg;
			bad |= strcmp(optarg, "threads") && strcmp(optarg, "procs");
			break;
		case 'v':
			bad |= parse_versions(o, optarg) < 0;
			break;
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			o->seeds = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			o->rounds = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			o->max_size = (uint32_t)strtoul(optarg, NULL, 0);
			bad |= o->max_size < 256 || o->max_size > (16u << 20);
			break;
		case 'p':
			o->pcmctl = optarg;
			break;
		case 'V':
			o->verbose = true;
			break;
		default:
			bad = 1;
		}
	}
	if (bad || optind != argc) {
		fprintf(stderr, "usage: %s [--mode threads|procs] [--version 8|9|10|all] [--seed S] "
			"[--seeds N] [--rounds R] [--max-size 256 .. 16777216] [--pcmctl PATH] "
			"[--verbose]\n", argv[0]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	void *lib = NULL;
	char err[256];

	if (parse(argc, argv, &o) < 0)
		return 2;
	g_verbose = o.verbose;
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(o.mode, "threads") == 0 && !(lib = hnet_open_library(err, sizeof(err)))) {
		fprintf(stderr, "FAIL: %s (is the plugin's directory on LD_LIBRARY_PATH?)\n", err);
		return 1;
	}
	for (uint32_t n = 0; n < o.seeds; n++) {
		uint64_t seed = o.seed + n;

		for (int v = 0; v < o.n_versions; v++) {
			int rc;

			printf("%s, v%d, seed %" PRIu64 ", %u rounds up to %u bytes:\n", o.mode,
			       o.versions[v], seed, o.rounds, o.max_size);
			fflush(stdout);
			rc = lib ? run_threads(&o, lib, o.versions[v], seed)
				 : run_procs(&o, o.versions[v], seed);
			if (rc < 0) {
				print_repro(&o, o.versions[v], seed);
				return 1;
			}
		}
	}
	printf("ok: %u seed(s) x %d version(s), %s\n", o.seeds, o.n_versions, o.mode);
	return 0;
}
