// SPDX-License-Identifier: MIT
/*
 * shell_quote.c - one word for a POSIX shell: bare when every character is
 * one a shell leaves alone, otherwise single-quoted.
 */
#include <string.h>

#include "shell_quote.h"

void shell_quote(FILE *f, const char *word)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_-+./:=,@%";

	if (word[0] && strspn(word, safe) == strlen(word)) {
		fputs(word, f);
		return;
	}
	fputc('\'', f);
	for (; *word; word++) {
		if (*word == '\'')
			fputs("'\\''", f);
		else
			fputc(*word, f);
	}
	fputc('\'', f);
}
