#!/bin/bash
# SPDX-License-Identifier: MIT
#
# sim_vs_htsim.sh - pcm-sim against uet-htsim, side by side in one run.
#
#   bench/sim_vs_htsim.sh HTSIM_UEC [PCM_SIM] [ROUNDS]
#
# HTSIM_UEC is uet-htsim's htsim_uec program (built outside pcm: pcm never
# needs it); PCM_SIM defaults to build/cli/sim/pcm-sim; ROUNDS to 3. Two
# cases, each the same flows on both simulators, with NSCC:
#   incast32:  32 senders, 4,000,000 B each, into one receiver. htsim: hosts
#              96..127 into host 0 of its 128-host fat tree (its own fabric);
#              pcm-sim: scenarios/incast-32.yaml (one switch, 3.3 us links,
#              the same 14 us unloaded RTT).
#   perm1024:  a permutation of 1024 hosts (nobody to itself, drawn here
#              with awk's srand(1)), 2,000,000 B each, on a k=16 fat tree
#              (scenarios/fattree-permutation.yaml's fabric for pcm-sim).
# Each round runs, per case: htsim, pcm-sim with its default ACKs (one per
# data packet, the UET page's), and pcm-sim with receiver ACK coalescing
# (nic.AckCoalesceBytes=16384, htsim's -sack_threshold), interleaved. Whole
# processes are measured (measure() below): wall time, user + sys CPU time
# and peak RSS. Data packets: pcm-sim's data_packets; htsim's "New:" +
# "Rtx:" line. The longest flow completion time (max_fct_us) is printed
# beside them: pcm-sim's fct_us.max, htsim's latest "finished at".
#
# Prints one JSON line per run, with its ratio to the htsim run of the same
# round and case (data packets per wall second, and per CPU second), then
# one line per case and simulator with the medians over the rounds.
set -eu

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 HTSIM_UEC [PCM_SIM] [ROUNDS]" >&2
	exit 2
fi
htsim=$(realpath "$1")
top=$(cd "$(dirname "$0")/.." && pwd)
pcm=$(realpath "${2:-$top/build/cli/sim/pcm-sim}")
rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# measure FILE CMD...: run CMD, then write "wall_s cpu_s max_rss_kb" into FILE.
# bash's time gives wall and user + sys to the millisecond (the incast runs
# for about 10 ms; GNU time rounds to 10 ms) and counts GNU time's own
# fraction of a millisecond; GNU time gives the peak RSS of CMD alone.
measure() {
	local file=$1 TIMEFORMAT='%3R %3U %3S' wall user sys
	shift
	{ time /usr/bin/time -f %M -o "$file.rss" "$@" 2>>"$work/stderr"; } 2>"$file.t"
	read -r wall user sys <"$file.t"
	echo "$wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $(cat "$file.rss")" >"$file"
}

# The cases' inputs: htsim's connection matrices and pcm-sim's scenarios.
{
	echo "Nodes 128"
	echo "Connections 32"
	for i in $(seq 0 31); do echo "$((96 + i))->0 id $((i + 1)) start 0 size 4000000"; done
} >"$work/incast32.cm"
awk 'BEGIN {
	n = 1024; srand(1)
	do {
		for (i = 0; i < n; i++) p[i] = i
		for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = p[i]; p[i] = p[j]; p[j] = t }
		ok = 1
		for (i = 0; i < n; i++) if (p[i] == i) ok = 0
	} while (!ok)
	print "Nodes " n > "'"$work"'/perm1024.cm"
	print "Connections " n > "'"$work"'/perm1024.cm"
	for (i = 0; i < n; i++) {
		print i "->" p[i] " id " i + 1 " start 0 size 2000000" > "'"$work"'/perm1024.cm"
		print "  - {src: " i ", dst: " p[i] ", bytes: 2000000}"
	}
}' >"$work/flows.yaml"
sed -e '/^traffic:/,/^  bytes:/d' -e 's/^policy: .*/policy: nscc/' \
	"$top/scenarios/fattree-permutation.yaml" >"$work/perm1024.yaml"
{ echo "flows:"; cat "$work/flows.yaml"; } >>"$work/perm1024.yaml"

# run CASE SIM: one timed run; sets data, fct (the longest flow's, us), wall, cpu, rss_mb
run() {
	local case=$1 sim=$2 out=$work/out time=$work/time
	case $sim in
	htsim)
		local nodes=128 end=15000
		[ "$case" = perm1024 ] && nodes=1024 end=3000
		(cd "$work" && measure "$time" "$htsim" \
			-tm "$work/$case.cm" -nodes $nodes -end $end -sender_cc_algo nscc >"$out" 2>&1)
		data=$(awk '/^New: / { print $2 + $4 }' "$out")
		fct=$(awk '/ finished at / { for (i = 1; i < NF; i++) if ($i == "at" && $(i + 1) > m) m = $(i + 1) }
			   END { print m + 0 }' "$out")
		;;
	pcm-sim*)
		local scn=$work/perm1024.yaml set=()
		[ "$case" = incast32 ] && scn=$top/scenarios/incast-32.yaml
		[ "$sim" = pcm-sim-coalesce ] && set=(--set nic.AckCoalesceBytes=16384)
		measure "$time" "$pcm" "$scn" --policy nscc \
			"${set[@]}" --json >"$out"
		data=$(sed -n 's/.*"data_packets": *\([0-9]*\).*/\1/p' "$out")
		fct=$(sed -n 's/.*"fct_us": *{[^}]*"max": *\([0-9.]*\).*/\1/p' "$out")
		;;
	esac
	read -r wall cpu rss <"$time"
	rss_mb=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
	if [ -z "$data" ]; then
		echo "$0: $sim on $case gave no data packet count:" >&2
		tail -5 "$out" >&2
		exit 1
	fi
}

: >"$work/all"
for r in $(seq "$rounds"); do
	for case in incast32 perm1024; do
		for sim in htsim pcm-sim pcm-sim-coalesce; do
			run "$case" "$sim"
			if [ "$sim" = htsim ]; then
				h_wall=$(awk -v d="$data" -v w="$wall" 'BEGIN { print d / w }')
				h_cpu=$(awk -v d="$data" -v c="$cpu" 'BEGIN { print d / (c > 0 ? c : 0.01) }')
			fi
			awk -v case="$case" -v sim="$sim" -v r="$r" -v d="$data" -v f="$fct" -v w="$wall" \
				-v c="$cpu" -v m="$rss_mb" -v hw="$h_wall" -v hc="$h_cpu" 'BEGIN {
				pw = d / w; pc = d / (c > 0 ? c : 0.01)
				printf "{\"case\": \"%s\", \"sim\": \"%s\", \"round\": %d, \"data_packets\": %d, " \
				       "\"max_fct_us\": %.3f, " \
				       "\"wall_s\": %.2f, \"cpu_s\": %.4f, \"max_rss_mb\": %.1f, " \
				       "\"data_packets_per_wall_s\": %.0f, \"data_packets_per_cpu_s\": %.0f, " \
				       "\"ratio_wall\": %.2f, \"ratio_cpu\": %.2f}\n",
				       case, sim, r, d, f, w, c, m, pw, pc, pw / hw, pc / hc
			}' | tee -a "$work/all"
		done
	done
done

# The medians per case and simulator (of each field on its own).
for case in incast32 perm1024; do
	for sim in htsim pcm-sim pcm-sim-coalesce; do
		grep "\"case\": \"$case\", \"sim\": \"$sim\"," "$work/all" |
			awk -v case="$case" -v sim="$sim" '
			function field(line, k,   m) {
				match(line, "\"" k "\": [0-9.]+"); m = substr(line, RSTART, RLENGTH)
				sub(/.*: /, "", m); return m + 0
			}
			function median(a, n,   i, j, t) {
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
					if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			{ n++; pw[n] = field($0, "data_packets_per_wall_s"); pc[n] = field($0, "data_packets_per_cpu_s")
			  rw[n] = field($0, "ratio_wall"); rc[n] = field($0, "ratio_cpu"); m[n] = field($0, "max_rss_mb")
			  d = field($0, "data_packets"); f = field($0, "max_fct_us") }
			END {
				printf "{\"case\": \"%s\", \"sim\": \"%s\", \"median_of\": %d, \"data_packets\": %d, " \
				       "\"max_fct_us\": %.3f, " \
				       "\"data_packets_per_wall_s\": %.0f, \"data_packets_per_cpu_s\": %.0f, " \
				       "\"max_rss_mb\": %.1f, \"ratio_wall\": %.2f, \"ratio_cpu\": %.2f}\n",
				       case, sim, n, d, f, median(pw, n), median(pc, n), median(m, n), median(rw, n),
				       median(rc, n)
			}'
	done
done
