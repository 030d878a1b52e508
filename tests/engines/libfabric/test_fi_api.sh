#!/bin/sh
# SPDX-License-Identifier: MIT
# test_fi_api.sh PCMD PCMCTL PROVDIR TEST_FI_API - the provider's API tests
# (test_fi_api.c) in both backends: through pcmd on its softnic fabric (the
# default), then in process (FI_PCM_BACKEND=inproc, the null datapath).
set -eu
PCMD=$1 PCMCTL=$2 PROVDIR=${3:-} TEST=${4:-}
# shellcheck source-path=SCRIPTDIR source=fi_lib.sh
. "$(dirname "$0")/fi_lib.sh"
[ -x "$TEST" ] || { echo "skipped: test_fi_api is not built"; exit 77; }

start_fabric_pcmd 4
timeout 300 "$TEST" || fail "test_fi_api through pcmd"
wait_reclaimed
FI_PCM_BACKEND=inproc timeout 300 "$TEST" || fail "test_fi_api in process"
