#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# notify-service.sh - the tiny Type=notify service that systemd-notify.sh
# starts under the VM's systemd.
#
#   notify-service.sh ready MARKER   do the "startup" (write our PID to
#                                    MARKER), send READY=1 and a STATUS=
#                                    line with systemd-notify, idle
#   notify-service.sh silent         exit without ever sending READY=1
#
# systemd-notify sends on behalf of its parent, this shell, which is the
# unit's main PID: the default NotifyAccess=main accepts it.
set -euo pipefail

case ${1:-} in
ready)
	# Startup work that 'systemctl start' has to wait for.
	sleep 1
	echo $$ >"$2"
	systemd-notify --ready --status="ready: startup marker $2 written"
	exec sleep infinity
	;;
silent) exit 0 ;;
*)
	echo "usage: notify-service.sh ready MARKER | silent" >&2
	exit 2
	;;
esac
