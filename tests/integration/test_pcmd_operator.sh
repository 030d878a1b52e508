#!/bin/sh
# SPDX-License-Identifier: MIT
# test_pcmd_operator.sh PCMD PCMCTL TRAFFIC PACKAGE.so - what an operator
# meets (pcmd(8), pcmctl(1)), as root (users made with setpriv; skipped
# otherwise):
# - `pcmd --check-config` fails exactly where a start fails: a group that
#   does not exist, a topology file that does not, a directory at
#   socket.path, a stats file pcmd's user cannot write;
# - the size warning says what is true: chunks cut below datapath.chunk_bytes
#   (here by the engine's 1 MiB, on rdma_rxe by the MTU) are named as such;
# - SIGHUP: socket.path waits for a restart (the socket stays), the allow
#   lists apply at once and a connected client they no longer allow is
#   disconnected and told why, while the others carry on;
# - `pcmctl --version`, and `pcmctl log-level` refused to a non-admin;
# - the metrics file for node_exporter: promtool accepts it, no labelled
#   series by default, and a reader never sees half of one (it is renamed
#   into place);
# - `pcmctl policies load` of a file pcmd's mount namespace hides (as the
#   unit's PrivateTmp= and ProtectHome= do) says so and names the place for
#   packages.
set -eu
PCMD=$1 PCMCTL=$2 TRAFFIC=$3 PKG=$4
# shellcheck source-path=SCRIPTDIR source=pcmctl_lib.sh
. "$(dirname "$0")/pcmctl_lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "skip: needs root and setpriv (another user's client, a mount namespace)"
	exit 77
fi
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
chmod 755 "$DIR"

"$PCMCTL" --version | grep -q "^pcmctl [0-9.]* (pcmd control protocol [0-9]*)$" ||
	fail "pcmctl --version: $("$PCMCTL" --version)"

# ---- --check-config fails where a start fails ----------------------------------------------
mkdir "$DIR/ro" "$DIR/sock"
chmod 755 "$DIR/ro"
chmod 1777 "$DIR/sock"
# expect_both NAME WANT [AS...]: the check and the start of config NAME both fail with WANT.
expect_both() {
	name=$1 want=$2
	shift 2
	for mode in --check-config -c; do
		if "$@" "$PCMD" "$mode" "$DIR/$name.yaml" >"$DIR/$name.out" 2>&1; then
			fail "$name: pcmd $mode passed: $(cat "$DIR/$name.out")"
		fi
		grep -q "$want" "$DIR/$name.out" || fail "$name: pcmd $mode: $(cat "$DIR/$name.out")"
	done
	echo "$name: --check-config and a start both say: $(grep "$want" "$DIR/$name.out" | head -n1)"
}
printf 'socket: {path: "%s/sock/a.sock", group: pcm-no-such-group}\n' "$DIR" >"$DIR/group.yaml"
expect_both group "socket.group: no group 'pcm-no-such-group' on this system"
printf 'socket: {path: "%s/sock/b.sock", group: ""}\ndatapath:\n  kind: softnic\n  softnic: {topology: "%s/none.yaml"}\n' \
	"$DIR" "$DIR" >"$DIR/topology.yaml"
expect_both topology "datapath.softnic.topology: .*none.yaml"
printf 'socket: {path: "%s/sock/c.sock", group: ""}\noutput: {stats_path: "%s/ro/stats.jsonl"}\n' \
	"$DIR" "$DIR" >"$DIR/stats.yaml"
mkdir "$DIR/sock/e.sock"
printf 'socket: {path: "%s/sock/e.sock", group: ""}\n' "$DIR" >"$DIR/notsock.yaml"
expect_both notsock "socket.path: $DIR/sock/e.sock exists and is not a socket"
expect_both stats "output.stats_path: cannot create $DIR/ro/stats.jsonl: its directory $DIR/ro: Permission denied" $NOBODY

# ---- the size warning names the chunk the engines carry --------------------------------------
cat >"$DIR/chunk.yaml" <<YAML
socket: {path: "$DIR/sock/d.sock", group: ""}
datapath: {kind: null, chunk_bytes: 16777216}
limits: {memory_per_client_bytes: 8GiB, memory_total_bytes: 16GiB, max_message_bytes: 8GiB}
YAML
"$PCMD" --check-config "$DIR/chunk.yaml" >"$DIR/chunk.out" 2>&1 || fail "chunk: $(cat "$DIR/chunk.out")"
grep -q "chunks of 1048576 bytes, not datapath.chunk_bytes' 16777216 .*at most 4294967296 bytes" \
	"$DIR/chunk.out" || fail "the cut chunk is not named: $(cat "$DIR/chunk.out")"
grep -q "limits.max_message_bytes (8589934592) is above the 4294967296 bytes data plane null carries" \
	"$DIR/chunk.out" || fail "no size warning: $(cat "$DIR/chunk.out")"
if grep -q "chunks of datapath.chunk_bytes" "$DIR/chunk.out"; then
	fail "the warning blames datapath.chunk_bytes: $(cat "$DIR/chunk.out")"
fi

# ---- SIGHUP: socket.* waits for a restart, the allow lists apply at once ------------------
cat >"$DIR/pcmd.yaml" <<YAML
log_level: info
socket: {path: "$DIR/pcmd.sock", group: "", mode: "0666", allow_uids: [0, 65534]}
output: {metrics_path: "$DIR/prom/pcmd.prom", stats_interval_ms: 10}
YAML
mkdir "$DIR/prom"
"$PCMD" -c "$DIR/pcmd.yaml" 2>"$DIR/pcmd.log" &
PCMD_PID=$!
export PCMD_SOCKET="$DIR/pcmd.sock"
"$PCMCTL" --wait 10 status >/dev/null || fail "pcmd did not come up"
if $NOBODY "$PCMCTL" log-level debug 2>"$DIR/err"; then fail "a non-admin set the log level"; fi
grep -q "LOG_LEVEL is for admins" "$DIR/err" || fail "log-level as nobody: $(cat "$DIR/err")"
start_traffic - 1 # root's
: >"$DIR/nobody.out"
PCMD_TEST_ADDR_PREFIX=nobody- $NOBODY "$TRAFFIC" "$PCMD_SOCKET" - 1 >"$DIR/nobody.out" 2>&1 &
NOBODY_PID=$!
i=0
until grep -q ready "$DIR/nobody.out"; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "nobody's traffic: $(cat "$DIR/nobody.out")"
	sleep 0.05
done
"$PCMCTL" --json status | "$PY" -c 'import json,sys; s=json.load(sys.stdin); assert s["clients"]==4, s' ||
	fail "clients before the reload"
sed -i -e "s|allow_uids: \[0, 65534\]|allow_uids: [0]|" -e "s|pcmd.sock|other.sock|" "$DIR/pcmd.yaml"
kill -HUP "$PCMD_PID"
i=0
while kill -0 "$NOBODY_PID" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "nobody's client still runs after the reload"
	sleep 0.05
done
if wait "$NOBODY_PID"; then fail "nobody's traffic ended well: $(cat "$DIR/nobody.out")"; fi
grep -q "reload: socket.path changed; it takes effect when pcmd restarts" "$DIR/pcmd.log" ||
	fail "socket.path on reload: $(cat "$DIR/pcmd.log")"
grep -q "uid 65534) was disconnected: the reloaded configuration no longer allows it" \
	"$DIR/pcmd.log" || fail "no disconnect logged: $(cat "$DIR/pcmd.log")"
[ ! -e "$DIR/other.sock" ] || fail "the socket moved on reload"
"$PCMCTL" --json status | "$PY" -c 'import json,sys; s=json.load(sys.stdin); assert s["clients"]==2 and s["config_generation"]==2, s' ||
	fail "after the reload: $("$PCMCTL" status)"
if $NOBODY "$PCMCTL" status 2>"$DIR/err"; then fail "nobody still reaches pcmd"; fi
echo "reload: nobody's client disconnected ($(grep -o 'no longer allows it' "$DIR/pcmd.log" | head -n1)), root's carries on"

# ---- the metrics file: valid, unlabelled, never half-written ------------------------------
i=0
until [ -s "$DIR/prom/pcmd.prom" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "no metrics file"
	sleep 0.05
done
if command -v promtool >/dev/null; then
	promtool check metrics <"$DIR/prom/pcmd.prom" >"$DIR/promtool.out" 2>&1 ||
		fail "promtool: $(cat "$DIR/promtool.out")"
	[ ! -s "$DIR/promtool.out" ] || fail "promtool lint: $(cat "$DIR/promtool.out")"
fi
"$PY" - "$DIR/prom/pcmd.prom" <<'PYEOF' || fail "the metrics file as a reader sees it"
import os, re, sys, time
path, seen, end = sys.argv[1], set(), time.time() + 1.5
while time.time() < end:
    text = open(path).read()
    assert re.search(r"\npcmd_output_write_errors_total \d+\n$", text), ("half a file", text[-200:])
    assert "{" not in text, "labelled series by default"
    seen.add(re.search(r"^pcmd_uptime_seconds (\S+)$", text, re.M).group(1))
assert len(seen) >= 3, ("the file was not rewritten every 10 ms", seen)
assert os.stat(path).st_mode & 0o777 == 0o644, oct(os.stat(path).st_mode)
print("metrics file: %d versions read whole" % len(seen))
PYEOF
stop_all
[ ! -e "$DIR/prom/pcmd.prom.tmp" ] || fail "a temporary metrics file is left"

# ---- a package pcmd cannot see ------------------------------------------------------------
# (a private mount namespace cannot be made inside a chroot whose root is not a
# mount point, e.g. a debootstrap'd tree: unshare fails there, and this part
# says so and is skipped; the rest of the test runs)
if ! unshare -m true 2>"$DIR/unshare.err"; then
	echo "hidden package: skipped: unshare -m does not work here: $(cat "$DIR/unshare.err")"
else
	mkdir "$DIR/hidden"
	cat >"$DIR/pcmd.yaml" <<-YAML
	log_level: info
	socket: {path: "$DIR/pcmd.sock", group: ""}
	YAML
	# pcmd in its own mount namespace, where $DIR/hidden is an empty tmpfs (as /tmp is
	# under the unit's PrivateTmp=); pcmctl outside it sees the package there.
	unshare -m sh -c 'mount -t tmpfs pcm-hidden "$1" && exec "$2" -c "$3"' sh "$DIR/hidden" "$PCMD" \
		"$DIR/pcmd.yaml" 2>"$DIR/pcmd.log" &
	PCMD_PID=$!
	"$PCMCTL" --wait 10 status >/dev/null || fail "pcmd did not come up in its namespace"
	cp "$PKG" "$DIR/hidden/pkg.so"
	if "$PCMCTL" policies load "$DIR/hidden/pkg.so" 2>"$DIR/err"; then fail "loaded a hidden package"; fi
	grep -q "pcmctl can read the file but pcmd cannot: .*PrivateTmp=.*put packages in /.*pcm/policies" \
		"$DIR/err" || fail "the hidden package's error: $(cat "$DIR/err")"
	cp "$PKG" "$DIR/pkg.so"
	"$PCMCTL" policies load "$DIR/pkg.so" | grep -q "^loaded " || fail "a visible package"
	echo "hidden package: $(cat "$DIR/err")"
	kill "$PCMD_PID"
	wait "$PCMD_PID" || fail "pcmd exited with $?"
	PCMD_PID=
fi
