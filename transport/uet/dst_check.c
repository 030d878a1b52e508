// SPDX-License-Identifier: MIT
/*
 * dst_check.c - the randomized suite's checker (uet_dst.h): run a scenario
 * with the invariant checks on and say which invariant, if any, failed.
 *
 * A run writes its records into streams that hash what they are given
 * (uet-transport-stats, uet-flows) or keep it (uet-events, small: the
 * completions are counted from it), and hashes every packet the monitor
 * sees. Two runs of one scenario must agree on all of it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uet_dst.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

/* A stream that keeps only a hash and a length of what is written to it. */
struct hash_sink {
	uint64_t hash, bytes;
};

static ssize_t hash_write(void *cookie, const char *buf, size_t n)
{
	struct hash_sink *h = cookie;

	h->hash = fnv(h->hash, buf, n);
	h->bytes += n;
	return (ssize_t)n;
}

static FILE *hash_open(struct hash_sink *h)
{
	cookie_io_functions_t io = { .write = hash_write };

	h->hash = FNV_OFFSET;
	h->bytes = 0;
	return fopencookie(h, "w", io);
}

/* What one run left, for comparing two runs. */
struct run {
	struct hash_sink stats, flows;
	char *events;
	size_t events_len;
	uint64_t packets_hash, packets;
	struct uet_results r;
};

static void monitor_hash(void *ctx, const struct uet_pkt_view *v)
{
	struct run *run = ctx;
	/* the fields one by one: the struct's padding is not part of a packet */
	uint64_t f[] = {
		v->t_ps, v->nic, v->rx, v->kind, v->dscp, v->flags, v->src, v->dst, v->pdc, v->psn,
		(uint64_t)v->cack, v->sack_base, v->sack_bits, v->service_ps, v->nack_code,
		v->entropy, v->wire_bytes, v->payload_bytes,
	};

	run->packets_hash = fnv(run->packets_hash, f, sizeof(f));
	run->packets++;
}

static void fail(struct uet_dst_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct uet_dst_result *res, const char *fmt, ...)
{
	va_list ap;

	if (res->what[0])
		return;
	va_start(ap, fmt);
	vsnprintf(res->what, sizeof(res->what), fmt, ap);
	va_end(ap);
}

/* The uet-events rows of @kind per message: exactly one each. */
static void check_completions(const struct run *run, uint32_t n_msgs, const char *kind,
			      struct uet_dst_result *res)
{
	uint32_t *count = calloc(n_msgs ? n_msgs : 1, sizeof(*count));
	char pat[32];
	int pat_len = snprintf(pat, sizeof(pat), ",%s,", kind);

	if (!count) {
		fail(res, "out of memory counting completions");
		return;
	}
	for (const char *at = run->events; at && (at = strstr(at, pat)); at += pat_len) {
		unsigned long pdc = strtoul(at + pat_len, NULL, 10);

		if (pdc < n_msgs)
			count[pdc]++;
	}
	for (uint32_t i = 0; i < n_msgs; i++) {
		if (count[i] != 1) {
			fail(res, "message %u: %u %s events (exactly one expected)", i, count[i], kind);
			break;
		}
	}
	free(count);
}

static void check_messages(const struct uet_sim *sim, struct uet_dst_result *res)
{
	for (uint32_t i = 0; i < uet_sim_n_msgs(sim); i++) {
		const struct uet_msg_info *m = uet_sim_msg(sim, i);

		if (m->delivered_bytes != m->bytes)
			fail(res, "message %u (host %u to %u): %" PRIu64 " of %" PRIu64
				  " bytes delivered",
			     i, m->src, m->dst, m->delivered_bytes, m->bytes);
		else if (!m->rx_done_ps || m->rx_done_ps > m->done_ps || m->done_ps < m->post_ps)
			fail(res,
			     "message %u (host %u to %u): completions out of order (posted %" PRIu64
			     ", received %" PRIu64 ", acknowledged %" PRIu64 " ps)",
			     i, m->src, m->dst, m->post_ps, m->rx_done_ps, m->done_ps);
	}
}

/* Which messages are open at the stop, for the failure message. */
static void describe_open(const struct uet_sim *sim, int rc, uint64_t stop_ps,
			  struct uet_dst_result *res)
{
	uint32_t open = 0, first = UINT32_MAX;

	for (uint32_t i = 0; i < uet_sim_n_msgs(sim); i++) {
		if (!uet_sim_msg(sim, i)->done_ps) {
			if (first == UINT32_MAX)
				first = i;
			open++;
		}
	}
	if (first == UINT32_MAX) {
		fail(res, "run failed: %s", strerror(-rc));
		return;
	}
	{
		const struct uet_msg_info *m = uet_sim_msg(sim, first);

		fail(res,
		     "%u of %u messages did not complete by %" PRIu64 " ps (%s at %" PRIu64
		     " ps); first: message %u, host %u to %u, %" PRIu64 " bytes, %" PRIu64
		     " delivered",
		     open, uet_sim_n_msgs(sim), stop_ps,
		     rc == -EDEADLK ? "nothing left to happen" : "still running",
		     uet_sim_now(sim), first, m->src, m->dst, m->bytes, m->delivered_bytes);
	}
}

static int run_once(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		    enum uet_prefetch prefetch, struct run *run, struct uet_dst_result *res)
{
	struct uet_hooks hooks = { .ctx = run, .monitor = monitor_hash };
	struct uet_records rec = { 0 };
	struct uet_sim *sim = NULL;
	struct pcm_diag diag;
	FILE *events;
	int rc;

	memset(run, 0, sizeof(*run));
	run->packets_hash = FNV_OFFSET;
	rc = uet_sim_create(scn, pkgs, scn->seed, &sim, &diag);
	if (rc < 0) {
		fail(res, "the scenario does not run: %s", diag.msg);
		return rc;
	}
	events = open_memstream(&run->events, &run->events_len);
	rec.transport_stats = hash_open(&run->stats);
	rec.flows = hash_open(&run->flows);
	rec.events = events;
	if (!events || !rec.transport_stats || !rec.flows) {
		rc = -ENOMEM;
		fail(res, "cannot open the record streams");
		goto out;
	}
	uet_sim_set_checks(sim, true);
	uet_sim_set_prefetch(sim, prefetch);
	uet_sim_set_hooks(sim, &hooks);
	uet_sim_set_records(sim, &rec);
	rc = uet_sim_start(sim, &diag);
	if (rc < 0) {
		fail(res, "the run does not start: %s", diag.msg);
		goto out;
	}
	rc = uet_sim_run(sim, scn->stop_ps);
	uet_sim_results(sim, &run->r);
	res->msgs = run->r.flows;
	res->hosts = run->r.hosts;
	res->sim_time_ps = uet_sim_now(sim);
	res->events = run->r.events;
	res->data_packets = run->r.data_packets;
	res->retransmits = run->r.retransmits;
	res->timeouts = run->r.timeouts;
	if (rc < 0) {
		describe_open(sim, rc, scn->stop_ps, res);
		goto out;
	}
	check_messages(sim, res);
	if (uet_sim_audit(sim, &diag) < 0)
		fail(res, "leak audit: %s", diag.msg);
	fflush(events);
	check_completions(run, uet_sim_n_msgs(sim), "msg_complete", res);
	check_completions(run, uet_sim_n_msgs(sim), "recv_complete", res);
	rc = res->what[0] ? -EFAULT : 0;
out:
	if (rec.transport_stats)
		fclose(rec.transport_stats);
	if (rec.flows)
		fclose(rec.flows);
	if (events)
		fclose(events);
	uet_sim_destroy(sim);
	return res->what[0] ? -EFAULT : rc;
}

static void compare(const struct run *a, const struct run *b, struct uet_dst_result *res)
{
	if (a->packets != b->packets || a->packets_hash != b->packets_hash)
		fail(res, "not deterministic: %" PRIu64 " and %" PRIu64 " packets, hashes differ",
		     a->packets, b->packets);
	else if (a->events_len != b->events_len || memcmp(a->events, b->events, a->events_len))
		fail(res, "not deterministic: uet-events differ");
	else if (a->stats.hash != b->stats.hash || a->stats.bytes != b->stats.bytes)
		fail(res, "not deterministic: uet-transport-stats differ");
	else if (a->flows.hash != b->flows.hash || a->flows.bytes != b->flows.bytes)
		fail(res, "not deterministic: uet-flows differ");
	else if (a->r.events != b->r.events || a->r.sim_time_ps != b->r.sim_time_ps)
		fail(res, "not deterministic: %" PRIu64 " and %" PRIu64 " events", a->r.events,
		     b->r.events);
}

int uet_dst_check(const struct uet_scenario *scn, const struct pcm_package *const *pkgs,
		  bool twice, struct uet_dst_result *res)
{
	struct uet_scenario *logged = uet_scenario_dup(scn);
	struct run a, b;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!logged) {
		fail(res, "out of memory");
		return -ENOMEM;
	}
	/* the completions are counted from uet-events */
	logged->nic.event_logging = true;
	rc = run_once(logged, pkgs, UET_PREFETCH_AUTO, &a, res);
	if (rc == 0 && twice) {
		struct uet_dst_result second;

		memset(&second, 0, sizeof(second));
		/* prefetching in stages must not change a thing (the generated fabrics are small) */
		rc = run_once(logged, pkgs, UET_PREFETCH_ON, &b, &second);
		if (rc < 0)
			fail(res, "second run: %s", second.what);
		else
			compare(&a, &b, res);
		free(b.events);
		if (res->what[0])
			rc = -EFAULT;
	}
	free(a.events);
	uet_scenario_free(logged);
	return rc;
}
