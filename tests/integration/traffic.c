// SPDX-License-Identifier: MIT
/*
 * traffic.c - pcmd-test-traffic SOCKET SECONDS PAIRS [IDLE]: keep PAIRS
 * connections busy through pcmd (one sender and one receiver endpoint each,
 * 256 KiB messages, every byte checked) for SECONDS, printing "ready" once all
 * are connected, so pcmctl has live flows to show. With IDLE, the pairs then
 * finish the messages they have out, print "idle", and stay connected with
 * nothing in flight for IDLE seconds before they close. Exit 0 if every
 * message arrived intact.
 *
 * An endpoint pcmd disconnects (a reload that no longer allows the user, a
 * stop) fails the pair, with pcmd's reason.
 *
 * SECONDS or IDLE given as "-" has no clock: the busy phase lasts until
 * SIGUSR1, the idle one until SIGTERM. SIGTERM (or SIGINT) in any phase ends
 * the run as its clock would: the pairs close and the exit status still says
 * whether every message arrived intact. Tests use "-", so that a loaded
 * machine, however slow its checks, never sees the phase end under it.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "pcmd_proto.h"
#include "tp_util.h"

#define MSG_BYTES (256u << 10)
#define MAX_PAIRS 16

/* Set by the signals: SIGUSR1 ends the busy phase, SIGTERM/SIGINT the run. */
static volatile sig_atomic_t busy_over, run_over;

static void on_usr1(int sig)
{
	(void)sig;
	busy_over = 1;
}

static void on_term(int sig)
{
	(void)sig;
	run_over = 1;
}

static void catch_signals(void)
{
	struct sigaction usr1 = {.sa_handler = on_usr1}, term = {.sa_handler = on_term};

	sigaction(SIGUSR1, &usr1, NULL);
	sigaction(SIGTERM, &term, NULL);
	sigaction(SIGINT, &term, NULL);
}

#define NO_CLOCK UINT64_MAX

/*
 * How long a phase lasts: @arg seconds, or NO_CLOCK for "-" (until a signal).
 * Return: 0, or -EINVAL for anything else.
 */
static int phase_ms(const char *arg, uint64_t *ms)
{
	char *rest;
	long s;

	if (strcmp(arg, "-") == 0) {
		*ms = NO_CLOCK;
		return 0;
	}
	s = strtol(arg, &rest, 10);
	if (rest == arg || *rest || s < 0)
		return -EINVAL;
	*ms = (uint64_t)s * 1000;
	return 0;
}

/* The end of a phase of @ms (phase_ms()) that starts now. */
static uint64_t phase_end_ms(uint64_t ms)
{
	return ms == NO_CLOCK ? NO_CLOCK : harness_now_ms() + ms;
}

/* The busy phase goes on: no SIGUSR1 or SIGTERM yet and its clock, if any, not run out. */
static int busy_goes_on(uint64_t end_ms)
{
	return !busy_over && !run_over && harness_now_ms() < end_ms;
}

struct pair {
	struct pcm_tp_endpoint *tx, *rx;
	struct pcm_tp_conn *ctx, *crx;
	uint8_t *sbuf, *rbuf;
	uint64_t k;
	int busy;
};

static int connect_pair(const char *sock, struct pair *p, int i)
{
	char addr[PCMD_ADDR_MAX];
	const char *prefix = getenv("PCMD_TEST_ADDR_PREFIX");

	snprintf(addr, sizeof(addr), "%s%d", prefix ? prefix : "traffic-", i);
	if (tp_open(sock, 4u << 20, &p->tx) < 0 || tp_open(sock, 4u << 20, &p->rx) < 0 ||
	    tp_pair(p->tx, p->rx, addr, NULL, &p->ctx, &p->crx) != 0)
		return -1;
	p->sbuf = pcm_tp_mem_alloc(p->tx, MSG_BYTES);
	p->rbuf = pcm_tp_mem_alloc(p->rx, MSG_BYTES);
	return p->sbuf && p->rbuf ? 0 : -1;
}

/* One round trip of the pair's state machine. Return: -1 on a bad message. */
static int step(struct pair *p)
{
	struct pcm_tp_completion c;
	int before = p->busy;
	size_t bad;

	if (!p->busy) {
		harness_fill(p->sbuf, MSG_BYTES, p->k);
		if (pcm_tp_recv(p->crx, NULL, p->rbuf, MSG_BYTES, p->k) < 0 ||
		    pcm_tp_send(p->ctx, NULL, p->sbuf, MSG_BYTES, p->k) < 0)
			return -1;
		p->busy = 2;
	}
	while (pcm_tp_poll(p->tx, &c, 1) == 1)
		p->busy -= c.op == PCM_TP_OP_SEND && c.status == 0 ? 1 : 100;
	while (pcm_tp_poll(p->rx, &c, 1) == 1) {
		if (c.status || c.bytes != MSG_BYTES ||
		    harness_check(p->rbuf, MSG_BYTES, p->k, &bad) < 0)
			return -1;
		p->busy--;
	}
	if (p->busy < 0)
		return -1;
	/* No progress: has pcmd disconnected an endpoint (only a wait reads its notice)? */
	if (p->busy == before && before &&
	    (pcm_tp_wait(p->tx, 0) == -ESHUTDOWN || pcm_tp_wait(p->rx, 0) == -ESHUTDOWN)) {
		fprintf(stderr, "traffic: pcmd disconnected an endpoint: %s\n", pcm_tp_last_error());
		return -1;
	}
	if (p->busy == 0)
		p->k++;
	return 0;
}

/* Finish every pair's message in progress. Return: -1 on a bad message. */
static int drain(struct pair *pairs, int n)
{
	for (int i = 0; i < n; i++)
		while (pairs[i].busy && !run_over)
			if (step(&pairs[i]) < 0)
				return -1;
	return run_over ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct pair pairs[MAX_PAIRS] = {0};
	uint64_t busy_ms, idle_ms = 0, until;
	int n;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: pcmd-test-traffic SOCKET SECONDS|- PAIRS [IDLE|-]\n");
		return 2;
	}
	n = atoi(argv[3]);
	if (n < 1 || n > MAX_PAIRS)
		return 2;
	if (phase_ms(argv[2], &busy_ms) < 0 || (argc == 5 && phase_ms(argv[4], &idle_ms) < 0)) {
		fprintf(stderr, "traffic: SECONDS %s, IDLE %s: whole numbers or -\n", argv[2],
			argc == 5 ? argv[4] : "(none)");
		return 2;
	}
	catch_signals();
	for (int i = 0; i < n; i++)
		if (connect_pair(argv[1], &pairs[i], i) < 0) {
			fprintf(stderr, "traffic: pair %d: %s\n", i, pcm_tp_last_error());
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	until = phase_end_ms(busy_ms);
	while (busy_goes_on(until))
		for (int i = 0; i < n; i++)
			if (step(&pairs[i]) < 0) {
				fprintf(stderr, "traffic: pair %d: a message failed or differed\n",
					i);
				return 1;
			}
	if (argc == 5 && !run_over) {
		if (drain(pairs, n) < 0) {
			fprintf(stderr, "traffic: a message failed or differed, or SIGTERM came "
					"before the last ones finished\n");
			return 1;
		}
		printf("idle\n");
		fflush(stdout);
		until = phase_end_ms(idle_ms);
		while (!run_over && harness_now_ms() < until)
			usleep(20000);
	}
	for (int i = 0; i < n; i++) {
		printf("pair %d: %llu messages\n", i, (unsigned long long)pairs[i].k);
		pcm_tp_endpoint_close(pairs[i].tx);
		pcm_tp_endpoint_close(pairs[i].rx);
	}
	return 0;
}
