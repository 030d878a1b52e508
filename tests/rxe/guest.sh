#!/bin/bash
# SPDX-License-Identifier: MIT
#
# guest.sh - the rxe harness inside the VM, run from the job share
# (/run/pcm-rxe) on the shared root.
#
#   guest.sh net   wire eth0 (10.0.2.15/24) to eth1 (10.0.3.15/24) and put
#                  rxe0 on eth0, rxe1 on eth1; log in setup.log
#   guest.sh job   run job.sh; its stdout, stderr and exit status (and the
#                  guest's uptime when it started and ended) go to the job
#                  share, where the host picks them up
#
# As PID 1 (fast mode) it does both and powers the VM off. Under systemd,
# pcm-rxe-net.service and pcm-rxe-job.service run the two halves.
#
# Why two NICs: rxe short-cuts a packet whose destination MAC is its own
# netdev's, so rxe0 to rxe0 never reaches a qdisc and a netem rule on eth0
# would never see it. rxe0 to rxe1 does leave eth0 and arrive on eth1 (qemu
# joins the two NICs through a hub) once the local routing table stops
# claiming the peer address: lookups bound to eth0 or eth1 hit their own
# table first, with a permanent neighbour entry for the peer, and the input
# side accepts a local source address (sysctl.conf).
set -euo pipefail

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
JOB=/run/pcm-rxe
IP0=10.0.2.15
IP1=10.0.3.15
PORT_WAIT_TENTHS=100

# port_gid_of IPV4: the RoCEv2 GID of an IPv4 address (IPv4-mapped IPv6),
# as sysfs prints it.
port_gid_of() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
}

# wait_port_ready DEV IPV4: until port 1 of DEV is ACTIVE with the address's
# GID at index 1, which is what GID-index-1 users (perftest -x 1,
# ibv_*_pingpong -g 1) need. Builtins only: under TCG every exec costs.
wait_port_ready() {
	local dev=$1 gid port=/sys/class/infiniband/$1/ports/1 tries=0 state= port_gid=
	gid=$(port_gid_of "$2")
	while :; do
		{ read -r state <"$port/state"; } 2>/dev/null || state=
		{ read -r port_gid <"$port/gids/1"; } 2>/dev/null || port_gid=
		[[ $state != *ACTIVE* || $port_gid != "$gid" ]] || return 0
		tries=$((tries + 1))
		if [ $tries -ge $PORT_WAIT_TENTHS ]; then
			echo "guest.sh: $dev port 1 is '$state' with GID '$port_gid' at index 1, expected ACTIVE and $gid" >&2
			return 1
		fi
		sleep 0.1
	done
}

# wire_to NETDEV PEER_IP PEER_NETDEV TABLE: the ip commands that route
# output bound to NETDEV for PEER_IP out of NETDEV itself, to PEER_NETDEV's
# MAC.
wire_to() {
	local mac
	read -r mac <"/sys/class/net/$3/address"
	echo "rule add pref $4 oif $1 lookup $4"
	echo "route add $2/32 dev $1 table $4"
	echo "neigh replace $2 lladdr $mac dev $1 nud permanent"
}

# hosts_file: a root without /etc/hosts (a minimal container image, where the
# runtime usually mounts one) gets the loopback names in the guest's overlay.
# Without "localhost", libfabric's fi_pingpong server finds no verbs
# endpoint (fi_getinfo -ENODATA) although rxe0 is up.
hosts_file() {
	[ -e /etc/hosts ] && return 0
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >/etc/hosts
}

# One ip and one rdma process for the lot: under TCG every exec costs.
# (rdma's long options take two dashes: -batch would be -b atch.)
net_up() {
	hosts_file
	ip -batch - <<-NET
		link set lo up
		addr add $IP0/24 dev eth0
		addr add $IP1/24 dev eth1
		link set eth0 up
		link set eth1 up
		rule add pref 100 lookup local
		rule del pref 0 lookup local
		$(wire_to eth0 "$IP1" eth1 10)
		$(wire_to eth1 "$IP0" eth0 11)
	NET
	sysctl -q -p "$JOB/sysctl.conf"
	rdma --batch - <<-RDMA
		link add rxe0 type rxe netdev eth0
		link add rxe1 type rxe netdev eth1
	RDMA
	wait_port_ready rxe0 "$IP0"
	wait_port_ready rxe1 "$IP1"
	rdma link show
}

job_run() {
	local rc=0 start_s end_s
	read -r start_s _ </proc/uptime
	export PCM_RXE_JOB=$JOB PCM_RXE_IP0=$IP0 PCM_RXE_IP1=$IP1 HOME=/root
	if [ -d /run/systemd/system ]; then
		export PCM_RXE_MODE=systemd
	else
		export PCM_RXE_MODE=fast
	fi
	bash "$JOB/job.sh" >"$JOB/stdout" 2>"$JOB/stderr" </dev/null || rc=$?
	read -r end_s _ </proc/uptime
	echo "$start_s $end_s" >"$JOB/uptime"
	echo "$rc" >"$JOB/status.tmp"
	mv "$JOB/status.tmp" "$JOB/status"
}

# As PID 1 there is nothing to return to: whatever happens, power off (sysrq
# 'o' needs no tool from the shared root, which may lack busybox or systemd)
# and wait for it, since PID 1 exiting would panic the kernel.
boot_fast() {
	trap 'sync; echo o >/proc/sysrq-trigger; while :; do :; done' EXIT
	mkdir -p /dev/pts /dev/shm
	mount -t devpts -o gid=5,mode=620 devpts /dev/pts
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	# Neither 'net_up || ...' nor a subshell inheriting 'set +e': both would
	# switch errexit off inside net_up.
	local rc
	set +e
	(
		set -e
		net_up
	) >>"$JOB/setup.log" 2>&1
	rc=$?
	set -e
	if [ $rc -eq 0 ]; then
		job_run
	fi
}

if [ $$ -eq 1 ]; then
	boot_fast
	exit 0
fi
case "${1:-}" in
net) net_up >>"$JOB/setup.log" 2>&1 ;;
job) job_run ;;
*)
	echo "usage: guest.sh net|job (as PID 1: both, then power off)" >&2
	exit 2
	;;
esac
