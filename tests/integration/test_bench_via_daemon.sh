#!/bin/sh
# SPDX-License-Identifier: MIT
# test_bench_via_daemon.sh PCM_BENCH PCMD - pcm-bench goodput --via-daemon
# starts its own pcmd (on a private socket), measures both sides, prints one
# JSON line with a numeric daemon_ratio, waits as --wait auto says for the
# CPUs it may use, and leaves no pcmd behind; a datapath it cannot measure
# through pcmd, or an unknown --wait, is refused with a reason. No figure is
# judged: the numbers are for bench/RESULTS.md, not for a threshold.
#
# Only the pcmd this run started is looked at, never another one on the
# machine: pcm-bench runs it through a wrapper (--pcmd) that records its pid
# and its config before exec (which keeps the pid), and the check is on that
# pid alone.
set -eu
BENCH=$1 PCMD=$2
DIR=$(mktemp -d /tmp/pcm-bench-vd-XXXXXX)
OUT=$DIR/out
: >"$OUT"
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$OUT" >&2; exit 1; }
printf '#!/bin/sh\necho "$$ $2" >"%s/started"\nexec "%s" "$@"\n' "$DIR" "$PCMD" >"$DIR/pcmd"
chmod +x "$DIR/pcmd"

# A one-second window: 0.1 s saw no message at all twice in ten runs at a load average of 25
# ("no message arrived"), and this test checks the output, not the speed.
"$BENCH" goodput --via-daemon --pcmd "$DIR/pcmd" --seconds 1 --runs 1 --json >"$OUT" 2>&1 ||
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
# --wait auto (the default): spin only with a CPU for each of its three busy pollers
import os
assert r["wait"] == ("spin" if len(os.sched_getaffinity(0)) >= 3 else "block"), r
print("via daemon:", lines[0].strip())
PY
# The pcmd it started is gone: its pid, if in use again, runs something else.
[ -s "$DIR/started" ] || fail "pcm-bench did not start its pcmd through --pcmd"
read -r pid config <"$DIR/started"
if cat "/proc/$pid/cmdline" 2>/dev/null | tr '\0' ' ' | grep -qF -- "$config"; then
	fail "the pcmd it started is left: pid $pid ($config)"
fi
if "$BENCH" goodput --via-daemon --pcmd "$PCMD" --datapath softnic >"$OUT" 2>&1; then
	fail "--datapath softnic was accepted"
fi
grep -q "only null is measured through pcmd" "$OUT" || fail "no reason for refusing softnic"
if "$BENCH" goodput --via-daemon --pcmd "$PCMD" --wait sometimes >"$OUT" 2>&1; then
	fail "--wait sometimes was accepted"
fi
grep -q "wait sometimes: auto, spin or block" "$OUT" || fail "no reason for refusing --wait sometimes"
echo "pcm-bench goodput --via-daemon: one JSON line with daemon_ratio, pcmd $pid gone"
