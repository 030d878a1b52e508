#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pingpong.sh - inside the VM: rdma-core's ibv_rc_pingpong and
# ibv_uc_pingpong, a server and a client process each, with GID index 1 and
# received-buffer validation (-c), complete every iteration both on one
# device (rxe0 to rxe0) and across the wire (rxe0 to rxe1).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
require_vm

ITERS=100
SIZE_BYTES=4096
PORT=18515
logs=$(log_dir pingpong)

for qp in rc uc; do
	for server_dev in rxe0 rxe1; do
		opts=(-g 1 -c -n $ITERS -s $SIZE_BYTES -p $PORT)
		log=$logs/$qp-$server_dev
		run_pair "$log" $PORT ibv_${qp}_pingpong -d $server_dev "${opts[@]}" -- \
			ibv_${qp}_pingpong -d rxe0 "${opts[@]}" "$(ip_of $server_dev)" ||
			fail "ibv_${qp}_pingpong rxe0 -> $server_dev failed"
		grep -q "^$ITERS iters in" "$log.client" ||
			fail "ibv_${qp}_pingpong rxe0 -> $server_dev did not report $ITERS iterations"
		echo "ibv_${qp}_pingpong rxe0 -> $server_dev: $(grep 'iters in' "$log.client")"
	done
done
