/* SPDX-License-Identifier: MIT */
/*
 * diag.h - the emulation's one helper for error messages.
 */
#ifndef PCM_UET_DIAG_H
#define PCM_UET_DIAG_H

#include "spec.h"

/* Format a diagnostic into @d (vsnprintf, truncating). */
void uet_diag_set(struct pcm_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* PCM_UET_DIAG_H */
