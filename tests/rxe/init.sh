#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# init.sh - /init of the rxe harness's initramfs (built by initramfs.sh).
#
# It loads the modules, mounts the host root (9p, read-only) as the lower
# layer of an overlay whose upper layer is a tmpfs, mounts the job share at
# /run/pcm-rxe and every read-write share listed in /run/pcm-rxe/shares at
# its host path, then switch_root's into the init= of the kernel command
# line: the harness's guest.sh (fast mode) or /lib/systemd/systemd, for
# which it first installs the harness's units and its sysctl and tmpfiles
# drop-ins.
# switch_root, not chroot: rdma_rxe calls back into modprobe at run time,
# and that must find the real root's modules and configuration.

/bin/busybox --install -s /bin
export PATH=/bin

JOB=/newroot/run/pcm-rxe
MOUNT_9P="-t 9p -o trans=virtio,version=9p2000.L,msize=262144"

fail() {
	echo "pcm-rxe init: $*" >&2
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

while read -r ko; do
	insmod "/lib/modules/$ko" || fail "insmod $ko failed"
done </lib/modules/load-order

# Host files do not change while the VM runs, so the root may cache freely.
mount $MOUNT_9P,ro,cache=loose hostroot /lower || fail "cannot mount the host root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "cannot mount the overlay's tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
	fail "cannot mount the overlay root"

# The host may be a container; the VM is not one. systemd would see the
# host's marker files and run in container mode (no kernel command line, no
# systemd.unit=), so the overlay hides them.
rm -f /newroot/.dockerenv /newroot/run/.containerenv

mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fail "cannot mount /run"
mkdir -p "$JOB"
mount $MOUNT_9P pcmjob "$JOB" || fail "cannot mount the job share (9p tag pcmjob)"
if [ -f "$JOB/shares" ]; then
	while read -r tag path; do
		mkdir -p "/newroot$path"
		mount $MOUNT_9P "$tag" "/newroot$path" || fail "cannot mount share $tag at $path"
	done <"$JOB/shares"
fi

init=
for arg in $(cat /proc/cmdline); do
	case $arg in
	init=*) init=${arg#init=} ;;
	esac
done
[ -n "$init" ] || fail "no init= on the kernel command line"
[ -x "/newroot$init" ] || fail "init $init is not an executable in the shared root"

case $init in
*/systemd)
	cp "$JOB"/units/* /newroot/etc/systemd/system/ || fail "cannot install the harness's units"
	mkdir -p /newroot/etc/sysctl.d /newroot/etc/tmpfiles.d
	cp "$JOB/sysctl.conf" /newroot/etc/sysctl.d/90-pcm-rxe.conf || fail "cannot install sysctl.conf"
	cp "$JOB/tmpfiles-tmp.conf" /newroot/etc/tmpfiles.d/tmp.conf || fail "cannot install tmpfiles-tmp.conf"
	;;
esac

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec switch_root /newroot "$init"
fail "switch_root to $init failed"
