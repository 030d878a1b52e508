# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# pcmctl_lib.sh - sourced by the pcmctl tests: a scratch directory, a pcmd
# started on a config from stdin with its socket in it, pcmd-test-traffic
# started and waited for, the cleanup that stops both (and tmux's server,
# when TMUX_SOCK is set), and the wait for pcmd to have reclaimed every
# client. Needs PCMD, PCMCTL and TRAFFIC set.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
DIR=$(mktemp -d /tmp/pcmctl-test-XXXXXX)
PCMD_PID='' TRAFFIC_PID='' TMUX_SOCK=${TMUX_SOCK:-}
cleanup() {
	if [ -n "$TRAFFIC_PID" ]; then kill "$TRAFFIC_PID" 2>/dev/null || true; fi
	if [ -n "$PCMD_PID" ] && kill "$PCMD_PID" 2>/dev/null; then
		wait "$PCMD_PID" 2>/dev/null || true
	fi
	if [ -n "$TMUX_SOCK" ] && command -v tmux >/dev/null; then
		tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true
	fi
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$DIR/pcmd.log" ] && cat "$DIR/pcmd.log" >&2; exit 1; }

# start_pcmd < BODY: pcmd on "log_level: info", a socket in $DIR, then BODY (YAML).
start_pcmd() {
	{
		echo "log_level: info"
		echo "socket: {path: \"$DIR/pcmd.sock\", group: \"\"}"
		cat
	} >"$DIR/pcmd.yaml"
	"$PCMD" -c "$DIR/pcmd.yaml" 2>"$DIR/pcmd.log" &
	PCMD_PID=$!
	export PCMD_SOCKET="$DIR/pcmd.sock"
	"$PCMCTL" --wait 10 status >/dev/null || fail "pcmd did not come up"
}

# start_traffic ARGS...: pcmd-test-traffic SOCKET ARGS..., until it says ready.
# Tests give "-" for its phases (no clock: SIGUSR1 ends the busy one, stop_all
# the rest), so that checks slowed down by a loaded machine never outlast them.
# Its output file is emptied first: the redirection happens in the child, and a
# "ready" left by the last run must not be taken for this one's.
start_traffic() {
	: >"$DIR/traffic.out"
	"$TRAFFIC" "$PCMD_SOCKET" "$@" >"$DIR/traffic.out" 2>&1 &
	TRAFFIC_PID=$!
	wait_traffic ready
}

# wait_traffic WORD: until pcmd-test-traffic prints WORD (15 s at most).
wait_traffic() {
	i=0
	until grep -q "$1" "$DIR/traffic.out"; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "traffic did not say $1: $(cat "$DIR/traffic.out")"
		sleep 0.05
	done
}

# stop_all: the traffic (SIGTERM: its pairs close), which must exit 0 (every
# message arrived intact), then pcmd, which must exit 0.
stop_all() {
	kill "$TRAFFIC_PID"
	wait "$TRAFFIC_PID" || fail "traffic exited with $?: $(cat "$DIR/traffic.out")"
	TRAFFIC_PID=
	kill "$PCMD_PID"
	wait "$PCMD_PID" || fail "pcmd exited with $?"
	PCMD_PID=
}

# wait_reclaimed: pcmd holds no flow and no application (10 s at most).
wait_reclaimed() {
	i=0
	until "$PCMCTL" --json status | "$PY" -c 'import json,sys; s=json.load(sys.stdin); sys.exit(not (s["flows"] == 0 and s["clients"] == 0))'; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "pcmd did not reclaim: $("$PCMCTL" status)"; sleep 0.05
	done
}
