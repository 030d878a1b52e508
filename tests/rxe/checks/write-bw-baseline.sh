#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# write-bw-baseline.sh - inside the VM: perftest's ib_write_bw completes
# between a server and a client process and reports a positive average
# bandwidth, over RC on one device, and over RC and UC across the wire. It
# prints one JSON line per run. Under TCG these show the speed of the
# emulation, not a line rate; nothing here is compared with a threshold.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm

SIZE_BYTES=65536
ITERS=500

logs=$(log_dir write-bw-baseline)

run() {
	local qp=$1 server_dev=$2 gbps log=$logs/$1-$2.report
	gbps=$("$here/../ib-write-bw-gbps" --server-dev "$server_dev" --client-dev rxe0 -- \
		-c "$qp" -s $SIZE_BYTES -n $ITERS 2>"$log") || {
		cat "$log" >&2
		fail "ib_write_bw $qp rxe0 -> $server_dev failed"
	}
	awk -v v="$gbps" 'BEGIN { exit !(v > 0) }' || {
		cat "$log" >&2
		fail "ib_write_bw $qp rxe0 -> $server_dev reported $gbps Gbit/s"
	}
	printf '{"tool":"ib_write_bw","qp":"%s","client_dev":"rxe0","server_dev":"%s","size_bytes":%d,"iters":%d,"bw_gbit_s":%s}\n' \
		"$qp" "$server_dev" $SIZE_BYTES $ITERS "$gbps"
}

run RC rxe0
run RC rxe1
run UC rxe1
