/* SPDX-License-Identifier: MIT */
/*
 * fabric_softnic.h - pcmd's embedded softnic fabric: one emulated network
 * (transport/datapath/softnic.h) and the thread that owns it and every
 * engine on it.
 *
 * The world is single-threaded, so one thread (the fabric thread) creates,
 * runs and destroys every softnic engine (EXTERNAL progress), one per
 * attached host. pcmd's loop talks to those engines only through their
 * command and completion rings; it asks the fabric thread to attach or
 * detach a host and waits for the answer.
 *
 * Time: the world's clock is virtual. The fabric thread runs the engines at
 * each instant until none has work, then advances the world to the next
 * event or timer, but never past the wall clock (virtual time 0 is the
 * fabric's start): under load the emulation runs as fast as the CPU allows
 * and its clock falls behind the wall clock; idle, its clock follows the wall
 * clock and the thread sleeps on an eventfd until a command arrives or the
 * next event is due, so an idle pcmd uses no CPU and timers (RTOs,
 * quarantines) keep their wall-time meaning for the clients.
 */
#ifndef PCMD_FABRIC_SOFTNIC_H
#define PCMD_FABRIC_SOFTNIC_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

struct pcmd_config;
struct pcmd_fabric;

/**
 * pcmd_fabric_create() - build the fabric datapath.softnic describes (a
 * scenario file's topology and NIC, or the built-in single switch) and start
 * its thread, with every signal blocked.
 * @cfg: pcmd's configuration.
 * @out: the fabric.
 * @err: on failure, what is wrong, naming the key (and the scenario file's line).
 * @err_len: its size.
 *
 * Return: 0, -EINVAL (a bad topology), -ENOENT (no such file), -ENOMEM, or
 * pthread_create()'s error.
 */
int pcmd_fabric_create(const struct pcmd_config *cfg, struct pcmd_fabric **out, char *err,
		       size_t err_len);

/**
 * pcmd_fabric_destroy() - stop the thread, destroy the engines still
 * attached, then the world. NULL is a no-op.
 * @f: the fabric.
 */
void pcmd_fabric_destroy(struct pcmd_fabric *f);

/* The fabric's host count, and the world engines name in xp_dp_config.world. */
uint32_t pcmd_fabric_hosts(const struct pcmd_fabric *f);
void *pcmd_fabric_world(struct pcmd_fabric *f);

/**
 * pcmd_fabric_attach() - create an engine (EXTERNAL progress) as host
 * @ec->dp.host on the fabric thread; it runs from then on.
 * @f: the fabric.
 * @ec: the engine's configuration (dp.world is the fabric's world).
 * @out: the engine; pcmd's loop may submit to it and poll it.
 * @diag: on failure, what is wrong.
 *
 * Return: 0, -EADDRINUSE (the host is attached), -EINVAL, -ENOMEM.
 */
int pcmd_fabric_attach(struct pcmd_fabric *f, const struct xp_engine_config *ec,
		       struct xp_engine **out, struct pcm_diag *diag);

/**
 * pcmd_fabric_detach() - destroy host @host's engine on the fabric thread
 * (its connections are dropped; the peers' records to it are lost on the
 * wire). The caller has taken its completions and holds no flow on it.
 * @f: the fabric.
 * @host: an attached host.
 */
void pcmd_fabric_detach(struct pcmd_fabric *f, uint32_t host);

/**
 * pcmd_fabric_kick() - after a submit to one of its engines, or after taking
 * completions (which frees ring room): wake the fabric thread if it sleeps.
 * An atomic read when it does not.
 * @f: the fabric.
 */
void pcmd_fabric_kick(struct pcmd_fabric *f);

/**
 * pcmd_fabric_doorbell_fd() - the eventfd the fabric thread sleeps on: a
 * write wakes it (the submission doorbell of the clients whose ports its
 * engines serve; they get a dup()). Before sleeping the thread arms every
 * engine's ports (port.h) after announcing that it sleeps, so a submission
 * published after that look rings this fd.
 * @f: the fabric.
 */
int pcmd_fabric_doorbell_fd(const struct pcmd_fabric *f);

/**
 * pcmd_fabric_now_ns() - the fabric's virtual time (racy read, for status).
 * @f: the fabric.
 *
 * Return: ns since the fabric started, in virtual time.
 */
uint64_t pcmd_fabric_now_ns(const struct pcmd_fabric *f);

#endif /* PCMD_FABRIC_SOFTNIC_H */
