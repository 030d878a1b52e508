/* SPDX-License-Identifier: MIT */
/*
 * softnic_driver.h - one thread steps every softnic engine and the emulation
 * in virtual time (softnic.h).
 *
 * xp_softnic_drive() is the whole loop, for a program that owns the thread
 * (tests, pcm-bench). A driver with its own loop (pcmd's fabric thread, which
 * also sleeps and takes requests) builds it from the two steps it is made of:
 * xp_softnic_run_round() at the current instant until no engine has work (at
 * most XP_SOFTNIC_SAME_INSTANT_ROUNDS rounds), then xp_softnic_advance() to
 * xp_softnic_next_instant().
 */
#ifndef XP_SOFTNIC_DRIVER_H
#define XP_SOFTNIC_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "softnic.h"

/* Rounds at one instant before time is forced on (an engine that always says it worked). */
#define XP_SOFTNIC_SAME_INSTANT_ROUNDS 4096

/**
 * xp_softnic_run_round() - run each of engines @e once at @now_ns.
 * @e: the engines (EXTERNAL progress, on softnic instances of one world).
 * @n: how many.
 * @now_ns: the world's time.
 *
 * Return: the work they did (0: none had any).
 */
uint32_t xp_softnic_run_round(struct xp_engine *const *e, uint32_t n, uint64_t now_ns);

/**
 * xp_softnic_next_instant() - when something next happens: the earlier of the
 * world's next event and the engines' next timer.
 * @w: the world.
 * @e: the engines.
 * @n: how many.
 *
 * Return: the virtual time, ns; UINT64_MAX when nothing is scheduled.
 */
uint64_t xp_softnic_next_instant(struct xp_softnic_world *w, struct xp_engine *const *e,
				 uint32_t n);

/**
 * xp_softnic_drive() - run engines @e (EXTERNAL progress, each on a softnic
 * instance of @w) and the world: at each instant run every engine until none
 * has work, ask @done, then advance the world to the earlier of its next
 * event and the engines' next timer.
 * @w: the world.
 * @e: the engines.
 * @n: how many.
 * @until_ns: the virtual time limit.
 * @done: the application's step (post, take completions); true ends the run. May be NULL.
 * @ctx: for @done.
 *
 * Return: 0 (@done said so), -ETIMEDOUT (virtual time reached @until_ns, or
 * nothing was left to happen), -ENOMEM.
 */
int xp_softnic_drive(struct xp_softnic_world *w, struct xp_engine *const *e, uint32_t n,
		     uint64_t until_ns, bool (*done)(void *ctx), void *ctx);

#endif /* XP_SOFTNIC_DRIVER_H */
