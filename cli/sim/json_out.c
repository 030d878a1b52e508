// SPDX-License-Identifier: MIT
/*
 * json_out.c - a string as JSON: quotes and backslashes escaped, control
 * characters as \uXXXX.
 */
#include "json_out.h"

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}
