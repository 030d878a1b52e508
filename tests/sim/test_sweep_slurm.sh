#!/bin/sh
# SPDX-License-Identifier: MIT
# test_sweep_slurm.sh PCM_SIM SCENARIO - the script of pcm-sim sweep --emit slurm, run
# as a job array by a real Slurm: this test starts munged, slurmctld and slurmd
# on this one machine (a munge key, a slurm.conf naming this host as the
# controller and the only node, at 127.0.0.1 so that its name need not
# resolve, proctrack/linuxproc and task/none so that no
# cgroups are needed, ports of its own), submits the script with sbatch, waits
# for the array to finish, collects, and checks that every cell ran in exactly
# one array task. It stops the daemons it started. Exit 77, with the reason,
# where they cannot start (not root, Slurm or munge not installed, a daemon
# that does not come up).
set -u
PCM_SIM=$1
SCENARIO=$2

skip() {
	echo "skip: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	for f in "$dir"/log/*; do
		echo "--- $f"
		tail -n 20 "$f"
	done
	exit 1
}

[ "$(id -u)" -eq 0 ] || skip "slurmd and munged run as root here, and this is not root"
for p in munged slurmctld slurmd sbatch squeue sinfo; do
	command -v $p >/dev/null 2>&1 ||
		skip "no $p (Debian: apt-get install slurm-wlm munge)"
done

dir=$(mktemp -d)
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
stop() {
	for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
		[ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
	done
	sleep 1
	rm -rf "$dir"
}
trap stop EXIT

# munge: a key of our own and a socket of our own, beside any system munged
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge.key"
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
	--pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" \
	--log-file="$dir/log/munged.log" ||
	skip "munged does not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null)"

# this host as the controller and the only node, as slurmd sees it
node=$(slurmd -C 2>/dev/null | head -n 1)
host=$(echo "$node" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
[ -n "$host" ] || skip "slurmd -C does not describe this machine"
port=$((20000 + $$ % 20000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=pcmtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MessageTimeout=5
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=pcm Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 ||
	skip "slurmctld does not start: $(tail -n 3 "$dir/log/slurmctld.out" "$dir/log/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 ||
	skip "slurmd does not start: $(tail -n 3 "$dir/log/slurmd.out" "$dir/log/slurmd.log" 2>/dev/null)"
deadline=$(($(date +%s) + 60))
until [ "$(timeout 10 sinfo -h -N -o %t 2>/dev/null)" = idle ]; do
	[ "$(date +%s)" -le $deadline ] || skip "the node did not come up in 60 s: $(timeout 10 sinfo -N 2>&1 | tail -n 1)"
	sleep 1
done

cd "$dir" || exit 1
cp "$SCENARIO" one.yaml
cat >g.yaml <<'YAML'
scenarios: [one.yaml]
set:
  traffic.bytes: [16KB, 64KB]
policies: [swift, dctcp, nscc]
seeds: [1, 2]
YAML

"$PCM_SIM" sweep --emit slurm g.yaml -o "$dir/out" --shards 5 >job.sh 2>emit.log ||
	fail "--emit slurm: $(cat emit.log)"
job=$(sbatch --parsable job.sh 2>"$dir/log/sbatch.err") ||
	fail "sbatch: $(cat "$dir/log/sbatch.err")"
echo "submitted job array $job: 12 cells in 5 shards"
deadline=$(($(date +%s) + 420))
while [ -n "$(timeout 10 squeue -h -j "$job" 2>/dev/null)" ]; do
	[ "$(date +%s)" -le $deadline ] || fail "the job array $job did not finish in 420 s: $(timeout 10 squeue -j "$job")"
	sleep 1
done

# one output file per array task, each the log of its shard
tasks=$(ls out/slurm/ | grep -c "^${job}_[0-4]\.out$")
[ "$tasks" -eq 5 ] || fail "$tasks array tasks left output, not 5: $(ls out/slurm/)"
"$PCM_SIM" sweep --collect out >collect.log 2>&1 || fail "--collect: $(cat collect.log)"
grep -q "12 of 12 cells recorded: 12 ok" collect.log || fail "collect: $(cat collect.log)"
[ "$(wc -l <out/results.jsonl)" -eq 12 ] || fail "results.jsonl has not 12 lines"
# every cell ran once, in the task of its shard (cell c in shard c mod 5)
c=0
while [ $c -lt 12 ]; do
	n=$(cat out/slurm/*.out | grep -c "\] cell $c ok ")
	[ "$n" -eq 1 ] || fail "cell $c ran $n times"
	grep -q "\] cell $c ok " "out/slurm/${job}_$((c % 5)).out" ||
		fail "cell $c did not run in array task $((c % 5))"
	c=$((c + 1))
done
echo "ok: Slurm ran job array $job (5 tasks, 12 cells) to completion; collected"
