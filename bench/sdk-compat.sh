#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sdk-compat.sh SDK_DIR [BUILD_DIR] - build the PCM SDK's 11 evaluated
# packages and momentum (whose `!eval` calls min()) unchanged with pcmc and run each through the 8:1 incast of
# scenarios/incast-8.yaml in pcm-sim, beside pcm's own port of the same
# algorithm; print the table of docs/sdk-compat.md (Markdown) and, before it,
# every command run.
#
# SDK_DIR is a checkout of github.com/amerinor01/pcm (nothing of it is in
# this repository); BUILD_DIR is a pcm build tree (default: build).
# The only inputs are the SDK's own files: tcp_utils.c as the extra source
# where the SDK's CMake adds it, and its algorithms/fabric.yaml.
set -euo pipefail

sdk=${1:?usage: bench/sdk-compat.sh SDK_DIR [BUILD_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${2:-$root/build}" && pwd)
alg=$sdk/algorithms
pcmc=$build/cli/pcmc
sim=$build/cli/sim/pcm-sim
scenario=$root/scenarios/incast-8.yaml
out=$(mktemp -d "${TMPDIR:-/tmp}/pcm-sdk-compat.XXXXXX")
trap 'rm -rf "$out"' EXIT

# name | extra sources (the SDK's CMake) | pcm's port | kind
packages="newreno|tcp_utils.c|newreno|cc
dctcp|tcp_utils.c|dctcp|cc
cubic||cubic|cc
uec_dctcp||uec_dctcp|cc
swift||swift|cc
smartt||smartt|cc
nscc||nscc|cc
ops_lb||ops|lb
reps||reps|lb
strack||strack|lb
strack_light|||lb
momentum|||cc"

field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }

# "max FCT / ideal (max FCT us, completed/flows, retransmits)" of one pcm-sim run
figure() {
	local json
	if ! json=$("$sim" "$scenario" "$@" --json </dev/null 2>"$out/sim.err"); then
		echo "fails: $(tail -n1 "$out/sim.err")"
		return
	fi
	printf '%s (max FCT %s us, %s/%s flows, %s retransmits)' \
		"$(field max_fct_over_ideal <<<"$json")" \
		"$(sed -n 's/.*"fct_us":{[^}]*"max":\([0-9.]*\)}.*/\1/p' <<<"$json")" \
		"$(field completed <<<"$json")" "$(field flows <<<"$json")" \
		"$(field retransmits <<<"$json")"
}

rows=()
cd "$sdk" # the commands name the SDK's files as its CMake does: algorithms/...
while IFS='|' read -r name extra port kind; do
	srcs="algorithms/$name.yaml algorithms/$name.c"
	[ -n "$extra" ] && srcs="$srcs algorithms/$extra"
	cmd="pcmc build $srcs --fabric algorithms/fabric.yaml -o $name.so"
	echo "\$ $cmd" >&2
	# shellcheck disable=SC2086
	if "$pcmc" build $srcs --fabric algorithms/fabric.yaml -o "$out/$name.so" \
		</dev/null >"$out/build.log" 2>&1; then
		built=yes
	else
		built="no: $(grep -m1 -E 'error|pcmc:' "$out/build.log" || tail -n1 "$out/build.log")"
	fi
	sdk_cc="-"
	sdk_lb="-"
	ours="-"
	if [ "$built" = yes ]; then
		echo "\$ pcm-sim scenarios/incast-8.yaml --policy $name.so" >&2
		sdk_cc=$(figure --policy "$out/$name.so")
	fi
	if [ "$kind" = lb ]; then
		if [ "$built" = yes ]; then
			echo "\$ pcm-sim scenarios/incast-8.yaml --lb $name.so" >&2
			sdk_lb=$(figure --lb "$out/$name.so")
		fi
		[ -n "$port" ] && ours="$port, --lb: $(figure --lb "$port")"
	else
		ours="$port: $(figure --policy "$port")"
	fi
	rows+=("| $name | $built | \`$cmd\` | $sdk_cc | $sdk_lb | $ours |")
done <<<"$packages"

echo "| package | builds | command | \`--policy PKG.so\`: max FCT / ideal | \`--lb PKG.so\` beside swift | pcm's port, same run |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
