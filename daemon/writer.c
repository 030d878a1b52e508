// SPDX-License-Identifier: MIT
/*
 * writer.c - double-buffered appends through the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "writer.h"

static void write_done(struct pcmd_op *op, int res);

static void start_write(struct pcmd_writer *w)
{
	int out = !w->fill;

	if (w->op.pending || w->fd < 0)
		return;
	if (w->written == w->len[out]) {
		/* Nothing in flight: swap in what has queued. */
		if (w->len[w->fill] == 0)
			return;
		w->len[out] = 0;
		w->written = 0;
		w->fill = out;
		out = !w->fill;
	}
	w->op.done = write_done;
	if (pcmd_loop_write(w->loop, &w->op, w->fd, w->buf[out] + w->written,
			    w->len[out] - w->written, -1) < 0)
		w->errors++;
}

static void write_done(struct pcmd_op *op, int res)
{
	struct pcmd_writer *w =
	    (struct pcmd_writer *)((char *)op - offsetof(struct pcmd_writer, op));
	int out = !w->fill;

	if (w->retired_fd >= 0) {
		close(w->retired_fd);
		w->retired_fd = -1;
	}
	if (w->discard) {
		/* The file was closed or replaced while this write was in flight. */
		w->discard = false;
		w->written = w->len[out];
	} else if (res < 0) {
		if (w->errors++ == 0)
			pcmd_err("writing stats or records failed: %s (dropping what was queued)",
				 strerror(-res));
		w->written = w->len[out];
	} else {
		w->written += (size_t)res;
	}
	start_write(w);
}

int pcmd_writer_open(struct pcmd_writer *w, struct pcmd_loop *loop, const char *path,
		     const char *header)
{
	struct stat st;
	int fd;

	w->loop = loop;
	if (!w->op.done) {
		w->fd = w->retired_fd = -1;
		w->op.done = write_done;
	}
	if (!path[0]) {
		pcmd_writer_close(w);
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	pcmd_writer_close(w);
	w->fd = fd;
	if (header && fstat(fd, &st) == 0 && st.st_size == 0)
		pcmd_writer_append(w, header);
	return 0;
}

void pcmd_writer_append(struct pcmd_writer *w, const char *line)
{
	size_t n = strlen(line);

	if (w->fd < 0)
		return;
	if (n > PCMD_WRITER_BYTES - w->len[w->fill]) {
		w->dropped_lines++;
		return;
	}
	memcpy(w->buf[w->fill] + w->len[w->fill], line, n);
	w->len[w->fill] += n;
	start_write(w);
}

void pcmd_writer_close(struct pcmd_writer *w)
{
	if (w->fd < 0)
		return;
	if (w->op.pending) {
		if (w->retired_fd >= 0)
			close(w->retired_fd);
		w->retired_fd = w->fd;
		w->discard = true;
		w->len[w->fill] = 0;
	} else {
		close(w->fd);
		w->len[0] = w->len[1] = w->written = 0;
	}
	w->fd = -1;
}
