#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pcmd_systemd_unit.sh UNIT SYSUSERS TMPFILES CONFIG PCMD: systemd's own
# tools judge pcmd's systemd files: `systemd-analyze security --offline=true`
# rates the unit at an exposure of at most 2.0 ("OK"), systemd-sysusers
# creates the pcm user and group from the sysusers.d entry in a scratch root,
# systemd-tmpfiles creates /run/pcmd and /var/lib/pcmd there owned by pcm,
# and the example config passes pcmd --check-config.
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
	for d in run/pcmd var/lib/pcmd; do
		[ "$(stat -c '%u %a' "$ROOT/$d")" = "$UID_PCM 750" ] ||
			{ echo "$d: $(stat -c '%u %a' "$ROOT/$d"), expected $UID_PCM 750"; exit 1; }
	done
	echo "sysusers.d and tmpfiles.d entries applied in a scratch root: pcm ($UID_PCM), /run/pcmd, /var/lib/pcmd"
fi
"$PCMD" --check-config "$CONFIG"
