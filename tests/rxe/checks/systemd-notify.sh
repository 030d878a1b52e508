#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# systemd-notify.sh - inside the VM booted with systemd as init (vm-run
# --mode systemd): this script runs as a unit, the boot finishes in state
# "running", a tiny Type=notify service (notify-service.sh) reaches active
# only once it has sent READY=1 and shows its STATUS= line and main PID, it
# stops cleanly, and a Type=notify service that never sends READY=1 fails
# with result "protocol". vm-run's job unit powers the VM off afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm

[ "${PCM_RXE_MODE:-}" = systemd ] || fail "needs the systemd boot mode (vm-run --mode systemd)"
[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is $(cat /proc/1/comm), not systemd"
grep -q '/pcm-rxe-job\.service$' /proc/self/cgroup ||
	fail "not running in pcm-rxe-job.service: $(cat /proc/self/cgroup)"

state=$(systemctl is-system-running --wait) || true
if [ "$state" != running ]; then
	systemctl --failed --no-pager >&2 || true
	fail "the system is '$state' after boot, not 'running'"
fi
for unit in pcm-rxe.target pcm-rxe-net.service; do
	[ "$(systemctl is-active $unit)" = active ] || fail "$unit is not active"
done
echo "boot: $state, $(systemd-analyze time | head -n 1)"

ready_unit=pcm-rxe-notify-probe.service
silent_unit=pcm-rxe-notify-silent.service
marker=/run/pcm-rxe-notify-probe.pid
write_unit() {
	cat >"/run/systemd/system/$1" <<UNIT
[Unit]
Description=pcm rxe harness: tiny Type=notify service ($2)
[Service]
Type=notify
ExecStart=/bin/bash $here/notify-service.sh $2 $3
TimeoutStartSec=120
UNIT
}
write_unit $ready_unit ready $marker
write_unit $silent_unit silent ""
systemctl daemon-reload

systemctl start $ready_unit || fail "systemctl start $ready_unit failed"
[ -s $marker ] || fail "systemctl start returned before $ready_unit sent READY=1"
[ "$(systemctl is-active $ready_unit)" = active ] || fail "$ready_unit is not active"
[ "$(systemctl show -P Type $ready_unit)" = notify ] || fail "$ready_unit is not Type=notify"
status=$(systemctl show -P StatusText $ready_unit)
[ "$status" = "ready: startup marker $marker written" ] || fail "$ready_unit status: '$status'"
main_pid=$(systemctl show -P MainPID $ready_unit)
[ "$main_pid" = "$(cat $marker)" ] || fail "$ready_unit main PID $main_pid, expected $(cat $marker)"
echo "$ready_unit: active, main PID $main_pid, status '$status'"

systemctl stop $ready_unit
state=$(systemctl is-active $ready_unit) || true
[ "$state" = inactive ] || fail "$ready_unit is '$state' after stop"
echo "$ready_unit: stopped"

if systemctl start $silent_unit 2>/dev/null; then
	fail "$silent_unit started although it never sent READY=1"
fi
result=$(systemctl show -P Result $silent_unit)
[ "$result" = protocol ] || fail "$silent_unit failed with result '$result', expected 'protocol'"
echo "$silent_unit: start refused, result $result"
