#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fi-pingpong-baseline.sh BENCH - inside the VM: libfabric's own fi_pingpong
# as a latency baseline for pcm's (BENCH is pcm-bench), in one boot:
#   1. the provider: verbs with FI_EP_MSG endpoints (RC over rdma_cm), else
#      "verbs;ofi_rxm" with FI_EP_RDM; when neither runs, fail with what
#      fi_info -l offers;
#   2. fi_pingpong -c (data checks) completes once, server and client;
#   3. per size, 64 B to 64 KiB in steps of 4x: fi_pingpong between a server
#      and a client process, and pcm-bench latency --datapath verbs over RC
#      (two engines in one process), both on rxe0 (the device's own
#      loopback); one JSON line per size with both mean round trips and
#      pcm's divided by fi_pingpong's.
# fi_pingpong's usec/xfer is its elapsed time over iterations x 2 transfers,
# half a round trip. Under TCG these figures show the speed of the code
# paths, not of a NIC; nothing here is compared with a threshold.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm
[ $# -eq 1 ] || fail "usage: $0 PCM-BENCH"
bench=$1
ITERS=300
SIZES="64 256 1024 4096 16384 65536"
port=47600
logs=$(log_dir fi-pingpong-baseline)

# rdma_cm's device node, which libfabric's verbs provider opens for FI_EP_MSG.
modprobe rdma_ucm || fail "modprobe rdma_ucm (rdma_cm for libfabric's verbs provider)"

# pingpong NAME SIZE ITERS EXTRA...: one fi_pingpong pair on rxe0 with the chosen
# provider; the client's output in $logs/NAME.client.
pingpong() {
	local name=$1 size=$2 iters=$3
	shift 3
	port=$((port + 1))
	run_pair "$logs/$name" $port \
		fi_pingpong "${fi_opts[@]}" -B $port -S "$size" -I "$iters" "$@" -- \
		fi_pingpong "${fi_opts[@]}" -P $port -S "$size" -I "$iters" "$@" "$PCM_RXE_IP0"
}

# usec_per_xfer LOG: the usec/xfer column of fi_pingpong's result row.
usec_per_xfer() {
	awk '$1 == "bytes" { getline; print $7; exit }' "$1"
}

fi_opts=(-p verbs -e msg)
if ! pingpong probe-msg 64 10 >/dev/null 2>&1; then
	fi_opts=(-p "verbs;ofi_rxm" -e rdm)
	pingpong probe-rdm 64 10 >/dev/null 2>&1 || {
		echo "fi_info -l offers:" >&2
		fi_info -l >&2 || true
		fail "fi_pingpong runs with neither -p verbs -e msg nor -p 'verbs;ofi_rxm' -e rdm"
	}
fi
echo "fi_pingpong provider: ${fi_opts[*]}"

pingpong integrity 4096 50 -c || fail "fi_pingpong -c (data checks) failed"
[ -n "$(usec_per_xfer "$logs/integrity.client")" ] || fail "fi_pingpong -c printed no result row"

timeout $PAIR_TIMEOUT_S "$bench" latency --datapath verbs --device rxe0 --gid-index 1 --qp rc \
	--iters $ITERS --json >"$logs/pcm.jsonl" 2>"$logs/pcm.err" || {
	cat "$logs/pcm.err" >&2
	fail "pcm-bench latency --datapath verbs failed"
}

for size in $SIZES; do
	pingpong "size-$size" "$size" $ITERS || fail "fi_pingpong at $size bytes failed"
	half=$(usec_per_xfer "$logs/size-$size.client")
	pcm=$(grep "\"msg_size\":$size," "$logs/pcm.jsonl") || fail "pcm-bench printed no $size-byte line"
	awk -v half="$half" -v line="$pcm" -v size="$size" -v iters=$ITERS -v prov="${fi_opts[1]}" \
		-v ep="${fi_opts[3]}" 'function num(key, m) {
			if (!match(line, "\"" key "\":[0-9.]+")) exit 1
			return substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 3) + 0
		}
		BEGIN {
			fi_rtt = 2 * half
			if (!(fi_rtt > 0)) exit 1
			mean = num("rtt_mean_us"); p50 = num("rtt_p50_us")
			printf "{\"check\":\"fi_pingpong_baseline\",\"device\":\"rxe0\",\"msg_size\":%d," \
			       "\"iters\":%d,\"fi_provider\":\"%s\",\"fi_ep\":\"%s\"," \
			       "\"fi_rtt_mean_us\":%.2f,\"pcm_qp\":\"rc\",\"pcm_rtt_mean_us\":%.2f," \
			       "\"pcm_rtt_p50_us\":%.2f,\"pcm_over_fi_mean\":%.3f,\"time\":\"wall, qemu TCG\"}\n",
			       size, iters, prov, ep, fi_rtt, mean, p50, mean / fi_rtt
		}' || fail "no figures at $size bytes: fi_pingpong '$half' usec/xfer, pcm-bench '$pcm'"
done
