#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# status-roundtrip.sh - on the host, one fast-mode boot: vm-run returns the
# guest command's exit status, stdout and stderr separately, runs it in
# the caller's directory with --env applied, and a --share directory is
# written back to the host.
set -euo pipefail
vm_run=$(cd "$(dirname "$0")/.." && pwd)/vm-run

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

share=$(mktemp -d)
out=$share.out
err=$share.err
trap 'rm -rf "$share" "$out" "$err"' EXIT

rc=0
(cd "$share" && "$vm_run" --share "$share" --env PCM_PROBE="a b" -- \
	bash -c 'echo "to stdout $PCM_PROBE"; echo "to stderr" >&2; pwd >written-in-vm; exit 3') \
	>"$out" 2>"$err" || rc=$?
[ $rc -ne 77 ] || {
	cat "$err"
	exit 77
}
[ $rc -eq 3 ] || fail "exit status $rc, expected 3: $(cat "$err")"
[ "$(cat "$out")" = "to stdout a b" ] || fail "stdout: '$(cat "$out")'"
[ "$(cat "$err")" = "to stderr" ] || fail "stderr: '$(cat "$err")'"
[ "$(cat "$share/written-in-vm" 2>/dev/null)" = "$share" ] ||
	fail "the guest did not write $share/written-in-vm from the caller's directory"
echo "exit status 3, stdout and stderr kept apart, --env and --share work"
