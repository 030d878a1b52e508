#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pcmd_systemd_unit.sh UNIT SYSUSERS TMPFILES CONFIG PCMD: systemd's own
# tools judge pcmd's systemd files: `systemd-analyze security --offline=true`
# rates the unit at an exposure of at most 2.0 ("OK"), systemd-sysusers
# creates the pcm user and group from the sysusers.d entry in a scratch root,
# systemd-tmpfiles creates /run/pcmd (0750) and /var/lib/pcmd (0711) there owned by pcm,
# and the example config passes pcmd --check-config with its socket and files
# in that scratch root (--check-config checks the machine as a start does: on
# one without the pcm group, the example config as it is fails, naming it).
set -eu
UNIT=$1 SYSUSERS=$2 TMPFILES=$3 CONFIG=$4 PCMD=$5
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not installed: skipped"; exit 77; }
OUT=$(systemd-analyze security --offline=true "$UNIT" 2>&1) || { echo "$OUT"; exit 1; }
SCORE=$(echo "$OUT" | sed -n 's/.*Overall exposure level for pcmd.service: \([0-9.]*\).*/\1/p')
[ -n "$SCORE" ] || { echo "no score in: $OUT"; exit 1; }
echo "systemd-analyze security --offline=true: exposure $SCORE"
awk -v s="$SCORE" 'BEGIN { exit !(s <= 2.0) }' || { echo "$OUT" | grep '✗'; echo "exposure $SCORE > 2.0"; exit 1; }

ROOT=$(mktemp -d)
trap 'rm -rf "$ROOT"' EXIT
if command -v systemd-sysusers >/dev/null && command -v systemd-tmpfiles >/dev/null; then
	mkdir -p "$ROOT/etc"
	systemd-sysusers --root="$ROOT" - <"$SYSUSERS"
	grep -q '^pcm:x:[0-9]*:[0-9]*:' "$ROOT/etc/passwd" || { echo "sysusers made no pcm user"; exit 1; }
	grep -q '^pcm:x:' "$ROOT/etc/group" || { echo "sysusers made no pcm group"; exit 1; }
	UID_PCM=$(awk -F: '$1 == "pcm" { print $3 }' "$ROOT/etc/passwd")
	systemd-tmpfiles --root="$ROOT" --create - <"$TMPFILES"
	for d in run/pcmd:750 var/lib/pcmd:711; do
		[ "$(stat -c '%u %a' "$ROOT/${d%:*}")" = "$UID_PCM ${d#*:}" ] ||
			{ echo "${d%:*}: $(stat -c '%u %a' "$ROOT/${d%:*}"), expected $UID_PCM ${d#*:}"; exit 1; }
	done
	echo "sysusers.d and tmpfiles.d entries applied in a scratch root: pcm ($UID_PCM), /run/pcmd, /var/lib/pcmd"
fi
mkdir -p "$ROOT/run/pcmd" "$ROOT/var/lib/pcmd"
"$PCMD" --check-config "$CONFIG" --set socket.group= --set "socket.path=$ROOT/run/pcmd/pcmd.sock" \
	--set "output.stats_path=$ROOT/var/lib/pcmd/stats.jsonl" \
	--set "output.records_path=$ROOT/var/lib/pcmd/flows.csv" >"$ROOT/check.out" 2>&1 ||
	{ cat "$ROOT/check.out"; exit 1; }
cat "$ROOT/check.out"
# Its sizes agree with each other: no warning that messages are cut.
if grep -q "warn" "$ROOT/check.out"; then echo "the example config warns"; exit 1; fi
if ! getent group pcm >/dev/null; then
	if OUT=$("$PCMD" --check-config "$CONFIG" 2>&1); then
		echo "--check-config passed on a machine without group pcm: $OUT"
		exit 1
	fi
	case "$OUT" in
	*"socket.group: no group 'pcm'"*) echo "without group pcm: $OUT" ;;
	*) echo "--check-config without group pcm: $OUT"; exit 1 ;;
	esac
fi
