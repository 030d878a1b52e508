# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# fi_lib.sh - sourced by the libfabric engine tests (needs PCMD, PCMCTL and
# PROVDIR set, and MPI_PROGRAM for the MPI tests): skips (77) when
# libpcm-fi.so is not built or libfabric's tools are missing (MPI tests: or
# MPI), then pcmctl_lib.sh's scratch directory, pcmd start and cleanup (MPI
# tests: through mpi_lib.sh), with FI_PROVIDER_PATH naming the build's
# provider directory (so libfabric loads this libpcm-fi.so and no installed one).
if [ -z "$PROVDIR" ] || [ ! -f "$PROVDIR/libpcm-fi.so" ]; then
	echo "skipped: libpcm-fi.so is not built (meson found no libfabric; Debian: apt-get install libfabric-dev, then reconfigure)"
	exit 77
fi
for tool in fi_info fi_pingpong; do
	if ! command -v $tool >/dev/null; then
		echo "skipped: no $tool on PATH (Debian: apt-get install libfabric-bin)"
		exit 77
	fi
done
if [ -n "${MPI_PROGRAM+set}" ]; then
	# MPI tests: mpi_lib.sh skips without MPI, sets Open MPI up for one
	# machine, and sources pcmctl_lib.sh
	EXAMPLE=$MPI_PROGRAM
	INTEGRATION_DIR="$(dirname "$0")/../../integration"
	# shellcheck source-path=SCRIPTDIR source=../../integration/mpi_lib.sh
	. "$(dirname "$0")/../../integration/mpi_lib.sh"
else
	TRAFFIC=/nonexistent # pcmctl_lib.sh's start_traffic is not used here
	# shellcheck source-path=SCRIPTDIR source=../../integration/pcmctl_lib.sh
	. "$(dirname "$0")/../../integration/pcmctl_lib.sh"
fi
export FI_PROVIDER_PATH="$PROVDIR"
unset FI_PCM_BACKEND FI_PCM_ADDR FI_PCM_POLICY FI_PROVIDER

# start_fabric_pcmd HOSTS: pcmd on its embedded softnic fabric of HOSTS hosts
# (every process that opens the provider is one of them).
start_fabric_pcmd() {
	start_pcmd <<YAML
datapath: {kind: softnic, softnic: {hosts: $1}}
YAML
}

# pcmd_sent: the bytes pcmd's flows have sent so far (pcmctl --json stats).
pcmd_sent() {
	"$PCMCTL" --json stats | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["tx_bytes"])'
}

# wait_listening PORT: until a TCP socket listens at PORT (10 s at most):
# fi_pingpong's server takes its one control connection only once it does.
wait_listening() {
	hex=$(printf '%04X' "$1") i=0
	until awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "nothing listens at TCP port $1"; sleep 0.05
	done
}

# pingpong NAME PROVIDER ARGS...: fi_pingpong's server and client on this
# machine (their control connection on a port of their own), within 240 s,
# their output in $DIR/NAME.server and $DIR/NAME.client; the server's
# environment also has $PP_SERVER_ENV (VAR=VALUE ...). Return: 0 if both passed.
pingpong() {
	name=$1 prov=$2
	shift 2
	ctl=$((20000 + ($$ + ${PP_N:-0}) % 20000))
	PP_N=$((${PP_N:-0} + 1))
	env ${PP_SERVER_ENV:-} timeout 240 fi_pingpong -p "$prov" -B "$ctl" "$@" \
		>"$DIR/$name.server" 2>&1 &
	srv=$!
	wait_listening "$ctl"
	rc=0
	timeout 240 fi_pingpong -p "$prov" -P "$ctl" "$@" 127.0.0.1 >"$DIR/$name.client" 2>&1 || rc=$?
	wait $srv || rc=$((rc ? rc : $?))
	return $rc
}

# mpi_on PROVIDER OUT NP ARGS...: mpirun -np NP ARGS over libfabric's
# PROVIDER (pml cm, mtl ofi, only the self BTL: no shared memory or TCP
# path besides it), output in OUT, within 300 s. Return: mpirun's status.
mpi_on() {
	prov=$1 out=$2 np=$3
	shift 3
	# As in tests/integration/mpi_lib.sh: Open MPI's exit leaks defeat ASan's leak check.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		timeout 300 "$MPIRUN" --allow-run-as-root --oversubscribe -np "$np" \
		--mca btl self --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "$prov" \
		-x PCMD_SOCKET -x FI_PROVIDER_PATH "$@" >"$out" 2>&1
}
