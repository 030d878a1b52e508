// SPDX-License-Identifier: MIT
/*
 * mpi_check.c - an ordinary MPI program that checks what MPI gives it,
 * whatever carries it: run with Open MPI's `--mca pml cm --mca mtl ofi
 * --mca mtl_ofi_provider_include pcm` it goes over the pcm libfabric
 * provider; with `tcp`, or Open MPI's defaults, over libfabric's tcp
 * provider or shared memory (bench/fi_baselines.sh runs it all three ways).
 *
 * Phases, each checking every byte or value against what it must be:
 *   p2p         every rank to every rank, itself included (offset d = 0 .. N-1), messages
 *               of 1 B .. 4 MiB (odd sizes around the eager and segment
 *               limits), with MPI_Sendrecv and MPI_Isend/MPI_Irecv, and
 *               MPI_Send/MPI_Recv between partner ranks (0-1, 2-3, ...);
 *   window      each rank's predecessor sends --window tagged messages with
 *               MPI_Isend in one order; the rank posts their MPI_Irecv in
 *               another (a seeded permutation), so they match out of order
 *               by tag; then one MPI_ANY_SOURCE/MPI_ANY_TAG receive;
 *   collectives MPI_Allreduce (sum of ints, max of doubles), MPI_Alltoall,
 *               MPI_Bcast from every root, MPI_Barrier.
 * Rank 0 prints one JSON line with the totals ("errors": 0 when all held).
 *
 * --bench adds timings after the checks: rank 0 and 1 ping-pong per size
 * (half the round trip, µs) and a streaming bandwidth per size, and the
 * collectives' times, one JSON line each.
 *
 * --die-rank R --die-after K: rank R kills itself (SIGKILL) after K rounds
 * of a ring exchange (with --fan-in: of taking an 8 KiB message from every
 * other rank, which all send to it); every other rank must then get an error
 * from MPI (it runs MPI_ERRORS_RETURN) within --wait-ms, and prints a JSON
 * line saying which call failed, or, if none does, what it was waiting for
 * ("hang").
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#define MAX_SIZE (4u << 20)

struct opts {
	uint64_t seed;
	size_t max_size;
	int window;
	int bench;
	int iters;
	int die_rank;
	int die_after;
	int wait_ms;
	int fan_in; /* --fan-in: every rank sends to the dying rank instead of a ring */
};

struct run {
	const struct opts *o;
	int me, n;
	uint64_t errors, checks, bytes;
	uint64_t sent; /* bytes this rank sent to other ranks in p2p and window */
	char what[256];
};

static uint64_t fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

static uint64_t key_of(const struct run *r, int src, int dst, uint64_t what)
{
	return fmix64(r->o->seed ^ fmix64(((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ what));
}

static void fill(uint8_t *p, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = fmix64(key + i);

		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

/* Return: the first byte that differs from fill()'s, or @n. */
static size_t differs(const uint8_t *p, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = fmix64(key + i);
		size_t k = n - i < 8 ? n - i : 8;

		for (size_t j = 0; j < k; j++)
			if (p[i + j] != ((const uint8_t *)&v)[j])
				return i + j;
	}
	return n;
}

static void error_at(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void error_at(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->errors++)
		return;
	va_start(ap, fmt);
	vsnprintf(r->what, sizeof(r->what), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mpi_check: rank %d: %s\n", r->me, r->what);
}

static int mpi_ok(struct run *r, int rc, const char *call)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return 1;
	MPI_Error_string(rc, text, &len);
	error_at(r, "%s: %s", call, text);
	return 0;
}

static void check_buf(struct run *r, const uint8_t *p, size_t n, uint64_t key, const char *what,
		      int peer)
{
	size_t at = differs(p, n, key);

	r->checks++;
	if (at != n)
		error_at(r, "%s of %zu bytes from rank %d differs at byte %zu", what, n, peer, at);
	else
		r->bytes += n;
}

/* ---- p2p ------------------------------------------------------------------------------------- */

static const size_t p2p_sizes[] = {
	1, 2, 3, 7, 64, 1000, 4095, 4096, 4097, 16383, 16384, 16385, 65472, 65536, 65537,
	131072, 262147, 1 << 20, (1 << 20) + 3, 3 << 20, MAX_SIZE,
};

/* Plain MPI_Send/MPI_Recv with the partner rank (me ^ 1), the lower rank first. */
static void pair(struct run *r, uint8_t *tx, uint8_t *rx, size_t n)
{
	int peer = r->me ^ 1, got = 0;
	MPI_Status st;

	if (peer >= r->n || r->errors)
		return;
	fill(tx, n, key_of(r, r->me, peer, n ^ 0xa5a5));
	r->sent += n;
	if (r->me < peer) {
		mpi_ok(r, MPI_Send(tx, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD), "MPI_Send");
		mpi_ok(r, MPI_Recv(rx, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st), "MPI_Recv");
	} else {
		mpi_ok(r, MPI_Recv(rx, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st), "MPI_Recv");
		mpi_ok(r, MPI_Send(tx, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD), "MPI_Send");
	}
	MPI_Get_count(&st, MPI_BYTE, &got);
	if ((size_t)got != n)
		error_at(r, "MPI_Recv from rank %d: %d bytes, %zu sent", peer, got, n);
	check_buf(r, rx, n, key_of(r, peer, r->me, n ^ 0xa5a5), "MPI_Recv", peer);
}

static void p2p(struct run *r, uint8_t *tx, uint8_t *rx)
{
	for (size_t s = 0; s < sizeof(p2p_sizes) / sizeof(p2p_sizes[0]); s++) {
		size_t n = p2p_sizes[s];

		if (n > r->o->max_size)
			continue;
		for (int d = 0; d < r->n && !r->errors; d++) {
			int to = (r->me + d) % r->n, from = (r->me - d + r->n) % r->n;
			MPI_Request q[2];
			MPI_Status st;
			int got = 0;

			if (to != r->me)
				r->sent += 2 * n;
			fill(tx, n, key_of(r, r->me, to, n));
			mpi_ok(r, MPI_Sendrecv(tx, (int)n, MPI_BYTE, to, 1, rx, (int)n, MPI_BYTE, from,
					       1, MPI_COMM_WORLD, &st), "MPI_Sendrecv");
			MPI_Get_count(&st, MPI_BYTE, &got);
			if ((size_t)got != n)
				error_at(r, "MPI_Sendrecv from rank %d: %d bytes, %zu sent", from, got, n);
			check_buf(r, rx, n, key_of(r, from, r->me, n), "MPI_Sendrecv", from);
				/* non-blocking, both at once */
			fill(tx, n, key_of(r, r->me, to, n ^ 0x5a5a));
			mpi_ok(r, MPI_Irecv(rx, (int)n, MPI_BYTE, from, 2, MPI_COMM_WORLD, &q[0]),
			       "MPI_Irecv");
			mpi_ok(r, MPI_Isend(tx, (int)n, MPI_BYTE, to, 2, MPI_COMM_WORLD, &q[1]),
			       "MPI_Isend");
			mpi_ok(r, MPI_Waitall(2, q, MPI_STATUSES_IGNORE), "MPI_Waitall");
			check_buf(r, rx, n, key_of(r, from, r->me, n ^ 0x5a5a), "MPI_Irecv", from);
		}
		pair(r, tx, rx, n);
	}
}

/* ---- the tagged window ---------------------------------------------------------------------- */

static size_t window_size(const struct run *r, int src, int tag)
{
	static const size_t classes[] = {0, 1, 100, 4096, 16000, 16385, 70000, 262144};
	uint64_t h = key_of(r, src, 0, 0x77000000u + (uint64_t)tag);
	size_t n = classes[h % 8];

	return n > r->o->max_size ? r->o->max_size : n;
}

/* A seeded permutation of 0 .. w-1 (Fisher-Yates). */
static void permute(int *p, int w, uint64_t key)
{
	for (int i = 0; i < w; i++)
		p[i] = i;
	for (int i = w - 1; i > 0; i--) {
		int j = (int)(fmix64(key + (uint64_t)i) % (uint64_t)(i + 1)), t = p[i];

		p[i] = p[j];
		p[j] = t;
	}
}

static void window(struct run *r)
{
	int w = r->o->window, to = (r->me + 1) % r->n, from = (r->me - 1 + r->n) % r->n;
	size_t slot = 262144;
	uint8_t *tx = malloc((size_t)w * slot), *rx = malloc((size_t)w * slot);
	MPI_Request *q = calloc(2 * (size_t)w, sizeof(*q));
	int *send_order = calloc((size_t)w, sizeof(int)), *recv_order = calloc((size_t)w, sizeof(int));
	uint64_t token, got_token = 0;
	MPI_Status st;

	if (!tx || !rx || !q || !send_order || !recv_order)
		MPI_Abort(MPI_COMM_WORLD, 1);
	permute(recv_order, w, key_of(r, r->me, from, 0x11));
	permute(send_order, w, key_of(r, r->me, to, 0x22));
	for (int i = 0; i < w; i++) {
		int tag = recv_order[i];

		mpi_ok(r, MPI_Irecv(rx + (size_t)tag * slot, (int)slot, MPI_BYTE, from, 100 + tag,
				    MPI_COMM_WORLD, &q[i]), "MPI_Irecv (window)");
	}
	MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted: the sends all match posted ones */
	for (int i = 0; i < w; i++) {
		int tag = send_order[i];
		size_t n = window_size(r, r->me, tag);

		fill(tx + (size_t)tag * slot, n, key_of(r, r->me, to, 0x1000 + (uint64_t)tag));
		r->sent += to != r->me ? n : 0;
		mpi_ok(r, MPI_Isend(tx + (size_t)tag * slot, (int)n, MPI_BYTE, to, 100 + tag,
				    MPI_COMM_WORLD, &q[w + i]), "MPI_Isend (window)");
	}
	mpi_ok(r, MPI_Waitall(2 * w, q, MPI_STATUSES_IGNORE), "MPI_Waitall (window)");
	for (int tag = 0; tag < w; tag++)
		check_buf(r, rx + (size_t)tag * slot, window_size(r, from, tag),
			  key_of(r, from, r->me, 0x1000 + (uint64_t)tag), "tagged MPI_Irecv", from);
	/* one receive from anyone with any tag: the predecessor's token */
	token = key_of(r, r->me, to, 0x33);
	mpi_ok(r, MPI_Isend(&token, 1, MPI_UINT64_T, to, 7, MPI_COMM_WORLD, &q[0]), "MPI_Isend");
	mpi_ok(r, MPI_Recv(&got_token, 1, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
			   &st), "MPI_Recv (any)");
	mpi_ok(r, MPI_Wait(&q[0], MPI_STATUS_IGNORE), "MPI_Wait");
	r->checks++;
	if (st.MPI_SOURCE != from || st.MPI_TAG != 7 || got_token != key_of(r, from, r->me, 0x33))
		error_at(r, "MPI_ANY_SOURCE: source %d tag %d token %#" PRIx64, st.MPI_SOURCE,
			 st.MPI_TAG, got_token);
	free(recv_order);
	free(send_order);
	free(q);
	free(rx);
	free(tx);
}

/* ---- collectives ------------------------------------------------------------------------------ */

static void allreduce(struct run *r, int count)
{
	int *in = malloc((size_t)count * sizeof(int)), *out = malloc((size_t)count * sizeof(int));
	double din[4], dout[4];

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < count; i++)
		in[i] = (r->me + 1) * (i % 1000 + 1);
	mpi_ok(r, MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
	for (int i = 0; i < count; i++) {
		int want = r->n * (r->n + 1) / 2 * (i % 1000 + 1);

		r->checks++;
		if (out[i] != want) {
			error_at(r, "MPI_Allreduce(%d ints) [%d] = %d, want %d", count, i, out[i], want);
			break;
		}
	}
	for (int i = 0; i < 4; i++)
		din[i] = r->me * 0.5 + i;
	mpi_ok(r, MPI_Allreduce(din, dout, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
	       "MPI_Allreduce (max)");
	r->checks++;
	if (dout[3] != (r->n - 1) * 0.5 + 3)
		error_at(r, "MPI_Allreduce(MPI_MAX) = %g", dout[3]);
	free(out);
	free(in);
}

static void alltoall(struct run *r, int count)
{
	size_t all = (size_t)count * (size_t)r->n;
	int *in = malloc(all * sizeof(int)), *out = malloc(all * sizeof(int));

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int d = 0; d < r->n; d++)
		for (int i = 0; i < count; i++)
			in[(size_t)d * count + i] = r->me * 1000003 + d * 1009 + i;
	mpi_ok(r, MPI_Alltoall(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD),
	       "MPI_Alltoall");
	for (int s = 0; s < r->n; s++)
		for (int i = 0; i < count; i++) {
			int want = s * 1000003 + r->me * 1009 + i;

			r->checks++;
			if (out[(size_t)s * count + i] != want) {
				error_at(r, "MPI_Alltoall(%d) from %d [%d] = %d, want %d", count, s, i,
					 out[(size_t)s * count + i], want);
				s = r->n;
				break;
			}
		}
	free(out);
	free(in);
}

static void bcast(struct run *r, uint8_t *buf, size_t n)
{
	for (int root = 0; root < r->n && !r->errors; root++) {
		uint64_t key = key_of(r, root, 0xbcbc, n);

		if (r->me == root)
			fill(buf, n, key);
		else
			memset(buf, 0, n);
		mpi_ok(r, MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
		check_buf(r, buf, n, key, "MPI_Bcast", root);
	}
}

static void collectives(struct run *r, uint8_t *buf)
{
	allreduce(r, 1);
	allreduce(r, 1000);
	allreduce(r, 1 << 18);
	alltoall(r, 1);
	alltoall(r, 4096);
	bcast(r, buf, 1);
	bcast(r, buf, 100000);
	bcast(r, buf, r->o->max_size);
	mpi_ok(r, MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

/* ---- timings (--bench) ------------------------------------------------------------------------ */

static void bench_p2p(struct run *r, uint8_t *tx, uint8_t *rx)
{
	static const size_t sizes[] = {8, 64, 1024, 4096, 16384, 65536, 1 << 20, MAX_SIZE};
	MPI_Request q[16];

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		int iters = n >= 65536 ? r->o->iters / 10 + 1 : r->o->iters;
		double t0, lat, bw = 0;

		if (n > r->o->max_size)
			continue;
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters && r->me < 2; i++) {
			if (r->me == 0) {
				MPI_Send(tx, (int)n, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
				MPI_Recv(rx, (int)n, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(rx, (int)n, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(tx, (int)n, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
			}
		}
		lat = (MPI_Wtime() - t0) / iters / 2 * 1e6;
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters && r->me < 2; i++) {
			for (int k = 0; k < 16; k++)
				if (r->me == 0)
					MPI_Isend(tx, (int)n, MPI_BYTE, 1, 10, MPI_COMM_WORLD, &q[k]);
				else
					MPI_Irecv(rx, (int)n, MPI_BYTE, 0, 10, MPI_COMM_WORLD, &q[k]);
			MPI_Waitall(16, q, MPI_STATUSES_IGNORE);
		}
		if (r->me < 2)
			MPI_Sendrecv(tx, 1, MPI_BYTE, 1 - r->me, 11, rx, 1, MPI_BYTE, 1 - r->me, 11,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		bw = (double)n * 16 * iters / (MPI_Wtime() - t0) / 1e6;
		if (r->me == 0)
			printf("{\"bench\":\"mpi_p2p\",\"ranks\":%d,\"size\":%zu,\"iters\":%d,"
			       "\"latency_us\":%.3f,\"bandwidth_mbps\":%.3f}\n",
			       r->n, n, iters, lat, bw);
	}
}

static void bench_coll(struct run *r, uint8_t *buf)
{
	static const int counts[] = {1, 1024, 262144};
	int *in = malloc(262144 * sizeof(int)), *out = malloc(262144 * sizeof(int) * (size_t)r->n);

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(in, 1, 262144 * sizeof(int));
	for (int c = 0; c < 3; c++) {
		int iters = counts[c] > 1024 ? r->o->iters / 10 + 1 : r->o->iters;
		double t[3];

		MPI_Barrier(MPI_COMM_WORLD);
		t[0] = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Allreduce(in, out, counts[c], MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		t[0] = MPI_Wtime() - t[0];
		t[1] = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Alltoall(in, counts[c] / r->n + 1, MPI_INT, out, counts[c] / r->n + 1,
				     MPI_INT, MPI_COMM_WORLD);
		t[1] = MPI_Wtime() - t[1];
		t[2] = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Bcast(buf, counts[c] * (int)sizeof(int), MPI_BYTE, 0, MPI_COMM_WORLD);
		t[2] = MPI_Wtime() - t[2];
		MPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (r->me == 0)
			printf("{\"bench\":\"mpi_coll\",\"ranks\":%d,\"ints\":%d,\"iters\":%d,"
			       "\"allreduce_us\":%.3f,\"alltoall_us\":%.3f,\"bcast_us\":%.3f}\n",
			       r->n, counts[c], iters, t[0] / iters * 1e6, t[1] / iters * 1e6,
			       t[2] / iters * 1e6);
	}
	free(out);
	free(in);
}

/* ---- a rank that dies ------------------------------------------------------------------------- */

/* No completion and no error by the deadline: say which of the round's two waits. */
static void report_hang(const struct run *r, MPI_Request *q, int round, int from, int to)
{
	int recv_done = 0, send_done = 0;

	MPI_Test(&q[0], &recv_done, MPI_STATUS_IGNORE); /* a null request tests done */
	MPI_Test(&q[1], &send_done, MPI_STATUS_IGNORE);
	printf("{\"test\":\"mpi_check\",\"rank\":%d,\"hang\":\"round %d: no completion and no "
	       "error for %d ms:%s%s\"}\n",
	       r->me, round, r->o->wait_ms,
	       recv_done ? "" : (from == r->o->die_rank ? " MPI_Irecv from the killed rank" :
							  " MPI_Irecv from a living rank"),
	       send_done ? "" : (to == r->o->die_rank ? " MPI_Isend to the killed rank" :
							" MPI_Isend to a living rank"));
	fflush(stdout);
	_exit(4);
}

/*
 * Ring rounds until rank die_rank kills itself; the others wait on each
 * round with a deadline: an error from MPI is what they must get.
 */
static void die_and_watch(struct run *r, uint8_t *tx, uint8_t *rx)
{
	int to = (r->me + 1) % r->n, from = (r->me - 1 + r->n) % r->n;

	for (int round = 0; round < 1000000 && !r->errors; round++) {
		MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
		double deadline = MPI_Wtime() + r->o->wait_ms / 1e3;
		int done = 0, rc;

		if (r->me == r->o->die_rank && round == r->o->die_after) {
			fprintf(stderr, "mpi_check: rank %d (pid %ld): killing itself after %d rounds\n",
				r->me, (long)getpid(), round);
			raise(SIGKILL);
		}
		if (r->o->fan_in && r->me == r->o->die_rank) {
			/* the dying rank takes one message from every other rank per round */
			for (int s = 0; s < r->n && !r->errors; s++)
				if (s != r->me)
					mpi_ok(r, MPI_Recv(rx, 8192, MPI_BYTE, s, 3, MPI_COMM_WORLD,
							   MPI_STATUS_IGNORE), "MPI_Recv");
			continue;
		}
		if (!r->o->fan_in &&
		    !mpi_ok(r, MPI_Irecv(rx, 65536, MPI_BYTE, from, 3, MPI_COMM_WORLD, &q[0]),
			    "MPI_Irecv"))
			break;
		if (!mpi_ok(r, MPI_Isend(tx, r->o->fan_in ? 8192 : 65536, MPI_BYTE,
					 r->o->fan_in ? r->o->die_rank : to, 3, MPI_COMM_WORLD, &q[1]),
			    "MPI_Isend"))
			break;
		while (!done) {
			rc = MPI_Testall(2, q, &done, MPI_STATUSES_IGNORE);
			if (!mpi_ok(r, rc, "MPI_Testall"))
				break;
			if (!done && MPI_Wtime() > deadline)
				report_hang(r, q, round, from, r->o->fan_in ? r->o->die_rank : to);
		}
	}
	printf("{\"test\":\"mpi_check\",\"rank\":%d,\"mpi_error\":\"%s\"}\n", r->me,
	       r->errors ? r->what : "none");
	fflush(stdout);
	_exit(r->errors ? 3 : 5);
}

/* ---- main ------------------------------------------------------------------------------------- */

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{"seed", required_argument, NULL, 's'},
		{"max-size", required_argument, NULL, 'm'},
		{"window", required_argument, NULL, 'w'},
		{"bench", no_argument, NULL, 'b'},
		{"iters", required_argument, NULL, 'i'},
		{"die-rank", required_argument, NULL, 'r'},
		{"die-after", required_argument, NULL, 'k'},
		{"wait-ms", required_argument, NULL, 't'},
		{"fan-in", no_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	*o = (struct opts){.seed = 1, .max_size = MAX_SIZE, .window = 32, .iters = 1000,
			   .die_rank = -1, .die_after = 10, .wait_ms = 30000};
	while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (ch) {
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			o->max_size = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			o->window = atoi(optarg);
			break;
		case 'b':
			o->bench = 1;
			break;
		case 'i':
			o->iters = atoi(optarg);
			break;
		case 'r':
			o->die_rank = atoi(optarg);
			break;
		case 'k':
			o->die_after = atoi(optarg);
			break;
		case 't':
			o->wait_ms = atoi(optarg);
			break;
		case 'f':
			o->fan_in = 1;
			break;
		default:
			return -EINVAL;
		}
	}
	if (o->max_size < 1 || o->max_size > MAX_SIZE || o->window < 1 || o->window > 1000 ||
	    o->iters < 1 || o->wait_ms < 1) {
		fprintf(stderr, "mpi_check: --max-size 1..%u, --window 1..1000, --iters and "
				"--wait-ms >= 1\n", MAX_SIZE);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r = {.o = &o};
	uint64_t mine[4], sum[4];
	double t0, t[4];
	uint8_t *tx, *rx;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r.me);
	MPI_Comm_size(MPI_COMM_WORLD, &r.n);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (parse(argc, argv, &o) < 0 || r.n < 2) {
		if (r.me == 0 && r.n < 2)
			fprintf(stderr, "mpi_check: needs at least 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	tx = malloc(MAX_SIZE);
	rx = malloc(MAX_SIZE);
	if (!tx || !rx)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (o.die_rank >= 0)
		die_and_watch(&r, tx, rx);
	t0 = MPI_Wtime();
	p2p(&r, tx, rx);
	t[0] = MPI_Wtime() - t0;
	window(&r);
	t[1] = MPI_Wtime() - t0 - t[0];
	collectives(&r, tx);
	t[2] = MPI_Wtime() - t0 - t[0] - t[1];
	t[3] = MPI_Wtime() - t0;
	mine[0] = r.errors;
	mine[1] = r.checks;
	mine[2] = r.bytes;
	mine[3] = r.sent;
	MPI_Allreduce(mine, sum, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, t, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (r.me == 0) {
		printf("{\"test\":\"mpi_check\",\"ranks\":%d,\"seed\":%" PRIu64 ",\"max_size\":%zu,"
		       "\"window\":%d,\"checks\":%" PRIu64 ",\"bytes_checked\":%" PRIu64
		       ",\"bytes_sent\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"p2p_s\":%.6f,"
		       "\"window_s\":%.6f,\"collectives_s\":%.6f,\"seconds\":%.6f}\n",
		       r.n, o.seed, o.max_size, o.window, sum[1], sum[2], sum[3], sum[0], t[0], t[1],
		       t[2], t[3]);
		fflush(stdout);
	}
	if (o.bench && !sum[0]) {
		bench_p2p(&r, tx, rx);
		bench_coll(&r, tx);
		fflush(stdout);
	}
	free(rx);
	free(tx);
	MPI_Finalize();
	return sum[0] ? 1 : 0;
}
