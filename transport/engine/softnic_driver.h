/* SPDX-License-Identifier: MIT */
/*
 * softnic_driver.h - one thread steps every softnic engine and the emulation
 * in virtual time (softnic.h).
 */
#ifndef XP_SOFTNIC_DRIVER_H
#define XP_SOFTNIC_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "softnic.h"

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
