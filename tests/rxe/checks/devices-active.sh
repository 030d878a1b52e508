#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# devices-active.sh - inside the VM: rxe0 (on eth0) and rxe1 (on eth1)
# exist, ibv_devices and ibv_devinfo list them with port 1 PORT_ACTIVE on an
# Ethernet link layer, and GID index 1 is the netdev's IPv4-mapped address.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
require_vm

devices=$(ibv_devices) || fail "ibv_devices failed"
for i in 0 1; do
	dev=rxe$i
	ip=$(ip_of $dev)
	grep -qw "$dev" <<<"$devices" || fail "ibv_devices does not list $dev: $devices"
	info=$(ibv_devinfo -v -d $dev) || fail "ibv_devinfo -d $dev failed"
	grep -Eq 'state:[[:space:]]+PORT_ACTIVE' <<<"$info" || fail "$dev port 1 is not PORT_ACTIVE: $info"
	grep -Eq 'link_layer:[[:space:]]+Ethernet' <<<"$info" || fail "$dev is not on an Ethernet link layer"
	grep -Eq "GID\[ *1\]:[[:space:]]+::ffff:$ip, RoCE v2" <<<"$info" ||
		fail "$dev GID index 1 is not ::ffff:$ip (RoCE v2): $(grep GID <<<"$info")"
	link=$(rdma link show $dev/1) || fail "rdma link show $dev/1 failed"
	grep -q "state ACTIVE .* netdev eth$i" <<<"$link" || fail "rdma link: $link"
	mtu=$(sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$info")
	echo "$dev: PORT_ACTIVE on eth$i, GID[1] ::ffff:$ip, active MTU $mtu"
done
