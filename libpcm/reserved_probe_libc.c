/* SPDX-License-Identifier: MIT */
/*
 * reserved_probe_libc.c - preprocessed at build time, never compiled: the
 * headers a handler may include after its generated header, whose names a
 * spec must therefore not take (see reserved_gen.c): the C11 library but
 * <complex.h> and <tgmath.h>, whose `I` would take a common name for little.
 */
/* The basic headers first, so that a name is charged to the one that defines it. */
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <limits.h>
#include <float.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <math.h>
#include <assert.h>
#include <ctype.h>
#include <fenv.h>
#include <inttypes.h>
#include <iso646.h>
#include <locale.h>
#include <setjmp.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdnoreturn.h>
#include <time.h>
#include <uchar.h>
#include <wchar.h>
#include <wctype.h>
#if __has_include(<threads.h>)
#include <threads.h>
#endif
/* The PCM SDK's packages hash with xxhash (pcmc links it when it is used). */
#if __has_include(<xxhash.h>)
#include <xxhash.h>
#endif
