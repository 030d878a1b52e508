/* SPDX-License-Identifier: MIT */
/*
 * embedded.h - defaults compiled into the programs by pcm-embed.
 */
#ifndef PCM_CLI_EMBEDDED_H
#define PCM_CLI_EMBEDDED_H

#include <stddef.h>

/* policies/fabric/default.yaml */
extern const char pcm_embedded_fabric_default[];
extern const size_t pcm_embedded_fabric_default_len;

#endif /* PCM_CLI_EMBEDDED_H */
