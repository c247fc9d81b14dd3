#!/usr/bin/env bash
# End-to-end tests of stopping a run with SIGINT/SIGTERM: the first signal saves the run (checkpoint,
# --save model, metrics records, summary, a resume hint) and exits 128+signal; a second one exits at once.
# Usage: signal_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$(realpath "$1")
source_dir=$(realpath "$2")
scenario=$3
config="$source_dir/configs/mnist.toml"
work_dir=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done; rm -rf "$work_dir"; }
trap cleanup EXIT
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}
cd "$work_dir" || exit 1

fail() { echo "FAIL: $*"; for f in "$work_dir"/*.out "$work_dir"/*.err; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }

# Starts a run too long to finish, waits until it trains (its first accuracy line), sends the signal
# and sets rc and elapsed_ms (signal to exit).
interrupt_run() {  # name signal extra-args...
  local name=$1 signal=$2; shift 2
  "$psgrad" train --config "$config" --set training.iterations=1000000 "$@" >"$name.out" 2>"$name.err" &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do grep -qP '^0\taccuracy' "$name.out" 2>/dev/null && break; sleep 0.1; done
  sleep 0.5
  local start=$(date +%s%N)
  kill "-$signal" "$pid"
  wait "$pid"
  rc=$?
  elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
}

check_saved_run() {  # name expected-rc
  local name=$1 expected=$2
  [ "$rc" -eq "$expected" ] || fail "$name: exit code $rc, expected $expected"
  # About 0.1-0.2 s on an idle machine; the limit leaves room for a loaded 2-core one.
  [ "$elapsed_ms" -lt 5000 ] || fail "$name: took $elapsed_ms ms from signal to exit (limit 5000)"
  grep -q "stopping after the current step" "$name.err" || fail "$name: no notice of the signal"
  checkpoint=$(sed -n 's/.*--resume \(.*\)$/\1/p' "$name.err")
  [ -n "$checkpoint" ] && [ -s "$checkpoint" ] || fail "$name: no resume hint naming a written checkpoint"
  grep -q '"type":"interrupted"' "$name.jsonl" || fail "$name: no interrupted metrics record"
  tail -n1 "$name.jsonl" | grep -q '^{"type":"summary"' || fail "$name: the metrics file does not end with the summary"
  grep -q "summary: workers" "$name.out" || fail "$name: no summary line"
  [ -s "$name.psgrad" ] || fail "$name: the --save model was not written"
}

case "$scenario" in
  sigint-sync)
    interrupt_run sync INT --mode sync --metrics sync.jsonl --save sync.psgrad
    check_saved_run sync 130
    # The checkpoint continues the run: resumed to a total a little beyond where it stopped.
    steps=$(sed -n 's/.*"type":"interrupted".*"steps":\([0-9]*\).*/\1/p' sync.jsonl)
    "$psgrad" train --config "$config" --mode sync --resume "$checkpoint" --set training.iterations=$((steps + 5)) \
      --no-metrics >resumed.out 2>resumed.err || fail "resuming the interrupted checkpoint exited with $?"
    grep -q "steps 5," resumed.out || fail "the resumed run did not make exactly the 5 remaining steps"
    ;;
  no-metrics-runs-apart)
    # Two runs in one folder without a metrics file, each stopped by Ctrl-C: each saves a checkpoint of
    # its own, whose hint resumes that run and not the other.
    for run in a b; do
      extra=()
      [ "$run" = b ] && extra=(--set model.hidden_width=64 --set training.seed=5)
      "$psgrad" train --config "$config" --set training.iterations=1000000 --no-metrics "${extra[@]}" \
        >"$run.out" 2>"$run.err" &
      pid=$!
      pids+=("$pid")
      for _ in $(seq 600); do grep -qP '^0\taccuracy' "$run.out" 2>/dev/null && break; sleep 0.1; done
      grep -qP '^0\taccuracy' "$run.out" || fail "$run: no first accuracy line"
      kill -INT "$pid"
      wait "$pid"
      rc=$?
      [ "$rc" -eq 130 ] || fail "$run: exit code $rc, expected 130"
    done
    checkpoint_a=$(sed -n 's/.*--resume \(.*\)$/\1/p' a.err)
    checkpoint_b=$(sed -n 's/.*--resume \(.*\)$/\1/p' b.err)
    [ -s "$checkpoint_a" ] && [ -s "$checkpoint_b" ] || fail "a hint names no written checkpoint: '$checkpoint_a' '$checkpoint_b'"
    [ "$checkpoint_a" != "$checkpoint_b" ] || fail "both interrupted runs saved to $checkpoint_a"
    [[ "$checkpoint_a" == runs/*-sync-*-interrupted.ckpt ]] || fail "unexpected checkpoint name $checkpoint_a"
    # Each checkpoint holds its own run's config.
    grep -aq "hidden_width = 128" "$checkpoint_a" && ! grep -aq "hidden_width = 64" "$checkpoint_a" ||
      fail "$checkpoint_a does not hold run a's config"
    grep -aq "hidden_width = 64" "$checkpoint_b" || fail "$checkpoint_b does not hold run b's config"
    ;;
  sigterm-async)
    interrupt_run async TERM --mode async --metrics async.jsonl --save async.psgrad
    check_saved_run async 143
    ;;
  second-signal)
    # A slow worker keeps a step long (10 s, far beyond the limit below), so the second signal lands
    # before the first is honoured; it comes later than the window in which signals count as one request.
    "$psgrad" train --config "$config" --set training.iterations=1000000 --set cluster.straggler_delay_ms=10000 \
      --no-metrics >second.out 2>second.err &
    pid=$!
    pids+=("$pid")
    # Training is under way once the first evaluation is printed (before that a signal exits at once).
    for _ in $(seq 600); do grep -qP '^0\taccuracy' second.out 2>/dev/null && break; sleep 0.1; done
    grep -qP '^0\taccuracy' second.out || fail "second SIGINT: the run did not start training"
    # The second signal must come after the 500 ms in which signals count as one request: at least 0.8 s
    # later (the straggler's 10 s step keeps the first from being honoured meanwhile).
    kill -INT "$pid"; sleep 0.8; start=$(date +%s%N); kill -INT "$pid"
    wait "$pid"; rc=$?
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$rc" -eq 130 ] || fail "second SIGINT: exit code $rc, expected 130"
    [ "$elapsed_ms" -lt 3000 ] || fail "second SIGINT: took $elapsed_ms ms to exit"
    grep -q "stopping now" second.err || fail "second SIGINT: no notice"
    ;;
  double-signal)
    # timeout -s INT signals the process and then its group: two signals at once are one request.
    "$psgrad" train --config "$config" --set training.iterations=1000000 --metrics double.jsonl \
      --save double.psgrad >double.out 2>double.err &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do grep -qP '^0\taccuracy' double.out 2>/dev/null && break; sleep 0.1; done
    sleep 0.5
    start=$(date +%s%N); kill -INT "$pid"; kill -INT "$pid"; wait "$pid"; rc=$?
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    check_saved_run double 130
    grep -q "stopping now" double.err && fail "two signals at once were taken as a second request"
    ;;
  closed-stdout)
    # The reader of standard output goes away after two lines: the run trains on and saves.
    set -o pipefail
    "$psgrad" train --config "$config" --set training.iterations=60 --set training.checkpoint_path=closed.ckpt \
      --no-metrics --save closed.psgrad 2>closed.err | head -n 2 >closed.out
    codes=("${PIPESTATUS[@]}")
    [ "${codes[0]}" -eq 0 ] || fail "train with its standard output closed exited with ${codes[0]}"
    [ "$(wc -l <closed.out)" -eq 2 ] || fail "head did not get its two lines"
    grep -q "standard output is closed" closed.err || fail "no warning that standard output closed"
    [ -s closed.psgrad ] && [ -s closed.ckpt ] || fail "the model or the checkpoint was not written"
    ;;
  resume-as-printed)
    # The hint works as printed: the checkpoint holds the run's config, --set overrides included (a
    # seed other than the file's), so `--resume CKPT` alone continues it, here with train --processes;
    # an override on the resuming command line wins and is reported.
    interrupt_run printed INT --processes --set training.seed=3 --metrics printed.jsonl --save printed.psgrad
    check_saved_run printed 130
    hint=$(sed -n 's/^psgrad: interrupted; resume with: //p' printed.err)
    # It names the program as it was invoked, so it runs as printed.
    [[ "$hint" == "$psgrad train --processes --resume "* ]] || fail "the hint is not a train --processes command: $hint"
    steps=$(sed -n 's/.*"type":"interrupted".*"steps":\([0-9]*\).*/\1/p' printed.jsonl)
    eval "$hint --set training.iterations=$((steps + 5)) --no-metrics" >resumed.out 2>resumed.err ||
      fail "the printed resume command exited with $?: $(tail -n 2 resumed.err)"
    grep -q "steps 5," resumed.out || fail "the resumed run did not make exactly the 5 remaining steps"
    grep -q "resuming .*'s run with training.iterations = $((steps + 5)) (it had 1000000)" resumed.err ||
      fail "the changed iterations were not reported"
    grep -q "training.seed" resumed.err && fail "the resumed run did not keep the seed it was started with"
    ;;
  sigint-pipelined)
    # Pipelined sync with a slow worker: when the signal comes, the fast one has already sent its push
    # for the step after the stop. Every push the server received must be applied (2 per step), so
    # no batch drawn is skipped on resume; and the checkpoint resumes.
    interrupt_run pipelined INT --processes --mode sync --set cluster.pipeline=true \
      --set cluster.straggler_delay_ms=15 --metrics pipelined.jsonl --save pipelined.psgrad
    check_saved_run pipelined 130
    steps=$(sed -n 's/.*"type":"interrupted".*"steps":\([0-9]*\).*/\1/p' pipelined.jsonl)
    received=$(sed -n 's/.*through shared memory: .* \([0-9]*\) received.*/\1/p' pipelined.err)
    [ -n "$steps" ] && [ -n "$received" ] || fail "no step count or no count of pushes received"
    [ "$received" -eq $((2 * steps)) ] || fail "the server received $received pushes for $steps steps of 2 workers"
    "$psgrad" train --config "$config" --processes --mode sync --set cluster.pipeline=true --resume "$checkpoint" \
      --set training.iterations=$((steps + 5)) --no-metrics >resumed.out 2>resumed.err ||
      fail "resuming the interrupted checkpoint exited with $?"
    grep -q "steps 5," resumed.out || fail "the resumed run did not make exactly the 5 remaining steps"
    ;;
  sigint-processes)
    interrupt_run processes INT --processes --metrics processes.jsonl --save processes.psgrad
    check_saved_run processes 130
    grep -q "worker process" processes.err && fail "a worker process failed"
    ;;
  processes-just-listening)
    # SIGINT right after "listening on" in train --processes, before the workers joined: the run ends
    # at once with one plain line, and the workers it started are gone with it.
    "$psgrad" train --config "$config" --processes --no-metrics >early.out 2>early.err &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 200); do grep -q "listening on" early.err && break; sleep 0.02; done
    start=$(date +%s%N); kill -INT "$pid"; wait "$pid"; rc=$?
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "train --processes stopped $elapsed_ms ms after SIGINT"
    [ "$rc" -eq 130 ] || fail "train --processes stopped while waiting: exit code $rc, expected 130"
    [ "$elapsed_ms" -lt 5000 ] || fail "train --processes took $elapsed_ms ms to stop while waiting for workers"
    grep -q "stopped by a signal while waiting for workers" early.err || fail "no plain line saying why"
    grep -q "shard" early.err && fail "a run without shards talks of shards"
    # The server ends the workers it started before it exits; each is gone once its exit is reaped.
    early_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' early.err)
    for _ in $(seq 100); do pgrep -f "work --connect 127.0.0.1:$early_port " >/dev/null || break; sleep 0.05; done
    pgrep -f "work --connect 127.0.0.1:$early_port " && fail "worker processes outlived the server"
    ;;
  worker-takes-sigterm)
    # Worker processes of train --processes must not inherit the server's blocked signals: a worker
    # told to end (kill PID) ends, and the run goes on with the other.
    "$psgrad" train --config "$config" --processes --set training.iterations=400 --set cluster.worker_delay_ms=10 \
      --no-metrics >mask.out 2>mask.err &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 200); do grep -qP '^10\taccuracy' mask.out 2>/dev/null && break; sleep 0.05; done
    worker=$(pgrep -P "$pid" | head -n 1)
    [ -n "$worker" ] || fail "no worker process found"
    blocked=$(awk '/^SigBlk/ {print $2}' "/proc/$worker/status")
    [ "$((16#$blocked & 0x4002))" -eq 0 ] || fail "worker $worker blocks SIGINT or SIGTERM (SigBlk $blocked)"
    kill -TERM "$worker"
    for _ in $(seq 100); do kill -0 "$worker" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$worker" 2>/dev/null && fail "worker $worker did not end on SIGTERM"
    wait "$pid"; rc=$?
    grep -q "1 of 2 workers finished, 1 lost" mask.out || fail "the run did not finish with the other worker"
    # A worker process it started ended by a signal: the run says so and, having finished with the other,
    # succeeds, as a served run that lost a remote worker does (one rule for every lost worker).
    [ "$rc" -eq 0 ] && grep -q "warning: 1 worker process(es) failed; the run finished with the others" mask.err ||
      fail "exit code $rc, or the ended worker not counted"
    ;;
  serve-waiting)
    # Nobody has joined yet: the server still answers a signal at once, and says so.
    "$psgrad" serve --config "$config" --port 0 --no-metrics >waiting.out 2>waiting.err &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do grep -q "listening on" waiting.err && break; sleep 0.1; done
    sleep 0.5
    start=$(date +%s%N); kill -TERM "$pid"; wait "$pid"; rc=$?
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$rc" -eq 143 ] || fail "serve waiting for workers: exit code $rc, expected 143"
    [ "$elapsed_ms" -lt 5000 ] || fail "serve waiting for workers: took $elapsed_ms ms to exit"
    grep -q "stopped by a signal while waiting for workers (0 of 2 joined)" waiting.err || fail "no plain line saying why"
    ;;
  serve-workers-lost)
    # Every worker died and an elastic job waits for a new one: a signal still saves the run.
    "$psgrad" serve --config "$config" --port 0 --workers 1 --set cluster.elastic=true \
      --set cluster.rejoin_timeout_ms=60000 --set cluster.worker_delay_ms=5 --set training.iterations=1000000 \
      --set training.checkpoint_path="$work_dir/lost.ckpt" --no-metrics >lost.out 2>lost.err &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do grep -q "listening on" lost.err && break; sleep 0.1; done
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' lost.err)
    [ -n "$port" ] || fail "the server did not listen"
    "$psgrad" work --connect "127.0.0.1:$port" 2>work.err &
    worker=$!
    pids+=("$worker")
    for _ in $(seq 100); do grep -qP '^10\taccuracy' lost.out && break; sleep 0.1; done
    grep -q "worker 0 joined from " lost.err && grep -qP '^10\taccuracy' lost.out ||
      fail "the worker did not join and train to step 10"
    kill -9 "$worker"
    for _ in $(seq 100); do grep -q "waiting 60000 ms for a worker" lost.err && break; sleep 0.1; done
    grep -q "waiting 60000 ms for a worker" lost.err || fail "the server did not wait for a new worker"
    start=$(date +%s%N); kill -TERM "$pid"; wait "$pid"; rc=$?
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$rc" -eq 143 ] || fail "serve without workers: exit code $rc, expected 143"
    [ "$elapsed_ms" -lt 5000 ] || fail "serve without workers: took $elapsed_ms ms to exit"
    [ -s "$work_dir/lost.ckpt" ] || fail "no checkpoint written"
    grep -q "summary: workers" lost.out || fail "no summary line"
    ;;
  serve-signal-as-workers-join)
    # A signal that reaches the server while the last workers join still came before training: the
    # run ends as one stopped while waiting, not with a run of 0 steps. The server is held (SIGSTOP)
    # while both workers connect and the signal arrives, so all reach it in one go on SIGCONT; which
    # it takes first varies, so three rounds.
    for round in 1 2 3; do
      "$psgrad" serve --config "$config" --port 0 --workers 2 --set training.checkpoint_path="$work_dir/early.ckpt" \
        --no-metrics >joining.out 2>joining.err &
      pid=$!
      pids+=("$pid")
      for _ in $(seq 100); do grep -q "listening on" joining.err && break; sleep 0.1; done
      port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' joining.err)
      [ -n "$port" ] || fail "round $round: the server did not listen"
      kill -STOP "$pid"
      for k in 0 1; do
        "$psgrad" work --connect "127.0.0.1:$port" 2>"work$k.err" &
        pids+=("$!")
      done
      sleep 0.5
      kill -INT "$pid"
      kill -CONT "$pid"
      timeout 20 tail --pid="$pid" -f /dev/null
      wait "$pid"; rc=$?
      [ "$rc" -eq 130 ] || fail "round $round: exit code $rc, expected 130"
      grep -q "stopped by a signal while waiting for workers" joining.err ||
        fail "round $round: no line saying it stopped while waiting"
      grep -q "summary:" joining.out && fail "round $round: a run of no steps was summarised as trained"
      [ -e "$work_dir/early.ckpt" ] && fail "round $round: a checkpoint of no steps was written"
    done
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "PASS: $scenario"
