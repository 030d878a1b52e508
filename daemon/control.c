// SPDX-License-Identifier: MIT
/*
 * control.c - the control socket and each client's requests on it: the
 * socket made owner-only and then opened to socket.mode and socket.group, a
 * stale socket of a dead pcmd removed (a live one is not), a peer accepted as
 * a client or refused with its reason, and one request at a time received
 * (its descriptors closed, its credentials read), handled (request.c) and
 * answered, the REGION reply carrying the region's descriptors.
 */
#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "control.h"
#include "log.h"
#include "pcmd.h"
#include "request.h"

#define OWNER(ptr, member)                                                                         \
	((struct pcmd_client *)((char *)(ptr)-offsetof(struct pcmd_client, member)))

static void recv_done(struct pcmd_op *op, int res);
static void send_done(struct pcmd_op *op, int res);

/* ---- the socket ------------------------------------------------------------------------ */

static int socket_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* A socket file left by a pcmd that died is removed; a live one is not. */
static int clear_stale(const char *path, char *err, size_t err_len)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, err_len,
			 "%s exists and is not a socket; remove it or set socket.path", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	socket_addr(path, &sa);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (rc == 0) {
		snprintf(err, err_len, "another pcmd is already listening on %s", path);
		return -EADDRINUSE;
	}
	return unlink(path) < 0 ? -errno : 0;
}

static int socket_group(struct pcmd *d, char *err, size_t err_len)
{
	const char *name = d->cfg->socket.group;
	struct group gr, *res = NULL;
	char buf[4096];

	d->socket_gid = (uint32_t)-1;
	if (!name[0])
		return 0;
	if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) != 0 || !res) {
		snprintf(err, err_len,
			 "socket.group: no group named '%s' on this system (create it with "
			 "systemd-sysusers, or set socket.group: \"\")",
			 name);
		return -ENOENT;
	}
	d->socket_gid = res->gr_gid;
	return 0;
}

static int bind_and_protect(struct pcmd *d, int fd, char *err, size_t err_len)
{
	const char *path = d->cfg->socket.path;
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int rc;

	rc = socket_addr(path, &sa);
	if (rc < 0) {
		snprintf(err, err_len, "socket.path '%s' is longer than %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return rc;
	}
	/* Created owner-only, then opened up: never world-reachable in between. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	umask(old);
	if (rc < 0) {
		snprintf(err, err_len, "bind %s: %s", path, strerror(-rc));
		return rc;
	}
	/* Under systemd (Group=pcm, chown filtered) the socket already has its group. */
	if (d->socket_gid != (uint32_t)-1 && stat(path, &st) == 0 && st.st_gid == d->socket_gid)
		d->socket_gid = (uint32_t)-1;
	if (d->socket_gid != (uint32_t)-1 && chown(path, (uid_t)-1, d->socket_gid) < 0) {
		rc = -errno;
		snprintf(err, err_len,
			 "cannot give %s to group '%s': %s (pcmd must run as root or "
			 "as a member of that group)",
			 path, d->cfg->socket.group, strerror(errno));
		return rc;
	}
	if (chmod(path, d->cfg->socket.mode) < 0) {
		rc = -errno;
		snprintf(err, err_len, "chmod %o %s: %s", d->cfg->socket.mode, path,
			 strerror(errno));
		return rc;
	}
	return 0;
}

int pcmd_control_listen(struct pcmd *d, char *err, size_t err_len)
{
	int one = 1, fd, rc;

	rc = socket_group(d, err, err_len);
	if (rc == 0)
		rc = clear_stale(d->cfg->socket.path, err, err_len);
	if (rc < 0) {
		if (!err[0])
			snprintf(err, err_len, "%s: %s", d->cfg->socket.path, strerror(-rc));
		return rc;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_len, "socket: %s", strerror(errno));
		return rc;
	}
	/* Accepted sockets inherit it: every message then carries its sender's credentials. */
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		rc = -errno;
		snprintf(err, err_len, "SO_PASSCRED: %s", strerror(errno));
		goto err_close;
	}
	rc = bind_and_protect(d, fd, err, err_len);
	if (rc < 0)
		goto err_unlink;
	if (listen(fd, 128) < 0) {
		rc = -errno;
		snprintf(err, err_len, "listen %s: %s", d->cfg->socket.path, strerror(errno));
		goto err_unlink;
	}
	d->listen_fd = fd;
	return 0;

err_unlink:
	unlink(d->cfg->socket.path);
err_close:
	close(fd);
	return rc;
}

void pcmd_control_close(struct pcmd *d)
{
	if (d->listen_fd < 0)
		return;
	close(d->listen_fd);
	d->listen_fd = -1;
	unlink(d->cfg->socket.path);
}

/* ---- clients ------------------------------------------------------------------------- */

/* Close the descriptors of one SCM_RIGHTS header, however many: pcmd takes none. */
static int close_rights(const struct cmsghdr *cm)
{
	size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

	for (size_t i = 0; i < n; i++) {
		int fd;

		memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
		close(fd);
	}
	return (int)n;
}

/*
 * Read what a peer refused outright has sent (a HELLO, and any descriptors it
 * carried), so that closing its socket with nothing unread lets the peer read
 * the refusal instead of ECONNRESET.
 */
static void drain_refused(int fd)
{
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int) * 32)];
	} ctl;
	uint8_t buf[64];

	for (int i = 0; i < PCMD_REFUSE_DRAIN; i++) {
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = ctl.b,
				   .msg_controllen = sizeof(ctl.b)};

		if (recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0)
			return;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				close_rights(cm);
	}
}

static void send_refusal(int fd, int status, const char *text)
{
	struct pcmd_reply_error e;

	memset(&e, 0, sizeof(e));
	e.st.hdr.magic = PCMD_PROTO_MAGIC;
	e.st.hdr.version = PCMD_PROTO_VERSION;
	e.st.hdr.type = PCMD_MSG_HELLO | PCMD_MSG_REPLY;
	e.st.hdr.len = sizeof(e);
	e.st.status = status;
	snprintf(e.text, sizeof(e.text), "%s", text);
	/* A fresh socket's buffer is empty: this never blocks. */
	if (send(fd, &e, sizeof(e), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		pcmd_debug("refusal not delivered: %s", strerror(errno));
}

static void arm_recv(struct pcmd_client *c)
{
	c->riov.iov_base = c->rbuf;
	c->riov.iov_len = sizeof(c->rbuf);
	memset(&c->rmsg, 0, sizeof(c->rmsg));
	c->rmsg.msg_iov = &c->riov;
	c->rmsg.msg_iovlen = 1;
	c->rmsg.msg_control = c->rctl.buf;
	c->rmsg.msg_controllen = sizeof(c->rctl.buf);
	c->recv_op.done = recv_done;
	if (pcmd_loop_recvmsg(c->d->loop, &c->recv_op, c->fd, &c->rmsg) < 0)
		pcmd_client_kill(c, "cannot queue a receive");
}

void pcmd_control_accept(struct pcmd *d, int fd)
{
	char why[PCMD_ERRTEXT_MAX];
	struct pcmd_client *c;
	int rc = pcmd_client_new(d, fd, &c, why, sizeof(why));

	if (rc < 0) {
		send_refusal(fd, rc, why);
		drain_refused(fd);
		close(fd);
		return;
	}
	arm_recv(c);
}

/*
 * Close every descriptor a message carried, whoever sent it, and read its
 * credentials. Descriptors that did not fit in the control buffer
 * (MSG_CTRUNC) were never installed: the kernel dropped them.
 */
static int scan_cmsgs(struct pcmd_client *c, struct ucred *msg_cred, bool *has_cred)
{
	int stray = 0;

	*has_cred = false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&c->rmsg); cm; cm = CMSG_NXTHDR(&c->rmsg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			stray += close_rights(cm);
		} else if (cm->cmsg_type == SCM_CREDENTIALS &&
			   cm->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			memcpy(msg_cred, CMSG_DATA(cm), sizeof(*msg_cred));
			*has_cred = true;
		}
	}
	return stray;
}

static void start_send(struct pcmd_client *c, size_t len, const int *fds, int n_fds)
{
	c->siov.iov_base = c->sbuf;
	c->siov.iov_len = len;
	memset(&c->smsg, 0, sizeof(c->smsg));
	c->smsg.msg_iov = &c->siov;
	c->smsg.msg_iovlen = 1;
	if (n_fds > 0) {
		struct cmsghdr *cm;

		c->smsg.msg_control = c->sctl.buf;
		c->smsg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n_fds);
		cm = CMSG_FIRSTHDR(&c->smsg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n_fds);
	}
	c->send_op.done = send_done;
	if (pcmd_loop_sendmsg(c->d->loop, &c->send_op, c->fd, &c->smsg) < 0)
		pcmd_client_kill(c, "cannot queue a reply");
}

static void recv_done(struct pcmd_op *op, int res)
{
	struct pcmd_client *c = OWNER(op, recv_op);
	struct pcmd_request_in in = {0};
	struct ucred msg_cred;
	int fds[PCMD_REGION_FDS], n_fds = 0;
	size_t reply_len;

	/* A message that arrived, even for a client being reclaimed, gives up its descriptors. */
	if (res > 0)
		in.stray_fds = scan_cmsgs(c, &msg_cred, &in.has_cred);
	if (c->state != PCMD_CLIENT_ALIVE) {
		pcmd_client_maybe_free(c);
		return;
	}
	if (res <= 0) {
		pcmd_client_kill(c,
				 res == 0 ? "closed its control socket" : "control socket error");
		return;
	}
	in.msg = c->rbuf;
	in.len = (size_t)res;
	in.truncated = (c->rmsg.msg_flags & MSG_TRUNC) != 0;
	in.ctl_truncated = (c->rmsg.msg_flags & MSG_CTRUNC) != 0;
	in.cred = in.has_cred ? &msg_cred : &c->cred;
	reply_len = pcmd_request_handle(c, &in, c->sbuf, sizeof(c->sbuf), fds, &n_fds);
	start_send(c, reply_len, fds, n_fds);
}

static void send_done(struct pcmd_op *op, int res)
{
	struct pcmd_client *c = OWNER(op, send_op);

	if (c->state != PCMD_CLIENT_ALIVE) {
		pcmd_client_maybe_free(c);
		return;
	}
	if (res < 0) {
		pcmd_client_kill(c, "its reply could not be sent");
		return;
	}
	if (c->close_after_send) {
		pcmd_client_kill(c, "refused");
		return;
	}
	arm_recv(c);
}
