/* SPDX-License-Identifier: MIT */
/*
 * reserved.h - private to libpcm: the table pcm-reserved-gen writes at build
 * time, of names the C library and pcm's headers already use (see
 * reserved_gen.c), sorted by strcmp().
 */
#ifndef PCM_RESERVED_H
#define PCM_RESERVED_H

#include <stdbool.h>
#include <stddef.h>

struct pcm_reserved_name {
	const char *name;
	unsigned short origin; /* index into pcm_reserved_origins: "<stdio.h>" */
	bool macro;            /* defined there as a macro, not just mentioned */
};

extern const char *const pcm_reserved_origins[];
extern const struct pcm_reserved_name pcm_reserved_names[];
extern const size_t pcm_reserved_names_count;

#endif /* PCM_RESERVED_H */
