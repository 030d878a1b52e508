// SPDX-License-Identifier: MIT
/*
 * inproc.c - pcmd's core in the test's own process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "inproc.h"
#include "plane_loopback.h"
#include "request.h"

int inproc_create(struct inproc *ip, const char *yaml)
{
	return inproc_create_on(ip, yaml, &pcmd_plane_loopback);
}

int inproc_create_on(struct inproc *ip, const char *yaml, const struct pcmd_plane_ops *plane)
{
	char err[PCMD_CFG_ERR_MAX];
	FILE *f;
	int fd, rc;

	memset(ip, 0, sizeof(*ip));
	snprintf(ip->config, sizeof(ip->config), "/tmp/pcmd-inproc-XXXXXX");
	fd = mkstemp(ip->config);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -errno;
	}
	fputs(yaml, f);
	fclose(f);
	rc = pcmd_create_core(ip->config, NULL, plane, &ip->d, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "inproc: %s\n", err);
	return rc;
}

void inproc_destroy(struct inproc *ip)
{
	pcmd_destroy(ip->d);
	unlink(ip->config);
}

static void fill_hdr(struct inproc_client *cl, void *req, uint16_t type, size_t len)
{
	struct pcmd_msg_hdr *h = req;

	h->magic = PCMD_PROTO_MAGIC;
	h->version = PCMD_PROTO_VERSION;
	h->type = type;
	h->len = (uint32_t)len;
	h->seq = ++cl->seq;
}

static size_t handle(struct inproc *ip, struct inproc_client *cl, const void *msg, size_t len,
		     void *reply, size_t cap, int *fds, int *n_fds)
{
	struct pcmd_request_in in = {.msg = msg, .len = len, .cred = &cl->c->cred};
	static _Alignas(8) uint8_t out[PCMD_MSG_MAX_BYTES];
	size_t n;

	in.truncated = len > PCMD_RECV_BYTES;
	if (in.truncated)
		in.len = PCMD_RECV_BYTES;
	n = pcmd_request_handle(cl->c, &in, out, sizeof(out), fds, n_fds);
	memcpy(reply, out, n < cap ? n : cap);
	/* What the loop does after sending a refusal. */
	if (cl->c->close_after_send)
		pcmd_client_kill(cl->c, "refused");
	return n;
}

int inproc_request(struct inproc *ip, struct inproc_client *cl, void *req, uint16_t type,
		   size_t len, void *reply, size_t cap)
{
	_Alignas(8) uint8_t rep[PCMD_MSG_MAX_BYTES];
	const struct pcmd_reply_error *e = (const void *)rep;
	int fds[PCMD_REGION_FDS], n_fds = 0;
	size_t n;

	fill_hdr(cl, req, type, len);
	n = handle(ip, cl, req, len, rep, sizeof(rep), fds, &n_fds);
	if (reply)
		memcpy(reply, rep, n < cap ? n : cap);
	cl->last_status = e->st.status;
	snprintf(cl->last_error, sizeof(cl->last_error), "%s", e->st.status < 0 ? e->text : "");
	if (type == PCMD_MSG_REGION && e->st.status == 0 && n_fds == PCMD_REGION_FDS) {
		cl->memfd = dup(fds[0]);
		cl->sq_efd = dup(fds[1]);
	}
	return e->st.status;
}

size_t inproc_raw(struct inproc *ip, struct inproc_client *cl, const void *msg, size_t len,
		  void *reply, size_t cap)
{
	int fds[PCMD_REGION_FDS], n_fds = 0;

	return handle(ip, cl, msg, len, reply, cap, fds, &n_fds);
}

static int map_region(struct inproc_client *cl)
{
	struct pcmd_region_hdr *h;

	cl->map =
	    mmap(NULL, cl->lay.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cl->memfd, 0);
	if (cl->map == MAP_FAILED) {
		cl->map = NULL;
		return -errno;
	}
	h = (struct pcmd_region_hdr *)cl->map;
	cl->data = cl->map + cl->lay.data_off;
	pcmd_ring_init(&cl->sq, &h->sq, cl->map + cl->lay.sq_off, cl->lay.sq_entries,
		       sizeof(struct pcmd_sqe));
	pcmd_ring_init(&cl->cq, &h->cq, cl->map + cl->lay.cq_off, cl->lay.cq_entries,
		       sizeof(struct pcmd_cqe));
	return 0;
}

int inproc_client_open(struct inproc *ip, struct inproc_client *cl, uint32_t role,
		       uint64_t data_bytes, uint32_t sq_entries, uint32_t cq_entries)
{
	struct pcmd_req_hello h = {
	    .version_min = PCMD_PROTO_VERSION, .version_max = PCMD_PROTO_VERSION, .role = role};
	struct pcmd_req_region r = {
	    .data_bytes = data_bytes, .sq_entries = sq_entries, .cq_entries = cq_entries};
	struct pcmd_rep_region rep;
	char why[PCMD_ERRTEXT_MAX];
	int sv[2], rc;

	memset(cl, 0, sizeof(*cl));
	cl->memfd = cl->sq_efd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	rc = pcmd_client_new(ip->d, sv[0], &cl->c, why, sizeof(why));
	if (rc < 0) {
		cl->c = NULL;
		close(sv[0]);
		close(sv[1]);
		return rc;
	}
	cl->peer_fd = sv[1];
	cl->key = cl->c->key;
	rc = inproc_request(ip, cl, &h, PCMD_MSG_HELLO, sizeof(h), NULL, 0);
	if (rc < 0 || role != PCMD_ROLE_APP || !data_bytes)
		return rc;
	rc = inproc_request(ip, cl, &r, PCMD_MSG_REGION, sizeof(r), &rep, sizeof(rep));
	if (rc < 0)
		return rc;
	cl->lay = rep.lay;
	return map_region(cl);
}

void inproc_pump(struct inproc *ip, int rounds)
{
	struct pcmd *d = ip->d;

	for (int i = 0; i < rounds; i++) {
		pcmd_plane_drain(d);
		for (uint32_t s = 0; s < d->n_slots; s++)
			if (d->slots[s])
				pcmd_client_intake(d->slots[s]);
		pcmd_loop_turn(d->loop, 0);
	}
}

int inproc_client_alive(struct inproc *ip, const struct inproc_client *cl)
{
	const struct pcmd_client *c = cl->c ? pcmd_client_by_key(ip->d, cl->key) : NULL;

	return c && c == cl->c && c->state == PCMD_CLIENT_ALIVE;
}

void inproc_client_kill(struct inproc *ip, struct inproc_client *cl)
{
	uint32_t key = cl->key;

	if (cl->c)
		close(cl->peer_fd);
	if (cl->c && pcmd_client_by_key(ip->d, key) == cl->c)
		pcmd_client_kill(cl->c, "hung up");
	/* a data plane with threads answers the reclaim a little later: up to ~5 s more */
	for (int i = 0; cl->c && i < 6000 && pcmd_client_by_key(ip->d, key); i++) {
		inproc_pump(ip, 1);
		if (i >= 1000)
			usleep(1000);
	}
	if (cl->map)
		munmap(cl->map, cl->lay.region_bytes);
	if (cl->memfd >= 0)
		close(cl->memfd);
	if (cl->sq_efd >= 0)
		close(cl->sq_efd);
	memset(cl, 0, sizeof(*cl));
	cl->memfd = cl->sq_efd = -1;
}

static void ring_sq(struct inproc_client *cl)
{
	uint64_t one = 1;

	if (cl->sq_efd >= 0 && write(cl->sq_efd, &one, sizeof(one)) < 0) {
		/* saturated: pcmd is woken anyway */
	}
}

int inproc_post(struct inproc_client *cl, const struct pcmd_sqe *e)
{
	int64_t used = pcmd_ring_used(&cl->sq);

	if (used < 0 || used >= pcmd_ring_size(&cl->sq))
		return -EAGAIN;
	pcmd_ring_put(&cl->sq, e);
	if (pcmd_ring_publish(&cl->sq))
		ring_sq(cl);
	return 0;
}

int inproc_take(struct inproc_client *cl, struct pcmd_cqe *out)
{
	if (pcmd_ring_avail(&cl->cq) <= 0)
		return 0;
	pcmd_ring_get(&cl->cq, out);
	if (pcmd_ring_release(&cl->cq))
		ring_sq(cl); /* pcmd waits for completion slots */
	return 1;
}
