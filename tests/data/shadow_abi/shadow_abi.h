/* SPDX-License-Identifier: MIT */
/* Must never be used: pcm's own shadow_abi.h wins over a file of that name in the package. */
#error "the package directory's shadow_abi.h was included instead of pcm's"
