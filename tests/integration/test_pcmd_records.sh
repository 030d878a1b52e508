#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pcmd_records.sh PCMD PCMCTL TRAFFIC - pcmd's records and outputs hold
# against a peer that names itself to attack them, and through a stop:
# - the peer's name holds ',', '"', newlines, ESC sequences (SGR, an OSC that
#   retitles a terminal), a C1 CSI and a byte that is not UTF-8: the records
#   file parses with Python's csv module to 15 columns on every row, one row
#   per flow; `pcmctl flows` and `top` print no control byte of it (top's own
#   screen clearing aside); `--json flows` gives the name back exactly; pcmd's
#   log has the name on one line, escaped; the Prometheus text passes promtool;
# - SIGTERM with traffic running: every flow's record is written before pcmd
#   exits 0 (none lost, no "writing ... failed");
# - flow ids stay unique across a restart (the run id of `pcmctl status`),
#   opened_unix_ns is the wall clock (between the runs' start and stop);
# - the stats and records files are 0600, or 0640 with output.group.
set -eu
PCMD=$1 PCMCTL=$2 TRAFFIC=$3
# shellcheck source-path=SCRIPTDIR source=pcmctl_lib.sh
. "$(dirname "$0")/pcmctl_lib.sh"

EVIL=$(printf 'evil,1,"2"\n666,0,0,0,forged\033[31mRED\033]0;owned\007\302\233J\377-')
export PCMD_TEST_ADDR_PREFIX="$EVIL"
GROUP=$(getent group nogroup >/dev/null && echo nogroup || id -gn)

# run_pcmd N [GROUP]: pcmd writing its records, stats and metrics into $DIR.
run_pcmd() {
	start_pcmd <<YAML
output:
  records_path: "$DIR/flows.csv"
  stats_path: "$DIR/stats.jsonl"
  stats_interval_ms: 100
  metrics_path: "$DIR/pcmd.prom"
  group: "${2:-}"
YAML
	"$PCMCTL" --json status | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["run_id"])' \
		>"$DIR/run$1"
}

t0=$(date +%s%N)
run_pcmd 1
start_traffic - 2

# The terminal's view: no control byte from the name, one line per flow.
"$PCMCTL" flows >"$DIR/flows.txt"
"$PCMCTL" top --iterations 1 >"$DIR/top.txt" </dev/null
"$PCMCTL" --json flows >"$DIR/flows.json"
"$PCMCTL" stats --prometheus --per-flow >"$DIR/metrics.txt"
"$PY" - "$DIR" "$EVIL" <<'PYEOF' || fail "pcmctl output"
import json, sys
d, evil = sys.argv[1], sys.argv[2].encode("utf-8", "surrogateescape")
def controls(b):
    return [c for c in b if (c < 0x20 and c != 0x0a) or c == 0x7f or c == 0x9b]
flows = open(d + "/flows.txt", "rb").read()
assert not controls(flows), ("pcmctl flows prints control bytes", flows)
assert len(flows.splitlines()) == 5, ("not one line per flow", flows)
assert b"evil,1,\"2\"\\x0a666,0, " in flows, flows
top = open(d + "/top.txt", "rb").read()
screen = b"\033[H\033[2J"
assert top.startswith(screen) and not controls(top[len(screen):]), ("top", top)
f = json.load(open(d + "/flows.json", encoding="utf-8"))
peers = sorted(x["peer"] for x in f)
# JSON gives the name back exactly, but for the byte that is not UTF-8 (its \u00ff).
want = evil.replace(b"\377", b"\303\277").decode()
assert peers[:2] == [want + "0", want + "1"], (peers, want)
assert all(x["flow_id"].endswith("-%d" % x["flow"]) for x in f), f
PYEOF
if command -v promtool >/dev/null; then
	promtool check metrics <"$DIR/metrics.txt" >"$DIR/promtool.out" 2>&1 ||
		fail "promtool: $(cat "$DIR/promtool.out")"
	[ ! -s "$DIR/promtool.out" ] || fail "promtool lint: $(cat "$DIR/promtool.out")"
fi
# pcmd's log (at debug, set while it runs) names the peer when a second listen on
# it is refused: on one line, escaped.
"$PCMCTL" log-level debug >/dev/null
if "$TRAFFIC" "$PCMD_SOCKET" 0 1 >/dev/null 2>&1; then
	fail "a second listen on the same name succeeded"
fi
"$PCMCTL" log-level info >/dev/null
"$PY" - "$DIR/pcmd.log" <<'PYEOF' || fail "pcmd's log: $(cat -v "$DIR/pcmd.log")"
import sys
log = open(sys.argv[1], "rb").read()
assert not [c for c in log if (c < 0x20 and c != 10) or c == 0x7f], "control bytes in the log"
want = b"listen on 'evil,1,\"2\"\\x0a666,0,0,0,forged\\x1b[31mRED\\x1b]0;owned\\x07\\xc2\\x9bJ\\xff-0'"
assert want in log, "the refused listen is not logged escaped"
assert b"log level debug, asked by uid" in log, "log-level is not logged"
PYEOF

# SIGTERM while the traffic runs: pcmd writes every record, then exits 0.
kill "$PCMD_PID"
wait "$PCMD_PID" || fail "pcmd exited with $? on SIGTERM"
PCMD_PID=
kill "$TRAFFIC_PID" 2>/dev/null || true
wait "$TRAFFIC_PID" 2>/dev/null || true # its flows were cut: it may fail
TRAFFIC_PID=
if grep -q "failed" "$DIR/pcmd.log"; then fail "a write failed: $(grep failed "$DIR/pcmd.log")"; fi
mv "$DIR/pcmd.log" "$DIR/pcmd1.log"
t1=$(date +%s%N)

# A second run on the same files, with output.group: ids stay unique, the modes change.
stat -c '%a' "$DIR/flows.csv" "$DIR/stats.jsonl" "$DIR/pcmd.prom" | tr '\n' ' ' >"$DIR/modes1"
run_pcmd 2 "$GROUP"
start_traffic - 1
stop_all
t2=$(date +%s%N)
[ "$(cat "$DIR/modes1")" = "600 600 644 " ] || fail "modes without output.group: $(cat "$DIR/modes1")"
[ "$(stat -c '%a %G' "$DIR/flows.csv")" = "640 $GROUP" ] ||
	fail "records with output.group $GROUP: $(stat -c '%a %G' "$DIR/flows.csv")"

"$PY" - "$DIR" "$EVIL" "$(cat "$DIR/run1")" "$(cat "$DIR/run2")" "$t0" "$t1" "$t2" <<'PYEOF' ||
import csv, sys
d, evil, run1, run2 = sys.argv[1:5]
t0, t1, t2 = (int(x) for x in sys.argv[5:8])
rows = list(csv.reader(open(d + "/flows.csv", newline="", encoding="utf-8")))
head, rows = rows[0], rows[1:]
assert len(head) == 15 and head[0] == "flow_id" and head[8] == "opened_unix_ns", head
bad = [r for r in rows if len(r) != 15]
assert not bad, ("rows that are not 15 columns", bad)
ids = [r[0] for r in rows]
assert len(ids) == len(set(ids)) == 6, ("flow ids", ids)
first = [r for r in rows if r[0].startswith(run1 + "-")]
second = [r for r in rows if r[0].startswith(run2 + "-")]
assert run1 != run2 and len(first) == 4 and len(second) == 2, (run1, run2, ids)
for r, lo, hi in [(r, t0, t1) for r in first] + [(r, t1, t2) for r in second]:
    assert lo <= int(r[8]) <= hi, ("opened_unix_ns is not the wall clock", r, lo, hi)
evil_rows = [r for r in rows if r[4].startswith("evil")]
assert len(evil_rows) == 3, rows
assert evil_rows[0][4].startswith('evil,1,"2"\\x0a666,0,0,0,forged\\x1b[31mRED\\x1b]0;owned\\x07'), evil_rows[0]
print("records: %d rows of 15 columns, ids unique over two runs (%s, %s)" % (len(rows), run1, run2))
PYEOF
	fail "records: $(cat "$DIR/flows.csv")"
grep -c . "$DIR/stats.jsonl" | grep -qv '^0$' || fail "no stats lines"
"$PY" -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$DIR/stats.jsonl" ||
	fail "stats lines are not JSON"
echo "records, outputs and modes hold"
