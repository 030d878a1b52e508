#!/bin/sh
# SPDX-License-Identifier: MIT
# test_fi_pingpong.sh PCMD PCMCTL PROVDIR - libfabric's own fi_pingpong,
# unmodified, over the pcm provider through pcmd (softnic fabric, each
# process its own host), with its data check (-c) at every size (-S all,
# 0 B .. 6 MiB): connected endpoints (-e msg), and reliable datagrams with
# messages and with tagged messages (-e rdm, -m msg|tagged), which ofi_rxm
# layers on pcm (eager, segmented and, for large sizes, rendezvous by RMA
# read). Every size must be reported by both sides, and pcmd's counters
# must show the bytes going through pcm. Last, -e msg again with the two
# sides' segments of different sizes (FI_PCM_SEGMENT_SIZE 16384 at the
# server): each sends what the other's receives hold.
set -eu
PCMD=$1 PCMCTL=$2 PROVDIR=${3:-}
# shellcheck source-path=SCRIPTDIR source=fi_lib.sh
. "$(dirname "$0")/fi_lib.sh"

start_fabric_pcmd 4

# check NAME SENT_BEFORE: both sides printed every size of -S all, and pcmd
# sent at least the bytes of the runs (each size #sent times, both ways).
check() {
	after=$(pcmd_sent)
	"$PY" - "$DIR/$1.client" "$DIR/$1.server" "$2" "$after" <<'PYEOF'
import re, sys
def rows(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 3 and re.fullmatch(r"\d+(\.\d+)?[km]?", f[0]) and f[1].isdigit():
            assert f[2] == "=" + f[1], "lost transfers: %r" % line
            out[f[0]] = int(f[1])
    return out
want = ["0", "1", "2", "3", "4", "6", "8", "12", "16", "24", "32", "48", "64", "96",
        "128", "192", "256", "384", "512", "768", "1k", "1.5k", "2k", "3k", "4k", "6k",
        "8k", "12k", "16k", "24k", "32k", "48k", "64k", "96k", "128k", "192k", "256k",
        "384k", "512k", "768k", "1m", "1.5m", "2m", "3m", "4m", "6m"]
cli, srv = rows(sys.argv[1]), rows(sys.argv[2])
unit = {"k": 1 << 10, "m": 1 << 20}
def size(s):
    return int(float(s[:-1]) * unit[s[-1]]) if s[-1] in unit else int(s)
for side in (cli, srv):
    assert sorted(side, key=size) == sorted(want, key=size), "sizes %r" % sorted(side, key=size)
moved = int(sys.argv[4]) - int(sys.argv[3])
need = sum(2 * size(s) * n for s, n in cli.items())
assert moved >= need, "pcmd sent %d bytes, the runs %d" % (moved, need)
print("%d sizes, 0 B .. 6 MiB, data checked; pcmd sent %d bytes (the payload: %d)"
      % (len(cli), moved, need))
PYEOF
}

for run in "msg:-e msg" "rdm:-e rdm" "rdm-tagged:-e rdm -m tagged"; do
	name=${run%%:*} args=${run#*:}
	before=$(pcmd_sent)
	# shellcheck disable=SC2086
	pingpong "$name" pcm $args -c -S all ||
		{ cat "$DIR/$name.server" "$DIR/$name.client" >&2; fail "fi_pingpong $args -c -S all"; }
	printf 'fi_pingpong -p pcm %s -c -S all: ' "$args"
	check "$name" "$before" || { cat "$DIR/$name.client" >&2; fail "fi_pingpong $args"; }
done

before=$(pcmd_sent)
PP_SERVER_ENV="FI_PCM_SEGMENT_SIZE=16384" pingpong mixed pcm -e msg -c -S all ||
	{ cat "$DIR/mixed.server" "$DIR/mixed.client" >&2; fail "fi_pingpong with mixed segment sizes"; }
printf 'fi_pingpong -p pcm -e msg -c -S all, segments of 16 KiB and 64 KiB: '
check mixed "$before" || { cat "$DIR/mixed.client" >&2; fail "fi_pingpong, mixed segments"; }
