#!/bin/sh
# SPDX-License-Identifier: MIT
# test_bench_async_workers.sh PCM_BENCH - pcm-bench goodput --async-workers 1
# runs the asynchronous shell's handlers on a worker thread of their own (the
# worker's handler calls are counted, and its CPU is reported apart from the
# engines'), softnic reports each flow's retransmissions and RTOs and takes
# --queue-bytes, and each flag is refused, with its reason, where it means
# nothing. No figure is judged: the numbers are for bench/RESULTS.md.
set -eu
BENCH=$1
OUT=$(mktemp /tmp/pcm-bench-aw-XXXXXX)
trap 'rm -f "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$OUT" >&2; exit 1; }

"$BENCH" goodput --datapath null --policy swift --mode async-locked --async-workers 1 \
	--seconds 0.2 --json >"$OUT" 2>&1 || fail "pcm-bench goodput --async-workers 1 exited $?"
/usr/bin/python3 - "$OUT" <<'PY' || fail "bad JSON line"
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["mode"] == "async-locked" and r["async_workers"] == 1, r
assert isinstance(r["handler_calls"], int) and r["handler_calls"] > 0, r
assert isinstance(r["handler_calls_per_chunk"], float), r
for k in ("cpu_ns_per_chunk", "native_cpu_ns_per_chunk", "native_ratio",
          "worker_cpu_ns_per_chunk", "worker_cpu_ns_per_call"):
    assert isinstance(r[k], float) and r[k] > 0, (k, r[k])
assert abs(r["native_ratio"] - r["cpu_ns_per_chunk"] / r["native_cpu_ns_per_chunk"]) < 1e-2, r
print("async workers:", lines[0].strip())
PY

"$BENCH" goodput --datapath softnic --flows 3 --policy swift --virtual-us 200 \
	--queue-bytes 1048576 --json >"$OUT" 2>&1 || fail "pcm-bench goodput softnic exited $?"
/usr/bin/python3 - "$OUT" <<'PY' || fail "bad softnic JSON line"
import json, sys
r = json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][0])
for k in ("flow_gbps", "flow_chunks_retx", "flow_rto_fires"):
    assert len(r[k]) == 3, (k, r)
for k in ("flow_chunks_retx", "flow_rto_fires"):
    assert all(isinstance(x, int) and x >= 0 for x in r[k]), (k, r)
PY

refused() { # REASON ARGS...: pcm-bench goodput ARGS exits 2 naming REASON
	why=$1
	shift
	if "$BENCH" "$@" >"$OUT" 2>&1; then fail "accepted: $*"; fi
	grep -q -- "$why" "$OUT" || fail "no reason for refusing: $*"
}
refused "goodput with a policy and --mode async" goodput --policy swift --async-workers 1
refused "goodput with a policy and --mode async" goodput --mode async-relaxed --async-workers 1
refused "not with softnic" goodput --datapath softnic --policy swift --mode async-relaxed \
	--async-workers 1
refused "not with --progress thread" goodput --policy swift --mode async-relaxed \
	--async-workers 1 --progress thread
refused "only with --datapath softnic" goodput --queue-bytes 100000
refused "below two full packets (8404 B)" goodput --datapath softnic --queue-bytes 8000
refused "not a number in range" goodput --async-workers 100000
echo "pcm-bench goodput --async-workers and --queue-bytes: measured where they apply, refused elsewhere"
