#!/bin/sh
# SPDX-License-Identifier: MIT
# test_fi_info.sh PCMD PCMCTL PROVDIR - libfabric finds the pcm provider and
# describes it as it is: `fi_info -p pcm` lists an FI_EP_MSG endpoint with
# messages and RMA, addressed by sockaddr_in, in domain "pcmd", only while
# pcmd runs; `fi_info -p 'pcm;ofi_rxm' -t FI_EP_RDM -c FI_TAGGED` lists rxm's
# reliable datagrams with tagged messages on it; what it lacks (datagrams,
# tagged messages or atomics of its own, automatic progress) is not listed;
# in process (FI_PCM_BACKEND=inproc) it needs no pcmd; its FI_PCM_*
# parameters are listed with their help by `fi_info -e`.
set -eu
PCMD=$1 PCMCTL=$2 PROVDIR=${3:-}
# shellcheck source-path=SCRIPTDIR source=fi_lib.sh
. "$(dirname "$0")/fi_lib.sh"

PCMD_SOCKET="$DIR/nobody.sock" fi_info -p pcm >"$DIR/none.out" 2>&1 &&
	fail "fi_info -p pcm listed pcm with no pcmd running: $(cat "$DIR/none.out")"
echo "no pcmd: pcm is not listed"

start_fabric_pcmd 4
fi_info -p pcm -t FI_EP_MSG -v >"$DIR/msg.out" || fail "fi_info -p pcm -t FI_EP_MSG failed"
for want in "prov_name: pcm$" "type: FI_EP_MSG" "addr_format: FI_SOCKADDR_IN" \
	"caps: \[ FI_MSG, FI_RMA, FI_READ, FI_WRITE, FI_RECV, FI_SEND, FI_REMOTE_READ, FI_REMOTE_WRITE" \
	"name: pcmd" "threading: FI_THREAD_SAFE" "data_progress: FI_PROGRESS_MANUAL" \
	"cq_data_size: 8" "msg_order: \[.*FI_ORDER_SAS"; do
	grep -q "$want" "$DIR/msg.out" || { cat "$DIR/msg.out" >&2; fail "fi_info -v: no '$want'"; }
done
[ "$(grep -c '^        type: FI_EP_MSG' "$DIR/msg.out")" -eq 1 ] ||
	{ cat "$DIR/msg.out" >&2; fail "want exactly one FI_EP_MSG fi_info of pcm"; }
echo "fi_info -p pcm: FI_EP_MSG with FI_MSG and FI_RMA, FI_SOCKADDR_IN, domain pcmd"

fi_info -p 'pcm;ofi_rxm' -t FI_EP_RDM -c FI_TAGGED >"$DIR/rdm.out" ||
	fail "fi_info -p 'pcm;ofi_rxm' -t FI_EP_RDM -c FI_TAGGED failed"
grep -q "provider: pcm;ofi_rxm" "$DIR/rdm.out" && grep -q "type: FI_EP_RDM" "$DIR/rdm.out" ||
	{ cat "$DIR/rdm.out" >&2; fail "no pcm;ofi_rxm FI_EP_RDM"; }
echo "fi_info -p 'pcm;ofi_rxm' -t FI_EP_RDM -c FI_TAGGED: listed"

for refused in "-t FI_EP_DGRAM" "-t FI_EP_MSG -c FI_TAGGED" "-t FI_EP_MSG -c FI_ATOMIC"; do
	# shellcheck disable=SC2086
	fi_info -p pcm $refused >"$DIR/refused.out" 2>&1 &&
		{ cat "$DIR/refused.out" >&2; fail "fi_info -p pcm $refused listed something"; }
done
echo "not listed: datagrams, FI_EP_MSG with tagged messages or atomics"

FI_PCM_BACKEND=inproc PCMD_SOCKET="$DIR/nobody.sock" fi_info -p pcm -t FI_EP_MSG >"$DIR/inproc.out" ||
	fail "FI_PCM_BACKEND=inproc: not listed"
grep -q "domain: inproc-null" "$DIR/inproc.out" || { cat "$DIR/inproc.out" >&2; fail "inproc domain"; }
echo "FI_PCM_BACKEND=inproc: domain inproc-null, no pcmd needed"

fi_info -e >"$DIR/env.out" 2>&1 || true
for p in BACKEND DATAPATH ADDR POLICY REGION_MB SEGMENT_SIZE RING SLOTS; do
	grep -aq "FI_PCM_$p:" "$DIR/env.out" || fail "fi_info -e does not list FI_PCM_$p"
done
echo "fi_info -e: FI_PCM_* parameters listed"
