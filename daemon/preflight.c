// SPDX-License-Identifier: MIT
/*
 * preflight.c - the machine checked for a config before a start
 * (preflight.h): groups, the socket's directory, the output files.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "preflight.h"
#include "writer.h"

static int fail(const struct pcmd_config *cfg, const char *key, int rc, char *err, size_t err_len,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* "where: key: what", where the file set @key (or the config, or the command line). */
static int fail(const struct pcmd_config *cfg, const char *key, int rc, char *err, size_t err_len,
		const char *fmt, ...)
{
	struct pcmd_cfg_loc loc = pcmd_config_key_loc(cfg, key);
	char where[PCMD_CFG_PATH_MAX + 32], what[PCMD_CFG_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, err_len, "%s: %s: %s", pcmd_config_where(cfg, &loc, where, sizeof(where)), key,
		 what);
	return rc;
}

/* May this process give a file to group @gid (root, or a member of it)? */
static bool may_give_to(gid_t gid)
{
	gid_t groups[256];
	int n;

	if (geteuid() == 0 || getegid() == gid)
		return true;
	n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

static int check_group(const struct pcmd_config *cfg, const char *key, const char *name,
		       const char *what, char *err, size_t err_len)
{
	uint32_t gid;

	if (!name[0])
		return 0;
	if (pcmd_config_group_id(name, &gid) < 0)
		return fail(cfg, key, -ENOENT, err, err_len,
			    "no group '%s' on this system (create it, e.g. with systemd-sysusers, "
			    "or set %s: \"\")",
			    name, key);
	if (!may_give_to(gid))
		return fail(cfg, key, -EPERM, err, err_len,
			    "pcmd (uid %u) is neither root nor a member of group '%s', so it cannot "
			    "give %s to it",
			    (unsigned)geteuid(), name, what);
	return 0;
}

/* The directory of @path lets pcmd create and rename files in it. */
static int check_dir_of(const struct pcmd_config *cfg, const char *key, const char *path,
			char *err, size_t err_len)
{
	char copy[PCMD_CFG_PATH_MAX];
	const char *dir;

	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
		return fail(cfg, key, -errno, err, err_len, "cannot create files in %s: %s", dir,
			    strerror(errno));
	return 0;
}

/*
 * What is at socket.path now is nothing or a socket: a socket left by a pcmd
 * that died is replaced at the start, and a live pcmd's is no error here
 * (`pcmd --check-config` checks a config while pcmd runs, before a reload).
 */
static int check_socket_path(const struct pcmd_config *cfg, char *err, size_t err_len)
{
	const char *path = cfg->socket.path;
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0
				       : fail(cfg, "socket.path", -errno, err, err_len, "%s: %s",
					      path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return fail(cfg, "socket.path", -EEXIST, err, err_len,
			    "%s exists and is not a socket; remove it or set socket.path", path);
	return 0;
}

static int check_file(const struct pcmd_config *cfg, const char *key, const char *path,
		      char *err, size_t err_len)
{
	char why[PCMD_CFG_ERR_MAX];
	int rc = pcmd_writer_check(path, why, sizeof(why));

	return rc < 0 ? fail(cfg, key, rc, err, err_len, "%s", why) : 0;
}

int pcmd_preflight(const struct pcmd_config *cfg, char *err, size_t err_len)
{
	const struct {
		const char *key, *path;
	} files[] = {
	    {"output.stats_path", cfg->output.stats_path},
	    {"output.records_path", cfg->output.records_path},
	};
	int rc;

	rc = check_group(cfg, "socket.group", cfg->socket.group, "the socket", err, err_len);
	if (rc == 0)
		rc = check_group(cfg, "output.group", cfg->output.group,
				 "the stats and records files", err, err_len);
	if (rc == 0)
		rc = check_dir_of(cfg, "socket.path", cfg->socket.path, err, err_len);
	if (rc == 0)
		rc = check_socket_path(cfg, err, err_len);
	for (size_t i = 0; rc == 0 && i < sizeof(files) / sizeof(files[0]); i++)
		rc = check_file(cfg, files[i].key, files[i].path, err, err_len);
	if (rc == 0 && cfg->output.metrics_path[0])
		rc = check_dir_of(cfg, "output.metrics_path", cfg->output.metrics_path, err,
				  err_len);
	return rc;
}
