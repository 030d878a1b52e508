#!/bin/sh
# SPDX-License-Identifier: MIT
# test_mpi_pcm.sh PCMD PCMCTL PROVDIR MPI_CHECK - Open MPI 4.1 over the pcm
# provider (`--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include pcm`,
# ofi_rxm's tagged messages on pcm), 4 ranks through pcmd's softnic fabric,
# each its own host: mpi_check (an ordinary MPI program) moves 1 B .. 4 MiB
# between every pair and to itself, tagged Isend/Irecv windows matched out of
# tag order, Allreduce, Alltoall and Bcast, every byte and value checked.
# Open MPI runs with only the self BTL, so no shared memory or TCP path
# exists beside the MTL; pcmd's counters must show at least the bytes the
# ranks sent each other, and pcmd must reclaim every client and flow after.
set -eu
PCMD=$1 PCMCTL=$2 PROVDIR=${3:-} MPI_PROGRAM=${4:-}
# shellcheck source-path=SCRIPTDIR source=fi_lib.sh
. "$(dirname "$0")/fi_lib.sh"

start_fabric_pcmd 16 # 4 ranks, and a loopback host each for their messages to themselves
before=$(pcmd_sent)
rc=0
mpi_on pcm "$DIR/mpi.out" 4 "$MPI_PROGRAM" --seed 24 || rc=$?
[ $rc -eq 0 ] || { cat "$DIR/mpi.out" >&2; fail "mpirun over pcm exited with $rc"; }
after=$(pcmd_sent)
"$PY" - "$DIR/mpi.out" "$before" "$after" <<'PYEOF' || { cat "$DIR/mpi.out" >&2; fail "mpi_check over pcm"; }
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"test":"mpi_check"')]
assert len(lines) == 1, "want rank 0's one JSON line, got %r" % lines
j = lines[0]
assert j["ranks"] == 4 and j["errors"] == 0 and j["checks"] > 1000000, j
moved = int(sys.argv[3]) - int(sys.argv[2])
assert moved >= j["bytes_sent"] > 0, "pcmd sent %d bytes, the ranks %d" % (moved, j["bytes_sent"])
print("mpi_check over pcm: 4 ranks, %d checks, %d bytes checked, 0 errors in %.2f s "
      "(p2p %.2f s, window %.2f s, collectives %.2f s); pcmd sent %d bytes >= the ranks' %d"
      % (j["checks"], j["bytes_checked"], j["seconds"], j["p2p_s"], j["window_s"],
         j["collectives_s"], moved, j["bytes_sent"]))
PYEOF
wait_reclaimed
echo "pcmd reclaimed every client and flow"
