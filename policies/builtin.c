// SPDX-License-Identifier: MIT
/*
 * builtin.c - the explicit registry of built-in policies. Each entry is the
 * struct pcm_package that `pcmc gen` emitted for policies/<name>.{yaml,c}.
 * Adding a policy means adding it here and to policies/meson.build.
 */
#include "builtin.h"

extern const struct pcm_package pcm_pkg_doca_ecn_aimd;
extern const struct pcm_package pcm_pkg_swift;

const struct pcm_package *const pcm_builtin_policies[] = {
	&pcm_pkg_doca_ecn_aimd,
	&pcm_pkg_swift,
	NULL,
};
