// SPDX-License-Identifier: MIT
/*
 * log.c - stderr lines with a level, in journald's "<priority>" form when
 * stderr is connected to the journal. A message names things that come from
 * clients (peer addresses, package names, paths): it is written in its
 * visible form (pcm_text.h), so that no name can end a line, forge the next
 * one or reach the terminal of whoever reads the log as an escape sequence.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "log.h"
#include "pcm_text.h"

static _Atomic uint32_t log_level = PCMD_LOG_INFO;
static int log_to_journal;

/* syslog priorities of enum pcmd_log_level: err, warning, info, debug. */
static const int journal_prio[] = {3, 4, 6, 7};

static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void pcmd_log_init(uint32_t level)
{
	log_to_journal = stderr_is_journal();
	pcmd_log_set_level(level);
}

void pcmd_log_set_level(uint32_t level)
{
	atomic_store(&log_level, level > PCMD_LOG_DEBUG ? PCMD_LOG_DEBUG : level);
}

void pcmd_log_change_level(uint32_t level, const char *who)
{
	bool said_before = pcmd_log_enabled(PCMD_LOG_INFO);

	if (said_before)
		pcmd_info("log level %s, asked by %s", pcmd_log_level_name(level), who);
	pcmd_log_set_level(level);
	if (!said_before)
		pcmd_info("log level %s, asked by %s", pcmd_log_level_name(level), who);
}

int pcmd_log_enabled(uint32_t level)
{
	return level <= atomic_load(&log_level);
}

void pcmd_log(uint32_t level, const char *fmt, ...)
{
	char line[2048], shown[PCM_TEXT_VISIBLE_MAX(sizeof(line))];
	va_list ap;

	if (!pcmd_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pcm_text_visible(shown, sizeof(shown), line);
	if (log_to_journal)
		fprintf(stderr, "<%d>%s\n", journal_prio[level], shown);
	else
		fprintf(stderr, "pcmd: %s: %s\n", pcmd_log_level_name(level), shown);
}
