#!/bin/sh
# SPDX-License-Identifier: MIT
# test_sweep_parallel.sh PCM_SIM SCENARIO - the script of pcm-sim sweep --emit parallel,
# run by GNU parallel on this machine: every shard runs, the records merge in
# cell order, and running it again does no work (the shards resume); then
# with --sshloginfile naming two machines that an ssh of the test's own
# reaches (it runs the command here): the shards run on both and merge.
# Exit 77 without GNU parallel.
set -u
PCM_SIM=$1
SCENARIO=$2

fail() {
	echo "FAIL: $*"
	[ -f "$dir/log" ] && cat "$dir/log"
	exit 1
}

if ! command -v parallel >/dev/null 2>&1; then
	echo "skip: no GNU parallel here (Debian: apt-get install parallel)"
	exit 77
fi
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
	echo "skip: the parallel on PATH is not GNU parallel (moreutils has another)"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
cp "$SCENARIO" one.yaml
cat >g.yaml <<'YAML'
scenarios: [one.yaml]
policies: [swift, dctcp, nscc]
seeds: [1, 2]
YAML

"$PCM_SIM" sweep --emit parallel g.yaml -o out --shards 4 >run.sh 2>emit.log ||
	fail "--emit parallel: $(cat emit.log)"
grep -q '^parallel --quote --jobs 100% .* --shard {}/4 -j 1 --resume --quiet ::: $(seq 0 3)$' run.sh ||
	fail "the script does not run 4 shards with parallel: $(cat run.sh)"
sh run.sh >log 2>&1 || fail "the script failed"
grep -q "6 of 6 cells recorded: 6 ok" log || fail "the records did not merge"
[ "$(wc -l <out/results.jsonl)" -eq 6 ] || fail "results.jsonl has not 6 lines"
i=0
while [ $i -lt 6 ]; do
	sed -n "$((i + 1))p" out/results.jsonl | grep -q "^{\"cell\":$i,\"cells\":6,.*\"status\":\"ok\"" ||
		fail "line $((i + 1)) of results.jsonl is not cell $i, ok"
	i=$((i + 1))
done

# again: every shard finds its cells recorded
before=$(ls -l --time-style=full-iso out/cells/)
sh run.sh >log 2>&1 || fail "the script failed the second time"
[ "$(ls -l --time-style=full-iso out/cells/)" = "$before" ] || fail "a second run rewrote records"

# --sshloginfile: two machines, each reached by an ssh of the test's own that
# runs the command here (as ssh would run it there) and notes the machine
# (sshd gives the remote command a SHELL; parallel's remote worker runs the job
# with \$SHELL, and a CI runner may have none)
cat >ssh <<SSH
#!/bin/sh
export SHELL=/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
echo "\$1" >>"$dir/hosts"
shift
[ "\${1-}" = "--" ] && shift
exec sh -c "\$*"
SSH
chmod +x ssh
printf '1/%s nodeA\n1/%s nodeB\n' "$dir/ssh" "$dir/ssh" >logins
"$PCM_SIM" sweep --emit parallel g.yaml -o far --shards 4 --sshloginfile logins >far.sh 2>emit.log ||
	fail "--emit parallel --sshloginfile: $(cat emit.log)"
grep -q "^parallel --quote --jobs 100% --sshloginfile '*$dir/logins'* " far.sh ||
	fail "the script does not give parallel the machines: $(cat far.sh)"
sh far.sh >log 2>&1 || fail "the script with --sshloginfile failed"
grep -q "6 of 6 cells recorded: 6 ok" log || fail "the records of the machines did not merge"
[ "$(grep -c nodeA hosts)" -ge 1 ] && [ "$(grep -c nodeB hosts)" -ge 1 ] &&
	[ "$(wc -l <hosts)" -eq 4 ] || fail "the 4 shards did not run on both machines: $(cat hosts)"
# the same runs as here: the results, up to the wall-clock figures
results() { sed 's/.*"result"://; s/,"wall_s".*//' "$1"; }
[ "$(results far/results.jsonl)" = "$(results out/results.jsonl)" ] ||
	fail "the results from the machines differ from those made here"
echo "ok: GNU parallel ran 4 shards of 6 cells; a second run did no work;" \
	"with --sshloginfile the shards ran on both machines"
