/* SPDX-License-Identifier: MIT */
/* Must never be used: pcm's own pcmh.h wins over a file of that name in the package. */
#error "the package directory's pcmh.h was included instead of pcm's"
