#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# skip-reasons.sh - on the host, without booting: vm-run exits 2 for a bad
# option, and 77 naming what is missing when it cannot run the VM (no qemu,
# no busybox-static, no kernel image, a missing tool).
set -euo pipefail
vm_run=$(cd "$(dirname "$0")/.." && pwd)/vm-run

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect STATUS REASON [ENV=VALUE...] -- VM_RUN_ARG...
expect() {
	local want=$1 reason=$2 envs=() rc=0 err
	shift 2
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	err=$(env -u PCM_RXE_QEMU -u PCM_RXE_BUSYBOX "${envs[@]}" "$vm_run" "$@" 2>&1 >/dev/null) || rc=$?
	[ $rc -eq "$want" ] || fail "vm-run $*: exit $rc, expected $want ($err)"
	grep -qF -- "$reason" <<<"$err" || fail "vm-run $*: '$err' does not say '$reason'"
	echo "vm-run $*: exit $rc: $(head -n 1 <<<"$err")"
}

# Options are checked before the host, and qemu first of all.
expect 2 "--mode turbo: expected fast or systemd" -- --mode turbo true
expect 2 "--cpus 0: expected a count >= 1" -- --cpus 0 true
expect 2 "no command given" -- --mem 512
expect 77 "no /nonexistent/qemu-system-x86_64 (install qemu-system-x86)" \
	PCM_RXE_QEMU=/nonexistent/qemu-system-x86_64 -- true

# Each later reason shows only on a host that has everything before it.
if ! ready=$(env -u PCM_RXE_QEMU -u PCM_RXE_BUSYBOX "$vm_run" --preflight 2>&1); then
	echo "not checked (this host cannot run the VM itself): $ready"
	exit 0
fi
echo "$ready"
expect 77 "no /nonexistent/busybox (install busybox-static)" PCM_RXE_BUSYBOX=/nonexistent/busybox -- true
expect 77 "no kernel image /nonexistent/vmlinuz-6.1.0-0-amd64" -- --kernel /nonexistent/vmlinuz-6.1.0-0-amd64 true
expect 77 "no pcm-no-such-tool on the shared root" -- --need pcm-no-such-tool true
