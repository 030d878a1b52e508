#!/bin/sh
# SPDX-License-Identifier: MIT
# test_mpi4py.sh PCMD PCMCTL PROVDIR MPI_CHECK - mpi4py (Debian's
# python3-mpi4py, run by /usr/bin/python3 by name: another python3 may come
# first on PATH) on Open MPI over the pcm provider, 4 ranks through pcmd:
# `python3 -m mpi4py.bench ringtest` and mpi4py_check.py (collectives and
# point-to-point from Python, each result checked), pcmd's counters moving.
set -eu
PCMD=$1 PCMCTL=$2 PROVDIR=${3:-} MPI_PROGRAM=${4:-}
# shellcheck source-path=SCRIPTDIR source=fi_lib.sh
. "$(dirname "$0")/fi_lib.sh"
PY3=/usr/bin/python3
if ! "$PY3" -c 'import mpi4py' 2>/dev/null; then
	echo "skipped: no mpi4py for $PY3 (Debian: apt-get install python3-mpi4py)"
	exit 77
fi

start_fabric_pcmd 16
before=$(pcmd_sent)
rc=0
mpi_on pcm "$DIR/ring.out" 4 "$PY3" -m mpi4py.bench ringtest -n 1048576 -l 10 || rc=$?
[ $rc -eq 0 ] || { cat "$DIR/ring.out" >&2; fail "mpi4py.bench ringtest exited with $rc"; }
grep -q "time for 10 loops = .* seconds (4 processes, 1048576 bytes)" "$DIR/ring.out" ||
	{ cat "$DIR/ring.out" >&2; fail "no ringtest result"; }
moved=$(($(pcmd_sent) - before))
# 10 loops (and a warm-up) of 1 MiB around a ring of 4
[ "$moved" -ge $((10 * 4 * 1048576)) ] || fail "pcmd sent $moved bytes for the ring"
echo "mpi4py.bench ringtest: $(grep 'time for' "$DIR/ring.out"); pcmd sent $moved bytes"

rc=0
mpi_on pcm "$DIR/check.out" 4 "$PY3" "$(dirname "$0")/mpi4py_check.py" || rc=$?
[ $rc -eq 0 ] || { cat "$DIR/check.out" >&2; fail "mpi4py_check.py exited with $rc"; }
"$PY" - "$DIR/check.out" <<'PYEOF' || { cat "$DIR/check.out" >&2; fail "mpi4py_check.py"; }
import json, sys
j = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"test": "mpi4py_check"')][0]
assert j["ranks"] == 4 and j["errors"] == 0 and j["checks"] == 4 * 11, j
print("mpi4py_check.py: %d checks on 4 ranks, 0 errors" % j["checks"])
PYEOF
wait_reclaimed
echo "pcmd reclaimed every client and flow"
