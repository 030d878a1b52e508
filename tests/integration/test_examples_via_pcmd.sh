#!/bin/sh
# SPDX-License-Identifier: MIT
# test_examples_via_pcmd.sh PCMD PCMCTL EXAMPLE... - libpcmtransport's examples
# in daemon mode (--daemon) through a running pcmd: each must exit 0
# (every byte checked), pcmd must have opened flows for them and moved their
# bytes (pcmctl stats), and pcmd must stop cleanly on SIGTERM.
set -eu
PCMD=$1 PCMCTL=$2
shift 2
DIR=$(mktemp -d /tmp/pcmd-examples-XXXXXX)
PCMD_PID=
cleanup() {
	[ -n "$PCMD_PID" ] && kill "$PCMD_PID" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$DIR/pcmd.log" >&2; exit 1; }
stat_of() { "$PCMCTL" stats | awk -v k="$1" '$1 == k { print $2 }'; }

cat >"$DIR/pcmd.yaml" <<YAML
log_level: info
socket: {path: "$DIR/pcmd.sock", group: ""}
YAML
"$PCMD" -c "$DIR/pcmd.yaml" 2>"$DIR/pcmd.log" &
PCMD_PID=$!
export PCMD_SOCKET="$DIR/pcmd.sock" PCM_TRANSPORT=daemon
i=0
until "$PCMCTL" status >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "pcmd did not come up"; sleep 0.05
done
for ex in "$@"; do
	before=$(stat_of flows_opened)
	bytes=$(stat_of tx_bytes)
	"$ex" --daemon >"$DIR/example.out" 2>&1 || { cat "$DIR/example.out" >&2; fail "$ex failed"; }
	after=$(stat_of flows_opened)
	bytes_after=$(stat_of tx_bytes)
	[ "$after" -gt "$before" ] || fail "$ex opened no flow in pcmd"
	[ "$bytes_after" -gt "$bytes" ] || fail "$ex moved no bytes through pcmd"
	echo "$(basename "$ex") through pcmd: flows $before -> $after, tx_bytes $bytes -> $bytes_after"
	tail -2 "$DIR/example.out"
done
kill -TERM "$PCMD_PID"
rc=0
wait "$PCMD_PID" || rc=$?
PCMD_PID=
[ "$rc" -eq 0 ] || fail "pcmd exited with $rc"
echo "pcmd stopped cleanly"
