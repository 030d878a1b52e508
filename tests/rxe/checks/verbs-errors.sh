#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# verbs-errors.sh XFER ERRORS - inside the VM: the verbs datapath's clear
# errors on rxe0, each provoked for real by rxe-verbs-errors (ERRORS; XFER
# is unused here): a device name that does not exist, a uverbs node this
# user may not open, RLIMIT_MEMLOCK too low (as a user without
# CAP_IPC_LOCK), a wrong GID index, an unreachable peer (control address,
# RC write to a missing QP, a bootstrap dial nobody answers). Each case
# checks the -errno and the message.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_vm
[ $# -ge 2 ] || fail "usage: $0 RXE-VERBS-XFER RXE-VERBS-ERRORS [PCM-BENCH]"
errors=$2
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)

uverbs=
for d in /sys/class/infiniband_verbs/uverbs*; do
	[ "$(cat "$d/ibdev" 2>/dev/null)" = rxe0 ] && uverbs=$(basename "$d")
done
[ -n "$uverbs" ] || fail "no uverbs node names rxe0 in /sys/class/infiniband_verbs"
node=/dev/infiniband/$uverbs
[ -c "$node" ] || fail "no uverbs node for rxe0 ($node)"
echo "rxe0's uverbs node: $node ($(stat -c %a "$node"))"

rc=0
"$errors" no-device rxe0 || rc=1
"$errors" gid rxe0 || rc=1
"$errors" unreachable rxe0 "$PCM_RXE_IP0" || rc=1
# memlock: a user without CAP_IPC_LOCK who may open the device
chmod 0666 /dev/infiniband/uverbs*
"${NOBODY[@]}" "$errors" memlock rxe0 || rc=1
# permission: the same user, the node closed to it
chmod 0600 "$node"
"${NOBODY[@]}" "$errors" permission rxe0 || rc=1
chmod 0666 "$node"
[ $rc -eq 0 ] || fail "a verbs error case did not give its error"
echo "every verbs error case gave its -errno and message"
