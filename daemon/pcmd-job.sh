#!/bin/sh
# SPDX-License-Identifier: MIT
# pcmd-job.sh BUILD_DIR - the README's main job through pcmd: start pcmd on the
# embedded softnic fabric (datapath.kind: softnic; every client process
# attaches as its own emulated host), keep two byte-checked connections busy
# through it for a few seconds (pcmd-test-traffic, libpcmtransport's daemon
# backend), print pcmctl's status (goodput, wall time) and flows (per-flow
# figures) while they run, run the example sender/receiver through pcmd, print
# the totals, and stop pcmd with SIGTERM. Exit 0 when pcmd stopped cleanly and
# every message arrived intact.
set -eu
B=${1:-build}
DIR=$(mktemp -d /tmp/pcmd-job-XXXXXX)
PCMD_PID= TRAFFIC_PID=
cleanup() {
	[ -n "$TRAFFIC_PID" ] && kill "$TRAFFIC_PID" 2>/dev/null || true
	[ -n "$PCMD_PID" ] && kill "$PCMD_PID" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() { echo "pcmd job: $*" >&2; cat "$DIR/pcmd.log" >&2; exit 1; }

cat >"$DIR/pcmd.yaml" <<YAML
log_level: info
socket: {path: "$DIR/pcmd.sock", group: ""}
datapath:
  kind: softnic
  softnic: {hosts: 8, link_gbps: 100}
policies:
  default: swift
YAML
"$B/daemon/pcmd" -c "$DIR/pcmd.yaml" 2>"$DIR/pcmd.log" &
PCMD_PID=$!
export PCMD_SOCKET="$DIR/pcmd.sock"
"$B/cli/pcmctl" --wait 10 status >/dev/null || fail "pcmd did not come up"
grep "datapath\|data plane" "$DIR/pcmd.log" | sed 's/^/  /'
grep -q "datapath softnic" "$DIR/pcmd.log" || fail "pcmd is not on the softnic fabric"
"$B/tests/integration/pcmd-test-traffic" "$PCMD_SOCKET" 4 2 >"$DIR/traffic.out" 2>&1 &
TRAFFIC_PID=$!
i=0
until grep -q ready "$DIR/traffic.out"; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the traffic did not connect"; sleep 0.05
done
sleep 2
"$B/cli/pcmctl" status
echo
"$B/cli/pcmctl" flows
wait "$TRAFFIC_PID" || fail "traffic failed: $(cat "$DIR/traffic.out")"
TRAFFIC_PID=
sed 's/^/  /' "$DIR/traffic.out"
echo "example sender/receiver through pcmd (example_sendrecv --daemon):"
"$B/examples/example_sendrecv" --daemon --messages 300 | sed 's/^/  /' ||
	fail "example_sendrecv failed"
"$B/cli/pcmctl" stats | grep -i "bytes\|flows" | head -8
kill -TERM "$PCMD_PID"
rc=0
wait "$PCMD_PID" || rc=$?
PCMD_PID=
[ "$rc" -eq 0 ] || fail "pcmd exited with $rc"
grep "softnic fabric: stopped" "$DIR/pcmd.log" | sed 's/^pcmd: info: /  /'
echo "pcmd stopped cleanly"
