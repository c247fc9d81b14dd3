#!/usr/bin/env bash
# Sparse runs across processes on 127.0.0.1: `psgrad serve` with table shards in `psgrad shard --tables`
# processes and workers in `psgrad work` processes, on generated click logs.
# Usage: sparse_processes_test.sh PSGRAD_BINARY SCENARIO
set -uo pipefail
psgrad=$(realpath "$1")
scenario=$2
work_dir=$(mktemp -d)
export PSGRAD_JOIN_TOKEN=sparse-processes-test

fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }
# Every process this script started ends with it: SIGCONT after SIGTERM, as a stopped process gets the
# SIGTERM only once it runs again, and SIGKILL for those still there 2 s later (one that hangs).
stop_all() {
  local pids; pids=$(jobs -p)
  [ -n "$pids" ] || return 0
  kill $pids 2>/dev/null; kill -CONT $pids 2>/dev/null
  for _ in $(seq 20); do
    local alive=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
    pids=$alive
    [ -n "$pids" ] || return 0
    sleep 0.1
  done
  kill -9 $pids 2>/dev/null
}
trap 'stop_all; rm -rf "$work_dir"' EXIT

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

source "$(dirname "${BASH_SOURCE[0]}")/server_process_helpers.sh"

# Starts `psgrad serve` in the background; sets server_pid and port.
start_server() {  # config extra-args...
  local config=$1; shift
  "$psgrad" serve --config "$config" --port 0 "$@" >"$work_dir/serve.out" 2>"$work_dir/serve.log" &
  server_pid=$!
  await_listening_port "$server_pid" "$work_dir/serve.log"
}

# Starts `psgrad shard --tables 0` and `--tables 1` against the server at $port; sets s0 and s1.
start_two_table_shards() {
  "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0.log" & s0=$!
  "$psgrad" shard --tables 1 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard1.log" & s1=$!
}

# Starts two `psgrad work` processes against the server at $port; sets w0 and w1.
start_two_workers() {
  "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
  "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
}

# The server exits non-zero within 10 s (ten times the connection timeout), naming table shard 1.
server_ends_naming_frozen_shard_1() {
  for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$server_pid" 2>/dev/null && fail "the server did not exit within 10 s of freezing a table shard"
  wait "$server_pid"; local code=$?
  [ $code -ne 0 ] || fail "the server exited 0 after losing a table shard"
  grep -q "training failed: table shard 1 lost: its connection dropped" "$work_dir/serve.log" ||
    fail "the server did not name the lost table shard"
}

final_line() { grep '^final weights:' "$1"; }

case "$scenario" in
  serve-stopped-before-training)
    # A server of a model with tables ends as a dense one does: Ctrl-C while it waits for its shards and
    # workers exits 130 (a launch reads that as interrupted, not failed), and a port file it cannot write
    # stops it instead of leaving whoever waits for the file waiting.
    write_config "$work_dir/run.toml" 4096 20
    start_server "$work_dir/run.toml" --no-metrics
    kill -INT "$server_pid"
    wait "$server_pid"; code=$?
    [ $code -eq 130 ] || fail "serve stopped by SIGINT before training exited $code, expected 130"
    # The port file on a full file system (a small tmpfs, filled; so root): its temporary file is made,
    # its line cannot be written.
    if [ "$(id -u)" -ne 0 ]; then
      [ "${CI:-}" = true ] && fail "cannot run under CI=true: a full file system needs root to mount a tmpfs"
      echo "SKIP: a full file system needs root to mount a tmpfs"; exit 77
    fi
    full="$work_dir/full"
    mkdir -p "$full"
    trap 'stop_all; umount "$full" 2>/dev/null; rm -rf "$work_dir"' EXIT
    mount -t tmpfs -o size=16k tmpfs "$full" || fail "cannot mount a tmpfs"
    head -c $((16 * 1024)) /dev/zero >"$full/filler" 2>/dev/null
    "$psgrad" serve --config "$work_dir/run.toml" --port 0 --port-file "$full/server.json" --no-metrics \
      >"$work_dir/full.out" 2>"$work_dir/full.log" & server_pid=$!
    # Bounded only to fail instead of hanging: the server must end on its own once the write failed.
    for _ in $(seq 300); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$server_pid" 2>/dev/null && fail "the server kept waiting after its port file could not be written"
    wait "$server_pid"; code=$?
    [ $code -eq 143 ] || fail "serve whose port file failed exited $code, expected 143 (stopped as SIGTERM would)"
    grep -q "^psgrad serve: --port-file: cannot write $full/server.json.*No space left on device" \
      "$work_dir/full.log" || fail "the failed port file not named with its reason"
    ls "$full" | grep -q "server.json" && fail "the port file's temporary file was left behind"
    ;;
  ordered-answers-tls)
    # cluster.ordered_answers under TLS, where only a worker's receipt releases the next answer: the
    # workers of a model with tables receipt theirs as dense workers do. The run ends with the weights
    # of the same run in one process; had every second answer waited out its 1 s, 40 steps would take
    # over 40 s.
    make_identity ca; make_signed server ca; make_signed peer ca
    write_config "$work_dir/run.toml" 4096 40
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics >"$work_dir/local.out" 2>"$work_dir/local.log" ||
      fail "the run in one process failed"
    peer_tls=(--tls-cert "$work_dir/peer.pem" --tls-key "$work_dir/peer.key" --tls-ca "$work_dir/ca.pem")
    started=$(date +%s)
    start_server "$work_dir/run.toml" --no-metrics --set cluster.ordered_answers=true --set cluster.shared_memory=false \
      --set cluster.tls_certificate="$work_dir/server.pem" --set cluster.tls_key="$work_dir/server.key" \
      --set cluster.tls_ca="$work_dir/ca.pem"
    "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 "${peer_tls[@]}" 2>"$work_dir/shard0.log" & s0=$!
    "$psgrad" shard --tables 1 --connect "127.0.0.1:$port" --listen 127.0.0.1 "${peer_tls[@]}" 2>"$work_dir/shard1.log" & s1=$!
    "$psgrad" work --connect "127.0.0.1:$port" "${peer_tls[@]}" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" "${peer_tls[@]}" 2>"$work_dir/work1.log" & w1=$!
    wait "$server_pid" || fail "serve exited with $?"
    for pid in $s0 $s1 $w0 $w1; do wait "$pid" || fail "a shard or worker exited with $?"; done
    took=$(($(date +%s) - started))
    [ "$(final_line "$work_dir/serve.out")" = "$(final_line "$work_dir/local.out")" ] ||
      fail "ordered answers under TLS ended with other weights than one process: $(final_line "$work_dir/serve.out")"
    ((took < 20)) || fail "40 steps with ordered answers under TLS took $took s: the workers' receipts did not release the answers"
    ;;
  patience-across-processes)
    # training.patience for a model with tables: a sync run stops early at the same step, with the same
    # weights, in one process and across processes (each step waits for the evaluation's verdict).
    write_config "$work_dir/run.toml" 512 100000
    sed -i 's/^frequency = 1000000/frequency = 5/' "$work_dir/run.toml"
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics --set training.patience=2 \
      >"$work_dir/one.out" 2>"$work_dir/one.log" || fail "the run in one process exited with $?"
    stopped=$(sed -n 's/^stopped early after step \([0-9]*\):.*/\1/p' "$work_dir/one.out")
    [ -n "$stopped" ] && [ "$stopped" -lt 100000 ] || fail "the run in one process did not stop early"
    grep -q "the 2 evaluations up to step $stopped did not improve" "$work_dir/one.out" ||
      fail "the reason (patience 2) is not given"
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics --set training.patience=2 --processes \
      >"$work_dir/processes.out" 2>"$work_dir/processes.log" || fail "the run across processes exited with $?"
    grep -q "^stopped early after step $stopped:" "$work_dir/processes.out" ||
      fail "across processes: $(grep '^stopped early' "$work_dir/processes.out"), one process: step $stopped"
    [ "$(final_line "$work_dir/processes.out")" = "$(final_line "$work_dir/one.out")" ] ||
      fail "an early-stopped run across processes ended with other weights than in one process"
    ;;
  elastic-join|elastic-join-sync|elastic-join-sync-pipeline)
    # cluster.elastic for a model with tables: a worker that comes after training started dials every
    # table shard and takes part from the next step; both workers finish. In sync mode the dense server
    # tells the table shards each step's workers, so they sum the late worker's rows too (a shard that
    # did not know it would refuse its push and end the run). One worker alone would take 6 s (5 ms a
    # step): room for the late one to join on a loaded machine.
    # Pipelined, the joined worker's rows go to the steps its pushes feed, a version past its weights'.
    mode=async; [ "$scenario" != elastic-join ] && mode=sync
    pipeline=false; [ "$scenario" = elastic-join-sync-pipeline ] && pipeline=true
    write_config "$work_dir/run.toml" 512 1200
    sed -i 's/^frequency = 1000000/frequency = 20/' "$work_dir/run.toml"
    start_server "$work_dir/run.toml" --workers 1 --mode $mode --set cluster.elastic=true --set cluster.worker_delay_ms=5 \
      --set cluster.pipeline=$pipeline --no-metrics
    start_two_table_shards
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    for _ in $(seq 200); do grep -qP "^20\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    grep -qP "^20\taccuracy" "$work_dir/serve.out" || fail "the run did not reach step 20"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/late.log" & w1=$!
    wait "$server_pid" || fail "the server exited with $?"
    for pid in $s0 $s1 $w0 $w1; do wait "$pid" || fail "a shard or worker exited with $?"; done
    grep -q "worker 1 .*takes part from the next step" "$work_dir/serve.log" || fail "the late worker did not take part"
    grep -q "joined .* as worker 1 of 2 .* 2 table shards)" "$work_dir/late.log" || fail "the late worker did not reach both table shards"
    grep -q "2 of 2 workers finished, 0 lost$" "$work_dir/serve.out" || fail "not both workers finished: $(grep summary "$work_dir/serve.out")"
    ;;
  remote-dense-shards)
    # serve --remote-shards for a model with tables: its dense part's shard 1 runs in a `psgrad shard --index 1`
    # process beside the two table shard processes, which the workers dial as they dial the table shards;
    # sync gives the weights of the same run in one process, bit for bit.
    write_config "$work_dir/run.toml" 512 30
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics >"$work_dir/local.out" 2>"$work_dir/local.log" ||
      fail "train in one process exited with $?"
    start_server "$work_dir/run.toml" --no-metrics --remote-shards
    start_two_table_shards
    "$psgrad" shard --index 1 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/dense1.log" & d1=$!
    start_two_workers
    wait "$server_pid" || fail "the server exited with $?"
    for pid in $s0 $s1 $d1 $w0 $w1; do wait "$pid" || fail "a shard or worker exited with $?"; done
    grep -q "serving shard 1 of 2 for" "$work_dir/dense1.log" || fail "the dense shard process did not serve shard 1 of 2"
    grep -q "server shard 1 joined" "$work_dir/serve.log" || fail "the server did not take the dense shard process"
    local_final=$(final_line "$work_dir/local.out")
    [ -n "$local_final" ] && [ "$(final_line "$work_dir/serve.out")" = "$local_final" ] ||
      fail "across processes '$(final_line "$work_dir/serve.out")', in one process '$local_final'"
    # Resumed the same way from a checkpoint at step 15 taken in one process: the dense shard process
    # takes its slice of the checkpoint's dense part, and the run ends as the uninterrupted one.
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics --set training.iterations=15 \
      --set training.checkpoint_path="$work_dir/half.ckpt" >"$work_dir/half.out" 2>"$work_dir/half.log" ||
      fail "the first half exited with $?"
    start_server "$work_dir/run.toml" --no-metrics --remote-shards --resume "$work_dir/half.ckpt"
    start_two_table_shards
    "$psgrad" shard --index 1 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/dense1.log" & d1=$!
    start_two_workers
    for pid in $server_pid $s0 $s1 $d1 $w0 $w1; do wait "$pid" || fail "resumed: a process exited with $?"; done
    grep -q "serving shard 1 of 2 for .*, resumed at step 15" "$work_dir/dense1.log" ||
      fail "the dense shard process did not resume at step 15"
    [ "$(final_line "$work_dir/serve.out")" = "$local_final" ] ||
      fail "resumed across processes '$(final_line "$work_dir/serve.out")', uninterrupted '$local_final'"
    ;;
  backup-workers)
    # cluster.backup_workers for a model with tables across processes: the straggler's late gradients are
    # dropped, by the dense server and by every table shard process, and its pulls for steps already
    # taken are answered (they once failed the run), so the run takes every step with every worker.
    write_config "$work_dir/run.toml" 512 100
    "$psgrad" train --config "$work_dir/run.toml" --processes --workers 3 --set cluster.backup_workers=1 \
      --set cluster.straggler_delay_ms=30 --no-metrics >"$work_dir/run.out" 2>"$work_dir/run.log" ||
      fail "the run exited with $?"
    grep -q "^sync summary: workers 3, steps 100, .*, [1-9][0-9]* late gradients dropped, 3 of 3 workers finished, 0 lost$" \
      "$work_dir/run.out" || fail "not 100 steps with late gradients dropped and every worker: $(grep summary "$work_dir/run.out")"
    ;;
  trace-processes)
    # --trace for a model with tables across processes: the driver's, the evaluator's and each worker
    # process's spans reach the server's trace, as for a dense model.
    write_config "$work_dir/run.toml" 512 12
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics --processes --trace "$work_dir/run.trace.json" \
      >"$work_dir/run.out" 2>"$work_dir/run.log" || fail "the run exited with $?"
    trace="$work_dir/run.trace.json"
    head -c 15 "$trace" | grep -qF '{"traceEvents":' || fail "not a Chrome trace"
    for k in 0 1; do
      grep -qF "\"args\":{\"name\":\"worker $k on " "$trace" || fail "worker $k is not in the trace"
    done
    for span in compute "gradient out" evaluate step; do
      grep -qF "\"name\":\"$span\"" "$trace" || fail "no $span span"
    done
    ;;
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
      # Sync runs are the same bits on any number of table shards.
      [ "$want" = "$expected" ] || fail "$shards shards in one process: '$want', the config's 2 shards: '$expected'"
      [ "$(grep -c 'table shard .* joined' "$work_dir/processes$shards.log")" = "$shards" ] ||
        fail "$shards shards: not every table shard process joined"
      # Every shard process took its pushes and answered its pulls through shared memory.
      [ "$(grep -c 'shard: training finished; through shared memory: [1-9][0-9]* payloads sent.* [1-9][0-9]* received' \
            "$work_dir/processes$shards.log")" = "$shards" ] ||
        fail "$shards shards: not every table shard process passed rows through shared memory"
    done
    # The dense part and the rows over the connection instead: the same weights again.
    "$psgrad" train --config "$work_dir/run.toml" --processes --set cluster.servers=2 --set cluster.shared_memory=false \
      >"$work_dir/no-shm.out" 2>"$work_dir/no-shm.log" || fail "--processes without shared memory"
    [ "$(final_line "$work_dir/no-shm.out")" = "$(final_line "$work_dir/local2.out")" ] ||
      fail "without shared memory: '$(final_line "$work_dir/no-shm.out")', in one process '$(final_line "$work_dir/local2.out")'"
    grep -q "through shared memory" "$work_dir/no-shm.log" && fail "cluster.shared_memory=false still used shared memory"
    ;;
  kill-table-shard)
    # kill -9 of a table shard process ends the run in one line naming it; every process exits non-zero.
    write_config "$work_dir/run.toml" 4096 100000000
    start_server "$work_dir/run.toml"
    start_two_table_shards
    start_two_workers
    # Training is under way once the first evaluation is printed.
    for _ in $(seq 300); do grep -qP "^0\taccuracy" "$work_dir/serve.out" && break; sleep 0.1; done
    grep -qP "^0\taccuracy" "$work_dir/serve.out" || fail "the run did not start training"
    kill -9 $s1
    wait $server_pid; code=$?
    [ $code -ne 0 ] || fail "the server exited 0 after losing a table shard"
    grep -q "training failed: table shard 1 lost: its connection dropped" "$work_dir/serve.log" ||
      fail "the server did not name the lost table shard"
    for pid in $s0 $w0 $w1; do wait $pid && fail "a process exited 0 after the run failed"; done
    grep -q "the run failed on the server: table shard 1 lost" "$work_dir/shard0.log" || fail "shard 0 did not say why"
    grep -q "the run failed on the server: table shard 1 lost" "$work_dir/work0.log" || fail "worker 0 did not say why"
    # Workers on the server's host pass the dense gradient and weights through shared memory.
    grep -q "gradients and weights go through shared memory to the 1 server process" "$work_dir/work0.log" ||
      fail "worker 0 did not pass the dense part through shared memory"
    ;;
  stop-table-shard)
    # A table shard process frozen (SIGSTOP) while the evaluator pulls from it at every step: the server
    # drops its connection after cluster.connection_timeout_ms and exits, although the frozen shard never
    # answers the pulls it was sent. 10 s is ten times the connection timeout.
    write_config "$work_dir/run.toml" 4096 100000000
    sed -i 's/^frequency = 1000000/frequency = 1/' "$work_dir/run.toml"
    printf 'connection_timeout_ms = 1000\n' >>"$work_dir/run.toml"
    start_server "$work_dir/run.toml"
    start_two_table_shards
    start_two_workers
    for _ in $(seq 100); do grep -q "worker [01] joined.*(2 of 2)" "$work_dir/serve.log" && break; sleep 0.1; done
    grep -q "worker [01] joined.*(2 of 2)" "$work_dir/serve.log" || fail "the workers did not join"
    kill -STOP $s1
    server_ends_naming_frozen_shard_1
    for pid in $s0 $w0 $w1; do wait $pid && fail "a process exited 0 after the run failed"; done
    ;;
  stop-table-shard-before-workers)
    # A table shard process frozen after joining, before any worker does: the server, waiting for workers
    # that could not reach it, ends at its connection timeout instead of cluster.join_timeout_ms.
    write_config "$work_dir/run.toml" 4096 100000000
    printf 'connection_timeout_ms = 1000\n' >>"$work_dir/run.toml"
    start_server "$work_dir/run.toml"
    start_two_table_shards
    for _ in $(seq 100); do grep -q "table shard [01] joined.*(2 of 2)" "$work_dir/serve.log" && break; sleep 0.1; done
    grep -q "table shard [01] joined.*(2 of 2)" "$work_dir/serve.log" || fail "the table shards did not join"
    kill -STOP $s1
    server_ends_naming_frozen_shard_1
    wait $s0 && fail "table shard 0 exited 0 after the run failed"
    ;;
  stop-table-shard-processes)
    # The same with train --processes: the server stops its child processes, the frozen one too, and exits.
    write_config "$work_dir/run.toml" 4096 100000000
    sed -i 's/^frequency = 1000000/frequency = 1/' "$work_dir/run.toml"
    printf 'connection_timeout_ms = 1000\n' >>"$work_dir/run.toml"
    "$psgrad" train --config "$work_dir/run.toml" --processes --no-metrics >"$work_dir/run.out" 2>"$work_dir/run.log" &
    server_pid=$!
    for _ in $(seq 100); do grep -q "worker [01] joined.*(2 of 2)" "$work_dir/run.log" && break; sleep 0.1; done
    grep -q "worker [01] joined.*(2 of 2)" "$work_dir/run.log" || fail "the workers did not join"
    shard=$(ps -o pid=,args= --ppid $server_pid | awk '/shard --tables 1 / {print $1}')
    [ -n "$shard" ] || fail "no child process holds table shard 1"
    kill -STOP $shard
    for _ in $(seq 100); do kill -0 $server_pid 2>/dev/null || break; sleep 0.1; done
    if kill -0 $server_pid 2>/dev/null; then kill -CONT $shard; fail "train --processes did not exit within 10 s of freezing a table shard"; fi
    wait $server_pid; code=$?
    [ $code -ne 0 ] || fail "train --processes exited 0 after losing a table shard"
    grep -q "training failed: table shard 1 lost: its connection dropped" "$work_dir/run.log" ||
      fail "the server did not name the lost table shard"
    kill -0 $shard 2>/dev/null && { kill -CONT $shard; fail "the frozen table shard process outlived the server"; }
    ;;
  kill-worker)
    # kill -9 of a worker in a sync run: the server goes on with the other, and the table shards stop
    # waiting for the lost worker's pushes, so the run ends with every step taken.
    write_config "$work_dir/run.toml" 4096 5000
    start_server "$work_dir/run.toml"
    start_two_table_shards
    start_two_workers
    for _ in $(seq 300); do grep -qP "^0\taccuracy" "$work_dir/serve.out" && break; sleep 0.1; done
    grep -qP "^0\taccuracy" "$work_dir/serve.out" || fail "the run did not start training"
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
  checkpoint-matches-one-process)
    # A sync run's checkpoint across processes (2 table shard processes) is byte for byte the file the
    # same run writes in one process, but for the wall time it records (and so the two checksums over it).
    # The path is the same for both runs: the file holds the config.
    write_config "$work_dir/run.toml" 4096 20
    ckpt="$work_dir/run.ckpt"
    for where in local processes; do
      flag=""; [ $where = processes ] && flag=--processes
      "$psgrad" train --config "$work_dir/run.toml" $flag --no-metrics --set training.checkpoint_every=10 \
        --set training.checkpoint_path="$ckpt" >"$work_dir/$where.out" 2>"$work_dir/$where.log" || fail "$where run"
      grep -q "checkpoint at iteration 20 written to $ckpt" "$work_dir/$where.log" || fail "$where: no checkpoint note"
      mv "$ckpt" "$work_dir/$where.ckpt"
    done
    [ "$(grep -c 'table shard .* joined' "$work_dir/processes.log")" = 2 ] || fail "not every table shard joined"
    /usr/bin/python3 - "$work_dir/local.ckpt" "$work_dir/processes.ckpt" <<'EOF' || fail "the checkpoints differ"
import struct, sys
a, b = (open(path, "rb").read() for path in sys.argv[1:3])
if len(a) != len(b): sys.exit(f"{len(a)} bytes and {len(b)}")
# The tables layout: magic, version, the dense record's length and the record, whose last 16 bytes are
# its wall time and its checksum; the file's own checksum ends it.
dense_end = 20 + struct.unpack_from("<Q", a, 12)[0]
clocks = set(range(dense_end - 16, dense_end)) | set(range(len(a) - 8, len(a)))
differ = [i for i in range(len(a)) if a[i] != b[i] and i not in clocks]
if differ: sys.exit(f"{len(differ)} bytes differ, the first at {differ[0]}")
EOF
    ;;
  resume-across-processes)
    # A sync run of 20 steps checkpointed at 10 across processes on 2 table shards, resumed across
    # processes on 3 (train --processes) and on 1 (serve with shard and worker processes): both end with
    # the uninterrupted run's final weights.
    write_config "$work_dir/run.toml" 4096 20
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics >"$work_dir/whole.out" 2>"$work_dir/whole.log" ||
      fail "the uninterrupted run"
    expected=$(final_line "$work_dir/whole.out")
    [ -n "$expected" ] || fail "the uninterrupted run printed no final weights"
    ckpt="$work_dir/half.ckpt"
    "$psgrad" train --config "$work_dir/run.toml" --processes --no-metrics --set training.iterations=10 \
      --set training.checkpoint_path="$ckpt" >"$work_dir/half.out" 2>"$work_dir/half.log" || fail "the first half"
    [ -f "$ckpt" ] || fail "the first half wrote no checkpoint"
    "$psgrad" train --config "$work_dir/run.toml" --processes --no-metrics --resume "$ckpt" \
      --set cluster.servers=3 >"$work_dir/three.out" 2>"$work_dir/three.log" || fail "train --processes --resume"
    got=$(final_line "$work_dir/three.out")
    [ "$got" = "$expected" ] || fail "resumed on 3 table shards: '$got', uninterrupted: '$expected'"
    grep -q "sync summary: workers 2, steps 10," "$work_dir/three.out" || fail "the resumed run did not take 10 steps"
    start_server "$work_dir/run.toml" --no-metrics --resume "$ckpt" --set cluster.servers=1
    "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0.log" & s0=$!
    start_two_workers
    for pid in $server_pid $s0 $w0 $w1; do wait $pid || fail "serve --resume: a process failed"; done
    got=$(final_line "$work_dir/serve.out")
    [ "$got" = "$expected" ] || fail "serve --resume on 1 table shard: '$got', uninterrupted: '$expected'"
    grep -q "holding table shard 0 of 1 ([0-9]* rows of the checkpoint at version 10)" "$work_dir/shard0.log" ||
      fail "the shard did not say it holds the checkpoint's rows"
    grep -q "resuming its data stream" "$work_dir/work0.log" || fail "worker 0 did not resume its stream"
    ;;
  retry-reconnects)
    # Workers with --retry outlive their server: it is killed (-9) after its checkpoint at step 40, its
    # table shard process ends with it, and a server resumed on the same port with a new shard process
    # takes the same workers back. The run ends with the uninterrupted run's weights, bit for bit.
    write_config "$work_dir/run.toml" 4096 120
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics >"$work_dir/whole.out" 2>"$work_dir/whole.log" ||
      fail "the uninterrupted run"
    expected=$(final_line "$work_dir/whole.out")
    ckpt="$work_dir/run.ckpt"
    checkpoints=(--set training.checkpoint_every=20 --set training.checkpoint_path="\"$ckpt\"")
    start_server "$work_dir/run.toml" --no-metrics "${checkpoints[@]}" --set cluster.servers=1 \
      --set cluster.worker_delay_ms=15
    "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0.log" & s0=$!
    "$psgrad" work --connect "127.0.0.1:$port" --retry 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" --retry 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 600); do grep -q "checkpoint at iteration 40" "$work_dir/serve.log" && break; sleep 0.05; done
    grep -q "checkpoint at iteration 40" "$work_dir/serve.log" || fail "no checkpoint at iteration 40"
    kill -9 $server_pid; wait $server_pid 2>/dev/null
    wait $s0 && fail "the table shard process exited 0 without its server"
    mv "$work_dir/serve.log" "$work_dir/first-serve.log"
    "$psgrad" serve --config "$work_dir/run.toml" --port "$port" --resume "$ckpt" --no-metrics "${checkpoints[@]}" \
      --set cluster.servers=1 --set cluster.worker_delay_ms=15 >"$work_dir/serve2.out" 2>"$work_dir/serve.log" &
    server_pid=$!
    await_listening_port "$server_pid" "$work_dir/serve.log"
    "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0b.log" & s0=$!
    for pid in $server_pid $s0 $w0 $w1; do wait $pid || fail "after the restart a process failed"; done
    got=$(final_line "$work_dir/serve2.out")
    [ "$got" = "$expected" ] || fail "resumed with the same workers: '$got', uninterrupted: '$expected'"
    for log in work0 work1; do
      grep -q "reconnecting" "$work_dir/$log.log" || fail "$log did not reconnect"
      grep -q "as worker [01] of 2 .*resuming its data stream" "$work_dir/$log.log" || fail "$log did not resume its stream"
    done
    ;;
  resume-refused)
    # A checkpoint that does not fit the run is refused in one line before any process starts.
    write_config "$work_dir/run.toml" 4096 10
    ckpt="$work_dir/run.ckpt"
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics --set training.checkpoint_path="$ckpt" \
      >/dev/null 2>"$work_dir/first.log" || fail "the checkpointed run"
    sed 's/^hidden_width = 16/hidden_width = 12/' "$work_dir/run.toml" >"$work_dir/other.toml"
    "$psgrad" train --config "$work_dir/other.toml" --processes --no-metrics --resume "$ckpt" \
      --set training.iterations=20 >"$work_dir/refused.out" 2>"$work_dir/refused.log"
    code=$?
    [ $code -ne 0 ] || fail "a checkpoint of another model was resumed"
    [ "$(wc -l <"$work_dir/refused.log")" = 1 ] || fail "the refusal is not one line"
    grep -q "^psgrad: $ckpt: checkpoint is for another model" \
      "$work_dir/refused.log" || fail "the refusal does not name the checkpoint and what differs"
    grep -q "listening" "$work_dir/refused.log" && fail "the server started before refusing"
    ;;
  sigint-processes)
    # Ctrl-C to train --processes: the server checkpoints the tables from the shard processes beside the
    # metrics file, prints the resume hint, and the hint's command continues the run across processes.
    write_config "$work_dir/run.toml" 4096 1000000
    sed -i 's/^frequency = 1000000/frequency = 20/' "$work_dir/run.toml"
    (cd "$work_dir" && exec "$psgrad" train --config run.toml --processes --metrics run.jsonl \
      >"$work_dir/run.out" 2>"$work_dir/run.log") & pid=$!
    for _ in $(seq 300); do grep -qP '^20\taccuracy' "$work_dir/run.out" 2>/dev/null && break; sleep 0.1; done
    grep -qP '^20\taccuracy' "$work_dir/run.out" || fail "no accuracy line of iteration 20"
    kill -INT $pid
    wait $pid; code=$?
    [ $code -eq 130 ] || fail "exit code $code, expected 130"
    grep -qF -- "resume with: $psgrad train --processes --resume run-interrupted.ckpt" "$work_dir/run.log" ||
      fail "no resume hint naming train --processes"
    [ -f "$work_dir/run-interrupted.ckpt" ] || fail "no checkpoint of the interrupted run beside its metrics"
    stopped=$(grep -oP 'checkpoint at iteration \K[0-9]+' "$work_dir/run.log" | tail -n1)
    [ -n "$stopped" ] || fail "no note of the checkpoint's iteration"
    (cd "$work_dir" && exec "$psgrad" train --processes --resume run-interrupted.ckpt --no-metrics \
      --set training.iterations=$((stopped + 3)) >"$work_dir/resumed.out" 2>"$work_dir/resumed.log") ||
      fail "the resumed run exited with $?"
    grep -q "sync summary: workers 2, steps 3," "$work_dir/resumed.out" || fail "the resumed run did not take 3 more steps"
    ;;
  launch-local)
    # psgrad launch on localhost hostfile lines: a table shard process and a worker on each line; the run
    # checkpointed at 10 of 20 steps, then launched again with --resume, ends with the final weights of
    # the uninterrupted run in one process.
    write_config "$work_dir/run.toml" 4096 20
    "$psgrad" train --config "$work_dir/run.toml" --no-metrics >"$work_dir/whole.out" 2>"$work_dir/whole.log" ||
      fail "the uninterrupted run"
    expected=$(final_line "$work_dir/whole.out")
    printf 'localhost workers=1 shards=1\n127.0.0.1 workers=1 shards=1\n' >"$work_dir/hosts"
    ckpt="$work_dir/half.ckpt"
    timeout 30 "$psgrad" launch --hostfile "$work_dir/hosts" --config "$work_dir/run.toml" --no-metrics \
      --set training.iterations=10 --set training.checkpoint_path="$ckpt" \
      >"$work_dir/launch.out" 2>"$work_dir/launch.log" || fail "launch exited with code $?"
    grep -q "1 server, 2 table shard process(es), 2 worker(s)" "$work_dir/launch.log" || fail "not the roles planned"
    grep -q "^\[127.0.0.1 table shard 1\] psgrad shard: holding table shard 1 of 2" "$work_dir/launch.log" ||
      fail "no table shard 1, prefixed with host and role"
    [ "$(grep -cP '^\[(localhost|127\.0\.0\.1) worker [01]\] psgrad work: joined \S+ as worker [01] of 2' \
      "$work_dir/launch.log")" = 2 ] || fail "the workers are not labelled with their numbers"
    grep -q "^\[localhost server\] psgrad: checkpoint at iteration 10 written to $ckpt" "$work_dir/launch.log" ||
      fail "the server wrote no checkpoint"
    timeout 30 "$psgrad" launch --hostfile "$work_dir/hosts" --config "$work_dir/run.toml" --no-metrics \
      --resume "$ckpt" >"$work_dir/resumed.out" 2>"$work_dir/resumed.log" || fail "launch --resume exited with code $?"
    got=$(sed -n 's/^\[localhost server\] \(final weights: .*\)/\1/p' "$work_dir/resumed.out")
    [ "$got" = "$expected" ] || fail "launch --resume: '$got', uninterrupted: '$expected'"
    ;;
  worker-data-dir)
    # A worker's --data-dir names the data on its own machine: the file, or a folder holding a file of
    # data.path's name. The server's file is gone once it has read it, so only --data-dir can serve; a
    # worker with other data there is refused at its join.
    mkdir -p "$work_dir/server" "$work_dir/worker" "$work_dir/other"
    cp "$work_dir/clicks.jsonl" "$work_dir/server/clicks.jsonl"
    cp "$work_dir/clicks.jsonl" "$work_dir/worker/clicks.jsonl"
    "$psgrad" data click-logs --rows 2000 --seed 9 --out "$work_dir/other/clicks.jsonl" >/dev/null 2>&1 || fail "click-logs"
    write_config "$work_dir/run.toml" 4096 20
    sed -i "s|^path = .*|path = \"$work_dir/server/clicks.jsonl\"|" "$work_dir/run.toml"
    "$psgrad" train --config "$work_dir/run.toml" --set cluster.servers=1 >"$work_dir/local.out" 2>"$work_dir/local.log" ||
      fail "local run"
    start_server "$work_dir/run.toml" --set cluster.servers=1
    rm "$work_dir/server/clicks.jsonl"
    "$psgrad" shard --tables 0 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard0.log" & s0=$!
    timeout 20 "$psgrad" work --connect "127.0.0.1:$port" --data-dir "$work_dir/other/clicks.jsonl" \
      2>"$work_dir/other.log" && fail "a worker with other data joined"
    grep -q "server refused this worker: training data differs from the server's (other inputs): worker $work_dir/other/clicks.jsonl" \
      "$work_dir/other.log" || fail "the worker with other data did not say why it was refused: $(tail -n1 "$work_dir/other.log")"
    "$psgrad" work --connect "127.0.0.1:$port" --data-dir "$work_dir/worker" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" --data-dir "$work_dir/worker/clicks.jsonl" 2>"$work_dir/work1.log" & w1=$!
    timeout 60 tail --pid=$server_pid -f /dev/null
    wait $server_pid || fail "the server exited with $?"
    for pid in $s0 $w0 $w1; do wait $pid || fail "a process failed after the run finished"; done
    [ "$(final_line "$work_dir/serve.out")" = "$(final_line "$work_dir/local.out")" ] ||
      fail "'$(final_line "$work_dir/serve.out")' across processes, '$(final_line "$work_dir/local.out")' in one process"
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "ok: $scenario"
