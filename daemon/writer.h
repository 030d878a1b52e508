/* SPDX-License-Identifier: MIT */
/*
 * writer.h - a bounded append-only text file written from pcmd's loop
 * (io_uring writes): the stats file (a JSON line per interval) and the flow
 * records (a CSV row per closed flow). Lines queue in a fixed buffer while a
 * write is in flight; when it is full, lines are dropped and counted, so a
 * slow disk never makes pcmd grow or block.
 */
#ifndef PCMD_WRITER_H
#define PCMD_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"

#define PCMD_WRITER_BYTES 65536

struct pcmd_writer {
	struct pcmd_loop *loop;
	int fd;		/* -1: off */
	int retired_fd; /* closed once the write in flight returns */
	struct pcmd_op op;
	char buf[2][PCMD_WRITER_BYTES];
	size_t len[2];	/* buf[fill] is filling, buf[!fill] is being written */
	size_t written; /* of the in-flight buffer */
	int fill;
	bool discard; /* the in-flight write belongs to a closed file */
	uint64_t dropped_lines;
	uint64_t errors;
};

/**
 * pcmd_writer_open() - (re)open @path for appending; "" turns the writer off.
 * @w: the writer (zeroed before first use, or previously opened).
 * @loop: the loop.
 * @path: the file.
 * @header: written first when the file is new or empty (or NULL).
 *
 * Return: 0, or open()'s -errno (the writer keeps its old file then).
 */
int pcmd_writer_open(struct pcmd_writer *w, struct pcmd_loop *loop, const char *path,
		     const char *header);

/* Queue one line (with its newline); dropped and counted when the buffer is full. */
void pcmd_writer_append(struct pcmd_writer *w, const char *line);

static inline bool pcmd_writer_active(const struct pcmd_writer *w)
{
	return w->fd >= 0;
}

/* Stop: a write in flight finishes first (pcmd_writer_busy()). */
void pcmd_writer_close(struct pcmd_writer *w);

static inline bool pcmd_writer_busy(const struct pcmd_writer *w)
{
	return w->op.pending;
}

#endif /* PCMD_WRITER_H */
