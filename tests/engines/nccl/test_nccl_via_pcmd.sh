#!/bin/sh
# SPDX-License-Identifier: MIT
# test_nccl_via_pcmd.sh PCMD PCMCTL HARNESS [SEEDS] - the NCCL plugin through pcmd: pcmd on its
# embedded softnic fabric (4 hosts) with its socket in a scratch directory, then the harness as
# two processes (each its own emulated host) for ncclNetPlugin_v8, v9 and v10 on SEEDS seeds
# (default 2) with the daemon backend (the plugin's default), then once with a shared region
# too small to stage every posted receive. Every byte the receivers checked went through pcmd
# (its rx_bytes grew by at least as much), pcmd held no flow once every comm was closed (the
# harness asks pcmctl while both processes live), and pcmd stops cleanly.
set -eu
PCMD=$1 PCMCTL=$2 HARNESS=$3 SEEDS=${4:-2}
TRAFFIC=/nonexistent # pcmctl_lib.sh's start_traffic is not used here
# shellcheck source-path=SCRIPTDIR source=../../integration/pcmctl_lib.sh
. "$(dirname "$0")/../../integration/pcmctl_lib.sh"

start_pcmd <<YAML
datapath: {kind: softnic, softnic: {hosts: 4}}
YAML
stat_of() { "$PCMCTL" stats | awk -v k="$1" '$1 == k { print $2 }'; }

rx_before=$(stat_of rx_bytes)
unset PCM_NCCL_BACKEND
PCM_NCCL_REGION_MB=64 "$HARNESS" --mode procs --seeds "$SEEDS" --rounds 100 --pcmctl "$PCMCTL" \
	>"$DIR/harness.out" 2>&1 || { cat "$DIR/harness.out" >&2; fail "the harness failed through pcmd"; }
# A region of 4 MiB for receives of up to 260 KiB, 8 to a group: operations wait in their
# connection's queue for staging room, accepted, while the ones posted before them drain.
PCM_NCCL_REGION_MB=4 "$HARNESS" --mode procs --version 10 --seed 3 --rounds 100 \
	--max-size 262144 --pcmctl "$PCMCTL" >>"$DIR/harness.out" 2>&1 ||
	{ cat "$DIR/harness.out" >&2; fail "the harness failed through pcmd with a 4 MiB region"; }
cat "$DIR/harness.out"
rx_after=$(stat_of rx_bytes)
checked=$(awk '/receiver:/ { sum += $5 } END { print sum + 0 }' "$DIR/harness.out")
[ "$checked" -gt 0 ] || fail "the receivers checked no bytes"
[ $((rx_after - rx_before)) -ge "$checked" ] ||
	fail "pcmd received $((rx_after - rx_before)) bytes, the receivers checked $checked"
echo "pcmd: rx_bytes grew by $((rx_after - rx_before)), the receivers checked $checked bytes"

kill -TERM "$PCMD_PID"
rc=0
wait "$PCMD_PID" || rc=$?
PCMD_PID=
[ "$rc" -eq 0 ] || fail "pcmd exited with $rc"
echo "pcmd stopped cleanly"
