/* SPDX-License-Identifier: MIT */
/* Must never be used: pcm's own pcm_fx.h wins over a file of that name in the package. */
#error "the package directory's pcm_fx.h was included instead of pcm's"
