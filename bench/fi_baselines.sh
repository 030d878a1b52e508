#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fi_baselines.sh [BUILD_DIR] [RUNS] - the pcm libfabric provider against
# its baselines, measured in the same run and interleaved, one JSON line per
# result with its ratio (bench/RESULTS.md, "libfabric and MPI over pcm"):
#
#   fi_pingpong (libfabric's own, -I iterations per size): `-p pcm` against
#   `-p tcp`, connected endpoints (-e msg) and rxm's reliable datagrams
#   (-e rdm); half a round trip per transfer (usec/xfer), pcm over tcp.
#
#   the MPI program tests/engines/libfabric/mpi_check (4 ranks, its checks
#   and then --bench) over pcm (Open MPI's `--mca pml cm --mca mtl ofi
#   --mca mtl_ofi_provider_include pcm`), over libfabric's tcp provider
#   (the same with `tcp`, on loopback) and over Open MPI's default shared
#   memory path (`--mca pml ob1 --mca btl self,vader`): the checking
#   phases' seconds, rank 0-1 latency and bandwidth per size, and
#   Allreduce/Alltoall/Bcast times; pcm over tcp and pcm over shm.
#
# The first line names the CPU (lscpu) and the load. pcmd runs on its
# embedded softnic fabric (16 hosts), started here with its socket in a
# scratch directory. BUILD_DIR defaults to build, RUNS to 3.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${2:-3}
py=/usr/bin/python3
dir=$(mktemp -d "${TMPDIR:-/tmp}/pcm-fi-baselines.XXXXXX")
pcmd_pid=
cleanup() {
	[ -z "$pcmd_pid" ] || kill "$pcmd_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mpi_check=$build/tests/engines/libfabric/mpi_check
export FI_PROVIDER_PATH=$build/engines/libfabric
export PCMD_SOCKET=$dir/pcmd.sock
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_plm=isolated
cat >"$dir/pcmd.yaml" <<YAML
log_level: warn
socket: {path: "$PCMD_SOCKET", group: ""}
datapath: {kind: softnic, softnic: {hosts: 16}}
YAML
"$build/daemon/pcmd" -c "$dir/pcmd.yaml" 2>"$dir/pcmd.log" &
pcmd_pid=$!
"$build/cli/pcmctl" --wait 10 status >/dev/null

lscpu | "$py" -c '
import json, os, sys
f = dict(l.split(":", 1) for l in sys.stdin if ":" in l)
g = lambda k: f.get(k, "").strip()
print(json.dumps({"bench": "fi_baselines", "cpu": g("Model name"), "family": g("CPU family"),
                  "model": g("Model"), "cpus": g("CPU(s)"), "load": os.getloadavg()[0]}))'

# pingpong PROV EP SIZE ITERS: one fi_pingpong pair; prints its usec/xfer.
port=$((30000 + $$ % 20000))
pingpong() {
	port=$((port + 1))
	timeout 300 fi_pingpong -p "$1" -e "$2" -S "$3" -I "$4" -B $port >"$dir/srv" 2>&1 &
	local srv=$! i=0
	until grep -q ":$(printf '%04X' $port) .* 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 200 ] || return 1; sleep 0.05
	done
	timeout 300 fi_pingpong -p "$1" -e "$2" -S "$3" -I "$4" -P $port 127.0.0.1 >"$dir/cli" 2>&1
	wait $srv
	awk 'NR == 2 { print $7 }' "$dir/cli"
}

# mpi NAME ARGS...: mpi_check --bench on 4 ranks; its JSON lines in $dir/NAME.
mpi() {
	local name=$1
	shift
	timeout 900 mpirun --allow-run-as-root --oversubscribe -np 4 "$@" \
		-x PCMD_SOCKET -x FI_PROVIDER_PATH "$mpi_check" --bench --iters 200 \
		>"$dir/$name" 2>"$dir/$name.err"
}

for run in $(seq "$runs"); do
	for ep in msg rdm; do
		for size in 64 4096 65536 1048576; do
			iters=$((size >= 65536 ? 20 : 200))
			pcm=$(pingpong pcm $ep $size $iters)
			tcp=$(pingpong tcp $ep $size $iters)
			"$py" -c 'import json, sys
r, ep, size, iters, pcm, tcp = sys.argv[1:]
print(json.dumps({"bench": "fi_pingpong", "run": int(r), "ep": ep, "size": int(size),
                  "iters": int(iters), "pcm_usec_per_xfer": float(pcm),
                  "baseline": "tcp", "tcp_usec_per_xfer": float(tcp),
                  "pcm_over_tcp": round(float(pcm) / float(tcp), 3)}))' \
				"$run" $ep $size $iters "$pcm" "$tcp"
		done
	done
	mpi pcm --mca btl self --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include pcm
	mpi tcp --mca btl self --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp
	mpi shm --mca pml ob1 --mca btl self,vader
	"$py" - "$run" "$dir/pcm" "$dir/tcp" "$dir/shm" <<'PYEOF'
import json, sys
run = int(sys.argv[1])
def lines(path):
    return [json.loads(l) for l in open(path) if l.startswith("{")]
pcm, tcp, shm = (lines(p) for p in sys.argv[2:5])
def pick(ls, kind, key=None, val=None):
    return [l for l in ls if (l.get("bench") or l.get("test")) == kind
            and (key is None or l[key] == val)][0]
def out(d):
    print(json.dumps(d))
chk = [pick(x, "mpi_check") for x in (pcm, tcp, shm)]
assert all(c["errors"] == 0 for c in chk), chk
assert all(any(l.get("bench") == "mpi_p2p" for l in x) for x in (pcm, tcp, shm)), "no timings"

for ph in ("p2p_s", "window_s", "collectives_s", "seconds"):
    a, b, c = (x[ph] for x in chk)
    out({"bench": "mpi_check_phase", "run": run, "phase": ph, "ranks": 4, "pcm_s": a,
         "baseline": "tcp, shm", "tcp_s": b, "shm_s": c,
         "pcm_over_tcp": round(a / b, 3), "pcm_over_shm": round(a / c, 3)})
for l in (l for l in pcm if l.get("bench") == "mpi_p2p"):
    t, s = pick(tcp, "mpi_p2p", "size", l["size"]), pick(shm, "mpi_p2p", "size", l["size"])
    out({"bench": "mpi_p2p", "run": run, "size": l["size"], "ranks": 4,
         "pcm_latency_us": l["latency_us"], "tcp_latency_us": t["latency_us"],
         "shm_latency_us": s["latency_us"], "baseline": "tcp, shm",
         "latency_pcm_over_tcp": round(l["latency_us"] / t["latency_us"], 3),
         "latency_pcm_over_shm": round(l["latency_us"] / s["latency_us"], 3),
         "pcm_mbps": l["bandwidth_mbps"], "tcp_mbps": t["bandwidth_mbps"],
         "shm_mbps": s["bandwidth_mbps"],
         "bandwidth_pcm_over_tcp": round(l["bandwidth_mbps"] / t["bandwidth_mbps"], 3),
         "bandwidth_pcm_over_shm": round(l["bandwidth_mbps"] / s["bandwidth_mbps"], 3)})
for l in (l for l in pcm if l.get("bench") == "mpi_coll"):
    t, s = pick(tcp, "mpi_coll", "ints", l["ints"]), pick(shm, "mpi_coll", "ints", l["ints"])
    for op in ("allreduce_us", "alltoall_us", "bcast_us"):
        out({"bench": "mpi_" + op[:-3], "run": run, "ints": l["ints"], "ranks": 4,
             "pcm_us": l[op], "tcp_us": t[op], "shm_us": s[op], "baseline": "tcp, shm",
             "pcm_over_tcp": round(l[op] / t[op], 3), "pcm_over_shm": round(l[op] / s[op], 3)})
PYEOF
done
