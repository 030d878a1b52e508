#!/bin/sh
# SPDX-License-Identifier: MIT
# test_tenancy.sh PCMD PCMCTL TENANT [SANITIZE] - pcmd on a machine shared by users who
# do not trust each other (issue 23). As root it creates a group and four
# users, starts pcmd (softnic, 16 hosts) with its socket readable and
# writable by that group, and runs each attack as those users with setpriv:
#   mallory  the attacker
#   alice    a legitimate tenant (the victim), whose work must complete
#   bob      a third user, whom a shared_names rule lets dial alice's names
#   oscar    in the socket's group, but refused by socket.allow_uids
# Each check names what it guards; the users and the group are removed at
# the end, whatever happens. PCM_TENANCY_CHECKS runs some of the checks
# (descriptors lockout regions limits memory names visibility fairness
# saturated chaos health);
# PCM_TENANCY_FAIR_ROUNDS (default 3) sets how many alone/flooded rounds the
# fairness check takes the median of. The chaos check runs seeded hostile
# clients (pcm-tenant chaos): PCM_TENANCY_SEED (default random, printed with
# its one-line reproduction), PCM_TENANCY_CHAOS actions (default 120; the
# slow suite's test_tenancy_slow runs 2000) from PCM_TENANCY_CHAOS_FIRST
# (default 0); a failing range is shrunk to the smallest that fails alone.
set -eu
PCMD=$1 PCMCTL=$2 TENANT=$3 SANITIZE=${4:-none}
FAIR_ROUNDS=${PCM_TENANCY_FAIR_ROUNDS:-3}
SEED=${PCM_TENANCY_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
CHAOS=${PCM_TENANCY_CHAOS:-120}

[ "$(id -u)" = 0 ] || { echo "skipped: needs root (it creates users and a group)" >&2; exit 77; }
for t in useradd userdel groupadd groupdel setpriv; do
	command -v "$t" >/dev/null || { echo "skipped: no $t" >&2; exit 77; }
done

S=$$
G=pcmtg$S M=pcmtm$S A=pcmta$S B=pcmtb$S O=pcmto$S
DIR=$(mktemp -d /tmp/pcm-tenancy-XXXXXX)
PCMD_PID='' BG=''
cleanup() {
	for p in $BG; do kill "$p" 2>/dev/null || true; done
	if [ -n "$PCMD_PID" ] && kill "$PCMD_PID" 2>/dev/null; then wait "$PCMD_PID" 2>/dev/null || true; fi
	for cg in /sys/fs/cgroup/pcm-tenancy-$S /sys/fs/cgroup/*/pcm-tenancy-$S; do
		[ ! -d "$cg" ] || rmdir "$cg" 2>/dev/null || true
	done
	for u in $M $A $B $O; do userdel "$u" 2>/dev/null || true; done
	groupdel "$G" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	[ -f "$DIR/pcmd.log" ] && tail -n 60 "$DIR/pcmd.log" >&2
	exit 1
}
pass() { echo "ok: $*"; }

groupadd "$G"
for u in $M $A $B $O; do
	useradd -M -N -g "$G" -d /nonexistent -s /usr/sbin/nologin "$u"
done
uid() { id -u "$1"; }
# The binaries where every user may run them, whatever the build directory's mode.
chmod 0755 "$DIR"
cp "$TENANT" "$DIR/pcm-tenant"
cp "$PCMCTL" "$DIR/pcmctl"
SOCK=$DIR/pcmd.sock

# as USER CMD...: CMD as USER (its uid, the group, supplementary groups), nothing
# inherited; with $RT set (the fairness check), under that real-time priority and on CPU 1
RT=''
as() {
	u=$1
	shift
	$RT setpriv --reuid="$(uid "$u")" --regid="$(id -g "$u")" --init-groups \
		env -i PATH=/usr/bin:/bin PCMD_SOCKET="$SOCK" "$@"
}
tenant() { u=$1; shift; as "$u" "$DIR/pcm-tenant" "$SOCK" "$@"; }
# tenant_bg USER ARGS... &: the same in the background, $! being pcm-tenant's own pid
tenant_bg() { u=$1; shift; exec $RT setpriv --reuid="$(uid "$u")" --regid="$(id -g "$u")" \
	--init-groups env -i PATH=/usr/bin:/bin "$DIR/pcm-tenant" "$SOCK" "$@"; }
pctl() { u=$1; shift; as "$u" "$DIR/pcmctl" "$@"; }
json() { "$@" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))'; }
# field JSON KEY: a top-level number of a JSON object
field() { printf '%s' "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

cat >"$DIR/pcmd.yaml" <<YAML
log_level: info
socket:
  path: "$SOCK"
  group: "$G"
  mode: "0660"
  allow_uids: [$M, $A, $B]
datapath: {kind: softnic, softnic: {hosts: 16}}
limits:
  max_clients: 32
  hello_timeout_ms: 5000
  user: {clients: 16, regions: 16, flows: 24, listeners: 6}
shared_names:
  - {name: "shared-*", owner: $A, dial_uids: [$B]}
YAML
# start_pcmd: a fresh pcmd (the chaos shrinker starts one per attempt), its log appended
start_pcmd() {
	"$PCMD" -c "$DIR/pcmd.yaml" >>"$DIR/pcmd.log" 2>&1 &
	PCMD_PID=$!
	"$DIR/pcmctl" --socket "$SOCK" --wait 10 status >/dev/null || fail "pcmd did not come up"
	[ "$(stat -c %G:%a "$SOCK")" = "$G:660" ] || fail "socket is $(stat -c %G:%a "$SOCK")"
}
stop_pcmd() {
	kill "$PCMD_PID"
	wait "$PCMD_PID" || fail "pcmd exited with $?"
	PCMD_PID=''
}
start_pcmd

fds() { find "/proc/$PCMD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
# settled_fds: pcmd's descriptor count once it has not moved for 0.6 s
settled_fds() {
	prev=-1 same=0
	while [ $same -lt 3 ]; do
		n=$(fds)
		if [ "$n" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		prev=$n
		sleep 0.2
	done
	echo "$n"
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$PCMD_PID/status"; }
clients_now() { field "$(json "$DIR/pcmctl" --socket "$SOCK" --json status)" clients; }
# wait_for FILE WORD: until FILE holds WORD (30 s at most)
wait_for() {
	wf_n=0
	until grep -q "$2" "$1" 2>/dev/null; do
		wf_n=$((wf_n + 1))
		[ $wf_n -lt 600 ] || fail "$1 never said '$2': $(cat "$1" 2>/dev/null)"
		sleep 0.05
	done
}
# wait_idle: until pcmd holds no client but root's pcmctl (reclaims finish asynchronously)
wait_idle() {
	wi_n=0
	until [ "$(clients_now)" -le 1 ]; do
		wi_n=$((wi_n + 1))
		[ $wi_n -lt 200 ] || fail "pcmd still holds $(clients_now) clients"
		sleep 0.05
	done
}
healthy() {
	kill -0 "$PCMD_PID" 2>/dev/null || fail "pcmd died ($1)"
	"$DIR/pcmctl" --socket "$SOCK" status >/dev/null || fail "root's pcmctl failed ($1)"
}
FD0=$(settled_fds)
RSS0=$(rss_kb)
echo "pcmd $PCMD_PID: $FD0 fds, RSS $RSS0 kB; users $M $A $B $O ($(uid $M) $(uid $A) $(uid $B) $(uid $O)), group $G"

# ---- 1. descriptors: every fd that arrives is closed, from allowed and refused peers ----
check_descriptors() {
	tenant_bg "$A" pair victim-1 4 65536 4 >"$DIR/victim1.out" 2>&1 &
	V1=$!
	BG="$BG $V1"
	tenant "$M" fdflood 1 400 20 1 >"$DIR/fd1.out"   # 20 fds a message: all in the control buffer
	tenant "$M" fdflood 4 50 250 0 >"$DIR/fd2.out"   # 250: more than fit (MSG_CTRUNC), no HELLO
	tenant "$O" fdflood 100 1 20 0 >"$DIR/fd3.out"   # refused peers, each one message of 20 fds
	SENT=$(awk '/sent_fds/ {s += $2} END {print s}' "$DIR"/fd[123].out)
	wait "$V1" || fail "alice's work failed during the fd flood: $(cat "$DIR/victim1.out")"
	FD1=$(settled_fds)
	[ "$FD1" = "$FD0" ] || fail "descriptors: $SENT sent, pcmd went from $FD0 to $FD1 fds"
	grep -q "goodput_bps" "$DIR/victim1.out" || fail "alice's work: $(cat "$DIR/victim1.out")"
	pass "fd flood: $SENT fds from allowed and refused peers, pcmd $FD0 -> $FD1 fds; alice's work completed"
	healthy "fd flood"
}

# ---- 2. no lock-out: hello-less connections, per-user clients, the admins' reserve ----
check_lockout() {
	tenant_bg "$M" connflood 400 9000 >"$DIR/flood-m.out" &
	FM=$!
	BG="$BG $FM"
	sleep 1
	"$DIR/pcmctl" --socket "$SOCK" status >/dev/null || fail "root's pcmctl refused while mallory floods"
	tenant "$A" open >"$DIR/open1.out"
	grep -q "open ok" "$DIR/open1.out" || fail "alice locked out by mallory's 400 connections: $(cat "$DIR/open1.out")"
	# Refused outright (mallory's refused peers fill the spare slots), with her HELLO sent
	# before pcmd looks (pcmd stopped meanwhile): pcmd closes a socket it received from.
	kill -STOP "$PCMD_PID"
	tenant_bg "$M" open >"$DIR/open2.out" &
	OP=$!
	sleep 0.5
	kill -CONT "$PCMD_PID"
	wait "$OP"
	grep -q "open refused -87 .*limits.user.clients" "$DIR/open2.out" ||
		fail "mallory's client beyond limits.user.clients: $(cat "$DIR/open2.out") (the reason, not a bare ECONNRESET)"
	pass "400 hello-less connections of one user: alice and root still get in; mallory is told limits.user.clients"
	tenant_bg "$B" connflood 16 8000 >"$DIR/flood-b.out" &
	FB=$!
	BG="$BG $FB"
	sleep 1
	tenant "$A" open >"$DIR/open3.out"
	grep -q "open refused -87 .*limits.max_clients = 32" "$DIR/open3.out" ||
		fail "alice with every client slot taken: $(cat "$DIR/open3.out") (the reason, not a bare ECONNRESET)"
	"$DIR/pcmctl" --socket "$SOCK" status >/dev/null || fail "root's pcmctl refused with max_clients taken"
	pass "max_clients taken by two users: alice reads why (limits.max_clients), root's pcmctl uses the admins' reserve"
	wait "$FM" "$FB"
	grep -q "closed_by_pcmd 400" "$DIR/flood-m.out" || fail "mallory's hello-less connections were not all closed: $(cat "$DIR/flood-m.out")"
	grep -q "closed_by_pcmd 16" "$DIR/flood-b.out" || fail "bob's hello-less connections were not all closed: $(cat "$DIR/flood-b.out")"
	C=$(clients_now)
	[ "$C" -le 1 ] || fail "$C clients left after the floods"
	pass "every hello-less connection closed by the HELLO deadline; $C client(s) left"
	LOGGED=$(grep -c "refused a client" "$DIR/pcmd.log" || true)
	[ "$LOGGED" -le 80 ] || fail "pcmd logged $LOGGED refusals one by one: a flood of connections floods the journal"
	pass "$LOGGED refusals logged one by one ($(grep -c "more client(s) in the last second" "$DIR/pcmd.log" || true) summaries): the journal is not flooded"
	healthy "connection flood"
}

# ---- 3. regions and hosts: one user's share, not all ----
check_regions() {
	tenant_bg "$M" regions 16 4096 30000 >"$DIR/regions.out" &
	RM=$!
	BG="$BG $RM"
	wait_for "$DIR/regions.out" "^regions"
	grep -q "^regions 8$" "$DIR/regions.out" && grep -q "limits.user.hosts" "$DIR/regions.out" ||
		fail "mallory's 4 KiB regions: $(cat "$DIR/regions.out") (want 8 of 16 hosts, then limits.user.hosts)"
	tenant "$A" pair victim-3 3 65536 4 >"$DIR/victim3.out" 2>&1 ||
		fail "alice's work with mallory's regions held: $(cat "$DIR/victim3.out")"
	kill "$RM"
	wait "$RM" 2>/dev/null || true
	wait_idle
	tenant "$M" regions 8 209715200 0 >"$DIR/bytes.out" 2>&1 || true
	grep -q "^regions 5$" "$DIR/bytes.out" && grep -q "limits.user.region_bytes" "$DIR/bytes.out" ||
		fail "mallory's 200 MiB regions: $(cat "$DIR/bytes.out") (want 5, then limits.user.region_bytes)"
	pass "mallory holds 8 of 16 hosts and 1 GiB of regions at most; alice's work completed"
	healthy "regions"
}

# ---- 3b. listeners and flows: one user's share, not all ----
check_limits() {
	tenant "$M" limits 16 >"$DIR/limits.out" || fail "mallory's listeners and flows: $(cat "$DIR/limits.out")"
	grep -q "^listeners 6$" "$DIR/limits.out" && grep -q "limits.user.listeners is 6" "$DIR/limits.out" &&
		grep -q "^flows 24$" "$DIR/limits.out" && grep -q "limits.user.flows is 24" "$DIR/limits.out" ||
		fail "mallory's listeners and flows: $(cat "$DIR/limits.out") (want 6, then limits.user.listeners; 24, then limits.user.flows)"
	tenant_bg "$M" limits 16 >"$DIR/limits2.out" &
	LM=$!
	BG="$BG $LM"
	tenant "$A" pair limits-a 2 65536 4 >"$DIR/victim-l.out" 2>&1 ||
		fail "alice's work while mallory holds her listeners and flows: $(cat "$DIR/victim-l.out")"
	wait "$LM" || true
	wait_idle
	pass "mallory gets 6 listeners and 24 flows, then limits.user.listeners and limits.user.flows; alice's work completed"
	healthy "limits"
}

# ---- 4. memory goes back after clients leave ----
check_memory() {
	sleep 1.5
	RSS1=$(rss_kb)
	tenant "$A" cycle 6 8 4194304 >"$DIR/cycle.out" || fail "cycles: $(cat "$DIR/cycle.out")"
	sleep 2.5 # the next expiry tick gives freed memory back
	RSS2=$(rss_kb)
	case $SANITIZE in
	*address*)
		# ASan's allocator keeps what pcmd frees (malloc_trim is glibc's): no bound to check.
		pass "6 attach/detach cycles of 8 clients: pcmd RSS $RSS1 -> $RSS2 kB (ASan: not bounded)"
		return
		;;
	esac
	[ $((RSS2 - RSS1)) -le 32768 ] || fail "pcmd's RSS went from $RSS1 to $RSS2 kB over 6 cycles of 8 clients"
	pass "6 attach/detach cycles of 8 clients: pcmd RSS $RSS1 -> $RSS2 kB (at start $RSS0 kB)"
}

# ---- 5. names belong to someone: squatting and interception ----
check_names() {
	tenant_bg "$M" serve storage-0 0 1 >"$DIR/squat.out" &
	SQ=$!
	BG="$BG $SQ"
	wait_for "$DIR/squat.out" "listening storage-0"
	tenant_bg "$A" serve storage-0 0 1 >"$DIR/own.out" &
	OWN=$!
	BG="$BG $OWN"
	wait_for "$DIR/own.out" "listen"
	grep -q "listening storage-0" "$DIR/own.out" || fail "alice cannot listen on her name: $(cat "$DIR/own.out")"
	OWNPID=$(awk '/^listening/ {print $4}' "$DIR/own.out")
	tenant "$A" dial storage-0 >"$DIR/dial-own.out"
	wait "$OWN" || fail "alice's server: $(cat "$DIR/own.out")"
	grep -q "dial ok" "$DIR/dial-own.out" || fail "alice's dial: $(cat "$DIR/dial-own.out")"
	grep -q "dial_peer uid $(uid "$A") gid $(id -g "$A") pid $OWNPID" "$DIR/dial-own.out" ||
		fail "alice's dial reached $(grep dial_peer "$DIR/dial-own.out"), not her server (pid $OWNPID)"
	grep -q "serve_peer uid $(uid "$A") gid $(id -g "$A") pid $(awk '/^dial_pid/ {print $2}' "$DIR/dial-own.out")" "$DIR/own.out" &&
		grep -q "serve got 4096" "$DIR/own.out" ||
		fail "alice's server: $(cat "$DIR/own.out")"
	! grep -q "serve got" "$DIR/squat.out" || fail "mallory received alice's data: $(cat "$DIR/squat.out")"
	pass "mallory listens on storage-0 first; alice listens and dials her own storage-0, mallory gets nothing"
	kill "$SQ" 2>/dev/null || true
	wait "$SQ" 2>/dev/null || true
	tenant_bg "$A" serve storage-1 0 1 >"$DIR/s1.out" &
	S1=$!
	BG="$BG $S1"
	wait_for "$DIR/s1.out" "listening"
	tenant "$B" dial "storage-1@$A" >"$DIR/d1.out"
	grep -q "dial refused -111" "$DIR/d1.out" || fail "bob dialed alice's private storage-1: $(cat "$DIR/d1.out")"
	tenant "$M" dial "storage-1@$(uid "$A")" >"$DIR/d2.out"
	grep -q "dial refused -111" "$DIR/d2.out" || fail "mallory dialed alice's private storage-1: $(cat "$DIR/d2.out")"
	tenant "$A" dial storage-1 >/dev/null || fail "alice's dial of storage-1"
	wait "$S1" || true
	pass "alice's names take no other user's dials unless she says so"
	tenant_bg "$A" serve shared-db 0 2 >"$DIR/sh.out" &
	SH=$!
	BG="$BG $SH"
	wait_for "$DIR/sh.out" "listening"
	SHPID=$(awk '/^listening/ {print $4}' "$DIR/sh.out")
	tenant "$B" dial shared-db >"$DIR/d3.out"
	grep -q "dial_peer uid $(uid "$A") gid $(id -g "$A") pid $SHPID" "$DIR/d3.out" ||
		fail "bob's dial of shared-db (a shared_names rule): $(cat "$DIR/d3.out")"
	tenant "$M" dial "shared-db@$A" >"$DIR/d4.out"
	grep -q "dial refused -111" "$DIR/d4.out" || fail "mallory dialed alice's shared-db: $(cat "$DIR/d4.out")"
	tenant "$B" dial "shared-db@$A" >"$DIR/d5.out"
	grep -q "dial ok" "$DIR/d5.out" || fail "bob's dial of shared-db@alice: $(cat "$DIR/d5.out")"
	wait "$SH" || fail "alice's shared-db server: $(cat "$DIR/sh.out")"
	[ "$(grep -c "serve_peer uid $(uid "$B")" "$DIR/sh.out")" = 2 ] || fail "shared-db's peers: $(cat "$DIR/sh.out")"
	pass "a shared_names rule lets bob (and not mallory) dial alice's shared-db; both ends read the other's uid, gid, pid"
	tenant_bg "$A" serve open-1 1 1 >"$DIR/open.out" &
	OP=$!
	BG="$BG $OP"
	wait_for "$DIR/open.out" "listening"
	tenant "$M" dial open-1 >"$DIR/d6.out"
	grep -q "dial refused -111" "$DIR/d6.out" || fail "mallory's open-1 is her own name: $(cat "$DIR/d6.out")"
	tenant "$M" dial "open-1@$A" >"$DIR/d7.out"
	grep -q "dial ok" "$DIR/d7.out" || fail "mallory's dial of alice's open-1 (PCM_TP_LISTEN_ANY_USER): $(cat "$DIR/d7.out")"
	wait "$OP" || true
	grep -q "serve_peer uid $(uid "$M")" "$DIR/open.out" || fail "open-1's peer: $(cat "$DIR/open.out")"
	tenant "$M" serve "x@$A" 0 1 >"$DIR/at.out"
	grep -q "listen refused -22" "$DIR/at.out" || fail "listening on a name with '@': $(cat "$DIR/at.out")"
	pass "PCM_TP_LISTEN_ANY_USER opens alice's open-1 to any user as open-1@alice"
	healthy "names"
}

# ---- 6. visibility: one's own flows, clients and stats; an admin sees all ----
check_visibility() {
	tenant_bg "$A" pair peek-1 30 65536 2 >"$DIR/peek.out" 2>&1 &
	PK=$!
	BG="$BG $PK"
	wait_for "$DIR/peek.out" "ready"
	FM_=$(json pctl "$M" --json flows)
	[ "$FM_" = "[]" ] || fail "mallory sees flows: $FM_"
	SM=$(json pctl "$M" --json status)
	[ "$(field "$SM" flows)" = 0 ] && [ "$(field "$SM" clients)" -le 1 ] || fail "mallory's status counts others: $SM"
	ST=$(json pctl "$M" --json stats)
	[ "$(field "$ST" tx_bytes)" = 0 ] && [ "$(field "$ST" flows)" = 0 ] || fail "mallory's stats count others: $ST"
	FA=$(json pctl "$A" --json flows)
	printf '%s' "$FA" | python3 -c "import json,sys; f=json.load(sys.stdin); assert len(f)==2 and all(x['uid']==$(uid "$A") and x['peer_uid']==$(uid "$A") for x in f), f" ||
		fail "alice's own flows: $FA"
	[ "$(field "$(json pctl "$A" --json status)" flows)" = 2 ] || fail "alice's status"
	FR=$(json "$DIR/pcmctl" --socket "$SOCK" --json flows)
	printf '%s' "$FR" | python3 -c "import json,sys; f=json.load(sys.stdin); assert sum(x['uid']==$(uid "$A") for x in f)==2, f" ||
		fail "root's flows: $FR"
	"$DIR/pcmctl" --socket "$SOCK" flows | grep -q " $(uid "$A"):$(id -g "$A")/[0-9]" ||
		fail "pcmctl flows shows no PEER-UID:GID/PID: $("$DIR/pcmctl" --socket "$SOCK" flows)"
	! pctl "$M" top --iterations 1 --interval 100 | grep -q peek-1 || fail "mallory's top shows alice's flows"
	pctl "$A" top --iterations 1 --interval 100 | grep -q peek-1 || fail "alice's top lacks her flows"
	"$DIR/pcmctl" --socket "$SOCK" top --iterations 1 --interval 100 | grep -q peek-1 || fail "root's top lacks alice's flows"
	kill "$PK"
	wait "$PK" 2>/dev/null || true
	pass "mallory sees none of alice's flows, clients or bytes (status, flows, stats, top); alice sees her own 2; root sees all"
}

# median X...: the median of the numbers
median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
# pin_pcmd: with 2 CPUs or more, pcmd's threads on CPU 0 and $PIN set to put a user's
# command on CPU 1; else $PIN empty. unpin_pcmd: pcmd back on every CPU.
pin_pcmd() {
	PIN=''
	if [ "$(nproc)" -ge 2 ] && taskset -a -p -c 0 "$PCMD_PID" >/dev/null 2>&1; then
		PIN='taskset -c 1'
	fi
}
unpin_pcmd() {
	[ -z "$PIN" ] || taskset -a -p -c "0-$(($(nproc) - 1))" "$PCMD_PID" >/dev/null
}
# beside_floods TAG ROUND ALONE: alice's pair (4 messages of 256 KiB in flight) beside each of
# mallory's floods in turn: 64-byte messages, 512 in flight (pcmd's per-descriptor work), and
# 1 MiB messages, 64 in flight (its bytes). Appends alice's goodput over ALONE to $TINY and
# $HOG and prints a line per flood, starting with TAG.
beside_floods() {
	for kind in tiny hog; do
		if [ $kind = tiny ]; then FL_MSG=64 FL_DEPTH=512; else FL_MSG=1048576 FL_DEPTH=64; fi
		tenant_bg "$M" pair $1-flood-$kind$2 5 $FL_MSG $FL_DEPTH >"$DIR/flood.out" 2>&1 &
		FL=$!
		BG="$BG $FL"
		wait_for "$DIR/flood.out" "ready"
		WITH=$(tenant "$A" pair $1-$kind$2 3 262144 4 | awk '/goodput_bps/ {print $2}')
		wait "$FL" || fail "mallory's $kind flood: $(cat "$DIR/flood.out")"
		R=$(python3 -c "print('%.3f' % ($WITH / $3))")
		echo "$1 round $2: alice alone $3 bit/s, with mallory's $kind flood $WITH bit/s (ratio $R); mallory $(awk '/goodput_bps/ {print $2}' "$DIR/flood.out") bit/s"
		if [ $kind = tiny ]; then TINY="$TINY $R"; else HOG="$HOG $R"; fi
	done
}

# ---- 7. fairness: a flooding neighbour leaves alice at least 0.8 of her fair share ----
check_fairness() {
	# Alone, alice's pair (4 messages of 256 KiB in flight) gets G; with mallory's pair flooding
	# next to it they share pcmd's data plane, so alice's fair share is G / 2 and she must keep
	# 0.4 G. Two floods: 64-byte messages, 512 in flight (pcmd's per-descriptor work), and
	# 1 MiB messages, 64 in flight (its bytes). pcmd and both users run at a real-time
	# priority, so that what is measured is pcmd's sharing, not the machine's other load
	# (without it, on a 2-CPU machine at a load of 15, either pair's share is the scheduler's).
	# With 2 CPUs or more, pcmd runs on CPU 0 and both users on CPU 1: unpinned, pcmd's
	# real-time threads could land on the CPU of one user's pair and starve it, and a round
	# then measured where the kernel put them (alice kept either about all of her goodput or
	# 0.39-0.47 next to the 1 MiB flood, and 1 run in 4 failed on a quiet 2-CPU machine).
	pin_pcmd
	[ -n "$PIN" ] || echo "note: fewer than 2 CPUs or no taskset: pcmd and the users share the CPUs" >&2
	if chrt -a -f -p 20 "$PCMD_PID" >/dev/null 2>&1; then
		RT="$PIN chrt -f 10"
	else
		RT=$PIN
		echo "note: no real-time priority here (chrt): fairness measured at normal priority" >&2
	fi
	round=0
	TINY='' HOG=''
	while [ $round -lt "$FAIR_ROUNDS" ]; do
		ALONE=$(tenant "$A" pair fair-a$round 3 262144 4 | awk '/goodput_bps/ {print $2}')
		beside_floods fairness $round "$ALONE"
		round=$((round + 1))
	done
	RT=''
	chrt -a -o -p 0 "$PCMD_PID" >/dev/null 2>&1 || true
	unpin_pcmd
	for kind in tiny hog; do
		if [ $kind = tiny ]; then LIST=$TINY; else LIST=$HOG; fi
		# shellcheck disable=SC2086
		MED=$(median $LIST)
		case $SANITIZE in
		*address* | *thread*)
			# Instrumented, pcmd and the users' pairs run several times slower, unevenly
			# (one CI-like run: 0.235, 0.357, 1.259): the share is shown, not bounded.
			pass "next to mallory's $kind flood alice keeps $MED of her goodput alone (median of$LIST; sanitized: not bounded)"
			continue
			;;
		esac
		python3 -c "import sys; sys.exit(0 if $MED >= 0.4 else 1)" ||
			fail "alice kept $MED of her goodput next to mallory's $kind flood (median of$LIST); 0.8 of her fair share (0.5) is 0.4"
		pass "next to mallory's $kind flood alice keeps $MED of her goodput alone (median of$LIST; >= 0.4 = 0.8 x her fair share)"
	done
}

# ---- 7b. a saturated data plane: pcmd held to a slice of one CPU, shared fairly ----
# cpu_cap PID QUOTA_US PERIOD_US: put process PID (all its threads) in a cgroup of its own
# whose CPU time is capped at QUOTA_US per PERIOD_US (cgroup v2's cpu.max, else v1's cpu
# controller); prints the cgroup's directory, or nothing when neither can be used.
cpu_cap() {
	for root in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
		cg=$root/pcm-tenancy-$S
		if [ -f "$root/cgroup.controllers" ] && grep -qw cpu "$root/cgroup.controllers"; then
			grep -qw cpu "$root/cgroup.subtree_control" ||
				echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null || continue
			mkdir -p "$cg" && echo "$2 $3" >"$cg/cpu.max" || continue
		elif [ -f "$root/cpu.cfs_quota_us" ]; then
			mkdir -p "$cg" && echo "$3" >"$cg/cpu.cfs_period_us" &&
				echo "$2" >"$cg/cpu.cfs_quota_us" || continue
		else
			continue
		fi
		echo "$1" >"$cg/cgroup.procs" 2>/dev/null && { echo "$cg"; return 0; }
		rmdir "$cg" 2>/dev/null || true
	done
	return 0 # nothing printed: no controller that can be used
}
# cpu_uncap CGROUP PID: PID back to its parent cgroup, CGROUP removed
cpu_uncap() {
	echo "$2" >"$(dirname "$1")/cgroup.procs"
	rmdir "$1"
}
check_saturated() {
	# The fairness check above shows that a flood does not take its neighbour's goodput
	# while pcmd has CPU to spare. Here pcmd gets a slice of one CPU (SAT_QUOTA_US of every
	# SAT_PERIOD_US, a cgroup's CPU cap), well below what one pair alone uses, so that pcmd is
	# the bottleneck: alice's pair alone must get at most 0.7 of what it gets uncapped, or
	# the check proves nothing and fails. Then alice's and mallory's identical pairs, started
	# together, must each get 0.4-0.6 of their sum (median of the rounds): a saturated data
	# plane is split evenly between equal tenants. Next to mallory's two floods alice's
	# goodput is shown, not bounded: on softnic the fabric thread gives every host its links'
	# rate in virtual time, and a flood that costs much CPU per virtual second (many tiny
	# messages, a deep window) slows that time for all (pcmd(8) gives the figures). pcmd runs
	# on CPU 0 and the users on CPU 1 (with 2 CPUs), all at normal priority: a cgroup's CPU
	# cap does not apply to real-time threads.
	SAT_QUOTA_US=1000 SAT_PERIOD_US=20000
	pin_pcmd
	RT=$PIN
	FREE=$(tenant "$A" pair sat-free 3 262144 4 | awk '/goodput_bps/ {print $2}')
	CG=$(cpu_cap "$PCMD_PID" $SAT_QUOTA_US $SAT_PERIOD_US)
	if [ -z "$CG" ]; then
		RT=''
		unpin_pcmd
		echo "note: no cgroup CPU controller can be used here: the saturated data plane is not checked" >&2
		return 0
	fi
	echo "saturated: pcmd capped at $SAT_QUOTA_US us of every $SAT_PERIOD_US us ($CG)"
	round=0 CAPPED='' SHARES='' TINY='' HOG=''
	while [ $round -lt "$FAIR_ROUNDS" ]; do
		ALONE=$(tenant "$A" pair sat-a$round 3 262144 4 | awk '/goodput_bps/ {print $2}')
		CAPPED="$CAPPED $(python3 -c "print('%.3f' % ($ALONE / $FREE))")"
		tenant_bg "$M" pair sat-m$round 4 262144 4 >"$DIR/sat-m.out" 2>&1 &
		SM=$!
		BG="$BG $SM"
		WA=$(tenant "$A" pair sat-eq$round 4 262144 4 | awk '/goodput_bps/ {print $2}')
		wait "$SM" || fail "mallory's pair beside alice's: $(cat "$DIR/sat-m.out")"
		WM=$(awk '/goodput_bps/ {print $2}' "$DIR/sat-m.out")
		SHARE=$(python3 -c "print('%.3f' % ($WA / ($WA + $WM)))")
		SHARES="$SHARES $SHARE"
		echo "saturated round $round: alice alone $ALONE bit/s ($(echo "$CAPPED" | awk '{print $NF}') of uncapped $FREE); beside mallory's equal pair alice $WA, mallory $WM (alice's share $SHARE)"
		beside_floods saturated $round "$ALONE"
		round=$((round + 1))
	done
	RT=''
	cpu_uncap "$CG" "$PCMD_PID"
	unpin_pcmd
	# shellcheck disable=SC2086
	CAP_MED=$(median $CAPPED)
	python3 -c "import sys; sys.exit(0 if $CAP_MED <= 0.7 else 1)" ||
		fail "saturated: capped, alice's pair still got $CAP_MED of its uncapped goodput (of$CAPPED): pcmd was not the bottleneck"
	# shellcheck disable=SC2086
	SH_MED=$(median $SHARES)
	python3 -c "import sys; sys.exit(0 if 0.4 <= $SH_MED <= 0.6 else 1)" ||
		fail "saturated pcmd: alice's share beside mallory's equal pair is $SH_MED (median of$SHARES), outside 0.4-0.6"
	# shellcheck disable=SC2086
	pass "saturated pcmd (alice alone at $CAP_MED of uncapped): equal tenants split it $SH_MED / $(python3 -c "print('%.3f' % (1 - $SH_MED))") (median of$SHARES); beside the floods alice keeps $(median $TINY) (tiny) and $(median $HOG) (1 MiB) of alone, not bounded"
	healthy "saturated"
}

# ---- 8. seeded hostile clients: garbage, descriptors, hello-less holds, squatting, rings ----
# chaos_round FIRST COUNT: actions FIRST.. of seed $SEED as mallory (allowed) and oscar
# (refused), while alice's pair moves checked bytes on chaos-victim; prints why it failed and
# returns 1 if pcmd died, leaked a descriptor or a client, or alice's work did not complete.
chaos_round() {
	# alice's transfer spans mallory's actions (about 15 a second)
	tenant_bg "$A" pair chaos-victim $((4 + $2 / 20)) 65536 4 >"$DIR/chaos-v.out" 2>&1 &
	CV=$!
	BG="$BG $CV"
	tenant_bg "$O" chaos $((SEED + 1)) "$1" $((($2 + 3) / 4)) "$(uid "$A")" >"$DIR/chaos-o.out" 2>&1 &
	CO=$!
	BG="$BG $CO"
	tenant "$M" chaos "$SEED" "$1" "$2" "$(uid "$A")" >"$DIR/chaos-m.out" 2>&1 ||
		{ echo "mallory's chaos client failed: $(cat "$DIR/chaos-m.out")"; return 1; }
	wait "$CO" || { echo "oscar's chaos client failed: $(cat "$DIR/chaos-o.out")"; return 1; }
	wait "$CV" && grep -q goodput_bps "$DIR/chaos-v.out" ||
		{ echo "alice's work did not complete: $(cat "$DIR/chaos-v.out")"; return 1; }
	kill -0 "$PCMD_PID" 2>/dev/null || { echo "pcmd died"; return 1; }
	"$DIR/pcmctl" --socket "$SOCK" status >/dev/null || { echo "root's pcmctl failed"; return 1; }
	ci_n=0
	until [ "$(clients_now)" -le 1 ]; do
		ci_n=$((ci_n + 1))
		[ $ci_n -lt 200 ] || { echo "pcmd still holds $(clients_now) clients"; return 1; }
		sleep 0.05
	done
	n=$(settled_fds)
	[ "$n" = "$FD0" ] || { echo "pcmd holds $n fds, $FD0 before"; return 1; }
}
# chaos_shrink FIRST COUNT: halves of a failing range, each on a fresh pcmd, down to the
# smallest range that still fails alone; prints its one-line reproduction
chaos_shrink() {
	f=$1 c=$2
	while [ "$c" -gt 1 ]; do
		h=$((c / 2)) found=''
		for try in "$f $h" "$((f + h)) $((c - h))"; do
			kill "$PCMD_PID" 2>/dev/null || true
			wait "$PCMD_PID" 2>/dev/null || true
			start_pcmd
			FD0=$(settled_fds)
			# shellcheck disable=SC2086
			if ! chaos_round $try >/dev/null; then
				set -- $try
				f=$1 c=$2 found=1
				break
			fi
		done
		[ -n "$found" ] || break # it takes both halves together
	done
	echo "smallest failing range: PCM_TENANCY_SEED=$SEED PCM_TENANCY_CHAOS_FIRST=$f PCM_TENANCY_CHAOS=$c PCM_TENANCY_CHECKS=chaos meson test -C build test_tenancy"
}
check_chaos() {
	FIRST=${PCM_TENANCY_CHAOS_FIRST:-0}
	echo "chaos: seed $SEED, actions $FIRST..$((FIRST + CHAOS - 1)); reproduce: PCM_TENANCY_SEED=$SEED PCM_TENANCY_CHAOS_FIRST=$FIRST PCM_TENANCY_CHAOS=$CHAOS PCM_TENANCY_CHECKS=chaos meson test -C build test_tenancy"
	if ! WHY=$(chaos_round "$FIRST" "$CHAOS"); then
		echo "chaos seed $SEED failed: $WHY; shrinking" >&2
		chaos_shrink "$FIRST" "$CHAOS" >&2
		fail "chaos seed $SEED: $WHY"
	fi
	pass "chaos: mallory $(sed 's/^chaos //' "$DIR/chaos-m.out"); oscar (refused) $(sed 's/^chaos //' "$DIR/chaos-o.out"); alice's $(awk '/^messages/ {print $2}' "$DIR/chaos-v.out") messages of 64 KiB arrived intact, pcmd kept $FD0 fds"
	healthy "chaos"
}

# ---- 9. pcmd is healthy and holds nothing of the attacks ----
check_health() {
	healthy "the end"
	FD2=$(settled_fds)
	[ "$FD2" = "$FD0" ] || fail "pcmd holds $FD2 fds at the end, $FD0 at the start"
	stop_pcmd
	pass "pcmd healthy to the end: $FD0 fds at start and end, clean exit"
}
# PCM_TENANCY_CHECKS: the checks to run, in this order (default: all of them).
for c in ${PCM_TENANCY_CHECKS:-descriptors lockout regions limits memory names visibility fairness saturated chaos health}; do
	"check_$c"
done
