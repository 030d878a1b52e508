// SPDX-License-Identifier: MIT
/*
 * notify.c - sd_notify(3) messages. RELOADING carries MONOTONIC_USEC so a
 * systemd that knows Type=notify-reload can match it; older ones ignore it.
 */
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "clock.h"
#include "notify.h"

void pcmd_notify_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void pcmd_notify_status(const char *status)
{
	sd_notifyf(0, "STATUS=%s", status);
}

void pcmd_notify_reloading(void)
{
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading the configuration",
		   (unsigned long long)(pcmd_now_ns() / 1000ull));
}

void pcmd_notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: finishing or failing outstanding work");
}

void pcmd_notify_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

uint64_t pcmd_notify_watchdog_ns(void)
{
	uint64_t usec = 0;

	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return 0;
	return usec * 1000ull / 2;
}
