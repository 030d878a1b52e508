/* SPDX-License-Identifier: MIT */
/*
 * probes.h - the probe packages the shells' unit tests run (tests/data/pkg,
 * linked in by tests/unit/meson.build), and the event helpers they share.
 */
#ifndef PCM_TEST_PROBES_H
#define PCM_TEST_PROBES_H

#include "package.h"

extern const struct pcm_package pcm_pkg_accum_probe;
extern const struct pcm_package pcm_pkg_pair_probe;
extern const struct pcm_package pcm_pkg_trigger_probe;
extern const struct pcm_package pcm_pkg_writer_probe;
extern const struct pcm_package pcm_pkg_dst_p;
extern const struct pcm_package pcm_pkg_dst_q;

/* The valid-mask bit of signal type @t. */
#define BIT(t) ((pcm_uint)1 << (t))
/* Bytes per packet in the tests' events. */
#define MSS 4096

#endif /* PCM_TEST_PROBES_H */
