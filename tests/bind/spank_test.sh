#!/usr/bin/env bash
# The wavekit_bind SPANK plugin under a real Slurm: starts munged, slurmctld and slurmd on
# localhost from a temporary directory, runs `srun --wavekit-bind` and checks that every task
# really runs on the CPUs `wavekit bind` computes for this machine (Cpus_allowed_list read from
# /proc/self/status inside the task) with the computed environment. Then stops everything.
# Usage: spank_test.sh PLUGIN.so WAVEKIT. Exit 77 (skip) without root or Slurm's packages.
set -uo pipefail
plugin=$1
wavekit=$2

skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to run slurmd"
for program in munged slurmctld slurmd srun sinfo; do
  command -v "$program" >/dev/null || [[ -x /usr/sbin/$program ]] ||
    skip "$program is not installed (scripts/setup.sh installs slurmd, slurmctld, slurm-client, munge)"
done
export PATH=$PATH:/usr/sbin

work=$(mktemp -d /tmp/wavekit-bind-slurm.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  [[ -f $work/munged.pid ]] && kill "$(cat "$work/munged.pid")" 2>/dev/null
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in munged slurmctld slurmd; do
    [[ -f $work/$log.log ]] && { echo "--- $log.log (tail)"; tail -n 15 "$work/$log.log"; }
  done
  exit 1
}

# munge with its own key and socket, so nothing of the machine's is touched.
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 status=none
chmod 600 "$work/munge.key"
munged --force --key-file="$work/munge.key" --socket="$work/munge.socket" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge.seed" ||
  fail "munged did not start"

host=$(hostname -s)
port=$((20000 + $$ % 20000))
mkdir -p "$work/state" "$work/spool"
cat >"$work/plugstack.conf" <<CONF
required $plugin
CONF
cat >"$work/slurm.conf" <<CONF
ClusterName=wavekit
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$work/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
PlugStackConfig=$work/plugstack.conf
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=wkbind NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=wkbind Nodes=wkbind Default=YES MaxTime=10 State=UP
CONF
export SLURM_CONF=$work/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >/dev/null 2>&1 &
pids+=($!)
slurmd -D -N wkbind -f "$SLURM_CONF" >/dev/null 2>&1 &
pids+=($!)

ready=no
for _ in $(seq 120); do
  state=$(timeout 5 sinfo -h -n wkbind -o %t 2>/dev/null)
  [[ $state == idle* ]] && { ready=yes; break; }
  sleep 0.5
done
[[ $ready == yes ]] || fail "the slurm node did not become idle (state '$state')"

ntasks=$(nproc)
expected=$("$wavekit" bind --ntasks "$ntasks" --format env) || fail "wavekit bind failed"
expected_cpus=$("$wavekit" bind --ntasks "$ntasks" --format mpibind | sed -E 's/.* cpus //')

task_script='echo "task $SLURM_LOCALID $(grep Cpus_allowed_list /proc/self/status | cut -f2) threads=$OMP_NUM_THREADS places=$OMP_PLACES bind=$OMP_PROC_BIND"'
output=$(timeout 60 srun -N1 -n "$ntasks" --wavekit-bind=verbose bash -c "$task_script" 2>&1) ||
  fail "srun --wavekit-bind failed: $output"
echo "$output"
task=0
while read -r cpus; do
  threads=$(echo "$expected" | sed -n "/^# task $task\$/,/^#/p" | sed -n 's/^OMP_NUM_THREADS=//p')
  line="task $task $cpus threads=$threads places=threads bind=spread"
  grep -qxF "$line" <<<"$output" || fail "expected '$line' from the tasks"
  task=$((task + 1))
done <<<"$expected_cpus"
[[ $task -eq $ntasks ]] || fail "expected $ntasks tasks, checked $task"

# A user-given thread count reaches the tasks; a bad option is refused by srun with its name.
output=$(timeout 60 srun -N1 -n 1 --wavekit-bind=nthreads:3 bash -c 'echo threads=$OMP_NUM_THREADS' 2>&1) ||
  fail "srun --wavekit-bind=nthreads:3 failed: $output"
[[ $output == *"threads=3"* ]] || fail "nthreads:3 gave '$output'"
output=$(timeout 60 srun -N1 -n 1 --wavekit-bind=gpu_optimize:0 true 2>&1) &&
  fail "srun accepted --wavekit-bind=gpu_optimize:0"
[[ $output == *"unknown option 'gpu_optimize:0'"* ]] || fail "bad option gave '$output'"
# A step given part of the node (one core) is restricted to that core's PUs: Slurm's own
# task plugin is off here, so only wavekit-bind can have bound it.
expand() {  # "0-2,5" -> "0,1,2,5"
  local item out=()
  IFS=, read -ra items <<<"$1"
  for item in "${items[@]}"; do
    if [[ $item == *-* ]]; then out+=($(seq "${item%-*}" "${item#*-}")); else out+=("$item"); fi
  done
  (IFS=,; echo "${out[*]}")
}
output=$(timeout 60 srun -N1 -n 1 --wavekit-bind bash -c \
  'scontrol show job -d $SLURM_JOB_ID | grep -o "CPU_IDs=[0-9,-]*"; grep Cpus_allowed_list /proc/self/status | cut -f2' 2>&1) ||
  fail "srun -n 1 --wavekit-bind failed: $output"
cores=$(sed -n 's/^CPU_IDs=//p' <<<"$output")
allowed=$(tail -n 1 <<<"$output")
[[ -n $cores ]] || fail "no CPU_IDs in '$output'"
if command -v hwloc-calc >/dev/null; then
  expected_pus=$(hwloc-calc --physical-output --intersect pu --sep , core:"$cores" | tr , '\n' | sort -n | paste -sd,)
  [[ $(expand "$allowed") == "$expected_pus" ]] ||
    fail "a step on core(s) $cores ran on '$allowed', expected PUs $expected_pus"
fi
echo "PASS: srun --wavekit-bind bound $ntasks tasks as wavekit bind computed; a one-core step stayed on core $cores"
