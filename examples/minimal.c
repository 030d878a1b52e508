// SPDX-License-Identifier: MIT
/*
 * minimal.c - the smallest libpcmtransport program: two endpoints in one
 * process on the null datapath; one listens, the other connects, sends one
 * message, and the listener checks that it arrived byte for byte. One
 * thread drives both endpoints, so while it waits on one it lets the other
 * make progress too (pcm_tp_poll(other, NULL, 0)).
 *
 * Build: cc minimal.c $(pkg-config --cflags --libs pcmtransport)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcm/transport.h>

/* Wait for one completion of @ep, of operation @op, while @other makes progress. */
static struct pcm_tp_completion wait_for(struct pcm_tp_endpoint *ep, struct pcm_tp_endpoint *other,
					 enum pcm_tp_op op)
{
	struct pcm_tp_completion c;

	for (int spins = 0;; spins++) {
		if (spins > 5000000) {
			fprintf(stderr, "minimal: no completion after %d polls\n", spins);
			exit(1);
		}
		pcm_tp_poll(other, NULL, 0);
		if (pcm_tp_poll(ep, &c, 1) == 1) {
			if (c.op != op || c.status < 0) {
				fprintf(stderr, "minimal: op %d: %s\n", (int)c.op,
					pcm_tp_strerror(c.status));
				exit(1);
			}
			return c;
		}
	}
}

static void check(int rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "minimal: %s: %s (%s)\n", what, pcm_tp_strerror(rc),
			pcm_tp_last_error());
		exit(1);
	}
}

int main(void)
{
	struct pcm_tp_config cfg = { .backend = PCM_TP_BACKEND_INPROC, .datapath = "null" };
	struct pcm_tp_endpoint *server, *client;
	struct pcm_tp_conn *to_server, *to_client;
	const char msg[] = "hello over pcm";
	char *tx, *rx;

	check(pcm_tp_endpoint_open(&cfg, &server), "open");
	check(pcm_tp_endpoint_open(&cfg, &client), "open");
	check(pcm_tp_listen(server, "minimal"), "listen");
	check(pcm_tp_accept(server, 1), "accept");
	check(pcm_tp_connect(client, "minimal", NULL, 2), "connect");
	to_server = wait_for(client, server, PCM_TP_OP_CONNECT).conn;
	to_client = wait_for(server, client, PCM_TP_OP_ACCEPT).conn;

	tx = pcm_tp_mem_alloc(client, sizeof(msg));
	rx = pcm_tp_mem_alloc(server, 4096);
	if (!tx || !rx)
		check(-12, "mem_alloc");
	memcpy(tx, msg, sizeof(msg));
	check(pcm_tp_recv(to_client, NULL, rx, 4096, 10), "recv");
	check(pcm_tp_send(to_server, NULL, tx, sizeof(msg), 11), "send");
	if (wait_for(server, client, PCM_TP_OP_RECV).bytes != sizeof(msg) || memcmp(rx, msg, sizeof(msg))) {
		fprintf(stderr, "minimal: the message arrived changed\n");
		return 1;
	}
	wait_for(client, server, PCM_TP_OP_SEND);
	printf("minimal: received \"%s\" (%zu bytes)\n", rx, sizeof(msg));

	check(pcm_tp_conn_close(to_server), "close");
	check(pcm_tp_conn_close(to_client), "close");
	pcm_tp_mem_free(client, tx);
	pcm_tp_mem_free(server, rx);
	pcm_tp_endpoint_close(client);
	pcm_tp_endpoint_close(server);
	return 0;
}
