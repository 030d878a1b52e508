# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# mpi_lib.sh - sourced by the MPI tests (needs PCMD, PCMCTL and EXAMPLE, the
# MPI program, set): skips (77) when the MPI build or mpirun is absent, then
# pcmctl_lib.sh's scratch directory, pcmd start and cleanup, and the helpers
# below (tests/engines/libfabric's MPI tests use it too, with INTEGRATION_DIR
# naming this directory).
if [ -z "$EXAMPLE" ] || [ ! -x "$EXAMPLE" ]; then
	echo "skipped: no MPI: the MPI program is not built (meson found no MPI; Debian: apt-get install libopenmpi-dev openmpi-bin, then reconfigure)"
	exit 77
fi
MPIRUN=$(command -v mpirun || true)
if [ -z "$MPIRUN" ]; then
	echo "skipped: no mpirun on PATH (Debian: apt-get install openmpi-bin)"
	exit 77
fi
TRAFFIC=/nonexistent # pcmctl_lib.sh's start_traffic is not used here
# shellcheck source-path=SCRIPTDIR source=pcmctl_lib.sh
. "${INTEGRATION_DIR:-$(dirname "$0")}/pcmctl_lib.sh"
# CMA single-copy needs ptrace rights that containers often lack; copies suffice here.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# One machine: the isolated launcher needs no ssh/rsh (a fresh Debian has neither).
export OMPI_MCA_plm=isolated

# start_mpi_pcmd HOSTS: pcmd on its embedded softnic fabric of HOSTS hosts, with flow records.
start_mpi_pcmd() {
	start_pcmd <<YAML
datapath: {kind: softnic, softnic: {hosts: $1}}
output: {records_path: "$DIR/records.csv"}
YAML
}

# mpi_exchange NP OUT [--kill] ARGS...: mpirun -np NP of the example, its
# output in OUT, within 120 s; --kill lets the survivors of a rank that dies
# see the failure (Open MPI would otherwise kill them at once). Return: mpirun's status.
mpi_exchange() {
	np=$1 out=$2
	shift 2
	recovery=
	if [ "${1:-}" = --kill ]; then
		recovery="--mca orte_enable_recovery 1 --mca orte_max_restarts 0 --mca orte_abort_on_non_zero_status 0"
		shift
	fi
	# Under ASan the ranks do not check for leaks: Open MPI leaves thousands of
	# allocations at exit, many from components it has dlclose()d by then,
	# which no suppression by library can name. pcmd keeps its leak check, and
	# libpcmtransport's is the other integration tests'.
	# shellcheck disable=SC2086
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		timeout 120 "$MPIRUN" --allow-run-as-root --oversubscribe $recovery -np "$np" \
		"$EXAMPLE" "$@" >"$out" 2>&1
}

# check_totals OUT RANKS CONNECTIONS: rank 0's JSON line says every byte the
# seed decides arrived, with no error.
check_totals() {
	"$PY" - "$@" <<'PYEOF'
import json, sys
out, ranks, conns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = [json.loads(l) for l in open(out) if l.startswith('{"example":"mpi_exchange"')]
assert len(lines) == 1, "want one JSON line from rank 0, got %r" % lines
j = lines[0]
assert "rank" not in j, "a rank reported an error: %r" % j
assert j["ranks"] == ranks and j["connections"] == conns, j
assert j["errors"] == 0 and j["bytes"] == j["expected_bytes"] > 0, j
assert j["seconds"] > 0 and j["goodput_gbps"] > 0, j
base = ""
if "baseline" in j:  # --baseline: the same streams over MPI, checked as well
    assert j["baseline"] == "mpi_isend_irecv" and j["mpi_seconds"] > 0, j
    assert abs(j["pcm_over_mpi_goodput"] - j["goodput_gbps"] / j["mpi_goodput_gbps"]) < 0.01, j
    base = "; over MPI_Isend/Irecv: %.2f Gbit/s, pcm/MPI %.2f" % (j["mpi_goodput_gbps"],
                                                              j["pcm_over_mpi_goodput"])
print("mpi_exchange: %d ranks, %d connections, %d bytes in %.3f s (%.2f Gbit/s), 0 errors%s"
      % (ranks, conns, j["bytes"], j["seconds"], j["goodput_gbps"], base))
PYEOF
}
