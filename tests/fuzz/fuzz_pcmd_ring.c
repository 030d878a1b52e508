// SPDX-License-Identifier: MIT
/*
 * fuzz_pcmd_ring.c - libFuzzer target for pcmd's ring parser: two clients
 * connected through pcmd (in process, loopback data plane) write the input
 * into their shared rings: descriptors with any bytes, their own ring
 * indices set to anything, completions taken or not, and pcmd runs between
 * them. Oracles besides the sanitizers (and the loopback, which aborts on any
 * buffer outside a flow's region): every completion names a cookie the client
 * posted, at most once per post, with a status <= 0; a client whose indices
 * pcmd finds corrupt is disconnected, the other keeps working; and after
 * both hang up nothing is left in pcmd or the data plane.
 *
 * Record format: [op:1][32 bytes]. op & 3: 0 post the 32 bytes as a
 * descriptor (its cookie replaced by a counter unless op bit 4), 1 set the
 * submission tail to the first 4 bytes, 2 set the completion head to them,
 * 3 take completions; op bit 2: which client; bit 3: let pcmd run.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plane_loopback.h"
#include "inproc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REC 33
#define MAX_POSTS 4096
#define COUNTED (1ull << 63) /* marks the cookies this target numbers */

static const char yaml[] =
    "log_level: error\n"
    "socket: {path: /tmp/pcmd-fuzz-unused.sock, group: \"\"}\n"
    "datapath: {chunk_bytes: 4096}\n"
    "limits: {max_clients: 4, flows_per_client: 4, outstanding_per_client: 16,\n"
    "         memory_per_client_bytes: 1MiB, max_message_bytes: 32KiB}\n";

static struct inproc ip;
static uint8_t seen[2][MAX_POSTS + 1];
static bool tampered[2]; /* the client moved its own indices: it may see entries twice */

static void require(bool ok)
{
	if (!ok)
		abort();
}

static bool alive(struct inproc_client *cl)
{
	return inproc_client_alive(&ip, cl);
}

static void connect_pair(struct inproc_client *cl)
{
	struct pcmd_req_listen l = {.addr = "fz"};
	struct pcmd_req_accept a = {.cookie = 1};
	struct pcmd_req_connect c = {.addr = "fz", .cookie = 2};
	struct pcmd_cqe e;

	require(inproc_client_open(&ip, &cl[0], PCMD_ROLE_APP, 65536, 8, 16) == 0);
	require(inproc_client_open(&ip, &cl[1], PCMD_ROLE_APP, 65536, 8, 8) == 0);
	c.opts.mode = PCMD_SHELL_DEFAULT;
	require(inproc_request(&ip, &cl[1], &l, PCMD_MSG_LISTEN, sizeof(l), NULL, 0) == 0);
	require(inproc_request(&ip, &cl[1], &a, PCMD_MSG_ACCEPT, sizeof(a), NULL, 0) == 0);
	require(inproc_request(&ip, &cl[0], &c, PCMD_MSG_CONNECT, sizeof(c), NULL, 0) == 0);
	inproc_pump(&ip, 4);
	require(inproc_take(&cl[0], &e) == 1 && e.op == PCMD_OP_CONNECT && e.status == 0);
	require(inproc_take(&cl[1], &e) == 1 && e.op == PCMD_OP_ACCEPT && e.status == 0);
}

static void take_all(struct inproc_client *cl, int who, uint32_t posted)
{
	struct pcmd_cqe e;

	while (alive(cl) && inproc_take(cl, &e)) {
		require(e.status <= 0);
		/* Counter cookies: each posted once, completed at most once. */
		if (!tampered[who] && (e.cookie & COUNTED)) {
			uint64_t k = e.cookie & ~COUNTED;

			require(k >= 1 && k <= posted);
			require(!seen[who][k]);
			seen[who][k] = 1;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct inproc_client cl[2];
	struct pcmd_plane_loopback_usage u;
	uint32_t posted[2] = {0, 0};

	if (!ready) {
		require(inproc_create(&ip, yaml) == 0);
		ready = true;
	}
	memset(seen, 0, sizeof(seen));
	memset(tampered, 0, sizeof(tampered));
	connect_pair(cl);
	for (size_t at = 0; at + REC <= size; at += REC) {
		uint8_t op = data[at];
		int who = (op >> 2) & 1;
		struct inproc_client *c = &cl[who];
		struct pcmd_sqe e;
		uint32_t v;

		if (!alive(c))
			continue;
		memcpy(&e, data + at + 1, sizeof(e));
		memcpy(&v, data + at + 1, sizeof(v));
		switch (op & 3) {
		case 0:
			/* Counter cookies (unless asked not to), so completions can be matched. */
			if (!(op & 16) && posted[who] < MAX_POSTS)
				e.cookie = COUNTED | (posted[who] + 1);
			else
				e.cookie &= ~COUNTED;
			if (inproc_post(c, &e) == 0 && !(op & 16) && posted[who] < MAX_POSTS)
				posted[who]++;
			break;
		case 1:
			atomic_store(&c->sq.ctl->tail.v, v);
			tampered[who] = true;
			break;
		case 2:
			atomic_store(&c->cq.ctl->head.v, v);
			tampered[who] = true;
			break;
		default:
			take_all(c, who, posted[who]);
			break;
		}
		if (op & 8)
			inproc_pump(&ip, 1);
	}
	inproc_pump(&ip, 2);
	take_all(&cl[0], 0, posted[0]);
	take_all(&cl[1], 1, posted[1]);
	inproc_client_kill(&ip, &cl[0]);
	inproc_client_kill(&ip, &cl[1]);
	inproc_pump(&ip, 4);
	require(ip.d->n_clients == 0 && ip.d->region_bytes == 0);
	pcmd_plane_loopback_usage(ip.d->plane, &u);
	require(!u.regions && !u.flows && !u.listeners && !u.queued_events);
	return 0;
}
