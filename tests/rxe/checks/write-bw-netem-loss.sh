#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# write-bw-netem-loss.sh - inside the VM: a tc/netem rule dropping 1% of
# eth0's packets installs, the rule really drops rxe0 -> rxe1 RDMA traffic,
# rdma_rxe retransmits, and ib_write_bw over RC still completes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm

LOSS_PCT=1
SIZE_BYTES=65536
ITERS=200

tc qdisc add dev eth0 root netem loss ${LOSS_PCT}% || fail "cannot install netem on eth0"
rule=$(tc qdisc show dev eth0)
grep -q "netem .*loss ${LOSS_PCT}%" <<<"$rule" || fail "eth0 has no netem loss rule: $rule"
echo "eth0: $rule"

retries_before=$(hw_counter rxe0 completer_retry_err)
gbps=$("$here/../ib-write-bw-gbps" --server-dev rxe1 --client-dev rxe0 -- \
	-c RC -s $SIZE_BYTES -n $ITERS 2>/dev/null) || fail "ib_write_bw RC under ${LOSS_PCT}% loss failed"
retries=$(($(hw_counter rxe0 completer_retry_err) - retries_before))
stats=$(tc -s qdisc show dev eth0)
dropped=$(sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' <<<"$stats")
sent=$(sed -n 's/.*Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' <<<"$stats")
tc qdisc del dev eth0 root

[ "${dropped:-0}" -gt 0 ] || fail "netem dropped nothing of $sent packets: did the traffic bypass eth0?"
[ "$retries" -gt 0 ] || fail "netem dropped $dropped packets but rxe0 counted no retry"
printf '{"tool":"ib_write_bw","qp":"RC","loss_pct":%d,"size_bytes":%d,"iters":%d,"bw_gbit_s":%s,"eth0_sent_pkts":%d,"netem_dropped_pkts":%d,"rxe0_completer_retries":%d}\n' \
	$LOSS_PCT $SIZE_BYTES $ITERS "$gbps" "$sent" "$dropped" "$retries"
