#!/usr/bin/env bash
# Multi-process tests on 127.0.0.1: real `psgrad serve` and `psgrad work` processes.
# Usage: multiprocess_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$1
source_dir=$2
scenario=$3
config="$source_dir/configs/mnist.toml"
work_dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work_dir"' EXIT
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}

fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }

# Starts a server in the background with the given extra arguments; sets server_pid and port.
start_server() {
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

wait_ok() {  # pid name
  wait "$1" || fail "$2 exited with code $?"
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
    ;;
  async-finishes)
    start_server --mode async --set training.iterations=60
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work0.log" & w0=$!
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/work1.log" & w1=$!
    wait_ok $server_pid serve; wait_ok $w0 "worker 0"; wait_ok $w1 "worker 1"
    grep -q "async summary: workers 2, steps 120" "$work_dir/serve.out" || fail "expected 120 async steps"
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
    "$psgrad" work --connect "127.0.0.1:$port" --data "$tiny" 2>"$work_dir/bad.log" && fail "mismatched worker was accepted"
    grep -q "data set shape 64 inputs x 10 classes differs from the server's 784 x 10" "$work_dir/bad.log" ||
      fail "worker did not say why it was refused"
    grep -q "refused worker" "$work_dir/serve.log" || fail "server did not report the refusal"
    "$psgrad" work --connect "127.0.0.1:$port" 2>"$work_dir/good.log" & good=$!
    wait_ok $server_pid serve; wait_ok $good "good worker"
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
    grep -q "cannot reach server 127.0.0.1:1 after" "$work_dir/work.log" || fail "no clear message"
    [ $(( $(date +%s) - start )) -lt 30 ] || fail "the retry was not bounded"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
echo "PASS: $scenario"
