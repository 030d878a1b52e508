#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pcmctl_flow_figures.sh PCMD PCMCTL TRAFFIC - `pcmctl flows` shows the
# engine's own per-connection figures, live: with traffic through pcmd (null
# datapath, newreno), each flow has a window > 0, the sender an SRTT > 0 and
# an RTTVAR, a pacing rate or "unpaced", counters that never go back
# (retransmitted chunks, RTOs); once the traffic is idle, nothing is in flight
# on any flow. The text table, `top`'s columns and the Prometheus gauges
# (checked by promtool when installed) carry the same figures.
set -eu
PCMD=$1 PCMCTL=$2 TRAFFIC=$3
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
DIR=$(mktemp -d /tmp/pcmctl-figures-XXXXXX)
PCMD_PID= TRAFFIC_PID=
cleanup() {
	[ -n "$TRAFFIC_PID" ] && kill "$TRAFFIC_PID" 2>/dev/null || true
	[ -n "$PCMD_PID" ] && kill "$PCMD_PID" 2>/dev/null && wait "$PCMD_PID" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$DIR/pcmd.log" ] && cat "$DIR/pcmd.log" >&2; exit 1; }

cat >"$DIR/pcmd.yaml" <<YAML
log_level: info
socket: {path: "$DIR/pcmd.sock", group: ""}
datapath: {kind: "null"}
policies:
  default: newreno
YAML
"$PCMD" -c "$DIR/pcmd.yaml" 2>"$DIR/pcmd.log" &
PCMD_PID=$!
export PCMD_SOCKET="$DIR/pcmd.sock"
i=0
until "$PCMCTL" status >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "pcmd did not come up"; sleep 0.05
done

# Two pairs busy for 3 s, then idle (connected, nothing out) for 20 s.
"$TRAFFIC" "$PCMD_SOCKET" 3 2 20 >"$DIR/traffic.out" 2>&1 &
TRAFFIC_PID=$!
i=0
until grep -q ready "$DIR/traffic.out"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "traffic did not connect: $(cat "$DIR/traffic.out")"
	sleep 0.05
done
sleep 1

# check.py FILE [PREV] PHASE: the figures of every flow in FILE (pcmctl --json flows).
cat >"$DIR/check.py" <<'PYEOF'
import json, sys
flows = json.load(open(sys.argv[1]))
prev = {f["flow"]: f for f in json.load(open(sys.argv[2]))} if sys.argv[2] != "-" else {}
phase = sys.argv[3]
assert len(flows) == 4, flows
senders = [f for f in flows if f["tx_bytes"] > 0]
assert len(senders) == 2, flows
for f in flows:
    assert f["policy"] == "newreno" and f["mode"] == "sync", f
    assert isinstance(f["cwnd_bytes"], int) and f["cwnd_bytes"] > 0, f   # newreno has a window
    assert f["rate_bps"] == "unpaced" or (isinstance(f["rate_bps"], int) and f["rate_bps"] > 0), f
    for k in ("srtt_ns", "rttvar_ns", "in_flight_bytes", "retransmits", "rtos"):
        assert isinstance(f[k], int) and f[k] >= 0, (k, f)
    assert f["in_flight_bytes"] <= f["cwnd_bytes"] + 65536, f  # at most a chunk over the window
    p = prev.get(f["flow"])
    if p:
        assert f["retransmits"] >= p["retransmits"] and f["rtos"] >= p["rtos"], (p, f)
        assert f["tx_bytes"] >= p["tx_bytes"], (p, f)
for f in senders:
    assert f["srtt_ns"] > 0, f          # acknowledged data gave RTT samples
    assert f["srtt_ns"] < 10**9, f      # a local loopback: well under a second
if phase == "idle":
    assert all(f["in_flight_bytes"] == 0 for f in flows), flows
print(phase, " ".join("flow %d: cwnd %s srtt %dns rttvar %dns inflight %d retx %d rto %d" % (
    f["flow"], f["cwnd_bytes"], f["srtt_ns"], f["rttvar_ns"], f["in_flight_bytes"],
    f["retransmits"], f["rtos"]) for f in senders))
PYEOF

"$PCMCTL" --json flows >"$DIR/busy1.json" || fail "flows --json"
"$PY" "$DIR/check.py" "$DIR/busy1.json" - busy || fail "figures while busy: $(cat "$DIR/busy1.json")"
sleep 0.5
"$PCMCTL" --json flows >"$DIR/busy2.json" || fail "flows --json"
"$PY" "$DIR/check.py" "$DIR/busy2.json" "$DIR/busy1.json" busy ||
	fail "figures while busy (second read): $(cat "$DIR/busy2.json")"
"$PY" - "$DIR/busy1.json" "$DIR/busy2.json" <<'PYEOF' || fail "figures are not live (a second read moved nothing)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert sum(f["tx_bytes"] for f in b) > sum(f["tx_bytes"] for f in a)
PYEOF

# The text table and the Prometheus gauges carry the same figures.
"$PCMCTL" flows >"$DIR/flows.txt" || fail "flows"
grep -q "CWND.*RATE.*SRTT.*RTTVAR.*INFLIGHT.*RETX.*RTO" "$DIR/flows.txt" ||
	fail "flows columns: $(cat "$DIR/flows.txt")"
grep -q "newreno.*sync.*established.*unpaced.*us.*us" "$DIR/flows.txt" ||
	fail "flows rows: $(cat "$DIR/flows.txt")"
"$PCMCTL" stats --prometheus >"$DIR/metrics.txt" || fail "stats --prometheus"
for m in pcmd_flow_cwnd_bytes pcmd_flow_rate_bytes_per_second pcmd_flow_srtt_seconds \
	pcmd_flow_rttvar_seconds pcmd_flow_in_flight_bytes pcmd_flow_retransmits_total \
	pcmd_flow_rto_total; do
	[ "$(grep -c "^$m{flow=" "$DIR/metrics.txt")" -eq 4 ] || fail "$m: not one sample per flow"
done
if command -v promtool >/dev/null; then
	promtool check metrics <"$DIR/metrics.txt" >"$DIR/promtool.out" 2>&1 ||
		fail "promtool check metrics: $(cat "$DIR/promtool.out")"
	[ ! -s "$DIR/promtool.out" ] || fail "promtool lint: $(cat "$DIR/promtool.out")"
fi

# Idle: every message finished, the connections still open: nothing in flight.
i=0
until grep -q idle "$DIR/traffic.out"; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "traffic did not go idle: $(cat "$DIR/traffic.out")"
	sleep 0.05
done
sleep 0.1 # the last ACK's figures: a read is fresh for 10 ms
"$PCMCTL" --json flows >"$DIR/idle.json" || fail "flows --json"
"$PY" "$DIR/check.py" "$DIR/idle.json" "$DIR/busy2.json" idle ||
	fail "figures when idle: $(cat "$DIR/idle.json")"

kill "$TRAFFIC_PID"
wait "$TRAFFIC_PID" 2>/dev/null || true
TRAFFIC_PID=
kill "$PCMD_PID"
wait "$PCMD_PID" || fail "pcmd exited with $?"
PCMD_PID=
echo "pcmctl flows: live engine figures checked"
