// SPDX-License-Identifier: MIT
/*
 * fuzz_pcmd_control.c - libFuzzer target for pcmd's control protocol: the
 * input is a sequence of requests from two clients (one that has said HELLO
 * and has a region, one fresh), each built from the input's bytes with a
 * well-formed header unless the input asks for a broken one, and handed to
 * pcmd_request_handle() over pcmd's core in process, with the data plane
 * pumped between requests. Oracles besides the sanitizers: every request gets
 * a reply no larger than the protocol's maximum, whose header echoes it; no
 * reply status is positive; and after both clients hang up pcmd holds no
 * client, region or flow and the data plane nothing.
 *
 * Record format: [client:1][flags:1][type:1][body length:2, little-endian][body...].
 * flags bit 0: random magic; bit 1: version from the body's first byte;
 * bit 2: header length off by the body's second byte.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inproc.h"
#include "plane_loopback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char yaml[] =
    "log_level: error\n"
    "socket: {path: /tmp/pcmd-fuzz-unused.sock, group: \"\"}\n"
    "limits: {max_clients: 4, flows_per_client: 4, listeners_per_client: 2,\n"
    "         outstanding_per_client: 16, memory_per_client_bytes: 1MiB,\n"
    "         max_message_bytes: 64KiB}\n"
    "policies:\n"
    "  rules: [{peer: \"r*\", policy: cubic}]\n";

static struct inproc ip;

static void require(bool ok)
{
	if (!ok)
		abort();
}

static void open_pair(struct inproc_client *cl)
{
	require(inproc_client_open(&ip, &cl[0], PCMD_ROLE_APP, 65536, 8, 16) == 0);
	memset(&cl[1], 0, sizeof(cl[1]));
	cl[1].memfd = -1;
	require(inproc_client_open(&ip, &cl[1], PCMD_ROLE_APP, 0, 0, 0) == 0);
}

static void one_request(struct inproc_client *cl, const uint8_t *rec, size_t body)
{
	static uint8_t msg[PCMD_RECV_BYTES + 64], rep[PCMD_MSG_MAX_BYTES];
	struct pcmd_msg_hdr *h = (struct pcmd_msg_hdr *)msg;
	const struct pcmd_msg_hdr *rh = (const struct pcmd_msg_hdr *)rep;
	uint8_t flags = rec[1];
	size_t len = sizeof(*h) + body, n;

	memset(msg, 0, sizeof(msg));
	memcpy(msg + sizeof(*h), rec + 5, body);
	h->magic = flags & 1 ? 0x12345678u ^ rec[2] : PCMD_PROTO_MAGIC;
	h->version = flags & 2 && body ? rec[5] : PCMD_PROTO_VERSION;
	h->type = rec[2] & 0x1f;
	h->len = (uint32_t)len + (flags & 4 && body > 1 ? rec[6] : 0);
	h->seq = ++cl->seq;
	n = inproc_raw(&ip, cl, msg, len, rep, sizeof(rep));
	require(n >= sizeof(struct pcmd_reply_status) && n <= PCMD_MSG_MAX_BYTES);
	require(rh->magic == PCMD_PROTO_MAGIC && (rh->type & PCMD_MSG_REPLY));
	require(((const struct pcmd_reply_status *)rep)->status <= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct inproc_client cl[2];
	struct pcmd_plane_loopback_usage u;
	size_t at = 0;

	if (!ready) {
		require(inproc_create(&ip, yaml) == 0);
		ready = true;
	}
	open_pair(cl);
	while (at + 5 <= size) {
		size_t body = (size_t)data[at + 3] | (size_t)data[at + 4] << 8;
		int who = data[at] & 1;

		if (body > PCMD_RECV_BYTES + 32)
			body = PCMD_RECV_BYTES + 32;
		if (at + 5 + body > size)
			body = size - at - 5;
		/* A client pcmd hung up on (a refusal) comes back as a fresh one. */
		if (!inproc_client_alive(&ip, &cl[who])) {
			inproc_client_kill(&ip, &cl[who]);
			require(inproc_client_open(&ip, &cl[who], PCMD_ROLE_APP, 0, 0, 0) == 0);
		}
		one_request(&cl[who], data + at, body);
		inproc_pump(&ip, 1);
		at += 5 + body;
	}
	inproc_client_kill(&ip, &cl[0]);
	inproc_client_kill(&ip, &cl[1]);
	inproc_pump(&ip, 4);
	require(ip.d->n_clients == 0 && ip.d->region_bytes == 0);
	for (uint32_t i = 0; i < ip.d->policies->n; i++)
		require(ip.d->policies->items[i]->flows == 0);
	pcmd_plane_loopback_usage(ip.d->plane, &u);
	require(!u.regions && !u.flows && !u.listeners && !u.queued_events);
	return 0;
}
