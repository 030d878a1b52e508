// SPDX-License-Identifier: MIT
/*
 * diag.c - formatting the emulation's error messages.
 */
#include <stdarg.h>
#include <stdio.h>

#include "diag.h"

void uet_diag_set(struct pcm_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}
