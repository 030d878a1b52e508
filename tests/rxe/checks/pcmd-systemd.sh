#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pcmd-systemd.sh BUILD_DIR - inside the VM booted with systemd as init (vm-run
# --mode systemd): `meson install` puts pcmd, its unit, sysusers.d and tmpfiles.d
# entries and example config into the VM's root (an overlay: the host is not
# touched); systemd-sysusers creates user pcm; `systemctl start pcmd` returns
# once pcmd sent READY=1 (Type=notify) with its STATUS= line; the example
# sender/receiver runs through it (byte-checked) and pcmd counts its flows;
# `systemctl reload` (SIGHUP) keeps it active with a new config generation;
# `systemctl stop` ends it cleanly (result success).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm
build=${1:?usage: pcmd-systemd.sh BUILD_DIR}

[ "${PCM_RXE_MODE:-}" = systemd ] || fail "needs the systemd boot mode (vm-run --mode systemd)"
[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is $(cat /proc/1/comm), not systemd"
systemctl is-system-running --wait >/dev/null || true

meson install -C "$build" --no-rebuild --quiet >/tmp/pcmd-install.log 2>&1 ||
	{ cat /tmp/pcmd-install.log >&2; fail "meson install failed"; }
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
systemd-sysusers || fail "systemd-sysusers failed"
id pcm >/dev/null || fail "systemd-sysusers did not create user pcm"
systemctl daemon-reload
unit_path=$(systemctl show -P FragmentPath pcmd.service)
[ -n "$unit_path" ] || fail "systemd does not find pcmd.service after the install"
echo "installed: $unit_path, $prefix/sbin/pcmd, user $(id pcm)"

systemctl start pcmd.service || { journalctl -u pcmd --no-pager >&2; fail "systemctl start pcmd failed"; }
[ "$(systemctl is-active pcmd.service)" = active ] || fail "pcmd is not active"
status=$(systemctl show -P StatusText pcmd.service)
case "$status" in *clients*) ;; *) fail "pcmd's STATUS= line is '$status'" ;; esac
echo "pcmd: active, READY sent, status '$status'"
[ -S /run/pcmd/pcmd.sock ] || fail "no /run/pcmd/pcmd.sock"
echo "socket: $(stat -c '%A %U:%G' /run/pcmd/pcmd.sock)"

PCMD_SOCKET=/run/pcmd/pcmd.sock "$build/examples/example_sendrecv" --daemon --messages 100 ||
	{ journalctl -u pcmd --no-pager >&2; fail "the example failed through pcmd"; }
opened=$(PCMD_SOCKET=/run/pcmd/pcmd.sock "$prefix/bin/pcmctl" stats | awk '$1 == "flows_opened" { print $2 }')
[ "${opened:-0}" -ge 2 ] || fail "pcmd opened ${opened:-no} flows for the example"
echo "example through pcmd: flows_opened $opened"

gen() { PCMD_SOCKET=/run/pcmd/pcmd.sock "$prefix/bin/pcmctl" status | sed -n 's/.*(generation \([0-9]*\)).*/\1/p'; }
before=$(gen)
systemctl reload pcmd.service || fail "systemctl reload failed"
for _ in $(seq 50); do [ "$(gen)" != "$before" ] && break; sleep 0.1; done
[ "$(gen)" != "$before" ] || fail "the reload did not load a new config generation ($before)"
[ "$(systemctl is-active pcmd.service)" = active ] || fail "pcmd is not active after the reload"
echo "reload: config generation $before -> $(gen), still active"

systemctl stop pcmd.service
state=$(systemctl is-active pcmd.service) || true
[ "$state" = inactive ] || fail "pcmd is '$state' after stop"
result=$(systemctl show -P Result pcmd.service)
[ "$result" = success ] || fail "pcmd stopped with result '$result'"
journalctl -u pcmd --no-pager -o cat | tail -n 4
echo "stop: inactive, result $result"
