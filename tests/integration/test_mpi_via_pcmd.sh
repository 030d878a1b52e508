#!/bin/sh
# SPDX-License-Identifier: MIT
# test_mpi_via_pcmd.sh PCMD PCMCTL EXAMPLE - Open MPI ranks talking through pcmd:
# pcmd on its embedded softnic fabric (6 hosts), `mpirun -np 4` of
# example_mpi_exchange on a ring and then all-pairs (with the same streams
# over MPI_Isend/Irecv as the baseline); every rank is its own
# emulated host, every byte arrives (rank 0's JSON), `pcmctl flows --json`
# shows the ranks' flows while they are open (each accepted flow's peer is
# its dialer's host), the flow records add up to the bytes moved, pcmd
# reclaims everything, bad flags and hosts get clear errors, and pcmd
# stops cleanly. Exit 77 without MPI.
set -eu
PCMD=$1 PCMCTL=$2 EXAMPLE=${3:-}
# shellcheck source-path=SCRIPTDIR source=mpi_lib.sh
. "$(dirname "$0")/mpi_lib.sh"

start_mpi_pcmd 6

# The ring, held open after the exchange so that pcmctl sees its flows.
mpi_exchange 4 "$DIR/ring.out" --messages 48 --seed 11 --linger-ms 3000 &
MPI_PID=$!
i=0
until grep -q '"expected_bytes"' "$DIR/ring.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 1200 ] || fail "no JSON line from the ring: $(cat "$DIR/ring.out")"
	kill -0 $MPI_PID 2>/dev/null || break
	sleep 0.05
done
"$PCMCTL" --json flows >"$DIR/flows.json" || fail "pcmctl flows --json"
rc=0
wait $MPI_PID || rc=$?
[ $rc -eq 0 ] || { cat "$DIR/ring.out" >&2; fail "mpirun (ring) exited with $rc"; }
check_totals "$DIR/ring.out" 4 4 || { cat "$DIR/ring.out" >&2; fail "ring totals"; }
"$PY" - "$DIR/flows.json" <<'PYEOF' || fail "pcmctl flows --json during the ring: $(cat "$DIR/flows.json")"
import json, re, sys
flows = json.load(open(sys.argv[1]))
assert len(flows) == 8, "want 8 flows (4 connections, 2 ends each), got %d" % len(flows)
assert all(f["state"] == "established" for f in flows), flows
pids = {f["pid"] for f in flows}
assert len(pids) == 4, "want 4 rank processes, got pids %r" % pids
rank_of = {}  # the dialer's pid -> its rank, from the address it dialed (rank + 1)
for f in flows:
    m = re.fullmatch(r"mpi-exchange\.(\d+)\.rank(\d+)", f["peer"])
    if m:
        assert f["pid"] not in rank_of, "one dial per rank on a ring: %r" % f
        rank_of[f["pid"]] = (int(m.group(2)) - 1) % 4
        assert f["tx_bytes"] > 0, f
assert sorted(rank_of.values()) == [0, 1, 2, 3], rank_of
for f in flows:
    if not f["peer"].startswith("mpi-exchange."):
        # accepted from the ring's previous rank, which is attached as its own host
        assert f["peer"] == "host%d" % ((rank_of[f["pid"]] - 1) % 4), f
        assert f["rx_bytes"] > 0, f
print("pcmctl flows: 8 flows of 4 ranks, each rank its own emulated host (host0..host3)")
PYEOF
wait_reclaimed

# Every rank to every other one, then the same streams over MPI itself (the baseline).
rc=0
mpi_exchange 4 "$DIR/all.out" --messages 24 --seed 12 --all --baseline || rc=$?
[ $rc -eq 0 ] || { cat "$DIR/all.out" >&2; fail "mpirun (all pairs) exited with $rc"; }
check_totals "$DIR/all.out" 4 12 || { cat "$DIR/all.out" >&2; fail "all-pairs totals"; }
wait_reclaimed

# Bad input gets a clear error and costs pcmd nothing: a flag out of range, and
# ranks beyond the fabric's hosts (host6 on a 6-host fabric).
mpi_exchange 2 "$DIR/bad-flag.out" --messages 0 && fail "--messages 0 was accepted"
grep -q -- "--messages 0: must be 1 .. 1048576" "$DIR/bad-flag.out" ||
	{ cat "$DIR/bad-flag.out" >&2; fail "no clear error for --messages 0"; }
mpi_exchange 4 "$DIR/bad-host.out" --host-base 3 && fail "a rank attached as host6 of 6 hosts"
grep -q "endpoint_open (as host6): .*'host6' is no host of the emulated fabric" "$DIR/bad-host.out" ||
	{ cat "$DIR/bad-host.out" >&2; fail "no clear error for a host beyond the fabric"; }
wait_reclaimed
echo "bad input: --messages 0 and host6 of 6 refused with their reasons; pcmd reclaimed the rest"

stop_pcmd() {
	kill -TERM "$PCMD_PID"
	wait "$PCMD_PID" || fail "pcmd exited with $?"
	PCMD_PID=
}
stop_pcmd
# The records of both jobs: each accepted flow received its stream (8-byte hello included).
"$PY" - "$DIR/records.csv" "$DIR/ring.out" "$DIR/all.out" <<'PYEOF' || fail "flow records"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
jobs = [json.loads(next(l for l in open(p) if '"expected_bytes"' in l)) for p in sys.argv[2:]]
accepted = [r for r in rows if r["peer"].startswith("host")]
dialed = [r for r in rows if r["peer"].startswith("mpi-exchange.")]
conns = sum(j["connections"] for j in jobs)
assert len(accepted) == len(dialed) == conns, (len(accepted), len(dialed), conns)
want = sum(j["bytes"] for j in jobs) + 8 * conns
got = sum(int(r["rx_bytes"]) for r in accepted)
sent = sum(int(r["tx_bytes"]) for r in dialed)
assert got == sent == want, (got, sent, want)
print("records: %d flows, %d bytes received = sent = the jobs' bytes + hellos" % (len(rows), got))
PYEOF
echo "pcmd stopped cleanly"
