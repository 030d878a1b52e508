/* SPDX-License-Identifier: MIT */
/*
 * builtin.h - the table of policies compiled into pcm's programs.
 */
#ifndef PCM_POLICIES_BUILTIN_H
#define PCM_POLICIES_BUILTIN_H

#include "package.h"

/* NULL-terminated, sorted by name. */
extern const struct pcm_package *const pcm_builtin_policies[];

#endif /* PCM_POLICIES_BUILTIN_H */
