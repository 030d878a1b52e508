#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pcmctl.sh PCMD PCMCTL TRAFFIC PACKAGE.so - pcmctl against a pcmd with live
# flows: every command's --json output parses, `stats --prometheus` passes
# promtool's check, a package is loaded, set on a flow and per rule, refused
# unload while used, unloaded; errors are clear; --wait retries for its time,
# then names the socket; `top` runs under tmux (capture-pane shows the flows)
# and quits on q.
set -eu
PCMD=$1 PCMCTL=$2 TRAFFIC=$3 PKG=$4
TMUX_SOCK="pcmctl-test-$$"
# shellcheck source-path=SCRIPTDIR source=pcmctl_lib.sh
. "$(dirname "$0")/pcmctl_lib.sh"

start_pcmd <<YAML
policies:
  default: swift
  rules:
    - {peer: "traffic-*", policy: newreno}
YAML
# Busy until stop_all, however long the checks take.
start_traffic - 2

json() { "$PCMCTL" --json "$@" | "$PY" -c 'import json,sys; json.dump(json.load(sys.stdin), sys.stdout)'; }

# --wait: a socket that never appears fails after the wait, naming it; a bad value is refused.
t0=$(date +%s%N)
if "$PCMCTL" --socket "$DIR/absent.sock" --wait 0.3 status 2>"$DIR/wait.err"; then
	fail "--wait on an absent socket succeeded"
fi
t1=$(date +%s%N)
grep -q "absent.sock within --wait" "$DIR/wait.err" || fail "--wait error: $(cat "$DIR/wait.err")"
[ $(((t1 - t0) / 1000000)) -ge 300 ] || fail "--wait 0.3 gave up after $(((t1 - t0) / 1000000)) ms"
if "$PCMCTL" --wait soon status 2>"$DIR/wait.err"; then fail "--wait soon accepted"; fi
grep -q "wait soon: seconds" "$DIR/wait.err" || fail "--wait soon: $(cat "$DIR/wait.err")"

# --json on every command, parsed by Python's json module.
json status | "$PY" -c 'import json,sys; s=json.load(sys.stdin); assert s["clients"]==4 and s["flows"]==4, s' ||
	fail "status --json"
json flows >"$DIR/flows.json" || fail "flows --json does not parse"
"$PY" - "$DIR/flows.json" <<'PYEOF' || fail "flows --json content"
import json, sys
f = json.load(open(sys.argv[1]))
assert len(f) == 4, f
out = [x for x in f if x["peer"].startswith("traffic-")]
assert len(out) == 2 and all(x["policy"] == "newreno" and x["rule"] == 0 for x in out), out
assert all(x["state"] == "established" for x in f), f
# the engine's figures (test_pcmctl_flow_figures checks them in depth)
assert all(isinstance(x["cwnd_bytes"], int) or x["cwnd_bytes"] == "unlimited" for x in f), f
assert sum(x["tx_bytes"] for x in f) > 0, f
PYEOF
json stats | "$PY" -c 'import json,sys; s=json.load(sys.stdin); assert s["tx_bytes"]>0 and s["flows"]==4, s' ||
	fail "stats --json"
json policies | "$PY" -c 'import json,sys; p=json.load(sys.stdin); assert any(x["name"]=="swift" and x["builtin"] for x in p), p' ||
	fail "policies --json"

# The Prometheus exposition, checked by the Prometheus project's own tool: by
# default a fixed set of series without labels (their number does not grow with
# the flows); the per-flow series only with --per-flow.
"$PCMCTL" stats --prometheus >"$DIR/metrics.txt"
"$PCMCTL" stats --prometheus --per-flow >"$DIR/metrics-flows.txt"
grep -q '^pcmd_clients 4$' "$DIR/metrics.txt" || fail "no pcmd_clients 4: $(grep clients "$DIR/metrics.txt")"
grep -q '^pcmd_records_dropped_lines_total ' "$DIR/metrics.txt" || fail "no dropped lines"
if grep -q '{' "$DIR/metrics.txt"; then fail "labelled series by default: $(grep '{' "$DIR/metrics.txt")"; fi
grep -q '^pcmd_flow_tx_bytes_total{flow="[0-9a-f]\{16\}-[0-9]*",peer="' "$DIR/metrics-flows.txt" ||
	fail "no per-flow metrics with --per-flow"
if command -v promtool >/dev/null; then
	for m in metrics metrics-flows; do
		promtool check metrics <"$DIR/$m.txt" >"$DIR/promtool.out" 2>&1 ||
			fail "promtool check metrics ($m): $(cat "$DIR/promtool.out")"
		[ ! -s "$DIR/promtool.out" ] || fail "promtool lint ($m): $(cat "$DIR/promtool.out")"
		echo "promtool check metrics ($m): OK ($(grep -vc '^#' "$DIR/$m.txt") samples)"
	done
else
	echo "promtool not installed (Debian package prometheus): exposition not checked" >&2
	exit 77
fi

# Policies: load a pcmc-built package, set it per flow and per rule, unload.
"$PCMCTL" policies load "$PKG" | grep -q "loaded fixed_window" || fail "load"
FLOW=$("$PY" -c 'import json,sys; print([x for x in json.load(open(sys.argv[1])) if x["peer"].startswith("traffic-")][0]["flow"])' "$DIR/flows.json")
"$PCMCTL" policies set --flow "$FLOW" fixed_window --mode async_locked | grep -q "1 flow(s)" ||
	fail "set --flow"
json flows | "$PY" -c "import json,sys; f=[x for x in json.load(sys.stdin) if x['flow']==$FLOW][0]; assert f['policy']=='fixed_window' and f['mode']=='async_locked', f" ||
	fail "flow did not change policy"
if "$PCMCTL" policies unload fixed_window 2>"$DIR/err"; then fail "unload while in use"; fi
grep -q "used by 1 flow(s)" "$DIR/err" || fail "unload error: $(cat "$DIR/err")"
"$PCMCTL" --json policies set --rule 0 cubic | "$PY" -c 'import json,sys; r=json.load(sys.stdin); assert r["ok"] and r["flows_changed"]==2, r' ||
	fail "set --rule"
"$PCMCTL" policies unload fixed_window | grep -q unloaded || fail "unload"
json flows | "$PY" -c 'import json,sys; f=json.load(sys.stdin); assert all(x["policy"]=="cubic" for x in f if x["peer"].startswith("traffic-")), f' ||
	fail "rule set did not move both flows"

# Errors: clear text, JSON with --json, exit status 1.
if "$PCMCTL" --json policies unload swift >"$DIR/out" 2>/dev/null; then fail "unloaded a built-in"; fi
"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] is False and "built in" in r["error"], r' "$DIR/out" ||
	fail "error JSON"
if PCMD_SOCKET="$DIR/none.sock" "$PCMCTL" status 2>"$DIR/err"; then fail "status without pcmd"; fi
grep -q "cannot reach pcmd at $DIR/none.sock" "$DIR/err" || fail "unreachable message"

# top, live, in a terminal: tmux draws it, capture-pane reads it, q ends it.
if command -v tmux >/dev/null; then
	tmux -L "$TMUX_SOCK" new-session -d -s top -x 220 -y 40 \
		"PCMD_SOCKET=$PCMD_SOCKET $PCMCTL top --interval 200"
	# Until a frame shows the flows and the counts: 4 clients, the traffic's
	# endpoints (pcmctl's own queries, top's among them, are not applications).
	i=0
	until tmux -L "$TMUX_SOCK" capture-pane -p -t top >"$DIR/pane" 2>/dev/null &&
		grep -q "traffic-1" "$DIR/pane" && grep -q "clients 4, flows 4" "$DIR/pane"; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "top shows no flows or counts: $(cat "$DIR/pane")"
		sleep 0.1
	done
	grep -q "^pcmd 0.1.0" "$DIR/pane" || fail "top header: $(cat "$DIR/pane")"
	grep -q "FLOW.*POLICY.*MODE.*CWND.*RATE.*SRTT.*RTTVAR.*INFLIGHT.*RETX.*RTO" "$DIR/pane" ||
		fail "top columns: $(cat "$DIR/pane")"
	grep -q "traffic-1.*established.*us.*us" "$DIR/pane" || fail "top figures: $(cat "$DIR/pane")"
	grep -q "clients 4, flows 4" "$DIR/pane" || fail "top counts: $(cat "$DIR/pane")"
	tmux -L "$TMUX_SOCK" send-keys -t top q
	i=0
	while tmux -L "$TMUX_SOCK" has-session -t top 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 50 ] || fail "top did not quit on q"; sleep 0.1
	done
	echo "top under tmux: flows shown, q quits"
	sed -n '1,8p' "$DIR/pane"
else
	echo "tmux not installed: top not checked" >&2
	exit 77
fi

stop_all
echo "pcmctl: all checks passed"
