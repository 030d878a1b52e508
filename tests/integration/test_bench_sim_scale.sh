#!/bin/sh
# SPDX-License-Identifier: MIT
# test_bench_sim_scale.sh PCM_BENCH SCENARIO - pcm-bench sim-scale runs
# pcm-sim once per fat-tree size per round, in the order given, and its
# lines add up: each run's ratio is its rate over the first size's in the
# same round, the summaries are the medians of those runs, the simulated
# work of a size is the same in every round (the emulation is
# deterministic), and the peak memory is the highest of the runs. Bad flags
# exit 2 naming the flag; a setting pcm-sim refuses exits 1 naming the round
# and the size, with pcm-sim's message. No timing is judged: the figures
# are for bench/RESULTS.md.
set -eu
BENCH=$1 SCENARIO=$2
OUT=$(mktemp /tmp/pcm-bench-ss-XXXXXX)
trap 'rm -f "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$OUT" >&2; exit 1; }

"$BENCH" sim-scale --scenario "$SCENARIO" --k 4,8 --rounds 3 --set traffic.bytes=256KB \
	--json >"$OUT" 2>&1 || fail "pcm-bench sim-scale exited $?"
/usr/bin/python3 - "$OUT" "$SCENARIO" <<'PY' || fail "the lines do not add up"
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
runs = [l for l in lines if not l.get("summary")]
sums = [l for l in lines if l.get("summary")]
assert len(runs) == 6 and len(sums) == 2, lines
assert [(r["round"], r["k"]) for r in runs] == [(1, 4), (1, 8), (2, 4), (2, 8), (3, 4), (3, 8)], runs
hosts = {4: 16, 8: 128}
for r in runs:
    assert r["bench"] == "sim-scale" and r["scenario"] == sys.argv[2] and r["baseline_k"] == 4, r
    assert r["hosts"] == hosts[r["k"]] and r["data_packets"] > 0 and r["events"] > 0, r
    assert r["wall_s"] > 0 and r["data_packets_per_wall_s"] > 0 and r["max_rss_mb"] > 0, r
    base = [b for b in runs if b["round"] == r["round"] and b["k"] == 4][0]
    want = r["data_packets_per_wall_s"] / base["data_packets_per_wall_s"]
    assert abs(r["ratio"] - want) < 1e-3 * max(1, want), (r, want)
for k in (4, 8):
    mine = [r for r in runs if r["k"] == k]
    assert len({(r["data_packets"], r["events"]) for r in mine}) == 1, ("not deterministic", mine)
    s = [x for x in sums if x["k"] == k][0]
    med = statistics.median(r["data_packets_per_wall_s"] for r in mine)
    base = statistics.median(r["data_packets_per_wall_s"] for r in runs if r["k"] == 4)
    ratios = [r["ratio"] for r in mine]
    assert s["rounds"] == 3 and s["hosts"] == hosts[k] and s["baseline_k"] == 4, s
    assert abs(s["median_data_packets_per_wall_s"] - med) <= 1, (s, med)
    assert abs(s["ratio_of_medians"] - med / base) < 1e-3, (s, med / base)
    assert abs(s["median_round_ratio"] - statistics.median(ratios)) < 1e-3, s
    assert abs(s["min_round_ratio"] - min(ratios)) < 1e-3, s
    assert abs(s["max_round_ratio"] - max(ratios)) < 1e-3, s
    assert s["max_rss_mb"] == max(r["max_rss_mb"] for r in mine), s
print("sim-scale:", json.dumps(sums[1]))
PY

# the text form: one line per run and a summary per size
"$BENCH" sim-scale --scenario "$SCENARIO" --k 4 --rounds 2 --set traffic.bytes=64KB \
	>"$OUT" 2>&1 || fail "pcm-bench sim-scale (text) exited $?"
[ "$(grep -c '^round ' "$OUT")" -eq 2 ] || fail "not two run lines"
grep -q '^k=4 .*16 hosts: median .* of k=4.s median' "$OUT" || fail "no summary line"

refused() { # STATUS WHAT ARGS...: pcm-bench sim-scale ARGS exits STATUS, saying WHAT
	status=$1 what=$2
	shift 2
	rc=0
	"$BENCH" sim-scale "$@" >"$OUT" 2>&1 || rc=$?
	[ "$rc" -eq "$status" ] || fail "exit $rc, not $status: sim-scale $*"
	grep -q -- "$what" "$OUT" || fail "no '$what' for: sim-scale $*"
}
refused 2 "\-\-k" --scenario "$SCENARIO" --k 4,x
refused 2 "\-\-k" --scenario "$SCENARIO" --k 1
refused 2 "\-\-k" --scenario "$SCENARIO" --k ,
refused 2 "\-\-rounds" --scenario "$SCENARIO" --rounds 0
refused 2 "\-\-set 'traffic'" --scenario "$SCENARIO" --set traffic
refused 2 "/nonexistent.yaml" --scenario /nonexistent.yaml
refused 2 "unexpected argument" --scenario "$SCENARIO" extra
refused 1 "round 1, k=4" --scenario "$SCENARIO" --k 4 --rounds 1 --set topology.nokey=1
grep -q "nokey" "$OUT" || fail "pcm-sim's message does not name the key"
echo "sim-scale: bad flags and settings refused with their reasons"
