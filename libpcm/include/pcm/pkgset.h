/* SPDX-License-Identifier: MIT */
/*
 * pkgset.h - the packages a shell may run.
 *
 * Each package is admitted once: its descriptor validated, checked against
 * the shell's target (pcm_target_admit_package()) and against the room the
 * shell reserved per flow (the shell's own check). Packages are numbered
 * from 1 in the order they were added, so that a flow can name its package
 * in a few bits and 0 can mean none.
 *
 * The set also keeps the package's instance areas (package.h): for each
 * package with instance variables, one area per instance of the shell,
 * made and initialised when the package is admitted, and a lock that
 * serialises the handler calls of its flows (shared_lock[]),
 * for shells whose flows run on several threads.
 *
 * Threads: adding is serialised on the set's lock and may run on any
 * thread; reading a package by a number that some flow holds needs no lock
 * (entries are written before any flow can hold their number, and never
 * change).
 */
#ifndef PCM_PKGSET_H
#define PCM_PKGSET_H

#include <pthread.h>
#include <stdint.h>

#include "package.h"
#include "spec.h"
#include "target.h"

#define PCM_PKGSET_MAX 32

/* Does @pkg fit the room shell @arg reserved per flow? Return: 0, or -E2BIG with @diag set. */
typedef int (*pcm_pkgset_fits_fn)(const void *arg, const struct pcm_package *pkg,
				  struct pcm_diag *diag);

struct pcm_pkgset {
	pthread_mutex_t lock;
	const struct pcm_target *target;
	pcm_pkgset_fits_fn fits;
	const void *fits_arg;
	uint32_t n;
	uint32_t n_instances;                              /* instances of the shell, >= 1 */
	const struct pcm_package *pkg[PCM_PKGSET_MAX + 1]; /* by number, from 1 */
	pcm_uint *shared[PCM_PKGSET_MAX + 1]; /* by number: n_instances areas, or NULL */
	pthread_mutex_t shared_lock[PCM_PKGSET_MAX + 1]; /* by number, where shared[] is set */
};

/*
 * An empty set; @target may be NULL (no check); @n_instances: the handler
 * instances of the shell (0 means 1). Threads: before @set is shared.
 */
void pcm_pkgset_init(struct pcm_pkgset *set, const struct pcm_target *target,
		     pcm_pkgset_fits_fn fits, const void *fits_arg, uint32_t n_instances);
/* Threads: once no other thread uses @set. */
void pcm_pkgset_fini(struct pcm_pkgset *set);

/**
 * pcm_pkgset_add() - admit @pkg (a no-op if it is in the set) and give its number.
 * @set: the set.
 * @pkg: the package.
 * @id: set to its number, 1 .. PCM_PKGSET_MAX; may be NULL.
 * @diag: why it was refused.
 *
 * Threads: any; serialised on the set's lock. The entry is complete before
 * its number is returned: a flow that is then given the number may be read
 * on any thread that learns of the flow.
 *
 * Return: 0, -EINVAL/-EPROTO (invalid descriptor, set full), -ENOTSUP (the
 * target lacks what it needs), -E2BIG (it does not fit the shell).
 */
int pcm_pkgset_add(struct pcm_pkgset *set, const struct pcm_package *pkg, uint16_t *id,
		   struct pcm_diag *diag);

/**
 * pcm_pkgset_find() - the number of @pkg in @set.
 * @set: the set.
 * @pkg: a package.
 *
 * Threads: any; @pkg must have been admitted (or the answer may be stale).
 *
 * Return: its number (from 1), or 0 if @set does not run it.
 */
uint16_t pcm_pkgset_find(const struct pcm_pkgset *set, const struct pcm_package *pkg);

/**
 * pcm_pkgset_shared() - the instance area of package number @id for @instance.
 * @set: the set.
 * @id: a package number of @set.
 * @instance: below @set->n_instances.
 *
 * Threads: any.
 *
 * Return: the area, or NULL when the package has no instance variables.
 */
static inline pcm_uint *pcm_pkgset_shared(const struct pcm_pkgset *set, uint16_t id,
					  uint32_t instance)
{
	const struct pcm_package *pkg = set->pkg[id];

	return set->shared[id] ? set->shared[id] + (size_t)instance * pkg->n_shared_slots : NULL;
}

#endif /* PCM_PKGSET_H */
