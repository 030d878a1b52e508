// SPDX-License-Identifier: MIT
/*
 * test_engine.c - engines over the null datapath: connection setup through
 * blobs, messages both ways byte-exact, completions exactly once, a post on
 * a bad connection completing at once with its error, closes, policies
 * (swift, sync and async) and a live swap, engine threads with the idle
 * backoff (sleep and wake-up), completions overflowing the ring, memory per
 * connection with 10,000 connections on one engine, and the accounting back
 * to zero. The threaded cases run under TSan in pcm-dev's TSan stage.
 *
 * Every wait here is bounded by progress, not by time: one that sees nothing
 * move for STUCK_NS is a hang (a lost wake-up, a lost completion) and fails
 * naming what it waited for and both engines' wake-up state
 * (xp_engine_describe()), instead of spinning silently until meson's timeout.
 * TEST_ENGINE_ONLY=<test name> runs one test (a loop of one racy case).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "blob.h"
#include "builtin.h"
#include "engine.h"
#include "wire.h"

struct rig {
	struct xp_engine *e[2];
	uint32_t conn[2];
	void *buf[2];
	size_t buf_len;
	uint32_t mr[2];
	enum xp_progress progress;
};

#define STUCK_NS (60ull * 1000 * 1000 * 1000) /* nothing moved this long: a hang */
#define STUCK_CLOCK_EVERY 4096                /* looks without progress between clock reads */

static pthread_t main_thread;

/* A wait's progress: what it waits for, how far it got, since when it has not moved. */
struct progress {
	const char *what;
	uint64_t count;
	uint64_t since_ns;
	uint32_t looks;
};

/*
 * Report a hang: what the wait was for, how far it got, and both engines'
 * state. cmocka fails the test on the main thread; an application thread may
 * not longjmp into it, so it aborts.
 */
static void stuck(struct rig *r, const char *what, uint64_t count, uint64_t want)
{
	char e[2][512], report[1280];

	for (int i = 0; i < 2; i++) {
		snprintf(e[i], sizeof(e[i]), "no engine %d", i);
		if (r->e[i])
			xp_engine_describe(r->e[i], e[i], sizeof(e[i]));
	}
	snprintf(report, sizeof(report), "hang: %s: %llu of %llu after %llu s without progress\n"
		 "  %s\n  %s", what, (unsigned long long)count, (unsigned long long)want,
		 STUCK_NS / 1000000000ull, e[0], e[1]);
	if (pthread_equal(pthread_self(), main_thread))
		fail_msg("%s", report);
	fprintf(stderr, "%s\n", report);
	abort();
}

static void progress_start(struct progress *p, const char *what)
{
	*p = (struct progress){ .what = what, .since_ns = xp_mono_ns() };
}

/* The wait is at @count of @want: a hang if @count has not moved for STUCK_NS. */
static void progress_check(struct rig *r, struct progress *p, uint64_t count, uint64_t want)
{
	if (count != p->count) {
		p->count = count;
		p->looks = 0;
		p->since_ns = xp_mono_ns();
		return;
	}
	if (++p->looks % STUCK_CLOCK_EVERY)
		return;
	if (xp_mono_ns() - p->since_ns > STUCK_NS)
		stuck(r, p->what, count, want);
}

static void step(struct rig *r)
{
	for (int i = 0; i < 2; i++)
		if (r->progress == XP_PROGRESS_INLINE && r->e[i])
			xp_engine_progress(r->e[i]);
}

static void ctl_run(struct rig *r, int side, struct xp_ctl *ctl)
{
	if (xp_engine_ctl_run(r->e[side], ctl, STUCK_NS) == -ETIMEDOUT)
		stuck(r, side ? "a control request's answer from engine 1"
			      : "a control request's answer from engine 0", 0, 1);
}

/* The datapath each side's engine opens: null, or a test's variant of it. */
static const struct xp_dp_ops *rig_dp[2] = { &xp_dp_null_ops, &xp_dp_null_ops };
static bool rig_uc_without_recv_keys;

static struct xp_engine *engine_new(enum xp_progress progress, uint32_t index, bool copy,
				    uint32_t comp_slots)
{
	struct xp_engine_config cfg;
	struct xp_engine *e = NULL;
	struct pcm_diag diag;

	xp_engine_config_default(&cfg);
	cfg.dp_ops = rig_dp[index % 2];
	cfg.uc_without_recv_keys = rig_uc_without_recv_keys;
	cfg.dp.copy = copy;
	cfg.progress = progress;
	cfg.index = index;
	cfg.spin_ns = 1000;
	if (comp_slots)
		cfg.comp_slots = comp_slots;
	assert_int_equal(xp_engine_create(&cfg, &e, &diag), 0);
	return e;
}

static const struct pcm_package *builtin(const char *name)
{
	for (size_t i = 0; pcm_builtin_policies[i]; i++)
		if (strcmp(pcm_builtin_policies[i]->name, name) == 0)
			return pcm_builtin_policies[i];
	fail_msg("no built-in %s", name);
	return NULL;
}

static void rig_connect(struct rig *r, const struct xp_conn_opts *o)
{
	struct xp_ctl *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	a->op = XP_CTL_CONN_OPEN;
	if (o)
		a->opts = *o;
	ctl_run(r, 0, a);
	assert_int_equal(a->status, 0);
	b->op = XP_CTL_CONN_ACCEPT;
	if (o)
		b->opts = *o;
	memcpy(b->peer_msg, a->msg, a->msg_len);
	b->peer_len = a->msg_len;
	ctl_run(r, 1, b);
	assert_int_equal(b->status, 0);
	a->op = XP_CTL_CONN_BIND;
	memcpy(a->peer_msg, b->msg, b->msg_len);
	a->peer_len = b->msg_len;
	ctl_run(r, 0, a);
	assert_int_equal(a->status, 0);
	r->conn[0] = a->conn;
	r->conn[1] = b->conn;
	free(a);
	free(b);
}

static void rig_open(struct rig *r, enum xp_progress progress, size_t buf_len,
		     const struct xp_conn_opts *o)
{
	memset(r, 0, sizeof(*r));
	r->progress = progress;
	r->buf_len = buf_len;
	for (int i = 0; i < 2; i++) {
		struct xp_ctl *ctl = calloc(1, sizeof(*ctl));

		r->e[i] = engine_new(progress, (uint32_t)i, true, 0);
		r->buf[i] = calloc(1, buf_len);
		ctl->op = XP_CTL_MR_REG;
		ctl->addr = r->buf[i];
		ctl->len = buf_len;
		ctl_run(r, i, ctl);
		assert_int_equal(ctl->status, 0);
		r->mr[i] = ctl->mr;
		free(ctl);
	}
	rig_connect(r, o);
}

static void rig_close(struct rig *r)
{
	for (int i = 0; i < 2; i++) {
		xp_engine_destroy(r->e[i]);
		free(r->buf[i]);
	}
}

static void post(struct rig *r, int side, uint8_t op, uint64_t off, uint64_t len, uint64_t cookie)
{
	struct xp_cmd cmd = { .op = op, .conn = r->conn[side], .mr = r->mr[side],
			      .addr = (uint64_t)(uintptr_t)r->buf[side] + off, .len = len,
			      .cookie = cookie };

	struct progress p;

	progress_start(&p, "room in the command ring");
	while (xp_engine_submit(r->e[side], &cmd) == -EAGAIN) {
		step(r);
		progress_check(r, &p, 0, 1);
	}
}

/* Take completions of @side until @n arrived. */
static uint32_t take(struct rig *r, int side, struct xp_engine_comp *out, uint32_t n)
{
	struct progress p;
	uint32_t got = 0;

	progress_start(&p, side ? "completions of engine 1" : "completions of engine 0");
	while (got < n) {
		step(r);
		got += xp_engine_poll(r->e[side], out + got, n - got);
		progress_check(r, &p, got, n);
	}
	return got;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

static void test_messages_both_ways_arrive_byte_exact_and_complete_once(void **state)
{
	enum { N = 24, MSG = 200000 };
	struct xp_engine_comp c[2 * N];
	struct rig r;
	uint8_t *src;

	rig_open(&r, XP_PROGRESS_INLINE, (size_t)N * MSG * 2, NULL);
	/* side 0 sends N messages into side 1's first half; side 1 sends back */
	for (int side = 0; side < 2; side++) {
		src = (uint8_t *)r.buf[side] + (size_t)N * MSG;
		for (int k = 0; k < N; k++)
			fill(src + (size_t)k * MSG, MSG, (uint32_t)(k + 100 * side));
	}
	for (int k = 0; k < N; k++) {
		post(&r, 1, XP_CMD_RECV, (uint64_t)k * MSG, MSG, 1000 + k);
		post(&r, 0, XP_CMD_RECV, (uint64_t)k * MSG, MSG, 2000 + k);
	}
	for (int k = 0; k < N; k++) {
		uint64_t len = k == 3 ? 0 : (uint64_t)(MSG - 17 * k);

		post(&r, 0, XP_CMD_SEND, (uint64_t)N * MSG + (uint64_t)k * MSG, len, k);
		post(&r, 1, XP_CMD_SEND, (uint64_t)N * MSG + (uint64_t)k * MSG, len, 500 + k);
	}
	for (int side = 0; side < 2; side++) {
		uint32_t seen_send = 0, seen_recv = 0;

		take(&r, side, c, 2 * N);
		for (int i = 0; i < 2 * N; i++) {
			assert_int_equal(c[i].status, 0);
			if (c[i].kind == XP_ECOMP_SEND) {
				uint64_t k = c[i].cookie - (side ? 500 : 0);

				assert_true(k < N);
				assert_false(seen_send & (1u << k));
				seen_send |= 1u << k;
			} else {
				uint64_t k = c[i].cookie - (side ? 1000 : 2000);
				uint8_t *want = (uint8_t *)r.buf[!side] + (size_t)N * MSG + k * MSG;

				assert_int_equal(c[i].kind, XP_ECOMP_RECV);
				assert_true(k < N);
				assert_false(seen_recv & (1u << k));
				seen_recv |= 1u << k;
				assert_int_equal(c[i].bytes, k == 3 ? 0 : MSG - 17 * k);
				assert_memory_equal((uint8_t *)r.buf[side] + k * MSG, want,
						    c[i].bytes);
			}
		}
		assert_int_equal(seen_send, (1u << N) - 1);
		assert_int_equal(seen_recv, (1u << N) - 1);
	}
	rig_close(&r);
}

static void test_a_post_the_engine_refuses_completes_at_once(void **state)
{
	struct xp_engine_comp c[2];
	struct xp_cmd bad_conn = { .op = XP_CMD_SEND, .conn = 9999, .len = 1, .cookie = 7 };
	struct rig r;

	rig_open(&r, XP_PROGRESS_INLINE, 4096, NULL);
	bad_conn.mr = r.mr[0];
	bad_conn.addr = (uintptr_t)r.buf[0];
	assert_int_equal(xp_engine_submit(r.e[0], &bad_conn), 0);
	take(&r, 0, c, 1);
	assert_int_equal(c[0].status, -ENOTCONN);
	assert_int_equal(c[0].cookie, 7);
	/* outside its region */
	post(&r, 0, XP_CMD_SEND, 4000, 200, 8);
	take(&r, 0, c, 1);
	assert_int_equal(c[0].status, -EINVAL);
	assert_int_equal(c[0].kind, XP_ECOMP_SEND);
	rig_close(&r);
}

static void test_close_completes_after_the_operations_it_cancels(void **state)
{
	struct xp_engine_comp c[4];
	struct xp_cmd close = { .op = XP_CMD_CLOSE, .close_mode = XP_CLOSE_ABORT };
	struct rig r;

	rig_open(&r, XP_PROGRESS_INLINE, 4096, NULL);
	post(&r, 0, XP_CMD_RECV, 0, 1024, 1);
	post(&r, 0, XP_CMD_RECV, 1024, 1024, 2);
	close.conn = r.conn[0];
	assert_int_equal(xp_engine_submit(r.e[0], &close), 0);
	take(&r, 0, c, 3);
	assert_int_equal(c[0].kind, XP_ECOMP_RECV);
	assert_int_equal(c[0].status, -ECANCELED);
	assert_int_equal(c[1].status, -ECANCELED);
	assert_int_equal(c[2].kind, XP_ECOMP_CLOSE);
	/* the peer hears of the reset: its receive fails, then it closes too */
	post(&r, 1, XP_CMD_RECV, 0, 64, 3);
	take(&r, 1, c, 1);
	assert_int_equal(c[0].status, -ECONNRESET);
	close.conn = r.conn[1];
	assert_int_equal(xp_engine_submit(r.e[1], &close), 0);
	take(&r, 1, c, 1);
	assert_int_equal(c[0].kind, XP_ECOMP_CLOSE);
	rig_close(&r);
}

static void transfer(struct rig *r, uint32_t n, uint64_t len)
{
	struct xp_engine_comp c[64];
	uint32_t done[2] = { 0, 0 };
	struct progress p;

	for (uint32_t k = 0; k < n; k++) {
		post(r, 1, XP_CMD_RECV, 0, len, k);
		post(r, 0, XP_CMD_SEND, 0, len, k);
	}
	progress_start(&p, "a transfer's completions on both engines");
	while (done[0] < n || done[1] < n) {
		progress_check(r, &p, done[0] + done[1], 2ull * n);
		for (int side = 0; side < 2; side++) {
			uint32_t got = xp_engine_poll(r->e[side], c, 64);

			for (uint32_t i = 0; i < got; i++)
				assert_int_equal(c[i].status, 0);
			done[side] += got;
		}
		step(r);
	}
}

static void test_policies_sync_and_async_and_a_live_swap_move_data(void **state)
{
	struct xp_conn_opts swift = { .cc = builtin("swift"), .mode = XP_CC_PCM_SYNC };
	struct xp_conn_opts async = { .cc = builtin("swift"), .mode = XP_CC_PCM_ASYNC,
				      .async_mode = PCM_ASYNC_LOCKED };
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));
	struct rig r;

	snprintf(swift.cc_name, sizeof(swift.cc_name), "swift");
	rig_open(&r, XP_PROGRESS_INLINE, 1 << 20, &swift);
	transfer(&r, 40, 1 << 20);
	ctl->op = XP_CTL_SET_CC;
	ctl->conn = r.conn[0];
	ctl->opts = async;
	ctl_run(&r, 0, ctl);
	assert_int_equal(ctl->status, 0);
	transfer(&r, 40, 1 << 20);
	ctl->opts = (struct xp_conn_opts){ 0 }; /* back to no policy */
	ctl_run(&r, 0, ctl);
	assert_int_equal(ctl->status, 0);
	transfer(&r, 10, 1 << 20);
	free(ctl);
	rig_close(&r);
}

/* XP_CTL_CONN_INFO on @side for its connection and one that does not exist. */
static void conn_info(struct rig *r, int side, struct xp_conn_query q[2])
{
	struct xp_ctl *ctl = calloc(1, sizeof(*ctl));

	assert_non_null(ctl);
	q[0] = (struct xp_conn_query){ .conn = r->conn[side], .status = 1 };
	q[1] = (struct xp_conn_query){ .conn = 12345, .status = 1 };
	ctl->op = XP_CTL_CONN_INFO;
	ctl->addr = q;
	ctl->len = 2;
	ctl_run(r, side, ctl);
	assert_int_equal(ctl->status, 0);
	assert_int_equal(q[1].status, -ENOENT);
	free(ctl);
}

static void test_conn_info_reads_the_cores_figures_of_a_batch(void **state)
{
	struct xp_conn_opts swift = { .cc = builtin("swift"), .mode = XP_CC_PCM_SYNC };
	struct xp_conn_query q[2];
	struct rig r;

	snprintf(swift.cc_name, sizeof(swift.cc_name), "swift");
	rig_open(&r, XP_PROGRESS_THREAD, 1 << 20, &swift);
	transfer(&r, 40, 1 << 20);
	conn_info(&r, 0, q);
	assert_int_equal(q[0].status, 0);
	assert_true(q[0].info.srtt_ns > 0);              /* the sender has RTT samples */
	assert_true(q[0].info.cwnd_bytes > 0 && q[0].info.cwnd_bytes != UINT64_MAX);
	assert_int_equal(q[0].info.in_flight_bytes, 0);  /* every send completed */
	assert_true(q[0].info.chunks_retx >= q[0].info.rto_fires);
	rig_close(&r);

	/* no policy: an unlimited window at line rate (not paced) */
	rig_open(&r, XP_PROGRESS_INLINE, 1 << 20, NULL);
	transfer(&r, 4, 1 << 20);
	conn_info(&r, 0, q);
	assert_int_equal(q[0].status, 0);
	assert_int_equal(q[0].info.cwnd_bytes, UINT64_MAX);
	assert_int_equal(q[0].info.rate_bps, 0);
	assert_int_equal(q[0].info.no_progress_ns, 5000000000ull); /* the default limit */
	rig_close(&r);
}

/* A connection's no-progress limit: set when it opens, changed by a policy swap that names one. */
static void test_no_progress_limit_follows_the_connection_options(void **state)
{
	struct xp_conn_opts o = { .no_progress_ns = 250000000 };
	struct xp_ctl *ctl = xp_ctl_new(XP_CTL_SET_CC);
	struct xp_conn_query q[2];
	struct rig r;

	rig_open(&r, XP_PROGRESS_INLINE, 1 << 16, &o);
	conn_info(&r, 0, q);
	assert_int_equal(q[0].info.no_progress_ns, 250000000);
	ctl->conn = r.conn[0];
	ctl->opts.no_progress_ns = 30000000000ull;
	ctl_run(&r, 0, ctl);
	assert_int_equal(ctl->status, 0);
	conn_info(&r, 0, q);
	assert_int_equal(q[0].info.no_progress_ns, 30000000000ull);
	free(ctl);
	rig_close(&r);
}

static void test_engine_threads_sleep_when_idle_and_wake_for_work(void **state)
{
	struct xp_engine_stats st;
	struct timespec ts = { 0, 1000 * 1000 };
	struct rig r;

	rig_open(&r, XP_PROGRESS_THREAD, 1 << 20, NULL);
	transfer(&r, 200, 300000);
	/*
	 * Idle, the engine sleeps once it has spun for spin_ns (1 us): wait until it
	 * has, however long a loaded machine keeps it off the CPU (a fixed 20 ms
	 * could pass before it ran at all); 10 s without a sleep is a hung engine.
	 */
	for (unsigned ms = 0;; ms++) {
		xp_engine_stats(r.e[0], &st);
		if (st.sleeps > 0)
			break;
		if (ms == 10000)
			fail_msg("engine 0 never slept: %llu idle polls, %llu runs",
				 (unsigned long long)st.idle_polls, (unsigned long long)st.runs);
		nanosleep(&ts, NULL);
	}
	transfer(&r, 200, 64);
	rig_close(&r);
}

struct app {
	struct rig *r;
	int side;
	uint32_t n;
};

static void *app_main(void *arg)
{
	struct app *a = arg;
	struct xp_engine_comp c[32];
	uint32_t done = 0, posted = 0;
	struct progress p;

	progress_start(&p, a->side ? "application thread 1's receive completions"
				   : "application thread 0's send completions");
	/* at most 256 outstanding: the core queues 1,024 per connection and direction */
	while (done < a->n) {
		uint32_t got;

		progress_check(a->r, &p, done, a->n);

		while (posted < a->n && posted - done < 256)
			post(a->r, a->side, a->side ? XP_CMD_RECV : XP_CMD_SEND, 0, 5000,
			     posted++);
		got = xp_engine_poll(a->r->e[a->side], c, 32);
		for (uint32_t i = 0; i < got; i++)
			if (c[i].status != 0) {
				fprintf(stderr, "status %d\n", c[i].status);
				abort();
			}
		done += got;
	}
	return NULL;
}

static void test_application_threads_and_engine_threads_share_rings(void **state)
{
	struct app a[2];
	pthread_t th[2];
	struct rig r;

	rig_open(&r, XP_PROGRESS_THREAD, 8192, NULL);
	for (int i = 0; i < 2; i++) {
		a[i] = (struct app){ .r = &r, .side = i, .n = 3000 };
		assert_int_equal(pthread_create(&th[i], NULL, app_main, &a[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	rig_close(&r);
}

static void test_completions_wait_for_ring_room_without_loss(void **state)
{
	enum { N = 100 };
	struct xp_engine_comp c[N];
	struct xp_engine_stats st;
	struct rig r;

	memset(&r, 0, sizeof(r));
	rig_open(&r, XP_PROGRESS_INLINE, 4096, NULL);
	/* replace side 1's engine by one with an 8-slot completion ring */
	xp_engine_destroy(r.e[1]);
	r.e[1] = engine_new(XP_PROGRESS_INLINE, 1, true, 8);
	{
		struct xp_ctl *ctl = calloc(1, sizeof(*ctl));

		ctl->op = XP_CTL_MR_REG;
		ctl->addr = r.buf[1];
		ctl->len = r.buf_len;
		ctl_run(&r, 1, ctl);
		r.mr[1] = ctl->mr;
		free(ctl);
	}
	rig_connect(&r, NULL);
	for (uint32_t k = 0; k < N; k++) {
		post(&r, 1, XP_CMD_RECV, 0, 16, k);
		post(&r, 0, XP_CMD_SEND, 0, 16, k);
	}
	for (int i = 0; i < 2000; i++)
		step(&r);
	xp_engine_stats(r.e[1], &st);
	assert_true(st.overflows > 0);
	take(&r, 1, c, N);
	for (uint32_t k = 0; k < N; k++)
		assert_int_equal(c[k].cookie, k);
	take(&r, 0, c, N);
	rig_close(&r);
}

static void test_ten_thousand_connections_fit_one_engine_and_all_state_returns(void **state)
{
	enum { CONNS = 10000 };
	struct xp_engine_memory m;
	struct xp_engine_comp c[64];
	struct xp_cmd close = { .op = XP_CMD_CLOSE, .close_mode = XP_CLOSE_GRACEFUL };
	uint32_t *ids[2];
	uint32_t done[2] = { 0, 0 };
	struct progress p;
	struct rig r;

	rig_open(&r, XP_PROGRESS_INLINE, 1 << 16, NULL);
	ids[0] = calloc(CONNS, sizeof(uint32_t));
	ids[1] = calloc(CONNS, sizeof(uint32_t));
	ids[0][0] = r.conn[0];
	ids[1][0] = r.conn[1];
	for (uint32_t i = 1; i < CONNS; i++) {
		struct xp_conn_opts o = { .paths = 1 };

		rig_connect(&r, &o);
		ids[0][i] = r.conn[0];
		ids[1][i] = r.conn[1];
	}
	xp_engine_memory(r.e[0], &m);
	assert_int_equal(m.conns, CONNS);
	printf("# memory: core %zu B per connection slot (%zu MB total), engine %zu B per "
	       "connection (%zu MB total), %u connections\n",
	       m.core_per_conn, m.core_total >> 20, m.engine_per_conn, m.engine_total >> 20,
	       m.conns);
	/* a message over every connection */
	for (uint32_t i = 0; i < CONNS; i++) {
		r.conn[0] = ids[0][i];
		r.conn[1] = ids[1][i];
		post(&r, 1, XP_CMD_RECV, 0, 64, i);
		post(&r, 0, XP_CMD_SEND, 64, 64, i);
	}
	progress_start(&p, "a message's completions on each connection");
	while (done[0] < CONNS || done[1] < CONNS) {
		progress_check(&r, &p, done[0] + done[1], 2ull * CONNS);
		for (int side = 0; side < 2; side++) {
			uint32_t got = xp_engine_poll(r.e[side], c, 64);

			for (uint32_t i = 0; i < got; i++)
				assert_int_equal(c[i].status, 0);
			done[side] += got;
		}
		step(&r);
	}
	for (int side = 0; side < 2; side++)
		for (uint32_t i = 0; i < CONNS; i++) {
			close.conn = ids[side][i];
			while (xp_engine_submit(r.e[side], &close) == -EAGAIN)
				step(&r);
		}
	done[0] = done[1] = 0;
	progress_start(&p, "the close completion of each connection");
	while (done[0] < CONNS || done[1] < CONNS) {
		progress_check(&r, &p, done[0] + done[1], 2ull * CONNS);
		for (int side = 0; side < 2; side++) {
			uint32_t got = xp_engine_poll(r.e[side], c, 64);

			for (uint32_t i = 0; i < got; i++) {
				assert_int_equal(c[i].kind, XP_ECOMP_CLOSE);
				assert_int_equal(c[i].status, 0);
			}
			done[side] += got;
		}
		step(&r);
	}
	xp_engine_memory(r.e[0], &m);
	assert_int_equal(m.conns, 0);
	free(ids[0]);
	free(ids[1]);
	rig_close(&r);
}

static void test_malformed_blobs_are_refused_naming_the_field(void **state)
{
	struct xp_conn_blob b = { .conn_id = 5, .nonce = 9, .n_paths = 2 }, out;
	uint8_t msg[XP_BOOT_MSG_MAX];
	const char *why = NULL;
	int len;

	b.ctrl.len = 3;
	b.paths[0].len = 1;
	b.paths[1].len = 2;
	snprintf(b.cc, sizeof(b.cc), "swift");
	len = xp_blob_encode(&b, msg, sizeof(msg));
	assert_true(len > 0);
	assert_int_equal(xp_blob_decode(msg, (uint32_t)len, &out, &why), 0);
	assert_string_equal(out.cc, "swift");
	assert_int_equal(out.n_paths, 2);
	assert_int_equal(xp_blob_decode(msg, (uint32_t)len - 1, &out, &why), -EBADMSG);
	assert_string_equal(why, "paths.blob");
	msg[0] ^= 1;
	assert_int_equal(xp_blob_decode(msg, (uint32_t)len, &out, &why), -EBADMSG);
	assert_string_equal(why, "magic");
	msg[0] ^= 1;
	msg[4] = 0x40; /* conn id 16384+ */
	assert_int_equal(xp_blob_decode(msg, (uint32_t)len, &out, &why), -EBADMSG);
	assert_string_equal(why, "conn_id");
}

/* Destroying an engine (an endpoint's close) resets its peers: a receive waiting there fails at once. */
static void test_destroying_an_engine_resets_its_peers(void **state)
{
	struct xp_engine_comp c;
	struct rig r;

	rig_open(&r, XP_PROGRESS_INLINE, 1 << 16, NULL);
	post(&r, 1, XP_CMD_RECV, 0, 4096, 7);
	for (int k = 0; k < 100; k++)
		step(&r);
	xp_engine_destroy(r.e[0]);
	r.e[0] = NULL;
	take(&r, 1, &c, 1);
	assert_int_equal(c.kind, XP_ECOMP_RECV);
	assert_int_equal(c.status, -ECONNRESET);
	rig_close(&r);
}

/* The null datapath, also writing every control packet it posts to a pipe (length, bytes). */
static int ctrl_pipe = -1;
static struct xp_dp_ops ctrl_logged_ops;

static int logged_post_ctrl(struct xp_dp *dp, uint32_t peer, const void *bytes, uint32_t len)
{
	if (write(ctrl_pipe, &len, sizeof(len)) != (ssize_t)sizeof(len) ||
	    write(ctrl_pipe, bytes, len) != (ssize_t)len)
		abort();
	return xp_dp_null_ops.post_ctrl(dp, peer, bytes, len);
}

/* A null instance whose calls come back through ctrl_logged_ops. */
static int logged_open(const struct xp_dp_config *cfg, struct xp_dp **out, struct pcm_diag *diag)
{
	int rc = xp_dp_null_ops.open(cfg, out, diag);

	if (rc == 0)
		(*out)->ops = &ctrl_logged_ops;
	return rc;
}

/* RESET (abort) and RESET_ACK records in the packets logged on @fd until it closes. */
static uint32_t resets_logged(int fd)
{
	uint8_t buf[XP_WIRE_MAX_MTU];
	uint32_t len, n = 0;

	while (read(fd, &len, sizeof(len)) == (ssize_t)sizeof(len)) {
		struct xp_wire_reader rd;
		struct xp_rec rec;
		enum xp_drop why;

		assert_true(len <= sizeof(buf));
		assert_int_equal(read(fd, buf, len), (ssize_t)len);
		assert_int_equal(xp_wire_open(&rd, buf, len, XP_WIRE_MAX_MTU, &why), 0);
		while (xp_wire_next(&rd, &rec, &why) == 1)
			n += (rec.type == XP_REC_RESET && rec.u.reason == XP_RESET_ABORT) ||
			     rec.type == XP_REC_RESET_ACK;
	}
	return n;
}

/*
 * A process that exits with engines alive (it never closed its endpoint) still resets its
 * peers: three connections between two engines (with their threads) in a child that calls
 * exit(); on each, each engine sends RESET, or RESET_ACK when the other's RESET reached it
 * first.
 */
static void test_an_exiting_process_resets_its_peers(void **state)
{
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rig r;

		close(fds[0]);
		ctrl_pipe = fds[1];
		ctrl_logged_ops = xp_dp_null_ops;
		ctrl_logged_ops.open = logged_open;
		ctrl_logged_ops.post_ctrl = logged_post_ctrl;
		rig_dp[0] = rig_dp[1] = &ctrl_logged_ops;
		rig_open(&r, XP_PROGRESS_THREAD, 1 << 16, NULL);
		rig_connect(&r, NULL);
		rig_connect(&r, NULL);
		exit(0);
	}
	close(fds[1]);
	assert_int_equal(resets_logged(fds[0]), 6);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The null datapath as one whose device has no per-receive keys (no type 1 memory windows). */
static struct xp_dp_ops no_keys_ops;

static void no_keys_info(struct xp_dp *dp, struct xp_dp_info *info)
{
	xp_dp_null_ops.info(dp, info);
	info->caps &= ~XP_DP_CAP_RECV_KEYS;
}

static int no_keys_open(const struct xp_dp_config *cfg, struct xp_dp **out,
			struct pcm_diag *diag)
{
	int rc = xp_dp_null_ops.open(cfg, out, diag);

	if (rc == 0)
		(*out)->ops = &no_keys_ops;
	return rc;
}

/* Open engine 0 on @ops0 and 1 on @ops1, with a region each; no connection yet. */
static void rig_engines(struct rig *r, const struct xp_dp_ops *ops0, const struct xp_dp_ops *ops1)
{
	no_keys_ops = xp_dp_null_ops;
	no_keys_ops.open = no_keys_open;
	no_keys_ops.info = no_keys_info;
	memset(r, 0, sizeof(*r));
	r->progress = XP_PROGRESS_INLINE;
	r->buf_len = 1 << 16;
	rig_dp[0] = ops0;
	rig_dp[1] = ops1;
	for (int i = 0; i < 2; i++) {
		struct xp_ctl *ctl = xp_ctl_new(XP_CTL_MR_REG);

		r->e[i] = engine_new(XP_PROGRESS_INLINE, (uint32_t)i, true, 0);
		r->buf[i] = calloc(1, r->buf_len);
		ctl->addr = r->buf[i];
		ctl->len = r->buf_len;
		ctl_run(r, i, ctl);
		assert_int_equal(ctl->status, 0);
		r->mr[i] = ctl->mr;
		free(ctl);
	}
	rig_dp[0] = rig_dp[1] = &xp_dp_null_ops;
}

/* One message 0 -> 1 arrives. */
static void one_message(struct rig *r)
{
	struct xp_engine_comp c[2];

	post(r, 1, XP_CMD_RECV, 0, 4096, 1);
	post(r, 0, XP_CMD_SEND, 0, 4096, 2);
	take(r, 1, &c[0], 1);
	take(r, 0, &c[1], 1);
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[1].status, 0);
}

/*
 * UC needs per-receive keys: on a datapath without them the dialer opens RC instead (and the
 * listener follows its blob); a listener asked for UC without them refuses, saying why; the
 * opt-out keeps UC, for experiments.
 */
static void test_uc_without_recv_keys_becomes_rc_or_is_refused(void **state)
{
	struct xp_ctl *a = xp_ctl_new(XP_CTL_CONN_OPEN), *b = xp_ctl_new(XP_CTL_CONN_ACCEPT);
	struct rig r;

	rig_engines(&r, &no_keys_ops, &no_keys_ops);
	ctl_run(&r, 0, a);
	assert_int_equal(a->status, 0);
	assert_true(a->opts.rc); /* asked UC, got RC */
	rig_close(&r);

	/* a dialer with keys asks UC of a listener without: refused, naming the reason */
	rig_engines(&r, &xp_dp_null_ops, &no_keys_ops);
	a->op = XP_CTL_CONN_OPEN;
	a->opts.rc = false;
	ctl_run(&r, 0, a);
	assert_int_equal(a->status, 0);
	assert_false(a->opts.rc);
	memcpy(b->peer_msg, a->msg, a->msg_len);
	b->peer_len = a->msg_len;
	ctl_run(&r, 1, b);
	assert_int_equal(b->status, -EOPNOTSUPP);
	assert_non_null(strstr(b->diag.msg, "per-receive keys"));
	rig_close(&r);

	/* the whole path without keys: RC, and a message goes */
	rig_engines(&r, &no_keys_ops, &no_keys_ops);
	rig_connect(&r, NULL);
	one_message(&r);
	rig_close(&r);

	/* the opt-out: UC stays */
	rig_uc_without_recv_keys = true;
	rig_engines(&r, &no_keys_ops, &no_keys_ops);
	a->op = XP_CTL_CONN_OPEN;
	a->opts.rc = false;
	ctl_run(&r, 0, a);
	assert_int_equal(a->status, 0);
	assert_false(a->opts.rc);
	rig_close(&r);
	rig_uc_without_recv_keys = false;
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_messages_both_ways_arrive_byte_exact_and_complete_once),
		cmocka_unit_test(test_a_post_the_engine_refuses_completes_at_once),
		cmocka_unit_test(test_close_completes_after_the_operations_it_cancels),
		cmocka_unit_test(test_policies_sync_and_async_and_a_live_swap_move_data),
		cmocka_unit_test(test_conn_info_reads_the_cores_figures_of_a_batch),
		cmocka_unit_test(test_no_progress_limit_follows_the_connection_options),
		cmocka_unit_test(test_engine_threads_sleep_when_idle_and_wake_for_work),
		cmocka_unit_test(test_application_threads_and_engine_threads_share_rings),
		cmocka_unit_test(test_completions_wait_for_ring_room_without_loss),
		cmocka_unit_test(test_ten_thousand_connections_fit_one_engine_and_all_state_returns),
		cmocka_unit_test(test_malformed_blobs_are_refused_naming_the_field),
		cmocka_unit_test(test_destroying_an_engine_resets_its_peers),
		cmocka_unit_test(test_an_exiting_process_resets_its_peers),
		cmocka_unit_test(test_uc_without_recv_keys_becomes_rc_or_is_refused),
	};

	main_thread = pthread_self();
	if (getenv("TEST_ENGINE_ONLY"))
		cmocka_set_test_filter(getenv("TEST_ENGINE_ONLY"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
