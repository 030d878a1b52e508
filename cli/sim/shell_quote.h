/* SPDX-License-Identifier: MIT */
/*
 * shell_quote.h - a word for a POSIX shell (shell_quote.c), for the command
 * lines and scripts pcm-sim sweep writes.
 */
#ifndef PCM_SIM_SHELL_QUOTE_H
#define PCM_SIM_SHELL_QUOTE_H

#include <stdio.h>

/**
 * shell_quote() - write @word to @f so that a POSIX shell reads it back as
 * one word: as it is when it has only safe characters, else in single
 * quotes (a quote inside as '\'').
 * @f: the stream.
 * @word: the text.
 */
void shell_quote(FILE *f, const char *word);

#endif /* PCM_SIM_SHELL_QUOTE_H */
