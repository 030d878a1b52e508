/* SPDX-License-Identifier: MIT */
/*
 * writer.h - the files pcmd writes from its loop (io_uring writes), so that
 * a slow or full disk never makes pcmd grow or block:
 *
 *   appended  the stats file (a JSON line per interval) and the flow records
 *             (a CSV row per closed flow). Lines queue in a fixed buffer
 *             while a write is in flight; when it is full, lines are dropped
 *             and counted. A write that fails (a full disk) drops what it
 *             held, counted in lines; a line it had written in part is cut
 *             off the file again, so the file only ever holds whole lines
 *             (and a header that could not be written is written first
 *             when it can).
 *             The next lines are tried as they come, so writing resumes by
 *             itself when there is room again.
 *   replaced  the metrics file (the Prometheus text for node_exporter's
 *             textfile collector): each version is written to PATH.tmp and
 *             renamed over PATH, so a reader sees the old file or the new
 *             one, never a part.
 *
 * A failing file is logged when it starts failing, then at most once a
 * minute while it goes on (with the lines dropped meanwhile), and once more
 * when it works again.
 */
#ifndef PCMD_WRITER_H
#define PCMD_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loop.h"

#define PCMD_WRITER_BYTES 65536
#define PCMD_WRITER_LOG_EVERY_NS 60000000000ull /* a failing file is logged this often */

/* A file's failures, for the rate-limited log. */
struct pcmd_writer_health {
	char path[4096];	/* the file: for messages, and where a version goes */
	bool failing;		/* the last write failed */
	uint64_t logged_ns;	/* when the failure was last logged */
	uint64_t dropped_logged; /* dropped_lines when it was */
	uint64_t dropped_lines; /* lines never written */
	uint64_t errors;	/* failed writes */
};

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
	const char *header; /* the file's first line, or NULL */
	struct pcmd_writer_health health;
};

/* Who may read a file pcmd writes: its mode, and its group ((gid_t)-1: pcmd's own). */
struct pcmd_file_access {
	mode_t mode;
	gid_t gid;
};

/**
 * pcmd_writer_open() - (re)open @path for appending; "" turns the writer off.
 * @w: the writer (zeroed before first use, or previously opened).
 * @loop: the loop.
 * @path: the file.
 * @header: written first when the file is new or empty (or NULL); a file
 *          that begins with another line is logged (an older pcmd's columns).
 * @acc: the file's mode and group, set on it whether it is new or not.
 *
 * Return: 0, or open()'s, fchmod()'s or fchown()'s -errno (the writer keeps
 * its old file then).
 */
int pcmd_writer_open(struct pcmd_writer *w, struct pcmd_loop *loop, const char *path,
		     const char *header, const struct pcmd_file_access *acc);

/* Queue one line (with its newline); dropped and counted when the buffer is full. */
void pcmd_writer_append(struct pcmd_writer *w, const char *line);

static inline bool pcmd_writer_active(const struct pcmd_writer *w)
{
	return w->fd >= 0;
}

/* Lines queued or a write in flight: turn the loop until false to have them written. */
bool pcmd_writer_pending(const struct pcmd_writer *w);

/* Stop: a write in flight finishes first (pcmd_writer_busy()). */
void pcmd_writer_close(struct pcmd_writer *w);

static inline bool pcmd_writer_busy(const struct pcmd_writer *w)
{
	return w->op.pending;
}

/**
 * pcmd_writer_check() - could pcmd_writer_open() (or pcmd_replacer_set()'s
 * first write) open @path? Creates nothing: an existing file must be
 * writable, a new one's directory must let pcmd create it.
 * @path: the file; "" is off and passes.
 * @why: on failure, what is wrong.
 * @why_len: its size.
 *
 * Return: 0, or the -errno open() would meet (-EACCES, -ENOENT, -EROFS ...).
 */
int pcmd_writer_check(const char *path, char *why, size_t why_len);

/* A file replaced whole at each version (the metrics file). */
struct pcmd_replacer {
	struct pcmd_loop *loop;
	char path[4096]; /* "" off */
	struct pcmd_file_access acc;
	int fd; /* PATH.tmp while a version is being written, else -1 */
	struct pcmd_op op;
	char *text; /* the version being written */
	size_t len, cap, written;
	struct pcmd_writer_health health;
};

/**
 * pcmd_replacer_set() - where the file goes from now on ("" off); a version
 * in flight still lands where it was going.
 * @r: the replacer (zeroed before first use).
 * @loop: the loop.
 * @path: the file.
 * @acc: its mode and group.
 */
void pcmd_replacer_set(struct pcmd_replacer *r, struct pcmd_loop *loop, const char *path,
		       const struct pcmd_file_access *acc);

/**
 * pcmd_replacer_write() - write @text as the file's next version; skipped
 * while the previous one is still in flight (a newer one follows).
 * @r: the replacer.
 * @text: the whole file.
 * @len: its length.
 */
void pcmd_replacer_write(struct pcmd_replacer *r, const char *text, size_t len);

/* Free what the replacer holds (its op must be idle: cancel it and let it come back). */
void pcmd_replacer_destroy(struct pcmd_replacer *r);

#endif /* PCMD_WRITER_H */
