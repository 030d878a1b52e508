/* SPDX-License-Identifier: MIT */
/*
 * target.h - datapath capability descriptors.
 *
 * Each datapath declares the signals it can measure and the controls it can
 * enforce. A package that needs anything else is rejected before it runs, by
 * pcmc at build time and by the shell at load time, with a message naming the
 * missing signal or control.
 */
#ifndef PCM_TARGET_H
#define PCM_TARGET_H

#include "package.h"
#include "spec.h"

struct pcm_target {
	const char *name;
	const char *description;
	pcm_uint signals; /* bit per pcm_signal_t provided */
	unsigned controls; /* bit per pcm_control_t enforced */
};

/* NULL-terminated table of the known targets. */
extern const struct pcm_target *const pcm_targets[];

/* Return: the target named @name, or NULL. Threads: any. */
const struct pcm_target *pcm_target_find(const char *name);

/**
 * pcm_target_check_spec() - check every signal and control of @spec against @target.
 * @diag: on failure, "file:line:col: signals[i].type: target 'x' does not provide
 *        PCM_SIG_Y (signal 'NAME')", one line per missing capability.
 *
 * Threads: any; reads its arguments only.
 *
 * Return: 0, -ENOTSUP if anything is missing.
 */
int pcm_target_check_spec(const struct pcm_target *target, const struct pcm_spec *spec,
			  struct pcm_diag *diag);

/**
 * pcm_target_check_package() - the same check for a compiled package.
 *
 * Threads: any; reads its arguments only.
 *
 * Return: 0, -ENOTSUP if anything is missing.
 */
int pcm_target_check_package(const struct pcm_target *target, const struct pcm_package *pkg,
			     struct pcm_diag *diag);

/**
 * pcm_target_admit_package() - what a shell checks before it runs a package:
 * that the descriptor is valid, and that @target (if not NULL) provides
 * every signal and enforces every control it needs.
 * @diag: on failure, the package's name and what is wrong.
 *
 * Threads: any; reads its arguments only.
 *
 * Return: 0, -EINVAL/-EPROTO (invalid descriptor), -ENOTSUP (capability missing).
 */
int pcm_target_admit_package(const struct pcm_target *target, const struct pcm_package *pkg,
			     struct pcm_diag *diag);

#endif /* PCM_TARGET_H */
