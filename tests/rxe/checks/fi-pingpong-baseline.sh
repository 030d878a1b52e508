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
#      loopback), REPEATS runs each, interleaved; one JSON line per size with
#      the median over the runs of each one's mean round trip and the best
#      run's, and pcm's divided by fi_pingpong's for both. (A TCG guest on a
#      shared host stalls now and then for milliseconds: one run's mean can
#      be several times another's.)
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
REPEATS=3
# A pair takes seconds; a first rdma_cm connection has once hung here, and a
# hang should cost half a minute, not lib.sh's two.
PAIR_TIMEOUT_S=45
SIZES="64 256 1024 4096 16384 65536"
# Below the kernel's ephemeral range (32768-60999): a port in it can be some
# earlier connection's source port, still in TIME_WAIT, and bind() fails
# with EADDRINUSE (seen in CI at 47612). run_pair refuses such a port.
port=7600
logs=$(log_dir fi-pingpong-baseline)

# rdma_cm's device node, which libfabric's verbs provider opens for FI_EP_MSG.
modprobe rdma_ucm || fail "modprobe rdma_ucm (rdma_cm for libfabric's verbs provider)"

# fi_pingpong pairs (lib.sh's fi_pingpong_pair) with the chosen provider in
# fi_opts; a pair retried once is counted in $retries.
retries=0
fi_opts=(-p verbs -e msg)
if ! fi_pingpong_pair probe-msg 64 10 2>"$logs/probe-msg.err"; then
	echo "fi_pingpong -p verbs -e msg failed, trying verbs;ofi_rxm:" >&2
	cat "$logs/probe-msg.err" >&2
	fi_opts=(-p "verbs;ofi_rxm" -e rdm)
	fi_pingpong_pair probe-rdm 64 10 || {
		echo "fi_info -l offers:" >&2
		fi_info -l >&2 || true
		fail "fi_pingpong runs with neither -p verbs -e msg nor -p 'verbs;ofi_rxm' -e rdm"
	}
fi
echo "fi_pingpong provider: ${fi_opts[*]}"

fi_pingpong_pair integrity 4096 50 -c || fail "fi_pingpong -c (data checks) failed"
[ -n "$(usec_per_xfer "$logs/integrity.client")" ] || fail "fi_pingpong -c printed no result row"

# pcm_field SIZE KEY RUN: a figure of pcm-bench's SIZE-byte line of run RUN.
pcm_field() {
	sed -n "s/.*\"msg_size\":$1,.*\"$2\":\([0-9.]*\).*/\1/p" "$logs/pcm-$3.jsonl"
}

for run in $(seq $REPEATS); do
	timeout $PAIR_TIMEOUT_S "$bench" latency --datapath verbs --device rxe0 --gid-index 1 \
		--qp rc --iters $ITERS --json >"$logs/pcm-$run.jsonl" 2>"$logs/pcm-$run.err" || {
		cat "$logs/pcm-$run.err" >&2
		fail "pcm-bench latency --datapath verbs failed"
	}
	for size in $SIZES; do
		fi_pingpong_pair "size-$size-$run" "$size" $ITERS || fail "fi_pingpong at $size bytes failed"
	done
done

for size in $SIZES; do
	fi_rtts=() pcm_means=() pcm_p50s=()
	for run in $(seq $REPEATS); do
		rtt=$(rtt_us "$logs/size-$size-$run.client") ||
			fail "fi_pingpong at $size bytes printed no result row"
		fi_rtts+=("$rtt")
		pcm_means+=("$(pcm_field "$size" rtt_mean_us "$run")")
		pcm_p50s+=("$(pcm_field "$size" rtt_p50_us "$run")")
	done
	[ -n "${pcm_means[*]// /}" ] || fail "pcm-bench printed no $size-byte line"
	awk -v fi="$(median "${fi_rtts[@]}")" -v mean="$(median "${pcm_means[@]}")" \
		-v p50="$(median "${pcm_p50s[@]}")" -v fi_best="$(best "${fi_rtts[@]}")" \
		-v pcm_best="$(best "${pcm_means[@]}")" -v fi_all="$(json_list "${fi_rtts[@]}")" \
		-v pcm_all="$(json_list "${pcm_means[@]}")" \
		-v size="$size" -v retries=$retries -v iters=$ITERS -v runs=$REPEATS -v prov="${fi_opts[1]}" -v ep="${fi_opts[3]}" '
		BEGIN {
			if (!(fi > 0 && mean > 0)) exit 1
			printf "{\"check\":\"fi_pingpong_baseline\",\"device\":\"rxe0\",\"msg_size\":%d," \
			       "\"iters\":%d,\"runs\":%d,\"fi_provider\":\"%s\",\"fi_ep\":\"%s\"," \
			       "\"fi_rtt_mean_us\":%.2f,\"pcm_qp\":\"rc\",\"pcm_rtt_mean_us\":%.2f," \
			       "\"pcm_rtt_p50_us\":%.2f,\"pcm_over_fi_mean\":%.3f," \
			       "\"fi_rtt_best_us\":%.2f,\"pcm_rtt_best_us\":%.2f,\"pcm_over_fi_best\":%.3f," \
			       "\"fi_runs_us\":%s,\"pcm_runs_us\":%s,\"fi_pair_retries\":%d,\"time\":\"wall, qemu TCG\"}\n",
			       size, iters, runs, prov, ep, fi, mean, p50, mean / fi, fi_best, pcm_best,
			       pcm_best / fi_best, fi_all, pcm_all, retries
		}' || fail "no figures at $size bytes: fi_pingpong ${fi_rtts[*]}, pcm-bench ${pcm_means[*]}"
done
