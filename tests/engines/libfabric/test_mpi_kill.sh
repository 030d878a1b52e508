#!/bin/sh
# SPDX-License-Identifier: MIT
# test_mpi_kill.sh PCMD PCMCTL PROVDIR MPI_CHECK MODE SEEDS - seeded Open MPI
# jobs over the pcm provider (4 ranks through pcmd) in which one rank kills
# itself (SIGKILL) mid-job: seed S picks the rank (S mod 4) and the round of
# the ring exchange it dies in (3 + 7S mod 15).
#
# MODE abort: Open MPI as it comes. mpirun must end the job with an error
# (not hang: within 120 s) naming the killed rank, and pcmd must reclaim
# every client and flow of the job.
#
# MODE recover: Open MPI told to let the survivors run on (orte recovery,
# no abort on a non-zero status), so that what they see comes from the
# transport: every other rank sends 8 KiB messages (eager: an MPI send
# completes with pcm's send) to the one that dies, and each must get an error
# from MPI (they run MPI_ERRORS_RETURN) within 15 s of its last progress, not
# wait forever. Each survivor's line says what it got; a "hang" names the
# call and the peer it waited for. On one pcmd the errors come from pcmd
# reclaiming the dead client: its connections are aborted and their peers'
# sends complete with -ECONNRESET. (A receive posted for the dead rank alone
# would wait forever: ofi_rxm fails no posted receive when a connection goes,
# and Open MPI 4.1's mtl ofi has no fault tolerance; docs/pcm-fi.7.md.)
set -eu
PCMD=$1 PCMCTL=$2 PROVDIR=${3:-} MPI_PROGRAM=${4:-} MODE=${5:-abort} SEEDS=${6:-3}
# shellcheck source-path=SCRIPTDIR source=fi_lib.sh
. "$(dirname "$0")/fi_lib.sh"

start_fabric_pcmd 16
failures=0
seed=1
while [ $seed -le "$SEEDS" ]; do
	rank=$((seed % 4)) after=$((3 + (7 * seed) % 15))
	out="$DIR/kill-$seed.out"
	start=$(date +%s)
	rc=0
	if [ "$MODE" = abort ]; then
		mpi_on pcm "$out" 4 "$MPI_PROGRAM" --die-rank $rank --die-after $after --wait-ms 60000 ||
			rc=$?
	else
		mpi_on pcm "$out" 4 --mca orte_enable_recovery 1 --mca orte_max_restarts 0 \
			--mca orte_abort_on_non_zero_status 0 \
			"$MPI_PROGRAM" --fan-in --die-rank $rank --die-after $after --wait-ms 15000 || rc=$?
	fi
	took=$(($(date +%s) - start))
	[ $rc -ne 124 ] || { cat "$out" >&2; fail "seed $seed: mpirun hung (killed after 300 s)"; }
	if [ "$MODE" = abort ]; then
		[ $rc -ne 0 ] || { cat "$out" >&2; fail "seed $seed: rank $rank died, mpirun exited 0"; }
		grep -q "process rank $rank .* exited on signal 9" "$out" ||
			{ cat "$out" >&2; fail "seed $seed: mpirun did not name rank $rank's death"; }
		[ "$took" -le 120 ] || fail "seed $seed: the job took $took s to end"
		echo "seed $seed: rank $rank killed after $after rounds: mpirun ended the job (status $rc) in $took s"
	else
		"$PY" - "$out" "$rank" "$seed" <<'PYEOF' || failures=$((failures + 1))
import json, sys
out, dead, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [json.loads(l) for l in open(out) if l.startswith('{"test":"mpi_check","rank"')]
got = {j["rank"]: j for j in lines}
ok = True
for r in sorted(set(range(4)) - {dead}):
    j = got.get(r, {})
    err = j.get("mpi_error", "none")
    print("seed %s: rank %d: %s" % (seed, r, err if err != "none" else
                                   "HANG: " + j.get("hang", "no line")))
    ok = ok and err != "none"
sys.exit(0 if ok else 1)
PYEOF
	fi
	wait_reclaimed
	seed=$((seed + 1))
done
[ $failures -eq 0 ] || fail "$failures of $SEEDS seeds: a survivor got no error from MPI"
echo "pcmd reclaimed every client and flow after each job"
