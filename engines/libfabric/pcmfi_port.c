// SPDX-License-Identifier: MIT
/*
 * pcmfi_port.c - the provider's libpcmtransport endpoints ("ports").
 *
 * A port is one pcm_tp_endpoint: through pcmd (the default), one client of
 * pcmd, which on pcmd's softnic fabric is one emulated host. A fabric opens
 * its first port when something first listens or dials, so a process that
 * runs one rank is one host. A listening pep needs a port of its own (a pcm
 * endpoint listens at one address); a second pep opens a second port.
 * Dials go from the first port, except to an address this fabric itself
 * listens at: those go from a separate loopback port, since a pcm endpoint
 * cannot dial itself on pcmd's softnic fabric (the dial never completes).
 *
 * Names: a port listens at "a.b.c.d:port", the text of its struct
 * sockaddr_in (the libfabric address of the pep): the IPv4 address is
 * FI_PCM_ADDR's (127.0.0.1 by default: on one machine every name is pcmd's),
 * the port the caller's or a free one from 49152..65535. With pcmd on
 * verbs the same text is the TCP bootstrap's "host:port".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "pcmfi.h"

#define POLL_BATCH 32
#define LISTEN_TRIES 256

/**
 * pcmfi_addr_name() - the listen name of @a ("a.b.c.d:port").
 */
void pcmfi_addr_name(const struct sockaddr_in *a, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN] = "";

	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(a->sin_port));
}

static void add_to_waitfds(struct pcmfi_fabric *fab, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	for (unsigned i = 0; i < fab->n_waitfds; i++)
		if (epoll_ctl(fab->waitfds[i], EPOLL_CTL_ADD, fd, &ev) < 0 && errno != EEXIST)
			FI_WARN(&pcmfi_prov, FI_LOG_FABRIC, "epoll_ctl: %s\n", strerror(errno));
}

/**
 * pcmfi_port_arm() - make @port's fd readable at its next completion, and a
 * member of every wait fd of its fabric; clear what it said before.
 *
 * Return: 0, or -FI_ENOSYS when completions wake no fd (inline progress in
 * process: the waiter polls instead).
 */
int pcmfi_port_arm(struct pcmfi_port *port)
{
	struct pollfd p;
	uint64_t v;
	int fd;

	if (port->dead)
		return 0;
	fd = pcm_tp_fd(port->tp);
	if (fd < 0)
		return -FI_ENOSYS;
	if (port->fd != fd) {
		port->fd = fd;
		add_to_waitfds(port->fab, fd);
	}
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && read(fd, &v, sizeof(v)) < 0)
		(void)0; /* nothing to clear */
	return 0;
}

static int port_open(struct pcmfi_fabric *fab, struct pcmfi_port **out)
{
	struct pcm_tp_config cfg = {
		.backend = pcmfi_cfg.backend,
		.datapath = pcmfi_cfg.datapath,
		.daemon_region_bytes = pcmfi_cfg.region_bytes,
	};
	struct pcmfi_port *port = calloc(1, sizeof(*port)), **tail = &fab->ports;
	int rc;

	if (!port)
		return -FI_ENOMEM;
	rc = pcm_tp_endpoint_open(&cfg, &port->tp);
	if (rc < 0) {
		FI_WARN(&pcmfi_prov, FI_LOG_FABRIC, "pcm_tp_endpoint_open (%s): %s (%s)\n",
			pcmfi_cfg.backend == PCM_TP_BACKEND_DAEMON ? "through pcmd" : "in process",
			pcm_tp_strerror(rc), pcm_tp_last_error());
		free(port);
		return pcmfi_errno(rc);
	}
	port->fab = fab;
	port->fd = -1;
	port->accept_wr = (struct pcmfi_wr){PCMFI_WR_ACCEPT, port, 0};
	while (*tail)
		tail = &(*tail)->next;
	*tail = port;
	if (fab->n_waitfds)
		pcmfi_port_arm(port);
	*out = port;
	return 0;
}

static void post_accept(struct pcmfi_port *port)
{
	int rc;

	if (!port->listening || port->accept_posted || port->dead)
		return;
	rc = pcm_tp_accept(port->tp, (uint64_t)(uintptr_t)&port->accept_wr);
	if (rc < 0)
		FI_WARN(&pcmfi_prov, FI_LOG_EP_CTRL, "pcm_tp_accept at %s: %s\n", port->name_str,
			pcm_tp_strerror(rc));
	else
		port->accept_posted = true;
}

/* Listen at @addr, or at a free port number of its address when it names none. */
static int listen_at(struct pcmfi_port *port, struct sockaddr_in *addr)
{
	bool any = addr->sin_port == 0;
	int rc = -EADDRINUSE;

	for (int i = 0; i < (any ? LISTEN_TRIES : 1) && rc == -EADDRINUSE; i++) {
		if (any)
			addr->sin_port = htons((uint16_t)(49152 + pcmfi_random64() % 16384));
		pcmfi_addr_name(addr, port->name_str, sizeof(port->name_str));
		rc = pcm_tp_listen(port->tp, port->name_str);
	}
	if (rc < 0) {
		FI_WARN(&pcmfi_prov, FI_LOG_EP_CTRL, "pcm_tp_listen(%s): %s\n", port->name_str,
			pcm_tp_strerror(rc));
		if (any)
			addr->sin_port = 0;
		return pcmfi_errno(rc);
	}
	port->name = *addr;
	port->listening = true;
	return 0;
}

/**
 * pcmfi_port_listen() - listen at @addr (its port 0: a free one, written
 * back) on a port of @fab that does not listen yet (opened if none);
 * accepted connections go to @fn.
 *
 * Return: 0, -FI_EADDRINUSE, or the port's open failure.
 */
int pcmfi_port_listen(struct pcmfi_fabric *fab, struct sockaddr_in *addr, pcmfi_accept_fn fn,
		      void *arg, struct pcmfi_port **out)
{
	struct pcmfi_port *port = fab->ports;
	int rc;

	while (port && (port->listening || port->loopback || port->dead))
		port = port->next;
	if (!port) {
		rc = port_open(fab, &port);
		if (rc)
			return rc;
	}
	if (addr->sin_addr.s_addr == htonl(INADDR_ANY))
		addr->sin_addr = pcmfi_cfg.addr;
	rc = listen_at(port, addr);
	if (rc)
		return rc;
	port->on_accept = fn;
	port->accept_arg = arg;
	post_accept(port);
	*out = port;
	return 0;
}

static bool listens_here(const struct pcmfi_fabric *fab, const struct sockaddr_in *dest)
{
	for (const struct pcmfi_port *p = fab->ports; p; p = p->next)
		if (p->listening && p->name.sin_port == dest->sin_port &&
		    p->name.sin_addr.s_addr == dest->sin_addr.s_addr)
			return true;
	return false;
}

/**
 * pcmfi_port_for_dial() - the port to dial @dest from: the fabric's first,
 * or its loopback port when @dest is one of its own listeners.
 *
 * Return: 0 or the port's open failure.
 */
int pcmfi_port_for_dial(struct pcmfi_fabric *fab, const struct sockaddr_in *dest,
			struct pcmfi_port **out)
{
	bool loop = listens_here(fab, dest);
	struct pcmfi_port *port = fab->ports;
	int rc;

	while (port && (port->loopback != loop || port->dead))
		port = port->next;
	if (!port) {
		rc = port_open(fab, &port);
		if (rc)
			return rc;
		port->loopback = loop;
	}
	*out = port;
	return 0;
}

/**
 * pcmfi_port_stop() - its pep is closed: what the port accepts from now on is
 * closed at once (a pcm endpoint cannot stop listening).
 */
void pcmfi_port_stop(struct pcmfi_port *port)
{
	port->on_accept = NULL;
	port->accept_arg = NULL;
}

static void died(struct pcmfi_port *port, int rc)
{
	FI_WARN(&pcmfi_prov, FI_LOG_FABRIC, "%s: %s (%s): its connections fail\n",
		port->name_str[0] ? port->name_str : "a dialing endpoint", pcm_tp_strerror(rc),
		pcm_tp_last_error());
	port->dead = true;
	pcmfi_conn_port_dead(port, pcmfi_errno(rc));
}

static void on_accept(struct pcmfi_port *port, const struct pcm_tp_completion *comp)
{
	port->accept_posted = false;
	if (port->on_accept)
		port->on_accept(port->accept_arg, port, comp->conn, pcmfi_errno(comp->status));
	else if (comp->status == 0)
		pcm_tp_conn_close(comp->conn);
	post_accept(port);
}

/**
 * pcmfi_port_poll() - take all of @port's completions and route them.
 *
 * Return: how many (none once the port is dead).
 */
int pcmfi_port_poll(struct pcmfi_port *port)
{
	struct pcm_tp_completion comp[POLL_BATCH];
	int n;

	int total = 0;

	do {
		if (port->dead)
			return total;
		n = pcm_tp_poll(port->tp, comp, POLL_BATCH);
		if (n < 0) {
			died(port, n);
			return total;
		}
		for (int i = 0; i < n; i++) {
			struct pcmfi_wr *wr = (struct pcmfi_wr *)(uintptr_t)comp[i].cookie;

			/* a closed connection's last completion (cookie 0): its work ended before */
			if (comp[i].op == PCM_TP_OP_CLOSE)
				continue;
			if (wr->kind == PCMFI_WR_ACCEPT)
				on_accept(port, &comp[i]);
			else
				pcmfi_conn_completion(wr, &comp[i]);
		}
		total += n;
	} while (n == POLL_BATCH);
	return total;
}

/**
 * pcmfi_port_wait() - sleep until @port has a completion or @timeout_ms
 * passed. Called without the fabric's lock; pcmd's departure is recorded at
 * the next pcmfi_port_poll().
 *
 * Return: 0 (something may be ready), -FI_ETIMEDOUT, or -FI_ESHUTDOWN.
 */
int pcmfi_port_wait(struct pcmfi_port *port, int timeout_ms)
{
	int rc;

	if (port->dead)
		return -FI_ESHUTDOWN;
	rc = pcm_tp_wait(port->tp, timeout_ms);
	return rc == -ETIMEDOUT ? -FI_ETIMEDOUT : pcmfi_errno(rc);
}

/**
 * pcmfi_port_check() - @rc came from pcmfi_port_wait(): a departed pcmd
 * fails the port's connections.
 */
void pcmfi_port_check(struct pcmfi_port *port, int rc)
{
	if (rc == -FI_ESHUTDOWN && !port->dead)
		died(port, -ESHUTDOWN);
}

/**
 * pcmfi_ports_close() - close every port of @fab (its connections are
 * already forgotten).
 */
void pcmfi_ports_close(struct pcmfi_fabric *fab)
{
	while (fab->ports) {
		struct pcmfi_port *port = fab->ports;

		fab->ports = port->next;
		pcm_tp_endpoint_close(port->tp);
		free(port);
	}
}
