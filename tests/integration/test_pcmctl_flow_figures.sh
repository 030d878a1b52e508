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
# shellcheck source-path=SCRIPTDIR source=pcmctl_lib.sh
. "$(dirname "$0")/pcmctl_lib.sh"

start_pcmd <<YAML
datapath: {kind: "null"}
policies:
  default: newreno
YAML
# Two pairs busy until SIGUSR1, then idle (connected, nothing out) until stop_all:
# no clock, so slow checks on a loaded machine never see a phase end under them.
start_traffic - 2 -

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
if phase == "idle":
    assert all(f["in_flight_bytes"] == 0 for f in flows), flows
print(phase, " ".join("flow %d: cwnd %s srtt %dns rttvar %dns inflight %d retx %d rto %d" % (
    f["flow"], f["cwnd_bytes"], f["srtt_ns"], f["rttvar_ns"], f["in_flight_bytes"],
    f["retransmits"], f["rtos"]) for f in senders))
PYEOF

# busy: until both senders have acknowledged data (an SRTT), at most 10 s.
i=0
until "$PCMCTL" --json flows >"$DIR/busy1.json" &&
	"$PY" "$DIR/check.py" "$DIR/busy1.json" - busy >"$DIR/check.out" 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || fail "figures while busy: $(cat "$DIR/check.out" "$DIR/busy1.json")"
	sleep 0.1
done
cat "$DIR/check.out"
# live: a later read has moved on (more bytes sent), at most 2 s later.
i=0
until "$PCMCTL" --json flows >"$DIR/busy2.json" &&
	"$PY" - "$DIR/busy1.json" "$DIR/busy2.json" <<'PYEOF'; do
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert sum(f["tx_bytes"] for f in b) > sum(f["tx_bytes"] for f in a)
PYEOF
	i=$((i + 1)); [ $i -lt 20 ] || fail "figures are not live (a second read moved nothing)"
	sleep 0.1
done
"$PY" "$DIR/check.py" "$DIR/busy2.json" "$DIR/busy1.json" busy ||
	fail "figures while busy (second read): $(cat "$DIR/busy2.json")"

# The text table and the Prometheus gauges carry the same figures.
"$PCMCTL" flows >"$DIR/flows.txt" || fail "flows"
grep -q "CWND.*RATE.*SRTT.*RTTVAR.*INFLIGHT.*RETX.*RTO" "$DIR/flows.txt" ||
	fail "flows columns: $(cat "$DIR/flows.txt")"
grep -q "newreno.*sync.*established.*unpaced.*us.*us" "$DIR/flows.txt" ||
	fail "flows rows: $(cat "$DIR/flows.txt")"
"$PCMCTL" stats --prometheus --per-flow >"$DIR/metrics.txt" || fail "stats --prometheus --per-flow"
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
kill -USR1 "$TRAFFIC_PID"
wait_traffic idle
sleep 0.1 # the last ACK's figures: a read is fresh for 10 ms
"$PCMCTL" --json flows >"$DIR/idle.json" || fail "flows --json"
"$PY" "$DIR/check.py" "$DIR/idle.json" "$DIR/busy2.json" idle ||
	fail "figures when idle: $(cat "$DIR/idle.json")"

stop_all
echo "pcmctl flows: live engine figures checked"
