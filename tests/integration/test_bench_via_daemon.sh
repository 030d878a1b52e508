#!/bin/sh
# SPDX-License-Identifier: MIT
# test_bench_via_daemon.sh PCM_BENCH PCMD - pcm-bench goodput --via-daemon
# starts its own pcmd (on a private socket), measures both sides, prints one
# JSON line with a numeric daemon_ratio, and leaves no pcmd behind; a datapath
# it cannot measure through pcmd is refused with a reason. No figure is
# judged: the numbers are for bench/RESULTS.md, not for a threshold.
set -eu
BENCH=$1 PCMD=$2
OUT=$(mktemp /tmp/pcm-bench-vd-XXXXXX)
trap 'rm -f "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$OUT" >&2; exit 1; }

"$BENCH" goodput --via-daemon --pcmd "$PCMD" --seconds 0.1 --runs 1 --json >"$OUT" 2>&1 ||
	fail "pcm-bench goodput --via-daemon exited $?"
/usr/bin/python3 - "$OUT" <<'PY' || fail "bad JSON line"
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["bench"] == "goodput" and r["via_daemon"] is True and r["datapath"] == "null", r
for k in ("goodput_gbps", "daemon_goodput_gbps", "wall_ns_per_chunk", "daemon_wall_ns_per_chunk",
          "daemon_ratio", "daemon_cpu_ratio"):
    assert isinstance(r[k], float) and r[k] > 0, (k, r[k])
assert abs(r["daemon_ratio"] - r["daemon_wall_ns_per_chunk"] / r["wall_ns_per_chunk"]) < 1e-3, r
print("via daemon:", lines[0].strip())
PY
# The pcmd it started is gone.
for p in /proc/[0-9]*; do
	[ "$(cat "$p/comm" 2>/dev/null)" = pcmd ] || continue
	if grep -q "pcm-bench-" "$p/cmdline" 2>/dev/null; then fail "a pcmd is left: $p"; fi
done
if "$BENCH" goodput --via-daemon --pcmd "$PCMD" --datapath softnic >"$OUT" 2>&1; then
	fail "--datapath softnic was accepted"
fi
grep -q "only null is measured through pcmd" "$OUT" || fail "no reason for refusing softnic"
echo "pcm-bench goodput --via-daemon: one JSON line with daemon_ratio, no pcmd left"
