/* SPDX-License-Identifier: MIT */
/*
 * reserved_probe_pcm.c - preprocessed at build time, never compiled: pcm's
 * headers in a package's translation unit, whose macros a spec must not take
 * (see reserved_gen.c).
 */
#include "package.h"
#include "pcm_algo.h"
#include "pcmh.h"
