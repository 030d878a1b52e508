// SPDX-License-Identifier: MIT
/* pkgset.c - the packages a shell may run (pkgset.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pkgset.h"

void pcm_pkgset_init(struct pcm_pkgset *set, const struct pcm_target *target,
		     pcm_pkgset_fits_fn fits, const void *fits_arg, uint32_t n_instances)
{
	pthread_mutex_init(&set->lock, NULL);
	set->n_instances = n_instances ? n_instances : 1;
	set->target = target;
	set->fits = fits;
	set->fits_arg = fits_arg;
	set->n = 0;
	set->pkg[0] = NULL;
}

void pcm_pkgset_fini(struct pcm_pkgset *set)
{
	for (uint32_t i = 1; i <= set->n; i++) {
		if (!set->shared[i])
			continue;
		free(set->shared[i]);
		pthread_mutex_destroy(&set->shared_lock[i]);
	}
	pthread_mutex_destroy(&set->lock);
}

uint16_t pcm_pkgset_find(const struct pcm_pkgset *set, const struct pcm_package *pkg)
{
	for (uint32_t i = 1; i <= set->n; i++)
		if (set->pkg[i] == pkg)
			return (uint16_t)i;
	return 0;
}

/* The instance areas of @pkg, to be package number @id, at their initial values. */
static int make_areas(struct pcm_pkgset *set, uint32_t id, const struct pcm_package *pkg,
		      struct pcm_diag *diag)
{
	set->shared[id] = NULL;
	if (!pkg->n_shared_slots)
		return 0;
	set->shared[id] = calloc(set->n_instances, pkg->n_shared_slots * sizeof(pcm_uint));
	if (!set->shared[id]) {
		snprintf(diag->msg, sizeof(diag->msg),
			 "package '%s': out of memory for %u instance areas", pkg->name,
			 set->n_instances);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < set->n_instances; i++)
		pcm_package_shared_init(pkg, set->shared[id] + (size_t)i * pkg->n_shared_slots);
	pthread_mutex_init(&set->shared_lock[id], NULL);
	return 0;
}

static int admit(struct pcm_pkgset *set, const struct pcm_package *pkg, uint16_t *id,
		 struct pcm_diag *diag)
{
	int rc;

	*id = pcm_pkgset_find(set, pkg);
	if (*id)
		return 0;
	rc = pcm_target_admit_package(set->target, pkg, diag);
	if (rc == 0)
		rc = set->fits(set->fits_arg, pkg, diag);
	if (rc == 0 && set->n == PCM_PKGSET_MAX) {
		snprintf(diag->msg, sizeof(diag->msg), "package '%s': the shell already runs %u",
			 pkg->name, PCM_PKGSET_MAX);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = make_areas(set, set->n + 1, pkg, diag);
	if (rc == 0) {
		set->pkg[++set->n] = pkg;
		*id = (uint16_t)set->n;
	}
	return rc;
}

int pcm_pkgset_add(struct pcm_pkgset *set, const struct pcm_package *pkg, uint16_t *id,
		   struct pcm_diag *diag)
{
	uint16_t local;
	int rc;

	diag->msg[0] = '\0';
	pthread_mutex_lock(&set->lock);
	rc = admit(set, pkg, id ? id : &local, diag);
	pthread_mutex_unlock(&set->lock);
	return rc;
}
