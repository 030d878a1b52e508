/* SPDX-License-Identifier: MIT */
/*
 * pcmc_cc.h - how pcmc runs the C compiler on a package: where pcm's headers
 * are, the compiler command from the environment, copies of the package's
 * sources, compiling, finding what the package includes, and linking.
 */
#ifndef PCM_CLI_PCMC_CC_H
#define PCM_CLI_PCMC_CC_H

#include <stdbool.h>
#include <stddef.h>

#define PCMC_MAX_SOURCES 16
#define PCMC_MAX_FLAGS 32

/* Repeated command-line values: -I, -D, -L, -l. */
struct pcmc_list {
	const char *items[PCMC_MAX_FLAGS];
	int n;
};

/* What `pcmc build` hands to the compiler. */
struct pcmc_package {
	const char *name;                          /* algorithm name: BUILD_ALGO_<NAME> */
	const char *arith_macro;                   /* PCM_ARITH_Q16_16 and the like */
	const char *scratch;                       /* generated files, copies, objects */
	const char *unit;                          /* the generated unit, in @scratch */
	const char *sources[PCMC_MAX_SOURCES];     /* handler first, then the extra files */
	int n_sources;
	const struct pcmc_list *include_dirs;      /* -I, after pcm's and the package's */
	const struct pcmc_list *defines;           /* -D */
	const struct pcmc_list *lib_dirs;          /* -L */
	const struct pcmc_list *libs;              /* -l, besides what pcmc adds */
	const char *out_path;
	bool verbose;                              /* print each command */
};

/* What the compiler saw: for the --arith note. */
struct pcmc_package_facts {
	bool uses_fx;       /* the package's own files mention pcm_fx */
	bool linked_xxhash; /* it includes <xxhash.h>, so libxxhash was linked */
};

/**
 * pcmc_include_dir() - the directory holding pcm's handler headers (pcmh.h).
 * @out: set to the directory.
 * @len: size of @out.
 *
 * In order: $PCM_INCLUDE_DIR; the install layout relative to this program
 * (<bindir>/../include/pcm for the default prefix layout); the build tree
 * relative to this program (<build>/cli/pcmc -> <build>/libpcm/uninstalled,
 * where meson copies the headers); `pkg-config --variable=includedir pcm`.
 *
 * Return: 0, -ENOENT (with a message saying where it looked).
 */
int pcmc_include_dir(char *out, size_t len);

/* The file name pcmc_copy_sources() gives source @i in the scratch directory. */
void pcmc_copy_name(int i, char *out, size_t len);

/**
 * pcmc_copy_sources() - copy the handler and extra sources into the scratch
 * directory, each behind a #line that keeps its own name for diagnostics.
 * @pkg: sources and scratch directory.
 *
 * Compiled from there, the package's own `#include "pcmh.h"` finds pcm's
 * header, not a file of the same name beside the handler.
 *
 * Return: 0, -errno (with a message).
 */
int pcmc_copy_sources(const struct pcmc_package *pkg);

/**
 * pcmc_compile_package() - compile the unit and the extra sources, then link
 * the shared object.
 * @pkg: the package.
 * @facts: filled with what the compiler saw.
 *
 * The compiler is $CC (default cc, split like a shell would, so "ccache cc
 * -Wall" works) with $CFLAGS; the link adds $LDFLAGS. Defines HANDLER_BUILD
 * and BUILD_ALGO_<NAME> as the SDK's build does. Include order: generated
 * files, pcm's headers, the package's directories, then -I. Links libm, and
 * libxxhash when the package includes <xxhash.h>; refuses undefined symbols
 * (unless $CC, $CFLAGS or $LDFLAGS ask for a sanitizer).
 *
 * Return: 0, -EIO when the compiler failed, -errno.
 */
int pcmc_compile_package(const struct pcmc_package *pkg, struct pcmc_package_facts *facts);

/* Remove what pcmc_copy_sources() and pcmc_compile_package() left in the scratch directory. */
void pcmc_remove_outputs(const struct pcmc_package *pkg);

#endif /* PCM_CLI_PCMC_CC_H */
