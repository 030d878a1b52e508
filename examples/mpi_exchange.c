// SPDX-License-Identifier: MIT
/*
 * mpi_exchange.c - MPI ranks moving data through pcmd: MPI is only the
 * bootstrap, libpcmtransport (daemon mode) carries every byte.
 *
 * Each rank attaches to pcmd's embedded softnic fabric as its own emulated
 * host (host<base + rank>, through $PCM_TP_DAEMON_HOST), listens at an
 * address of its own, and learns everyone's address with MPI_Allgather. It
 * then connects to its ring neighbour (rank + 1), or with --all to every other
 * rank, and sends each of them a hello (its rank) and --messages messages of
 * seeded sizes and contents; it accepts the connections of the ranks that dial
 * it and checks every byte of every message they send. After an MPI_Barrier
 * every rank closes, and rank 0 prints one JSON line: ranks, connections,
 * bytes, seconds (the slowest rank's), goodput and errors.
 *
 * A rank told --die-rank R --die-after K kills itself with SIGKILL once it has
 * sent K data messages: the others must then see errors (a failed completion,
 * or no completion for --wait-ms), never hang. A rank that sees an error
 * prints a JSON line of its own ("rank", "error") and exits 3 without the
 * final barrier, which the dead rank would never join. Under Open MPI, run
 * such a job with `--mca orte_enable_recovery 1 --mca orte_max_restarts 0
 * --mca orte_abort_on_non_zero_status 0`, so that mpirun lets the survivors
 * see the failure rather than killing them first.
 *
 * Usage: mpirun -np N example_mpi_exchange [--messages 64] [--max-size 262144]
 *        [--seed 1] [--all] [--host-base 0] [--any-host] [--policy swift]
 *        [--wait-ms 10000] [--die-rank R --die-after K] [--linger-ms 0] [--baseline]
 *
 * --linger-ms keeps the connections open that long after the exchange (after
 * rank 0's JSON line), so that `pcmctl flows` shows them. --baseline then
 * moves the same streams (sizes, bytes, window, checks) with MPI_Isend and
 * MPI_Irecv, and rank 0's line adds their time, goodput and
 * pcm_over_mpi_goodput, pcm's goodput over MPI's measured in the same run.
 *
 * pcmd's socket comes from $PCMD_SOCKET (default /run/pcmd/pcmd.sock).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <pcm/transport.h>

#define SLOTS 4          /* sends (and receives) outstanding per connection */
#define ADDR_BYTES 64    /* a listening address, as MPI_Allgather carries it */
#define HELLO_MAGIC 0x6d706921u
#define NO_OP UINT64_MAX /* a free slot */

struct opts {
	uint32_t messages;
	uint32_t max_size;
	uint64_t seed;
	int all;
	int host_base;
	int any_host;
	const char *policy;
	int wait_ms;
	int die_rank;
	uint32_t die_after;
	int linger_ms;
	int baseline;
};

/* One direction of one connection: this rank's sends to @peer, or @peer's to this rank. */
struct stream {
	struct pcm_tp_conn *conn;
	int peer;              /* the other rank; -1 until its hello arrives */
	uint32_t posted;       /* operations posted: hello (0) then messages 1..messages */
	uint32_t completed;
	uint64_t slot_op[SLOTS]; /* the operation each buffer slot holds, or NO_OP */
	uint8_t *buf;          /* SLOTS x (max_size + 8) */
};

struct rank {
	const struct opts *o;
	int me, ranks;
	struct pcm_tp_endpoint *ep;
	struct stream *out, *in; /* to the ranks this one dials; from those that dial it */
	int n_out, n_in;
	int accepted, connected;
	uint64_t rx_bytes, tx_bytes;
	uint64_t errors;
	char what[256]; /* the first error */
};

/* murmur3's 64-bit finaliser: the stream of sizes and bytes both ends derive */
static uint64_t fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

static uint64_t stream_key(const struct opts *o, int src, int dst, uint32_t k)
{
	return fmix64(o->seed ^ fmix64(((uint64_t)(uint32_t)src << 40) ^
				      ((uint64_t)(uint32_t)dst << 20) ^ k));
}

/* The size of message @k (1..messages) from @src to @dst: a mix of size classes. */
static size_t message_size(const struct opts *o, int src, int dst, uint32_t k)
{
	uint64_t h = stream_key(o, src, dst, k);
	uint64_t classes[] = { 1, 4095, 4096, 65536, 65537, o->max_size };
	uint64_t n = classes[h % 6] < o->max_size ? classes[h % 6] : o->max_size;

	/* every other message: a random size up to its class */
	return (size_t)((h >> 8) & 1 ? n : 1 + (h >> 16) % n);
}

static void fill_pattern(uint8_t *p, size_t n, uint64_t key)
{
	for (size_t w = 0; w * 8 < n; w++) {
		uint64_t v = fmix64(key + w);
		size_t left = n - w * 8 < 8 ? n - w * 8 : 8;

		memcpy(p + w * 8, &v, left);
	}
}

/* Return: the first byte that differs from the pattern, or @n. */
static size_t check_pattern(const uint8_t *p, size_t n, uint64_t key)
{
	for (size_t w = 0; w * 8 < n; w++) {
		uint64_t v = fmix64(key + w);
		size_t left = n - w * 8 < 8 ? n - w * 8 : 8;

		if (memcmp(p + w * 8, &v, left) != 0)
			for (size_t i = 0; i < left; i++)
				if (p[w * 8 + i] != ((const uint8_t *)&v)[i])
					return w * 8 + i;
	}
	return n;
}

static void error_at(struct rank *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void error_at(struct rank *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->errors++) {
		va_start(ap, fmt);
		vsnprintf(r->what, sizeof(r->what), fmt, ap);
		va_end(ap);
		fprintf(stderr, "mpi_exchange: rank %d: %s\n", r->me, r->what);
	}
}

static size_t slot_bytes(const struct opts *o)
{
	return (size_t)o->max_size + 8;
}

/* The rank that @src's stream @i goes to: the ring's next rank, or every other one in turn. */
static int target_of(const struct rank *r, int src, int i)
{
	return r->o->all ? (src + 1 + i) % r->ranks : (src + 1) % r->ranks;
}

/* The rank whose stream reaches this one as its @i-th incoming (target_of()'s inverse). */
static int source_of(const struct rank *r, int i)
{
	return r->o->all ? (r->me - 1 - i + r->ranks) % r->ranks
			 : (r->me - 1 + r->ranks) % r->ranks;
}

static int stream_alloc(struct rank *r, struct stream *s)
{
	s->peer = -1;
	for (int i = 0; i < SLOTS; i++)
		s->slot_op[i] = NO_OP;
	s->buf = pcm_tp_mem_alloc(r->ep, SLOTS * slot_bytes(r->o));
	if (!s->buf) {
		error_at(r, "mem_alloc: %s", pcm_tp_last_error());
		return -ENOMEM;
	}
	return 0;
}

/* Operation @k's slot is free: post it. Return: 0, 1 (slot busy), or -errno. */
static int post_send(struct rank *r, struct stream *s)
{
	uint32_t k = s->posted;
	uint8_t *p = s->buf + (k % SLOTS) * slot_bytes(r->o);
	size_t n;
	int rc;

	if (s->slot_op[k % SLOTS] != NO_OP)
		return 1;
	if (k == 0) {
		uint32_t hello[2] = { HELLO_MAGIC, (uint32_t)r->me };

		memcpy(p, hello, sizeof(hello));
		n = sizeof(hello);
	} else {
		n = message_size(r->o, r->me, s->peer, k);
		fill_pattern(p, n, stream_key(r->o, r->me, s->peer, k));
	}
	rc = pcm_tp_send(s->conn, NULL, p, n, ((uint64_t)(s - r->out) << 32) | k);
	if (rc < 0)
		return rc;
	s->slot_op[k % SLOTS] = k;
	s->posted++;
	return 0;
}

static int post_recv(struct rank *r, struct stream *s)
{
	uint32_t k = s->posted;
	int rc;

	if (s->slot_op[k % SLOTS] != NO_OP)
		return 1;
	rc = pcm_tp_recv(s->conn, NULL, s->buf + (k % SLOTS) * slot_bytes(r->o), slot_bytes(r->o),
			 ((uint64_t)(s - r->in) << 32) | k);
	if (rc < 0)
		return rc;
	s->slot_op[k % SLOTS] = k;
	s->posted++;
	return 0;
}

/* Post what each stream's free slots allow (the receiver waits for the hello first). */
static void post_all(struct rank *r)
{
	uint32_t last = r->o->messages + 1;
	int rc;

	for (int i = 0; i < r->n_out; i++)
		while (r->out[i].conn && r->out[i].posted < last) {
			rc = post_send(r, &r->out[i]);
			if (rc < 0 && rc != -EAGAIN)
				error_at(r, "send to rank %d: %s", r->out[i].peer, pcm_tp_strerror(rc));
			if (rc)
				break;
		}
	for (int i = 0; i < r->n_in; i++) {
		struct stream *s = &r->in[i];

		while (s->conn && s->posted < (s->peer < 0 ? 1u : last)) {
			rc = post_recv(r, s);
			if (rc < 0 && rc != -EAGAIN)
				error_at(r, "receive on connection %d: %s", i, pcm_tp_strerror(rc));
			if (rc)
				break;
		}
	}
}

/* Check received operation @k of @s (its slot's bytes, @bytes long). */
static void check_received(struct rank *r, struct stream *s, uint32_t k, uint64_t bytes)
{
	const uint8_t *p = s->buf + (k % SLOTS) * slot_bytes(r->o);
	uint32_t hello[2];
	size_t want, at;

	if (k == 0) {
		memcpy(hello, p, sizeof(hello));
		if (bytes != sizeof(hello) || hello[0] != HELLO_MAGIC || hello[1] >= (uint32_t)r->ranks ||
		    (int)hello[1] == r->me) {
			error_at(r, "connection %td: a hello that names no rank", s - r->in);
			return;
		}
		s->peer = (int)hello[1];
		return;
	}
	want = message_size(r->o, s->peer, r->me, k);
	if (bytes != want) {
		error_at(r, "message %u from rank %d: %" PRIu64 " bytes, %zu sent", k, s->peer, bytes,
			 want);
		return;
	}
	at = check_pattern(p, want, stream_key(r->o, s->peer, r->me, k));
	if (at != want) {
		error_at(r, "message %u from rank %d differs at byte %zu", k, s->peer, at);
		return;
	}
	r->rx_bytes += bytes;
}

static struct stream *stream_of(struct rank *r, const struct pcm_tp_completion *c)
{
	uint64_t i = c->cookie >> 32;

	if (c->op == PCM_TP_OP_SEND && i < (uint64_t)r->n_out)
		return &r->out[i];
	if (c->op == PCM_TP_OP_RECV && i < (uint64_t)r->n_in)
		return &r->in[i];
	return NULL;
}

static void on_data(struct rank *r, const struct pcm_tp_completion *c)
{
	struct stream *s = stream_of(r, c);
	uint32_t k = (uint32_t)c->cookie;

	if (!s || s->slot_op[k % SLOTS] != k) {
		error_at(r, "completion %d/%#" PRIx64 " names no posted operation", (int)c->op,
			 c->cookie);
		return;
	}
	s->slot_op[k % SLOTS] = NO_OP;
	s->completed++;
	if (c->status < 0) {
		error_at(r, "%s %u %s rank %d: %s", c->op == PCM_TP_OP_SEND ? "send" : "receive", k,
			 c->op == PCM_TP_OP_SEND ? "to" : "from", s->peer, pcm_tp_strerror(c->status));
		return;
	}
	if (c->op == PCM_TP_OP_RECV)
		check_received(r, s, k, c->bytes);
	else if (k > 0)
		r->tx_bytes += c->bytes;
	if (c->op == PCM_TP_OP_SEND && k == r->o->die_after && r->me == r->o->die_rank) {
		fprintf(stderr, "mpi_exchange: rank %d (pid %ld): killing itself (SIGKILL) after %u "
				"messages\n", r->me, (long)getpid(), k);
		raise(SIGKILL);
	}
}

static void on_setup(struct rank *r, const struct pcm_tp_completion *c)
{
	if (c->status < 0) {
		error_at(r, "%s: %s", c->op == PCM_TP_OP_ACCEPT ? "accept" : "connect",
			 pcm_tp_strerror(c->status));
		return;
	}
	if (c->op == PCM_TP_OP_ACCEPT && r->accepted < r->n_in) {
		r->in[r->accepted++].conn = c->conn;
	} else if (c->op == PCM_TP_OP_CONNECT && c->cookie < (uint64_t)r->n_out &&
		   !r->out[c->cookie].conn) {
		r->out[c->cookie].conn = c->conn;
		r->connected++;
	} else {
		error_at(r, "an unexpected completion %d", (int)c->op);
	}
}

static int all_done(const struct rank *r)
{
	uint32_t last = r->o->messages + 1;

	if (r->accepted < r->n_in || r->connected < r->n_out)
		return 0;
	for (int i = 0; i < r->n_out; i++)
		if (r->out[i].completed < last)
			return 0;
	for (int i = 0; i < r->n_in; i++)
		if (r->in[i].completed < last)
			return 0;
	return 1;
}

/* Drive every stream until all complete or the first error. */
static void exchange(struct rank *r)
{
	struct pcm_tp_completion c[16];
	int n;

	while (!r->errors && !all_done(r)) {
		post_all(r);
		n = pcm_tp_poll(r->ep, c, 16);
		if (n < 0) {
			error_at(r, "poll: %s", pcm_tp_strerror(n));
			break;
		}
		for (int i = 0; i < n; i++)
			if (c[i].op == PCM_TP_OP_SEND || c[i].op == PCM_TP_OP_RECV)
				on_data(r, &c[i]);
			else
				on_setup(r, &c[i]);
		if (n == 0) {
			int rc = pcm_tp_wait(r->ep, r->o->wait_ms);

			if (rc < 0)
				error_at(r, "no completion for %d ms: %s", r->o->wait_ms,
					 pcm_tp_strerror(rc));
		}
	}
}

/* This rank's emulated host, its listening address, and its peers' addresses. */
static int bootstrap(struct rank *r, char *mine)
{
	struct pcm_tp_config cfg = { .backend = PCM_TP_BACKEND_DAEMON, .policy = r->o->policy };
	char host[32];
	size_t per_stream = SLOTS * slot_bytes(r->o) + 4096;
	int rc;

	if (!r->o->any_host) {
		snprintf(host, sizeof(host), "host%d", r->o->host_base + r->me);
		setenv("PCM_TP_DAEMON_HOST", host, 1);
	}
	/* room for every stream's slots, with pcm_tp_mem_alloc()'s rounding */
	cfg.daemon_region_bytes = ((size_t)(r->n_in + r->n_out) * per_stream + (4u << 20)) &
				  ~((size_t)(1u << 20) - 1);
	rc = pcm_tp_endpoint_open(&cfg, &r->ep);
	if (rc < 0) {
		error_at(r, "endpoint_open (as %s): %s (%s)", r->o->any_host ? "any host" : host,
			 pcm_tp_strerror(rc), pcm_tp_last_error());
		return rc;
	}
	snprintf(mine, ADDR_BYTES, "mpi-exchange.%ld.rank%d", (long)getpid(), r->me);
	rc = pcm_tp_listen(r->ep, mine);
	if (rc < 0) {
		error_at(r, "listen at %s: %s", mine, pcm_tp_strerror(rc));
		return rc;
	}
	for (int i = 0; i < r->n_out; i++)
		if (stream_alloc(r, &r->out[i]) < 0)
			return -ENOMEM;
	for (int i = 0; i < r->n_in; i++)
		if (stream_alloc(r, &r->in[i]) < 0)
			return -ENOMEM;
	return 0;
}

static int dial(struct rank *r, char (*addrs)[ADDR_BYTES])
{
	int rc;

	for (int i = 0; i < r->n_in; i++) {
		rc = pcm_tp_accept(r->ep, (uint64_t)i);
		if (rc < 0) {
			error_at(r, "accept: %s", pcm_tp_strerror(rc));
			return rc;
		}
	}
	for (int i = 0; i < r->n_out; i++) {
		r->out[i].peer = target_of(r, r->me, i);
		rc = pcm_tp_connect(r->ep, addrs[r->out[i].peer], NULL, (uint64_t)i);
		if (rc < 0) {
			error_at(r, "connect to rank %d at %s: %s", r->out[i].peer, addrs[r->out[i].peer],
				 pcm_tp_strerror(rc));
			return rc;
		}
	}
	return 0;
}

static void close_all(struct rank *r)
{
	for (int i = 0; i < r->n_out; i++)
		if (r->out[i].conn)
			pcm_tp_conn_close(r->out[i].conn);
	for (int i = 0; i < r->n_in; i++)
		if (r->in[i].conn)
			pcm_tp_conn_close(r->in[i].conn);
	pcm_tp_endpoint_close(r->ep);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: mpirun -np N %s [--messages N] [--max-size B] [--seed S] [--all]\n"
		"       [--host-base H] [--any-host] [--policy P] [--wait-ms MS]\n"
		"       [--die-rank R --die-after K] [--linger-ms MS] [--baseline]\n",
		argv0);
}

static int parse_uint(const char *flag, const char *s, unsigned long lo, unsigned long hi,
		      unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	if (errno || end == s || *end || *out < lo || *out > hi) {
		fprintf(stderr, "mpi_exchange: %s %s: must be %lu .. %lu\n", flag, s, lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "messages", required_argument, NULL, 'n' },
		{ "max-size", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "all", no_argument, NULL, 'a' },
		{ "host-base", required_argument, NULL, 'H' },
		{ "any-host", no_argument, NULL, 'A' },
		{ "policy", required_argument, NULL, 'p' },
		{ "wait-ms", required_argument, NULL, 'w' },
		{ "die-rank", required_argument, NULL, 'r' },
		{ "die-after", required_argument, NULL, 'k' },
		{ "linger-ms", required_argument, NULL, 'l' },
		{ "baseline", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v = 0;
	int ch, rc = 0;

	*o = (struct opts){ .messages = 64, .max_size = 256 << 10, .seed = 1, .wait_ms = 10000,
			    .die_rank = -1 };
	while (rc == 0 && (ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case 'n':
			rc = parse_uint("--messages", optarg, 1, 1u << 20, &v);
			o->messages = (uint32_t)v;
			break;
		case 's':
			rc = parse_uint("--max-size", optarg, 1, 16u << 20, &v);
			o->max_size = (uint32_t)v;
			break;
		case 'S':
			rc = parse_uint("--seed", optarg, 0, ULONG_MAX, &v);
			o->seed = v;
			break;
		case 'a':
			o->all = 1;
			break;
		case 'H':
			rc = parse_uint("--host-base", optarg, 0, 4095, &v);
			o->host_base = (int)v;
			break;
		case 'A':
			o->any_host = 1;
			break;
		case 'b':
			o->baseline = 1;
			break;
		case 'p':
			o->policy = optarg;
			break;
		case 'w':
			rc = parse_uint("--wait-ms", optarg, 1, 3600000, &v);
			o->wait_ms = (int)v;
			break;
		case 'r':
			rc = parse_uint("--die-rank", optarg, 0, 4095, &v);
			o->die_rank = (int)v;
			break;
		case 'k':
			rc = parse_uint("--die-after", optarg, 1, 1u << 20, &v);
			o->die_after = (uint32_t)v;
			break;
		case 'l':
			rc = parse_uint("--linger-ms", optarg, 0, 600000, &v);
			o->linger_ms = (int)v;
			break;
		default:
			usage(argv[0]);
			return -EINVAL;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "mpi_exchange: unexpected argument %s\n", argv[optind]);
		rc = -EINVAL;
	}
	if (rc == 0 && o->die_rank >= 0 && !o->die_after) {
		fprintf(stderr, "mpi_exchange: --die-rank needs --die-after K\n");
		rc = -EINVAL;
	}
	return rc;
}

/*
 * MPI_Barrier with a deadline: a rank that is gone must not turn into a hang.
 * Return: 0, or -ETIMEDOUT.
 */
static int barrier_within(int timeout_ms)
{
	struct timespec ms = { 0, 1000000 };
	MPI_Request req;
	double deadline = MPI_Wtime() + timeout_ms / 1e3;
	int done = 0;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
		if (MPI_Wtime() > deadline)
			return -ETIMEDOUT;
		nanosleep(&ms, NULL);
	}
	return done ? 0 : -EIO;
}

/* The bytes every stream of the job carries, as the seed decides them. */
static uint64_t expected_bytes(const struct rank *r)
{
	uint64_t sum = 0;

	for (int src = 0; src < r->ranks; src++)
		for (int i = 0; i < r->n_out; i++)
			for (uint32_t k = 1; k <= r->o->messages; k++)
				sum += message_size(r->o, src, target_of(r, src, i), k);
	return sum;
}

/* A rank that saw an error reports it on its own: the final barrier may never complete. */
static void report_error(struct rank *r, double seconds)
{
	/* the text goes into a JSON string: no quote or backslash may end it early */
	for (char *p = r->what; *p; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
			*p = '\'';
	printf("{\"example\":\"mpi_exchange\",\"rank\":%d,\"ranks\":%d,\"errors\":%" PRIu64
	       ",\"rx_bytes\":%" PRIu64 ",\"seconds\":%.6f,\"error\":\"%s\"}\n",
	       r->me, r->ranks, r->errors, r->rx_bytes, seconds, r->what);
	fflush(stdout);
}

/* Baseline slot @j (stream j / SLOTS: receives first, then sends): post message @k over MPI. */
static void baseline_post(const struct rank *r, uint8_t *buf, MPI_Request *req, int j, uint32_t k)
{
	int stream = j / SLOTS, in = stream < r->n_in;
	int peer = in ? source_of(r, stream) : target_of(r, r->me, stream - r->n_in);
	uint8_t *p = buf + (size_t)j * slot_bytes(r->o);
	size_t len;

	if (in) {
		MPI_Irecv(p, (int)slot_bytes(r->o), MPI_BYTE, peer, (int)(k % 32768), MPI_COMM_WORLD,
			  &req[j]);
		return;
	}
	len = message_size(r->o, r->me, peer, k);
	fill_pattern(p, len, stream_key(r->o, r->me, peer, k));
	MPI_Isend(p, (int)len, MPI_BYTE, peer, (int)(k % 32768), MPI_COMM_WORLD, &req[j]);
}

/* Baseline slot @j's receive of message @k completed with @st: check it. */
static void baseline_check(struct rank *r, const uint8_t *buf, int j, uint32_t k,
			   const MPI_Status *st)
{
	int src = source_of(r, j / SLOTS), got = 0;
	size_t want = message_size(r->o, src, r->me, k);

	MPI_Get_count(st, MPI_BYTE, &got);
	if ((size_t)got != want ||
	    check_pattern(buf + (size_t)j * slot_bytes(r->o), want, stream_key(r->o, src, r->me, k)) !=
		    want)
		error_at(r, "baseline: message %u from rank %d is not what was sent", k, src);
}

/*
 * The baseline: the same streams (sizes, bytes, SLOTS outstanding per
 * stream, a slot reposted as soon as it completes, every byte checked) over
 * MPI's own point-to-point messages, which Open MPI carries through shared
 * memory between ranks on one machine.
 * Return: this rank's seconds, or a negative number after an error.
 */
static double baseline_exchange(struct rank *r)
{
	int slots = (r->n_in + r->n_out) * SLOTS, done = 0, n, *idx;
	uint8_t *buf = malloc((size_t)slots * slot_bytes(r->o));
	MPI_Request *req = calloc((size_t)slots, sizeof(*req));
	MPI_Status *st = calloc((size_t)slots, sizeof(*st));
	uint32_t *op = calloc((size_t)slots, sizeof(*op)); /* the message each slot holds */
	double t0;

	idx = calloc((size_t)slots, sizeof(*idx));
	if (!buf || !req || !st || !op || !idx)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int j = 0; j < slots; j++) {
		op[j] = 1 + (uint32_t)(j % SLOTS);
		req[j] = MPI_REQUEST_NULL;
		if (op[j] <= r->o->messages)
			baseline_post(r, buf, req, j, op[j]);
		else
			done++;
	}
	while (done < slots && !r->errors) {
		if (MPI_Waitsome(slots, req, &n, idx, st) != MPI_SUCCESS || n == MPI_UNDEFINED) {
			error_at(r, "baseline: MPI_Waitsome failed");
			break;
		}
		for (int i = 0; i < n; i++) {
			int j = idx[i];

			if (j / SLOTS < r->n_in)
				baseline_check(r, buf, j, op[j], &st[i]);
			op[j] += SLOTS;
			if (op[j] <= r->o->messages)
				baseline_post(r, buf, req, j, op[j]);
			else
				done++;
		}
	}
	t0 = MPI_Wtime() - t0;
	free(idx);
	free(op);
	free(st);
	free(req);
	free(buf);
	return r->errors ? -1.0 : t0;
}

/*
 * Rank 0 prints the job's totals: every rank's received bytes (which must be
 * what the seed says) and errors. Return: 0, or -EIO on rank 0 when they are not.
 */
static int report_totals(const struct rank *r, const struct opts *o, double seconds,
			 double mpi_seconds)
{
	uint64_t mine[2] = { r->rx_bytes, r->errors }, sum[2] = { 0, 0 }, want;
	double slowest[2] = { 0, 0 }, times[2] = { seconds, mpi_seconds }, pcm_gbps, mpi_gbps;

	MPI_Reduce(mine, sum, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(times, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (r->me != 0)
		return 0;
	want = expected_bytes(r);
	if (sum[0] != want)
		sum[1]++;
	pcm_gbps = slowest[0] > 0 ? (double)sum[0] * 8 / slowest[0] / 1e9 : 0.0;
	printf("{\"example\":\"mpi_exchange\",\"ranks\":%d,\"connections\":%d,\"messages\":%u,"
	       "\"max_size\":%u,\"seed\":%" PRIu64 ",\"bytes\":%" PRIu64
	       ",\"expected_bytes\":%" PRIu64 ",\"seconds\":%.6f,\"goodput_gbps\":%.6g,"
	       "\"errors\":%" PRIu64,
	       r->ranks, r->ranks * r->n_out, o->messages, o->max_size, o->seed, sum[0], want,
	       slowest[0], pcm_gbps, sum[1]);
	if (o->baseline) {
		mpi_gbps = slowest[1] > 0 ? (double)want * 8 / slowest[1] / 1e9 : 0.0;
		printf(",\"baseline\":\"mpi_isend_irecv\",\"mpi_seconds\":%.6f,"
		       "\"mpi_goodput_gbps\":%.6g,\"pcm_over_mpi_goodput\":%.6g",
		       slowest[1], mpi_gbps, mpi_gbps > 0 ? pcm_gbps / mpi_gbps : 0.0);
	}
	printf("}\n");
	fflush(stdout);
	return sum[1] ? -EIO : 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct rank r = { .o = &o };
	char (*addrs)[ADDR_BYTES] = NULL;
	double t0, seconds, mpi_seconds;
	int failed;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r.me);
	MPI_Comm_size(MPI_COMM_WORLD, &r.ranks);
	/* a dead rank fails the final barrier with an error, not an abort */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (parse(argc, argv, &o) < 0) {
		MPI_Finalize();
		return 2;
	}
	if (r.ranks < 2) {
		if (r.me == 0)
			fprintf(stderr, "mpi_exchange: needs at least 2 ranks (mpirun -np N)\n");
		MPI_Finalize();
		return 2;
	}
	r.n_out = o.all ? r.ranks - 1 : 1;
	r.n_in = r.n_out; /* the ring's previous rank, or every other one */
	r.out = calloc((size_t)r.n_out, sizeof(*r.out));
	r.in = calloc((size_t)r.n_in, sizeof(*r.in));
	addrs = calloc((size_t)r.ranks, ADDR_BYTES);
	if (!r.out || !r.in || !addrs)
		MPI_Abort(MPI_COMM_WORLD, 1);
	failed = bootstrap(&r, addrs[r.me]) < 0;
	/* every rank listens before anyone dials: the addresses travel once all do */
	MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (failed)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, addrs, ADDR_BYTES, MPI_CHAR,
		      MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (dial(&r, addrs) == 0)
		exchange(&r);
	seconds = MPI_Wtime() - t0;
	if (r.errors) {
		report_error(&r, seconds);
		_exit(3); /* no barrier, no MPI_Finalize: a rank may be gone */
	}
	if (barrier_within(o.wait_ms) < 0) {
		error_at(&r, "the final barrier did not complete in %d ms (a rank is gone)",
			 o.wait_ms);
		report_error(&r, seconds);
		_exit(3);
	}
	mpi_seconds = o.baseline ? baseline_exchange(&r) : 0.0;
	if (mpi_seconds < 0) {
		report_error(&r, seconds);
		_exit(3);
	}
	failed = report_totals(&r, &o, seconds, mpi_seconds) < 0;
	if (o.linger_ms) {
		struct timespec t = { o.linger_ms / 1000, (o.linger_ms % 1000) * 1000000L };

		nanosleep(&t, NULL); /* the connections stay open for pcmctl flows */
		MPI_Barrier(MPI_COMM_WORLD);
	}
	close_all(&r);
	free(addrs);
	free(r.out);
	free(r.in);
	MPI_Finalize();
	return failed;
}
