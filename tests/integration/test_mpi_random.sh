#!/bin/sh
# SPDX-License-Identifier: MIT
# test_mpi_random.sh PCMD PCMCTL EXAMPLE SEEDS [FIRST] - seeded randomized MPI
# jobs through one pcmd on a 6-host softnic fabric. Each seed picks the rank
# count (2-4), their first host, ring or all pairs, message count and largest
# size, and in about a third of the seeds one rank that SIGKILLs itself
# mid-transfer. Invariants: a whole job delivers every byte the seed decides,
# exactly once (rank 0's JSON, checked per message by the receivers); a job
# with a dead rank ends within its deadline with every survivor reporting an
# error (never a hang, never a total); either way pcmd then holds no flow and
# no client of the job, logs the dead rank's reclaim, and serves the next seed.
# A failing seed is shrunk (fewer messages, then fewer ranks) and printed as
# a one-line reproduction. Exit 77 without MPI.
set -eu
PCMD=$1 PCMCTL=$2 EXAMPLE=${3:-} SEEDS=${4:-8} FIRST=${5:-1}
# shellcheck source-path=SCRIPTDIR source=mpi_lib.sh
. "$(dirname "$0")/mpi_lib.sh"

# pick SEED: "ranks host_base messages max_size all victim die_after" (victim -1: none).
pick() {
	"$PY" - "$1" <<'PYEOF'
import random, sys
r = random.Random(int(sys.argv[1]))
ranks = r.randint(2, 4)
host_base = r.randint(0, 6 - ranks)
messages = r.choice([1, 3, 8, 24, 64])
max_size = r.choice([1, 4096, 65537, 262144, 1048576])
all_pairs = int(r.random() < 0.4)
victim = r.randrange(ranks) if r.random() < 0.34 else -1
die_after = r.randint(1, messages)
print(ranks, host_base, messages, max_size, all_pairs, victim, die_after)
PYEOF
}

# run_job SEED RANKS HOST_BASE MESSAGES MAX_SIZE ALL VICTIM DIE_AFTER: one job
# and its invariants. Return: 0, or 1 with the reason in $DIR/why.
run_job() {
	seed=$1 np=$2 base=$3 msgs=$4 max=$5 all=$6 victim=$7 die=$8
	args="--seed $seed --host-base $base --messages $msgs --max-size $max"
	[ "$all" -eq 0 ] || args="$args --all"
	conns=$np
	[ "$all" -eq 0 ] || conns=$((np * (np - 1)))
	out=$DIR/job.out
	if [ "$victim" -lt 0 ]; then
		CMD="mpirun --allow-run-as-root --oversubscribe -np $np $EXAMPLE $args"
		# shellcheck disable=SC2086
		rc=0
		mpi_exchange "$np" "$out" $args || rc=$?
		[ $rc -eq 0 ] || { echo "mpirun exited with $rc" >"$DIR/why"; return 1; }
		check_totals "$out" "$np" "$conns" >"$DIR/why" 2>&1 || return 1
	else
		args="$args --die-rank $victim --die-after $die --wait-ms 4000"
		CMD="mpirun --allow-run-as-root --oversubscribe --mca orte_enable_recovery 1 --mca orte_max_restarts 0 --mca orte_abort_on_non_zero_status 0 -np $np $EXAMPLE $args"
		# shellcheck disable=SC2086
		rc=0
		mpi_exchange "$np" "$out" --kill $args || rc=$?
		[ "$rc" -ne 124 ] || { echo "the job hung (killed after 120 s)" >"$DIR/why"; return 1; }
		"$PY" - "$out" "$np" "$victim" >"$DIR/why" 2>&1 <<'PYEOF' || return 1
import json, re, sys
text = open(sys.argv[1]).read()
ranks, victim = int(sys.argv[2]), int(sys.argv[3])
assert re.search(r"rank %d \(pid \d+\): killing itself" % victim, text), "the victim did not die"
lines = [json.loads(l) for l in text.splitlines() if l.startswith('{"example":"mpi_exchange"')]
assert all("rank" in j for j in lines), "a total despite a dead rank: %r" % lines
seen = sorted(j["rank"] for j in lines)
want = [r for r in range(ranks) if r != victim]
assert seen == want, "survivors reporting an error: %r, want %r" % (seen, want)
assert all(j["errors"] > 0 and j["error"] for j in lines), lines
PYEOF
		pid=$(sed -n "s/.*rank $victim (pid \([0-9]*\)): killing itself.*/\1/p" "$out")
		i=0
		until grep -q "(pid $pid, uid [0-9]*) closed its control socket: reclaiming" "$DIR/pcmd.log"; do
			i=$((i + 1))
			[ $i -lt 200 ] || { echo "pcmd did not reclaim the dead rank (pid $pid)" >"$DIR/why"; return 1; }
			sleep 0.05
		done
	fi
	kill -0 "$PCMD_PID" 2>/dev/null || { echo "pcmd died" >"$DIR/why"; return 1; }
	wait_reclaimed
}

# shrink SEED PARAMS...: halve the messages, then drop ranks, while the job still fails.
shrink() {
	seed=$1
	shift
	set -- "$@"
	np=$1 base=$2 msgs=$3 max=$4 all=$5 victim=$6 die=$7
	while [ "$msgs" -gt 1 ]; do
		m=$((msgs / 2)) d=$die
		[ "$d" -le "$m" ] || d=$m
		run_job "$seed" "$np" "$base" "$m" "$max" "$all" "$victim" "$d" && break
		msgs=$m die=$d
	done
	while [ "$np" -gt 2 ] && [ "$victim" -lt $((np - 1)) ]; do
		run_job "$seed" $((np - 1)) "$base" "$msgs" "$max" "$all" "$victim" "$die" && break
		np=$((np - 1))
	done
	run_job "$seed" "$np" "$base" "$msgs" "$max" "$all" "$victim" "$die" || true
	echo "shrunk (against a pcmd on 6 softnic hosts, PCMD_SOCKET set): $CMD" >&2
}

start_mpi_pcmd 6
whole=0 killed=0
s=$FIRST
while [ "$s" -lt $((FIRST + SEEDS)) ]; do
	# shellcheck disable=SC2046
	set -- $(pick "$s")
	if ! run_job "$s" "$@"; then
		echo "FAIL: seed $s ($CMD): $(cat "$DIR/why")" >&2
		cat "$DIR/job.out" >&2
		echo "reproduce: $0 $PCMD $PCMCTL $EXAMPLE 1 $s" >&2
		shrink "$s" "$@"
		fail "seed $s"
	fi
	if [ "$6" -lt 0 ]; then whole=$((whole + 1)); else killed=$((killed + 1)); fi
	s=$((s + 1))
done
kill -TERM "$PCMD_PID"
wait "$PCMD_PID" || fail "pcmd exited with $?"
PCMD_PID=
echo "$SEEDS seeds from $FIRST: $whole whole jobs byte-exact, $killed with a rank killed (survivors saw errors, pcmd reclaimed); pcmd stopped cleanly"
