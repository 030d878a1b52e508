#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pcmd_full_disk.sh PCMD PCMCTL TRAFFIC - pcmd's stats and records files
# on disks that fill up (small tmpfs mounts; root only, else skipped): the
# stats file's disk has room for a few lines, so a write stops in the middle
# of one; the records file's disk is full from the start, so not even its
# header fits. pcmd keeps running and serving, logs the failure once (at most
# once a minute), counts the lines it drops in `pcmctl stats` and the
# Prometheus text, never leaves a part of a line in either file, and when the
# disks have room again (the mounts grown) writes again by itself, says so,
# and the records file begins with its header; every line of both files
# parses (JSON, and CSV rows of 15 columns).
set -eu
PCMD=$1 PCMCTL=$2 TRAFFIC=$3
# shellcheck source-path=SCRIPTDIR source=pcmctl_lib.sh
. "$(dirname "$0")/pcmctl_lib.sh"
S=$DIR/stats-disk R=$DIR/records-disk
mkdir "$S" "$R"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=8k,mode=0755 pcm-full "$S" 2>/dev/null; then
	echo "skip: mounting a small tmpfs needs root"
	exit 77
fi
umount_disks() {
	if [ -n "$TRAFFIC_PID" ]; then kill "$TRAFFIC_PID" 2>/dev/null || true; fi
	if [ -n "$PCMD_PID" ] && kill "$PCMD_PID" 2>/dev/null; then wait "$PCMD_PID" || true; fi
	PCMD_PID='' TRAFFIC_PID=''
	umount "$S" 2>/dev/null || true
	umount "$R" 2>/dev/null || true
	cleanup
}
trap umount_disks EXIT
mount -t tmpfs -o size=4k,mode=0755 pcm-full "$R"
# One page left for the stats file, none for the records file.
dd if=/dev/zero of="$S/filler" bs=4k count=1 2>/dev/null
dd if=/dev/zero of="$R/filler" bs=4k count=8 2>/dev/null || true

start_pcmd <<YAML
output:
  stats_path: "$S/stats.jsonl"
  stats_interval_ms: 10
  records_path: "$R/flows.csv"
YAML
stat_of() { "$PCMCTL" --json stats | "$PY" -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
# One traffic run: one pair's flows open and close (two records).
one_run() {
	start_traffic - 1
	kill "$TRAFFIC_PID"
	wait "$TRAFFIC_PID" || fail "traffic: $(cat "$DIR/traffic.out")"
	TRAFFIC_PID=
}

# The stats lines (~1 KiB every 10 ms) fill their page within a second.
i=0
until grep -q "writing $S/stats.jsonl failed: No space left on device" "$DIR/pcmd.log"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the disk did not fill: $(df "$S" | tail -n1)"
	sleep 0.05
done
one_run # its records cannot be written either
i=0
until [ "$(stat_of records_dropped_lines)" -ge 2 ]; do # its two rows; the header is kept
	i=$((i + 1)); [ $i -lt 100 ] || fail "records_dropped_lines: $(stat_of records_dropped_lines)"
	sleep 0.05
done
sleep 2 # ~200 failing writes more
dropped=$(stat_of stats_dropped_lines)
[ "$dropped" -gt 50 ] || fail "stats_dropped_lines $dropped after 2 s on a full disk"
n=$(grep -c "writing .* \(failed\|still fails\)" "$DIR/pcmd.log" || true)
[ "$n" -eq 2 ] || fail "the two full disks were logged $n times in 3 s: $(grep fail "$DIR/pcmd.log")"
"$PCMCTL" stats --prometheus >"$DIR/metrics.txt"
grep -q "^pcmd_stats_dropped_lines_total [1-9]" "$DIR/metrics.txt" ||
	fail "Prometheus: $(grep dropped "$DIR/metrics.txt")"
grep -q "^pcmd_records_dropped_lines_total [1-9]" "$DIR/metrics.txt" ||
	fail "Prometheus: $(grep dropped "$DIR/metrics.txt")"
echo "full: $dropped stats lines and $(stat_of records_dropped_lines) records dropped, logged $n time(s)"

# Room again: pcmd writes again by itself, and says so.
mount -o remount,size=4m "$S"
mount -o remount,size=4m "$R"
i=0
until grep -q "writing $S/stats.jsonl works again" "$DIR/pcmd.log"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "no recovery: $(tail -n 3 "$DIR/pcmd.log")"
	sleep 0.05
done
one_run
kill "$PCMD_PID"
wait "$PCMD_PID" || fail "pcmd exited with $?"
PCMD_PID=
grep -q "writing $R/flows.csv works again" "$DIR/pcmd.log" || fail "records: no recovery"
"$PY" - "$S" "$R" <<'PYEOF' || fail "the files after a full disk: $(cat "$R/flows.csv")"
import csv, json, sys
s, r = sys.argv[1:3]
stats = open(s + "/stats.jsonl", "rb").read()
assert stats.endswith(b"\n"), "the stats file ends in a part of a line"
lines = stats.decode().splitlines()
for l in lines:
    json.loads(l)
rows = list(csv.reader(open(r + "/flows.csv", newline="")))
assert rows and all(len(x) == 15 for x in rows), rows
assert rows[0][0] == "flow_id", ("the header is not first", rows[0])
assert len(rows) == 3, ("not the two records of the run after the recovery", rows)
print("%d whole stats lines, %d whole records rows" % (len(lines), len(rows) - 1))
PYEOF
