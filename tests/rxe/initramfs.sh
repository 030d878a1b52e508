#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# initramfs.sh - build the rxe harness's initramfs: a static busybox, the
# harness's /init (init.sh) and the kernel modules the VM needs, in the
# order insmod must load them.
#
#   initramfs.sh KERNEL_VERSION BUSYBOX OUT.cpio
#
# The list below is everything the guest loads before it switches to the
# shared root: 9p and overlayfs to mount that root, virtio-net for the two
# NICs, rdma_rxe and ib_uverbs for soft-RoCE, sch_netem for loss rules.
# Later requests (rdma_rxe's request_module calls, tc filters...) are served
# by modprobe from the shared root's /lib/modules. Dependencies come from
# kmod's own resolver (modprobe --show-depends), never from a list here.
set -euo pipefail

MODULES=(
	9p
	9pnet_virtio
	ib_uverbs
	overlay
	rdma_rxe
	sch_netem
	virtio_net
	virtio_pci
)

die() {
	echo "initramfs.sh: $*" >&2
	exit 1
}

[ $# -eq 3 ] || die "usage: initramfs.sh KERNEL_VERSION BUSYBOX OUT.cpio"
kver=$1
busybox=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)

stage=$(mktemp -d "${out}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,lib/modules,lower,newroot,proc,rw,sys}
cp "$busybox" "$stage/bin/busybox"
cp "$here/init.sh" "$stage/init"
chmod 0755 "$stage/init"

# One .ko per line, first needed first, each once.
deps=$(modprobe -a --show-depends -S "$kver" "${MODULES[@]}") ||
	die "modprobe --show-depends -S $kver failed: are the modules of kernel $kver installed?"
awk '$1 == "insmod" && !seen[$2]++ { print $2 }' <<<"$deps" |
	while read -r ko; do
		name=$(basename "$ko")
		case $name in
		*.ko) cp "$ko" "$stage/lib/modules/$name" ;;
		*.ko.xz) "$busybox" xzcat "$ko" >"$stage/lib/modules/${name%.xz}" ;;
		*.ko.zst) zstd -q -dc "$ko" >"$stage/lib/modules/${name%.zst}" ;;
		*) die "$ko: unknown module compression" ;;
		esac
		echo "${name%.ko*}.ko" >>"$stage/lib/modules/load-order"
	done
[ -s "$stage/lib/modules/load-order" ] || die "no modules resolved for kernel $kver"

(cd "$stage" && find . | LC_ALL=C sort | "$busybox" cpio -o -H newc 2>/dev/null) >"$out.tmp"
mv "$out.tmp" "$out"
