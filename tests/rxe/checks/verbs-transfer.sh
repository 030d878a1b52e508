#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# verbs-transfer.sh XFER ERRORS BENCH - inside the VM: pcm's verbs datapath
# between two processes, rxe0 (dialer) to rxe1 (listener) across the wire,
# the engine and the core on top, the TCP bootstrap between them
# (rxe-verbs-xfer, XFER; ERRORS is unused here; BENCH is pcm-bench). In one
# boot:
#   1. UC and RC with swift, 4 KiB to 4 MiB messages, and UC with 256
#      messages of 4 KiB (every message slot reused): every message
#      byte-exact and exactly once, nothing left in the core after the close;
#   1b. pcm-bench goodput --datapath verbs between two processes (receiver
#      on rxe1, sender on rxe0), UC and RC, swift, 4 KiB to 4 MiB: both exit
#      0 (the receiver checked every byte), the sender's JSON lines printed;
#   2. perftest's ib_write_bw, UC and RC at 64 KiB, in the same run: one
#      JSON line per QP type with pcm's goodput (rxe-verbs-xfer's and
#      pcm-bench's) divided by ib_write_bw's;
#   3. 1% netem loss on eth0: UC (one-packet chunks: see below) arrives
#      byte-exact with pcm's retransmissions counted (> 0), RC with the
#      NIC's (rxe0's completer_retry_err > 0) and none of pcm's;
#   4. DST-style random runs (RXE_VERBS_SEEDS seeds, default 2): random QP
#      type, connections, paths, message count and sizes from 0 bytes; a
#      failing seed is shrunk (fewer messages, connections, smaller sizes)
#      and printed with a one-line reproduction.
# RXE_VERBS_SEED=N runs only random case N (the reproduction).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm
[ $# -eq 3 ] || fail "usage: $0 RXE-VERBS-XFER RXE-VERBS-ERRORS PCM-BENCH"
xfer=$1
bench=$3
logs=$(log_dir verbs-transfer)
port=7400
results=$logs/results.jsonl
: >"$results"

# pair NAME ARGS...: one transfer, listener on rxe1, dialer on rxe0; the
# dialer's JSON line goes to stdout and $results. Return: its status.
pair() {
	local name=$1
	shift
	port=$((port + 1))
	run_pair "$logs/$name" $port \
		"$xfer" --listen --addr "$PCM_RXE_IP1:$port" --dev rxe1 --gid 1 "$@" -- \
		"$xfer" --dial --addr "$PCM_RXE_IP1:$port" --dev rxe0 --gid 1 "$@" || return 1
	tee -a "$results" <"$logs/$name.client"
}

# field JSON KEY: a number from one JSON line.
field() {
	sed -n "s/.*\"$2\":\([0-9.eE+-]*\).*/\1/p" <<<"$1"
}

# ---- random cases --------------------------------------------------------------------------

# random_args SEED: the plan of random case SEED (bash's RANDOM, seeded).
random_args() {
	RANDOM=$1
	local qp=() max=$((RANDOM % 262145))
	[ $((RANDOM % 2)) -eq 0 ] || qp=(--rc)
	echo "${qp[*]} --seed $1 --conns $((1 + RANDOM % 4)) --paths $((1 + RANDOM % 4))" \
		"--msgs $((1 + RANDOM % 40)) --min-size $((RANDOM % (max + 1))) --max-size $max"
}

# with ARGS KEY VALUE: ARGS with --KEY's value replaced.
with() {
	sed "s/--$2 [0-9]*/--$2 $3/" <<<"$1"
}

# shrink NAME ARGS: the smallest plan derived from ARGS that still fails.
shrink() {
	local name=$1 args=$2 try key v progress=1
	while [ $progress -eq 1 ]; do
		progress=0
		for key in msgs conns max-size; do
			v=$(sed -n "s/.*--$key \([0-9]*\).*/\1/p" <<<"$args")
			[ "$v" -gt 1 ] || continue
			try=$(with "$args" $key $((v / 2)))
			[ $key != max-size ] || try=$(with "$try" min-size 0)
			# shellcheck disable=SC2086
			if ! pair "$name-shrink" $try >/dev/null 2>&1; then
				args=$try
				progress=1
			fi
		done
	done
	echo "$args"
}

random_case() {
	local seed=$1 args
	args=$(random_args "$seed")
	echo "random case $seed: $args"
	# shellcheck disable=SC2086
	if ! pair "random-$seed" $args; then
		echo "FAIL: random case $seed failed; shrinking" >&2
		echo "smallest failing plan: rxe-verbs-xfer ... $(shrink "random-$seed" "$args")" >&2
		echo "reproduce: tests/rxe/vm-run --env RXE_VERBS_SEED=$seed -- $0 $*" >&2
		return 1
	fi
}

if [ -n "${RXE_VERBS_SEED:-}" ]; then
	random_case "$RXE_VERBS_SEED" "$@"
	exit
fi

# ---- 1. UC and RC, 4 KiB to 4 MiB ------------------------------------------------------------

for qp in UC RC; do
	flag=()
	[ $qp = UC ] || flag=(--rc)
	for spec in 4096:32 65536:16 1048576:2 4194304:1; do
		pair "$qp-${spec%%:*}" "${flag[@]}" --policy swift --size "${spec%%:*}" \
			--msgs "${spec##*:}" || fail "$qp ${spec%%:*}-byte messages"
	done
done

# UC, many small messages: each of the immediate's 16 message slots reused 16
# times, with the spurious retransmissions TCG's delays cause (late copies of
# chunks: docs/transport.md "Keys are not enough alone").
line=$(pair UC-4096x256 --policy swift --size 4096 --msgs 256) ||
	fail "UC 4096-byte messages x 256"
echo "UC 4 KiB x 256: byte-exact, $(field "$line" chunks_retx) chunks retransmitted"

# ---- 1b. pcm-bench goodput between two processes -------------------------------------------

bench_results=$logs/bench.jsonl
: >"$bench_results"
for qp in uc rc; do
	for size in 4096 65536 1048576 4194304; do
		port=$((port + 1))
		args=(goodput --datapath verbs --gid-index 1 --qp "$qp" --policy swift
			--msg-size "$size" --seconds "${RXE_BENCH_SECONDS:-1}")
		run_pair "$logs/bench-$qp-$size" $port \
			"$bench" "${args[@]}" --device rxe1 --listen "$PCM_RXE_IP1:$port" -- \
			"$bench" "${args[@]}" --device rxe0 --connect "$PCM_RXE_IP1:$port" ||
			fail "pcm-bench goodput $qp $size-byte messages"
		grep -q '"verified":true' "$logs/bench-$qp-$size.server" ||
			fail "pcm-bench goodput $qp $size: the receiver printed no verified line"
		grep '"role":"sender"' "$logs/bench-$qp-$size.client" >>"$bench_results" ||
			fail "pcm-bench goodput $qp $size: the sender printed no JSON line"
		tail -1 "$bench_results"
	done
done
# the check can fail: a receiver expecting another seed's bytes refuses, and so does the sender
port=$((port + 1))
args=(goodput --datapath verbs --gid-index 1 --policy swift --msg-size 4096 --seconds 0.5)
if run_pair "$logs/bench-wrong-seed" $port \
	"$bench" "${args[@]}" --seed 2 --device rxe1 --listen "$PCM_RXE_IP1:$port" -- \
	"$bench" "${args[@]}" --seed 1 --device rxe0 --connect "$PCM_RXE_IP1:$port" 2>/dev/null; then
	fail "pcm-bench goodput: a receiver with another --seed passed the bytes"
fi
grep -q 'mismatch: message 0: byte 0 ' "$logs/bench-wrong-seed.server" ||
	fail "pcm-bench goodput, wrong seed: the receiver did not name the first bad byte"
grep -q 'the receiver found a mismatch' "$logs/bench-wrong-seed.client" ||
	fail "pcm-bench goodput, wrong seed: the sender did not report the receiver's mismatch"
echo "pcm-bench goodput: a receiver expecting another seed refused the bytes, both exited non-zero"

# ---- 2. ib_write_bw in the same run, and the ratio --------------------------------------------

for qp in UC RC; do
	# No second try here: ib-write-bw-gbps's QP timeout removed the spurious
	# retransmissions that made rdma_rxe end RC runs in status 9, and it
	# reruns by itself only a run that perftest could not time.
	ib=$("$here/../ib-write-bw-gbps" --server-dev rxe1 --client-dev rxe0 -- \
		-c $qp -s 65536 -n 200 2>"$logs/ib-$qp.log") || {
		cat "$logs/ib-$qp.log" >&2
		fail "ib_write_bw $qp"
	}
	pcm=$(field "$(grep "\"qp\":\"$qp\"" "$results" | grep '"max_size":65536,' | head -1)" goodput_gbps)
	ratio=$(awk -v a="$pcm" -v b="$ib" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')
	printf '{"bench":"verbs_vs_ib_write_bw","qp":"%s","msg_size":65536,"pcm_goodput_gbps":%s,"ib_write_bw_gbps":%s,"ratio":%s,"guest_cpu":"%s"}\n' \
		$qp "$pcm" "$ib" "$ratio" "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	for line in $(grep "\"qp\":\"$qp\"" "$bench_results" | tr -d ' '); do
		pcm=$(field "$line" goodput_gbps)
		printf '{"bench":"pcm_bench_vs_ib_write_bw","qp":"%s","msg_size":%s,"pcm_goodput_gbps":%s,"ib_write_bw_gbps":%s,"ib_msg_size":65536,"ratio":%s}\n' \
			$qp "$(field "$line" msg_size)" "$pcm" "$ib" \
			"$(awk -v a="$pcm" -v b="$ib" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }')"
	done
done

# ---- 3. 1% loss on the wire -------------------------------------------------------------------

tc qdisc add dev eth0 root netem loss 1% || fail "cannot install netem on eth0"
# On rxe the datapath cuts one-packet chunks (one MTU): rdma_rxe's UC responder
# stops accepting writes on a QP once a middle or last packet of a
# multi-packet write was lost (docs/transport.md "What rxe lacks").
line=$(pair loss-UC --policy swift --size 65536 --msgs 16) ||
	fail "UC under 1% loss"
uc_retx=$(field "$line" chunks_retx)
[ "$uc_retx" -gt 0 ] || fail "UC under 1% loss: pcm counted no retransmission"
echo "UC under 1% loss: byte-exact, $uc_retx chunks retransmitted by pcm"
nic_before=$(hw_counter rxe0 completer_retry_err)
line=$(pair loss-RC --rc --policy swift --size 65536 --msgs 16) || fail "RC under 1% loss"
nic_retx=$(($(hw_counter rxe0 completer_retry_err) - nic_before))
retx=$(field "$line" chunks_retx)
dropped=$(tc -s qdisc show dev eth0 | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p')
tc qdisc del dev eth0 root
[ "$retx" -eq 0 ] || fail "RC under 1% loss: pcm retransmitted $retx chunks (the NIC's job)"
[ "$nic_retx" -gt 0 ] || fail "RC under 1% loss: rxe0 counted no retry (netem dropped $dropped)"
printf '{"check":"verbs_loss","loss_pct":1,"netem_dropped_pkts":%d,"uc_pcm_retx_chunks":%d,"rc_nic_retries":%d,"rc_pcm_retx_chunks":%d}\n' \
	"$dropped" "$uc_retx" "$nic_retx" "$retx"

# ---- 4. random cases --------------------------------------------------------------------------

rc=0
for seed in $(seq 1 "${RXE_VERBS_SEEDS:-2}"); do
	random_case "$seed" "$@" || rc=1
done
[ $rc -eq 0 ] || fail "a random case failed"
echo "verbs transfers: every message byte-exact and exactly once"
