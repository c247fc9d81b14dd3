#!/usr/bin/env bash
# `srun psgrad launch --slurm` on a real single-host Slurm: munged, slurmctld and slurmd started for the
# test with every file in a temporary folder, three tasks (a server and two workers). Skips (exit 77)
# without root or Debian's slurmctld, slurmd and munge.
# Usage: slurm_test.sh PSGRAD_BINARY SOURCE_DIR
set -uo pipefail
psgrad=$1
source_dir=$2
config="$source_dir/configs/mnist.toml"
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}

# Under CI (CI=true) nothing may be skipped: a missing root, tool or capability fails the test.
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL: cannot run under CI=true: $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
[ "$(id -u)" -eq 0 ] || skip "a private Slurm (slurmd runs jobs as any user) needs root"
for program in munged mungekey slurmctld slurmd srun scancel sinfo; do
  command -v "$program" >/dev/null || skip "no $program (apt-get install slurmctld slurmd slurm-client munge)"
done

work_dir=$(mktemp -d)
daemons=()
cleanup() {
  [ -f "$work_dir/slurm.conf" ] && SLURM_CONF="$work_dir/slurm.conf" scancel --full --quiet --user=root 2>/dev/null
  for pid in "${daemons[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$work_dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log "$work_dir"/*.out; do [ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done; exit 1; }

# MUNGE with a key and a socket of its own, so the machine's munge (if any) is left alone.
mungekey --create --keyfile "$work_dir/munge.key" || fail "mungekey failed"
munged -F -f --socket="$work_dir/munge.socket" --key-file="$work_dir/munge.key" --log-file="$work_dir/munged.log" \
  --pid-file="$work_dir/munged.pid" --seed-file="$work_dir/munged.seed" >"$work_dir/munged.out" 2>&1 &
daemons+=($!)

# Ports drawn at random, so two runs of the test (or a real Slurm's defaults) do not meet.
node=$(hostname -s)
ctld_port=$((20000 + RANDOM % 20000))
mkdir -p "$work_dir/state" "$work_dir/spool"
cat >"$work_dir/slurm.conf" <<CONF
ClusterName=psgradtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work_dir/munge.socket
CryptoType=crypto/munge
StateSaveLocation=$work_dir/state
SlurmdSpoolDir=$work_dir/spool
SlurmctldPidFile=$work_dir/slurmctld.pid
SlurmdPidFile=$work_dir/slurmd.pid
SlurmctldLogFile=$work_dir/slurmctld.log
SlurmdLogFile=$work_dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
NodeName=$node NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF="$work_dir/slurm.conf"
for _ in $(seq 50); do [ -S "$work_dir/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i >"$work_dir/slurmctld.out" 2>&1 & daemons+=($!)
slurmd -D -N "$node" >"$work_dir/slurmd.out" 2>&1 & daemons+=($!)
for _ in $(seq 100); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
sinfo -h -o %t 2>/dev/null | grep -q idle || fail "the Slurm node did not come up"

# Three tasks: task 0 serves, tasks 1 and 2 work; the token reaches them through the environment.
export PSGRAD_JOIN_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$((ctld_port + 2))
timeout 90 srun --ntasks=3 --label --time=2 "$psgrad" launch --slurm --config "$config" --port "$port" \
  --set training.iterations=20 --no-metrics >"$work_dir/srun.out" 2>"$work_dir/srun.log" || fail "srun failed (exit $?)"
cat "$work_dir/srun.out"
grep -q "^0: sync summary: workers 2, steps 20" "$work_dir/srun.out" || fail "task 0 did not serve 2 workers"
grep -q "^0: psgrad serve: listening on 0.0.0.0:$port, waiting for 2 workers" "$work_dir/srun.log" || fail "no server"
grep -q "^1: psgrad work: training finished" "$work_dir/srun.log" || fail "task 1 did not work"
grep -q "^2: psgrad work: training finished" "$work_dir/srun.log" || fail "task 2 did not work"
grep -q "PSGRAD_JOIN_TOKEN is not set" "$work_dir/srun.log" && fail "the token did not reach the server"
"$psgrad" train --config "$config" --set training.iterations=20 --no-metrics >"$work_dir/local.out" 2>/dev/null ||
  fail "local run failed"
diff <(sed -n 's/^0: \(final weights: .*\)/\1/p' "$work_dir/srun.out") <(grep "^final weights: " "$work_dir/local.out") ||
  fail "weights under Slurm differ from one process"

# A model with embedding tables: task 0 serves, tasks 1 and 2 hold its two table shards, task 3 works;
# the weights are those of the same run in one process.
"$psgrad" data click-logs --rows 2000 --out "$work_dir/clicks.jsonl" >/dev/null 2>&1 || fail "click-logs"
source "$source_dir/tests/tables_config.sh"
write_tables_config "$work_dir/tables.toml" "$work_dir/clicks.jsonl"
printf '[cluster]\nnum_workers = 1\nservers = 2\n' >>"$work_dir/tables.toml"
timeout 90 srun --ntasks=4 --label --time=2 "$psgrad" launch --slurm --config "$work_dir/tables.toml" \
  --port $((port + 1)) --no-metrics >"$work_dir/tables-srun.out" 2>"$work_dir/tables-srun.log" ||
  fail "srun of a model with tables failed (exit $?)"
cat "$work_dir/tables-srun.out"
grep -q "^1: psgrad shard: holding table shard 0 of 2" "$work_dir/tables-srun.log" || fail "task 1 held no table shard"
grep -q "^2: psgrad shard: holding table shard 1 of 2" "$work_dir/tables-srun.log" || fail "task 2 held no table shard"
grep -q "^3: psgrad work: training finished" "$work_dir/tables-srun.log" || fail "task 3 did not work"
"$psgrad" train --config "$work_dir/tables.toml" --no-metrics >"$work_dir/tables-local.out" 2>/dev/null ||
  fail "local run of the model with tables failed"
diff <(sed -n 's/^0: \(final weights: .*\)/\1/p' "$work_dir/tables-srun.out") \
  <(grep "^final weights: " "$work_dir/tables-local.out") || fail "weights of a model with tables under Slurm differ"
echo "PASS: slurm"
