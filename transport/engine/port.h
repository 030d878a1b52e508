/* SPDX-License-Identifier: MIT */
/*
 * port.h - an engine's ports: submission sources outside the engine's
 * command ring, served by the engine's own runner (its thread, or the
 * driver of an EXTERNAL engine) with no other thread in between.
 *
 * A port is four callbacks and an argument. On every run the engine calls
 * intake(), which takes up to a budget of the owner's submissions and posts
 * each with xp_engine_port_post() (the same post path as a command, with the
 * operation remembering its port); the completions of those operations go to
 * complete() instead of the engine's completion ring; flush() ends each run
 * (publish, ring the owner's doorbells); arm() comes before the runner
 * sleeps: it asks the owner for a doorbell and looks once more (true: input
 * is waiting, do not sleep). The doorbell must wake the runner: for a THREAD
 * engine its eventfd (xp_engine_doorbell_fd()), for an EXTERNAL one its
 * driver's.
 *
 * Ports are added and removed by control requests (XP_CTL_PORT_ADD,
 * XP_CTL_PORT_DEL), so the table changes only on the runner's thread; once
 * XP_CTL_PORT_DEL is answered the engine never calls the port again, and
 * completions of its operations still outstanding are dropped. The engine
 * knows nothing of the owner's formats.
 */
#ifndef XP_PORT_H
#define XP_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

struct xp_port;

struct xp_port_ops {
	/* Take submissions and post them (xp_engine_port_post()). Return: how many taken. */
	uint32_t (*intake)(void *arg, struct xp_engine *e, struct xp_port *port, uint64_t now_ns);
	/* One completion of an operation this port posted. */
	void (*complete)(void *arg, const struct xp_engine_comp *c);
	/* End of a run: publish, ring the owner. */
	void (*flush)(void *arg);
	/* Before sleeping: ask for a doorbell, look again. Return: true if input waits. */
	bool (*arm)(void *arg);
};

struct xp_port {
	const struct xp_port_ops *ops;
	void *arg;
	uint32_t slot; /* the engine's: its index in the port table */
};

/**
 * xp_engine_port_post() - post a send or receive for a port, from its
 * intake() (the engine's runner only).
 * @e: the engine.
 * @port: the port whose intake() runs.
 * @cmd: XP_CMD_SEND or XP_CMD_RECV, checked as a command is (connection, region).
 * @now_ns: intake()'s time.
 *
 * Exactly one completion follows, through @port's complete() (a refused post
 * completes at once).
 */
void xp_engine_port_post(struct xp_engine *e, struct xp_port *port, const struct xp_cmd *cmd,
			 uint64_t now_ns);

/**
 * xp_engine_conn_aborted() - whether connection @conn was closed with
 * XP_CLOSE_ABORT (the engine's runner only, e.g. from complete()).
 * @e: the engine.
 * @conn: the connection.
 */
bool xp_engine_conn_aborted(const struct xp_engine *e, uint32_t conn);

/**
 * xp_engine_doorbell_fd() - the eventfd a THREAD engine sleeps on: writing it
 * wakes the engine (a port's owner rings it; dup() it to hand it on).
 * @e: the engine.
 *
 * Return: the fd, or -1 for an INLINE or EXTERNAL engine (its driver's fd wakes it).
 */
int xp_engine_doorbell_fd(const struct xp_engine *e);

/**
 * xp_engine_ports_arm() - arm every port before the runner sleeps (the
 * engine's runner only: an EXTERNAL engine's driver calls it).
 * @e: the engine.
 *
 * Return: true if a port has input waiting (do not sleep).
 */
bool xp_engine_ports_arm(struct xp_engine *e);

#endif /* XP_PORT_H */
