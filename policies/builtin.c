// SPDX-License-Identifier: MIT
/*
 * builtin.c - the explicit registry of built-in policies. Each entry is the
 * struct pcm_package that `pcmc gen` emitted for policies/<name>.{yaml,c}.
 * Adding a policy means adding it here and to policies/meson.build.
 */
#include "builtin.h"

extern const struct pcm_package pcm_pkg_cubic;
extern const struct pcm_package pcm_pkg_dcqcn;
extern const struct pcm_package pcm_pkg_dctcp;
extern const struct pcm_package pcm_pkg_doca_ecn_aimd;
extern const struct pcm_package pcm_pkg_ecmp_static;
extern const struct pcm_package pcm_pkg_eqds;
extern const struct pcm_package pcm_pkg_mprdma;
extern const struct pcm_package pcm_pkg_newreno;
extern const struct pcm_package pcm_pkg_nscc;
extern const struct pcm_package pcm_pkg_ops;
extern const struct pcm_package pcm_pkg_reps;
extern const struct pcm_package pcm_pkg_smartt;
extern const struct pcm_package pcm_pkg_strack;
extern const struct pcm_package pcm_pkg_swift;
extern const struct pcm_package pcm_pkg_timely;
extern const struct pcm_package pcm_pkg_uec_dctcp;

const struct pcm_package *const pcm_builtin_policies[] = {
	&pcm_pkg_cubic,
	&pcm_pkg_dcqcn,
	&pcm_pkg_dctcp,
	&pcm_pkg_doca_ecn_aimd,
	&pcm_pkg_ecmp_static,
	&pcm_pkg_eqds,
	&pcm_pkg_mprdma,
	&pcm_pkg_newreno,
	&pcm_pkg_nscc,
	&pcm_pkg_ops,
	&pcm_pkg_reps,
	&pcm_pkg_smartt,
	&pcm_pkg_strack,
	&pcm_pkg_swift,
	&pcm_pkg_timely,
	&pcm_pkg_uec_dctcp,
	NULL,
};
