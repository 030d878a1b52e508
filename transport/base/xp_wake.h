/* SPDX-License-Identifier: MIT */
/*
 * xp_wake.h - the flag between a thread about to sleep on an eventfd and the
 * threads that publish work for it (an engine and its submitters, a waiter
 * and the engine that publishes its completions, the null datapath's
 * instances, pcmd's softnic fabric and its clients).
 *
 * The sleeper arms the flag (xp_wake_arm()), looks for work once more, and
 * sleeps only if there is none. A producer publishes its work, then rings
 * (xp_wake_ring()): if the flag was armed, it clears it and writes the
 * eventfd. Both are seq_cst read-modify-writes on the one flag, so whichever
 * comes second sees the other's side: the sleeper's last look finds the work,
 * or the producer finds the flag armed. A plain load in place of either RMW
 * may pass the other side's earlier store (x86 lets a load pass an earlier
 * store to another address; C11 does not order them either), and then both
 * miss and the sleeper sleeps with work waiting.
 */
#ifndef XP_WAKE_H
#define XP_WAKE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

/* The sleeper: announce the sleep; look for work after this, then sleep or disarm. */
static inline void xp_wake_arm(_Atomic int *flag)
{
	(void)atomic_exchange(flag, 1);
}

/*
 * A producer, after publishing: wake the sleeper through @efd if it armed @flag.
 * Return: true if it was armed (one wake-up, even when the eventfd's counter is
 * saturated: then it is readable already).
 */
static inline bool xp_wake_ring(_Atomic int *flag, int efd)
{
	uint64_t one = 1;

	if (!atomic_exchange(flag, 0))
		return false;
	if (write(efd, &one, sizeof(one)) < 0) {
		/* saturated: readable already */
	}
	return true;
}

#endif /* XP_WAKE_H */
