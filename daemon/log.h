/* SPDX-License-Identifier: MIT */
/*
 * log.h - pcmd's log: one line per message on stderr, for journald. Under
 * systemd (stderr is the journal stream named by $JOURNAL_STREAM) each line
 * carries its syslog priority as a "<N>" prefix, so journalctl -p works;
 * otherwise it reads "pcmd: warn: ...". Messages above the level are dropped.
 */
#ifndef PCMD_LOG_H
#define PCMD_LOG_H

#include <stdint.h>

#include "config.h"

/**
 * pcmd_log_init() - decide the line format (journal or plain) and the level.
 * @level: enum pcmd_log_level.
 */
void pcmd_log_init(uint32_t level);

/* Change the level (a reload). */
void pcmd_log_set_level(uint32_t level);

/**
 * pcmd_log_change_level() - change the level at run time (`pcmctl log-level`),
 * saying so at info under whichever of the old and the new level shows it.
 * @level: enum pcmd_log_level.
 * @who: who asked, for the message.
 */
void pcmd_log_change_level(uint32_t level, const char *who);

/* Is @level logged? (To skip building expensive messages.) */
int pcmd_log_enabled(uint32_t level);

void pcmd_log(uint32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pcmd_err(...) pcmd_log(PCMD_LOG_ERROR, __VA_ARGS__)
#define pcmd_warn(...) pcmd_log(PCMD_LOG_WARN, __VA_ARGS__)
#define pcmd_info(...) pcmd_log(PCMD_LOG_INFO, __VA_ARGS__)
#define pcmd_debug(...) pcmd_log(PCMD_LOG_DEBUG, __VA_ARGS__)

#endif /* PCMD_LOG_H */
