// SPDX-License-Identifier: MIT
/* pkgset.c - the packages a shell may run (pkgset.h). */
#include <errno.h>
#include <stdio.h>

#include "pkgset.h"

void pcm_pkgset_init(struct pcm_pkgset *set, const struct pcm_target *target,
		     pcm_pkgset_fits_fn fits, const void *fits_arg)
{
	pthread_mutex_init(&set->lock, NULL);
	set->target = target;
	set->fits = fits;
	set->fits_arg = fits_arg;
	set->n = 0;
	set->pkg[0] = NULL;
}

void pcm_pkgset_fini(struct pcm_pkgset *set)
{
	pthread_mutex_destroy(&set->lock);
}

/* Lock held. Return: @pkg's number, or 0. */
static uint16_t find(const struct pcm_pkgset *set, const struct pcm_package *pkg)
{
	for (uint32_t i = 1; i <= set->n; i++)
		if (set->pkg[i] == pkg)
			return (uint16_t)i;
	return 0;
}

static int admit(struct pcm_pkgset *set, const struct pcm_package *pkg, uint16_t *id,
		 struct pcm_diag *diag)
{
	int rc;

	*id = find(set, pkg);
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
