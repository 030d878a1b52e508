/* SPDX-License-Identifier: MIT */
/*
 * notify.h - pcmd's messages to its service manager (sd_notify, libsystemd):
 * READY, STATUS (one line: clients, flows, goodput), RELOADING, STOPPING and
 * the watchdog keep-alive. Without $NOTIFY_SOCKET every call does nothing.
 */
#ifndef PCMD_NOTIFY_H
#define PCMD_NOTIFY_H

#include <stdint.h>

void pcmd_notify_ready(const char *status);
void pcmd_notify_status(const char *status);
void pcmd_notify_reloading(void);
void pcmd_notify_stopping(void);
void pcmd_notify_watchdog(void);

/**
 * pcmd_notify_watchdog_ns() - the keep-alive period systemd asked for.
 *
 * Return: half of WatchdogSec in nanoseconds (pcmd pings twice per period),
 * or 0 when no watchdog is set for this process.
 */
uint64_t pcmd_notify_watchdog_ns(void);

#endif /* PCMD_NOTIFY_H */
