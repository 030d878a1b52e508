#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fi-pingpong-pcm-verbs.sh PCMD PCMCTL PROVDIR - inside the VM: libfabric's own
# fi_pingpong over the pcm provider (libpcm-fi.so in PROVDIR), through a pcmd
# on the verbs datapath (rxe0), against fi_pingpong over libfabric's verbs
# provider on the same device, in one boot:
#   1. pcmd starts with datapath kind verbs on rxe0 (GID index 1, RoCE v2 on
#      IPv4), and fi_info -p pcm lists the provider through it;
#   2. fi_pingpong -p pcm -e msg -c (data checks) completes, server and client,
#      and pcmd's counters show the bytes went through its flows;
#   3. per size, 64 B to 64 KiB in steps of 4x: fi_pingpong -p pcm -e msg and
#      fi_pingpong -p verbs -e msg, REPEATS runs each, interleaved; one JSON
#      line per size with the median over the runs of each one's round trip
#      (2 x usec/xfer), the best run's, and pcm's divided by verbs' for both.
# Under TCG these figures show the cost of the code paths (pcm: the library,
# pcmd's shared ring and engine, the transport core, then verbs), not of a
# NIC; nothing here is compared with a threshold.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm
[ $# -eq 3 ] || fail "usage: $0 PCMD PCMCTL PROVDIR"
pcmd=$1 pcmctl=$2 provdir=$3
[ -f "$provdir/libpcm-fi.so" ] || fail "no libpcm-fi.so in $provdir (meson found no libfabric?)"
ITERS=300
REPEATS=3
PAIR_TIMEOUT_S=60
SIZES="64 256 1024 4096 16384 65536"
# Below the kernel's ephemeral range, as fi-pingpong-baseline.sh explains.
port=7700
logs=$(log_dir fi-pingpong-pcm-verbs)

# rdma_cm's device node, which libfabric's verbs provider opens for FI_EP_MSG.
modprobe rdma_ucm || fail "modprobe rdma_ucm (rdma_cm for libfabric's verbs provider)"

# The socket in the guest's own /run: the job share cannot hold one.
sockdir=$(mktemp -d /run/pcmd-fi.XXXXXX)
cat >"$logs/pcmd.yaml" <<YAML
log_level: debug
socket: {path: "$sockdir/pcmd.sock", group: ""}
datapath:
  kind: verbs
  paths: 1
  verbs: {devices: [{name: rxe0, port: 1, gid_index: 1}]}
YAML
"$pcmd" -c "$logs/pcmd.yaml" 2>"$logs/pcmd.log" &
pcmd_pid=$!
# On any exit: pcmd stopped; on a failure, the end of its log.
stop_pcmd() {
	local rc=$?
	kill $pcmd_pid 2>/dev/null || true
	[ $rc -eq 0 ] || { echo "--- pcmd's log (end):" >&2; tail -n 40 "$logs/pcmd.log" >&2; }
}
trap stop_pcmd EXIT
export PCMD_SOCKET=$sockdir/pcmd.sock
"$pcmctl" --wait 30 status >/dev/null || { cat "$logs/pcmd.log" >&2; fail "pcmd on verbs (rxe0) did not come up"; }
grep -qi verbs "$logs/pcmd.log" || { cat "$logs/pcmd.log" >&2; fail "pcmd's log does not name the verbs datapath"; }

# Regions of 8 MiB, not the provider's 64: pcmd registers each client's with
# ibv_reg_mr, which under TCG took 2.5 to 15 s for 64 MiB (pcmd's log), past
# libpcmtransport's 10 s wait for pcmd's answer.
export FI_PROVIDER_PATH=$provdir FI_PCM_ADDR=$PCM_RXE_IP0 FI_PCM_REGION_MB=8
fi_info -p pcm >"$logs/fi_info.txt" 2>&1 || { cat "$logs/fi_info.txt" >&2; fail "fi_info -p pcm lists nothing through pcmd on verbs"; }

# tx_bytes: what pcmd's flows have sent so far.
tx_bytes() {
	"$pcmctl" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["tx_bytes"])'
}

# pingpong NAME PROVIDER SIZE ITERS EXTRA...: lib.sh's fi_pingpong_pair with
# -p PROVIDER -e msg; a pair retried once is counted in $retries.
retries=0
pingpong() {
	local name=$1 fi_opts=(-p "$2" -e msg) size=$3 iters=$4
	shift 4
	fi_pingpong_pair "$name" "$size" "$iters" "$@"
}

before=$(tx_bytes)
pingpong integrity pcm 4096 50 -c || { cat "$logs/pcmd.log" >&2; fail "fi_pingpong -p pcm -e msg -c through pcmd on verbs failed"; }
[ -n "$(usec_per_xfer "$logs/integrity.client")" ] || fail "fi_pingpong -p pcm -c printed no result row"
moved=$(($(tx_bytes) - before))
[ "$moved" -ge $((2 * 50 * 4096)) ] || fail "pcmd's flows sent $moved bytes for 2 x 50 x 4096 of fi_pingpong's"
echo "fi_pingpong -p pcm -e msg -c: data checked; pcmd's flows sent $moved bytes"

for run in $(seq $REPEATS); do
	for size in $SIZES; do
		pingpong "pcm-$size-$run" pcm "$size" $ITERS || fail "fi_pingpong -p pcm at $size bytes failed"
		pingpong "verbs-$size-$run" verbs "$size" $ITERS || fail "fi_pingpong -p verbs at $size bytes failed"
	done
done

for size in $SIZES; do
	pcm_rtts=() verbs_rtts=()
	for run in $(seq $REPEATS); do
		for prov in pcm verbs; do
			rtt=$(rtt_us "$logs/$prov-$size-$run.client") ||
				fail "fi_pingpong -p $prov at $size bytes printed no result row"
			if [ $prov = pcm ]; then pcm_rtts+=("$rtt"); else verbs_rtts+=("$rtt"); fi
		done
	done
	awk -v pcm="$(median "${pcm_rtts[@]}")" -v verbs="$(median "${verbs_rtts[@]}")" \
		-v pcm_best="$(best "${pcm_rtts[@]}")" -v verbs_best="$(best "${verbs_rtts[@]}")" \
		-v pcm_all="$(json_list "${pcm_rtts[@]}")" \
		-v verbs_all="$(json_list "${verbs_rtts[@]}")" -v retries=$retries \
		-v size="$size" -v iters=$ITERS -v runs=$REPEATS '
		BEGIN {
			if (!(pcm > 0 && verbs > 0)) exit 1
			printf "{\"check\":\"fi_pingpong_pcm_over_verbs\",\"device\":\"rxe0\",\"msg_size\":%d," \
			       "\"iters\":%d,\"runs\":%d,\"fi_ep\":\"msg\",\"pcm_rtt_us\":%.2f,\"verbs_rtt_us\":%.2f," \
			       "\"pcm_over_verbs\":%.3f,\"pcm_rtt_best_us\":%.2f,\"verbs_rtt_best_us\":%.2f," \
			       "\"pcm_over_verbs_best\":%.3f,\"pcm_runs_us\":%s,\"verbs_runs_us\":%s," \
			       "\"pair_retries\":%d,\"time\":\"wall, qemu TCG\"}\n",
			       size, iters, runs, pcm, verbs, pcm / verbs, pcm_best, verbs_best,
			       pcm_best / verbs_best, pcm_all, verbs_all, retries
		}' || fail "no figures at $size bytes: pcm ${pcm_rtts[*]}, verbs ${verbs_rtts[*]}"
done
