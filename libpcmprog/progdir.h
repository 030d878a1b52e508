/* SPDX-License-Identifier: MIT */
/*
 * progdir.h - the directory of the running program, from which pcm's
 * programs find what is installed beside them (pcmc its headers, pcm-bench
 * pcmc, pcm-sim and the policy sources, pcm-sim sweep pcmc), so that nothing
 * needs a path compiled in.
 */
#ifndef PCM_PROG_PROGDIR_H
#define PCM_PROG_PROGDIR_H

#include <stddef.h>

/**
 * pcm_prog_dir() - the directory of /proc/self/exe.
 * @out: set to the directory, or "" when it cannot be read.
 * @len: size of @out.
 */
void pcm_prog_dir(char *out, size_t len);

/**
 * pcm_find_program() - another pcm program: beside this one (an install),
 * then where the build tree keeps it (../, ../cli/, ../cli/sim/), then at
 * the path or name environment variable @env gives, then on $PATH.
 * @name: the program ("pcmc").
 * @env: the variable that names it ("PCMC"), or NULL.
 * @out: its path, @len bytes.
 *
 * Return: 0, -ENOENT.
 */
int pcm_find_program(const char *name, const char *env, char *out, size_t len);

#endif /* PCM_PROG_PROGDIR_H */
