// SPDX-License-Identifier: MIT
/*
 * writer.c - the files written through the loop: double-buffered appends
 * that keep only whole lines, files replaced whole by a rename, and the
 * rate-limited log of a file that fails (writer.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "writer.h"

/* ---- a failing file's log -------------------------------------------------------------- */

static void health_failed(struct pcmd_writer_health *h, int err)
{
	uint64_t now = pcmd_now_ns();

	h->errors++;
	if (h->failing && now - h->logged_ns < PCMD_WRITER_LOG_EVERY_NS)
		return;
	if (!h->failing)
		pcmd_err("writing %s failed: %s; what cannot be written is dropped and counted "
			 "(pcmctl stats) until it can be written again",
			 h->path, strerror(err));
	else
		pcmd_err("writing %s still fails: %s; %llu line(s) dropped in the last %llu s, "
			 "%llu in all",
			 h->path, strerror(err),
			 (unsigned long long)(h->dropped_lines - h->dropped_logged),
			 (unsigned long long)((now - h->logged_ns) / 1000000000ull),
			 (unsigned long long)h->dropped_lines);
	h->failing = true;
	h->logged_ns = now;
	h->dropped_logged = h->dropped_lines;
}

static void health_ok(struct pcmd_writer_health *h)
{
	if (!h->failing)
		return;
	h->failing = false;
	pcmd_info("writing %s works again (%llu line(s) dropped in all)", h->path,
		  (unsigned long long)h->dropped_lines);
}

static uint64_t count_lines(const char *buf, size_t len)
{
	uint64_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

/* Set @fd's mode and group to @acc's (a file an older pcmd made may have others). */
static int set_access(int fd, const struct pcmd_file_access *acc)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((st.st_mode & 07777) != acc->mode && fchmod(fd, acc->mode) < 0)
		return -errno;
	if (acc->gid != (gid_t)-1 && st.st_gid != acc->gid && fchown(fd, (uid_t)-1, acc->gid) < 0)
		return -errno;
	return 0;
}

/* ---- appended files -------------------------------------------------------------------- */

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
		w->health.errors++;
}

/*
 * A header that was never written (the file is still empty) goes first in
 * the lines queued; lines it has no room for are dropped.
 */
static void requeue_header(struct pcmd_writer *w)
{
	size_t n = strlen(w->header), len = w->len[w->fill];
	char *q = w->buf[w->fill];

	if (len >= n && memcmp(q, w->header, n) == 0)
		return;
	if (len > PCMD_WRITER_BYTES - n) {
		w->health.dropped_lines += count_lines(q, len);
		len = 0;
	}
	memmove(q + n, q, len);
	memcpy(q, w->header, n);
	w->len[w->fill] = len + n;
}

/*
 * The in-flight buffer cannot be written (@err): drop the rest of it, and
 * cut the line it wrote in part (buffers hold whole lines) off the file.
 */
static void drop_in_flight(struct pcmd_writer *w, int err)
{
	int out = !w->fill;
	const char *b = w->buf[out];
	size_t whole = w->written;
	struct stat st;
	bool header_lost;

	while (whole > 0 && b[whole - 1] != '\n')
		whole--;
	if (whole < w->written && fstat(w->fd, &st) == 0 &&
	    (uint64_t)st.st_size >= w->written - whole &&
	    ftruncate(w->fd, st.st_size - (off_t)(w->written - whole)) < 0)
		pcmd_err("cannot cut the part of a line left in %s: %s", w->health.path,
			 strerror(errno));
	w->health.dropped_lines += count_lines(b + whole, w->len[out] - whole);
	header_lost = w->header && whole == 0 && fstat(w->fd, &st) == 0 && st.st_size == 0 &&
		      strncmp(b, w->header, strlen(w->header)) == 0;
	w->written = w->len[out];
	if (header_lost) {
		w->health.dropped_lines--; /* not lost: it goes first again */
		requeue_header(w);
	}
	health_failed(&w->health, err);
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
	} else if (res <= 0) {
		drop_in_flight(w, res < 0 ? -res : EIO);
	} else {
		w->written += (size_t)res;
		if (w->written == w->len[out])
			health_ok(&w->health);
	}
	start_write(w);
}

/* A file that is not new should begin with @header; say so when it does not. */
static void check_header(int fd, const char *path, const char *header)
{
	size_t n = strlen(header);
	char *first = malloc(n);

	if (first && pread(fd, first, n, 0) == (ssize_t)n && memcmp(first, header, n) != 0)
		pcmd_warn("%s begins with other columns than this pcmd's (an older pcmd's?): its "
			  "new rows have this pcmd's columns; move it aside to start a new file",
			  path);
	free(first);
}

int pcmd_writer_open(struct pcmd_writer *w, struct pcmd_loop *loop, const char *path,
		     const char *header, const struct pcmd_file_access *acc)
{
	struct stat st;
	int fd, rc;

	w->loop = loop;
	if (!w->op.done) {
		w->fd = w->retired_fd = -1;
		w->op.done = write_done;
	}
	if (!path[0]) {
		pcmd_writer_close(w);
		return 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, acc->mode);
	if (fd < 0)
		return -errno;
	rc = set_access(fd, acc);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	pcmd_writer_close(w);
	w->fd = fd;
	w->header = header;
	snprintf(w->health.path, sizeof(w->health.path), "%s", path);
	if (header && fstat(fd, &st) == 0 && st.st_size == 0)
		pcmd_writer_append(w, header);
	else if (header)
		check_header(fd, path, header);
	return 0;
}

void pcmd_writer_append(struct pcmd_writer *w, const char *line)
{
	size_t n = strlen(line);

	if (w->fd < 0)
		return;
	if (n > PCMD_WRITER_BYTES - w->len[w->fill]) {
		w->health.dropped_lines++;
		return;
	}
	memcpy(w->buf[w->fill] + w->len[w->fill], line, n);
	w->len[w->fill] += n;
	start_write(w);
}

bool pcmd_writer_pending(const struct pcmd_writer *w)
{
	return w->op.pending ||
	       (w->fd >= 0 && (w->len[w->fill] > 0 || w->written < w->len[!w->fill]));
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

int pcmd_writer_check(const char *path, char *why, size_t why_len)
{
	char *copy, *dir;
	int fd, rc = 0;

	if (!path[0])
		return 0;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != ENOENT) {
		rc = -errno;
		snprintf(why, why_len, "cannot write %s: %s", path, strerror(errno));
		return rc;
	}
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		rc = -errno;
		snprintf(why, why_len, "cannot create %s: its directory %s: %s", path, dir,
			 strerror(errno));
	}
	free(copy);
	return rc;
}

/* ---- replaced files -------------------------------------------------------------------- */

static void replace_done(struct pcmd_op *op, int res);

static void tmp_path(const struct pcmd_replacer *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s.tmp", r->health.path);
}

static void replace_failed(struct pcmd_replacer *r, int err)
{
	char tmp[sizeof(r->health.path) + 8];

	if (r->fd >= 0) {
		close(r->fd);
		r->fd = -1;
		tmp_path(r, tmp, sizeof(tmp));
		unlink(tmp);
	}
	health_failed(&r->health, err);
}

static void replace_next(struct pcmd_replacer *r)
{
	r->op.done = replace_done;
	if (pcmd_loop_write(r->loop, &r->op, r->fd, r->text + r->written, r->len - r->written,
			    (int64_t)r->written) < 0)
		replace_failed(r, ENOMEM);
}

static void replace_done(struct pcmd_op *op, int res)
{
	struct pcmd_replacer *r =
	    (struct pcmd_replacer *)((char *)op - offsetof(struct pcmd_replacer, op));
	char tmp[sizeof(r->health.path) + 8];

	if (res <= 0) {
		replace_failed(r, res < 0 ? -res : EIO);
		return;
	}
	r->written += (size_t)res;
	if (r->written < r->len) {
		replace_next(r);
		return;
	}
	tmp_path(r, tmp, sizeof(tmp));
	if (rename(tmp, r->health.path) < 0) {
		replace_failed(r, errno);
		return;
	}
	close(r->fd);
	r->fd = -1;
	health_ok(&r->health);
}

void pcmd_replacer_set(struct pcmd_replacer *r, struct pcmd_loop *loop, const char *path,
		       const struct pcmd_file_access *acc)
{
	if (!r->loop)
		r->fd = -1;
	r->loop = loop;
	r->acc = *acc;
	snprintf(r->path, sizeof(r->path), "%s", path);
}

void pcmd_replacer_write(struct pcmd_replacer *r, const char *text, size_t len)
{
	char tmp[sizeof(r->health.path) + 8];
	int rc;

	if (!r->path[0])
		return;
	if (r->op.pending)
		return; /* the disk is slower than the interval: the next version comes soon */
	if (len > r->cap) {
		char *grown = realloc(r->text, len);

		if (!grown) {
			health_failed(&r->health, ENOMEM);
			return;
		}
		r->text = grown;
		r->cap = len;
	}
	memcpy(r->text, text, len);
	r->len = len;
	r->written = 0;
	snprintf(r->health.path, sizeof(r->health.path), "%s", r->path);
	tmp_path(r, tmp, sizeof(tmp));
	r->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, r->acc.mode);
	if (r->fd < 0) {
		health_failed(&r->health, errno);
		return;
	}
	rc = set_access(r->fd, &r->acc);
	if (rc < 0) {
		replace_failed(r, -rc);
		return;
	}
	replace_next(r);
}

void pcmd_replacer_destroy(struct pcmd_replacer *r)
{
	char tmp[sizeof(r->health.path) + 8];

	if (r->fd >= 0) {
		close(r->fd);
		tmp_path(r, tmp, sizeof(tmp));
		unlink(tmp);
	}
	r->fd = -1;
	free(r->text);
	r->text = NULL;
	r->cap = 0;
}
