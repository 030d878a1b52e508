/* SPDX-License-Identifier: MIT */
/*
 * json_out.h - writing JSON strings (json_out.c), for pcm-sim's --json and
 * its sweep's records.
 */
#ifndef PCM_SIM_JSON_OUT_H
#define PCM_SIM_JSON_OUT_H

#include <stdio.h>

/**
 * json_str() - write @s to @f as a JSON string, quoted and escaped.
 * @f: the stream.
 * @s: the text (UTF-8 passes through).
 */
void json_str(FILE *f, const char *s);

#endif /* PCM_SIM_JSON_OUT_H */
