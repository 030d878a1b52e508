#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# pvh-image.sh - unpack a bzImage's XZ payload into an ELF vmlinux that
# qemu boots through its PVH entry point.
#
#   pvh-image.sh KERNEL_VERSION BZIMAGE OUT
#
# That skips the decompression the bzImage does inside the guest, which
# under TCG costs about 3 s of every boot. Exit status 1 when the kernel
# cannot be booted that way (no CONFIG_PVH, another compression, no xz):
# the caller then boots the bzImage itself.
set -euo pipefail

[ $# -eq 3 ] || {
	echo "usage: pvh-image.sh KERNEL_VERSION BZIMAGE OUT" >&2
	exit 2
}
grep -qx 'CONFIG_PVH=y' "/boot/config-$1" 2>/dev/null || exit 1
command -v xz >/dev/null || exit 1
offset=$(LC_ALL=C grep -obUaP -m 1 '\xfd7zXZ\x00' "$2" | head -n 1 | cut -d: -f1) || exit 1
[ -n "$offset" ] || exit 1
# Not a pipe: xz stops at the end of its stream, and tail would then die of
# SIGPIPE.
xz -dc --single-stream <(tail -c +$((offset + 1)) "$2") >"$3" 2>/dev/null || exit 1
[ "$(head -c 4 "$3" | od -An -c | tr -d ' ')" = '177ELF' ]
