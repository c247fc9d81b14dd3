#!/usr/bin/env bash
# Sparse runs across processes on 127.0.0.1: `psgrad serve` with table shards in `psgrad shard --tables`
# processes and workers in `psgrad work` processes, on generated click logs.
# Usage: sparse_processes_test.sh PSGRAD_BINARY SCENARIO
set -uo pipefail
psgrad=$1
scenario=$2
work_dir=$(mktemp -d)
export PSGRAD_JOIN_TOKEN=sparse-processes-test

fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work_dir"' EXIT

"$psgrad" data click-logs --rows 2000 --out "$work_dir/clicks.jsonl" >/dev/null 2>&1 || fail "click-logs"

# A config over the 26 categorical columns: nV rows of width 8 each, iterations steps of 2 workers.
write_config() {  # file rows iterations
  local widths rows columns
  widths=$(printf '8, %.0s' $(seq 26)); rows=$(printf "$2, %.0s" $(seq 26))
  columns=$(for c in $(seq 26); do echo "C$c = \"ids\""; done)
  cat >"$1" <<TOML
[training]
iterations = $3
batch_size = 32
seed = 1
[evaluation]
batch_size = 256
frequency = 1000000
[model]
"@layers" = "hashembed_mlp.v1"
embedding_widths = [${widths%, }]
embedding_rows = [${rows%, }]
hidden_width = 16
[optimizer]
"@optimizers" = "Adam.v1"
learn_rate = 0.005
[data]
path = "$work_dir/clicks.jsonl"
label = "label"
dev_fraction = 0.2
[data.columns]
$columns
[cluster]
num_workers = 2
servers = 2
mode = "sync"
TOML
}

# Starts `psgrad serve` in the background; sets server_pid and port.
start_server() {  # config extra-args...
  local config=$1; shift
  "$psgrad" serve --config "$config" --port 0 "$@" >"$work_dir/serve.out" 2>"$work_dir/serve.log" &
  server_pid=$!
  port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work_dir/serve.log")
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || fail "server exited before listening"
    sleep 0.1
  done
  fail "server did not start listening"
}

# Keeps the peak resident memory (VmHWM, kB) of a process in a file while the process lives.
follow_peak_memory() {  # pid file
  ( while kill -0 "$1" 2>/dev/null; do
      peak=$(awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null)
      [ -n "$peak" ] && echo "$peak" >"$2"
      sleep 0.05
    done ) &
}

final_line() { grep '^final weights:' "$1"; }

case "$scenario" in
  processes-match-one-process)
    # The same sync run in one process and with 1, 2 and 4 table shard processes: the same final weights.
    write_config "$work_dir/run.toml" 4096 20
    "$psgrad" train --config "$work_dir/run.toml" >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run"
    expected=$(final_line "$work_dir/local.out")
    [ -n "$expected" ] || fail "the local run printed no final weights"
    for shards in 1 2 4; do
      "$psgrad" train --config "$work_dir/run.toml" --processes --set cluster.servers=$shards \
        >"$work_dir/processes$shards.out" 2>"$work_dir/processes$shards.log" || fail "--processes with $shards shards"
      "$psgrad" train --config "$work_dir/run.toml" --set cluster.servers=$shards \
        >"$work_dir/local$shards.out" 2>"$work_dir/local$shards.log" || fail "local run with $shards shards"
      got=$(final_line "$work_dir/processes$shards.out")
      want=$(final_line "$work_dir/local$shards.out")
      [ "$got" = "$want" ] || fail "$shards shards: '$got' across processes, '$want' in one process"
      [ "$(grep -c 'table shard .* joined' "$work_dir/processes$shards.log")" = "$shards" ] ||
        fail "$shards shards: not every table shard process joined"
    done
    # The dense part over the connection instead: the same weights again.
    "$psgrad" train --config "$work_dir/run.toml" --processes --set cluster.servers=2 --set cluster.shared_memory=false \
      >"$work_dir/no-shm.out" 2>"$work_dir/no-shm.log" || fail "--processes without shared memory"
    [ "$(final_line "$work_dir/no-shm.out")" = "$(final_line "$work_dir/local2.out")" ] ||
      fail "without shared memory: '$(final_line "$work_dir/no-shm.out")', in one process '$(final_line "$work_dir/local2.out")'"
    ;;
  kill-table-shard)
    # kill -9 of a table shard process ends the run in one line naming it; every process exits non-zero.
    write_config "$work_dir/run.toml" 4096 100000000
    start_server "$work_dir/run.toml"
    "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0.log" & s0=$!
    "$psgrad" shard --tables 1 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard1.log" & s1=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 100); do grep -q "worker 1 joined\|worker 0 joined.*2 of 2" "$work_dir/serve.log" && break; sleep 0.1; done
    sleep 1
    kill -9 $s1
    wait $server_pid; code=$?
    [ $code -ne 0 ] || fail "the server exited 0 after losing a table shard"
    grep -q "training failed: table shard 1 lost: its connection dropped" "$work_dir/serve.log" ||
      fail "the server did not name the lost table shard"
    for pid in $s0 $w0 $w1; do wait $pid && fail "a process exited 0 after the run failed"; done
    grep -q "the run failed on the server: table shard 1 lost" "$work_dir/shard0.log" || fail "shard 0 did not say why"
    grep -q "the run failed on the server: table shard 1 lost" "$work_dir/work0.log" || fail "worker 0 did not say why"
    # Workers on the server's host pass the dense gradient and weights through shared memory.
    grep -q "dense gradient and weights go through shared memory" "$work_dir/work0.log" ||
      fail "worker 0 did not pass the dense part through shared memory"
    ;;
  kill-worker)
    # kill -9 of a worker in a sync run: the server goes on with the other, and the table shards stop
    # waiting for the lost worker's pushes, so the run ends with every step taken.
    write_config "$work_dir/run.toml" 4096 5000
    start_server "$work_dir/run.toml"
    "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0.log" & s0=$!
    "$psgrad" shard --tables 1 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard1.log" & s1=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 100); do grep -q "(2 of 2)" "$work_dir/serve.log" && break; sleep 0.1; done
    sleep 1
    grep -q "summary" "$work_dir/serve.out" && fail "the run ended before a worker could be killed"
    kill -9 $w1
    wait $server_pid || fail "the server failed after losing a worker"
    grep -q "lost: its connection dropped" "$work_dir/serve.log" || fail "the server did not name the lost worker"
    grep -q "sync summary: workers 2, steps 5000, .* 1 of 2 workers finished, 1 lost" "$work_dir/serve.out" ||
      fail "the run did not take every step with the worker left: $(grep summary "$work_dir/serve.out")"
    for pid in $s0 $s1 $w0; do wait $pid || fail "a process failed after the run finished"; done
    ;;
  worker-memory-flat)
    # A worker's peak memory does not grow with the tables (the shards hold the rows): nV 2^16 and 2^22.
    for rows in 65536 4194304; do
      write_config "$work_dir/run$rows.toml" $rows 30
      start_server "$work_dir/run$rows.toml" --save "$work_dir/model$rows.bin"
      "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0-$rows.log" & s0=$!
      "$psgrad" shard --tables 1 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard1-$rows.log" & s1=$!
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0-$rows.log" & w0=$!
      follow_peak_memory $w0 "$work_dir/worker$rows.peak"
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1-$rows.log" & w1=$!
      for pid in $server_pid $s0 $s1 $w0 $w1; do wait $pid || fail "nV $rows: a process failed"; done
      held=$(sed -n 's/.*the 2 table shards held \([0-9]*\) rows.*/\1/p' "$work_dir/serve.log")
      [ -n "$held" ] && [ "$held" -gt 0 ] || fail "nV $rows: the shards held no rows"
      cp "$work_dir/serve.log" "$work_dir/serve-$rows.log"
    done
    small=$(cat "$work_dir/worker65536.peak"); large=$(cat "$work_dir/worker4194304.peak")
    # One table of 2^22 rows of 8 floats is 128 MiB: a worker holding even one would grow by that much.
    one_table_kb=$((4194304 * 8 * 4 / 1024))
    echo "worker peak: $small kB at nV 2^16, $large kB at nV 2^22"
    [ $((large - small)) -lt $((one_table_kb / 2)) ] || fail "the worker grew from $small kB to $large kB with the tables"
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "ok: $scenario"
