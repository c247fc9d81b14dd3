#!/usr/bin/env bash
# End-to-end tests of what a run does besides the tutorial's loop, on the built binary: learning-rate
# schedules in every mode, early stopping and the kept weights, the "iteration 0" evaluation, --set of
# another architecture or optimizer, the progress line's width, --version and the bare command.
# Usage: run_features_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$(realpath "$1")
source_dir=$(realpath "$2")
scenario=$3
config="$source_dir/configs/mnist.toml"
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}
cd "$work_dir" || exit 1

fail() { echo "FAIL: $*"; for f in "$work_dir"/*.out "$work_dir"/*.err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

run() {  # name args... (train on the shipped config, no metrics file)
  local name=$1; shift
  "$psgrad" train --config "$config" --no-metrics "$@" >"$name.out" 2>"$name.err" || fail "train $* exited with $?"
}
weights_hash() { sed -n 's/^final weights: version [0-9]*, hash \([0-9a-f]*\)$/\1/p' "$1"; }
accuracy_at() { sed -n "s/^$2\taccuracy: //p" "$1"; }

case "$scenario" in
  schedule-every-mode)
    # warmup_linear with no warm-up falls to 0 at step 5 (rates 1, 0.8, ..., 0.2, then 0 x 0.002): the
    # weights after 5 server steps are final whatever comes later, in every mode, if and only if the
    # schedule follows the server's step. One worker keeps async and ssp deterministic.
    schedule=(--set optimizer.learn_rate.@schedules=warmup_linear.v1 --set optimizer.learn_rate.initial_rate=0.002
              --set optimizer.learn_rate.warmup_steps=0 --set optimizer.learn_rate.total_steps=5
              --set evaluation.frequency=100)
    for mode in "sync" "async --workers 1" "ssp --workers 1" "sync --set cluster.servers=2"; do
      read -ra extra <<<"$mode"
      run four "${schedule[@]}" --mode "${extra[@]}" --set training.iterations=4
      run five "${schedule[@]}" --mode "${extra[@]}" --set training.iterations=5
      run eight "${schedule[@]}" --mode "${extra[@]}" --set training.iterations=8
      [ -n "$(weights_hash five.out)" ] || fail "$mode: no final weights line"
      [ "$(weights_hash five.out)" = "$(weights_hash eight.out)" ] ||
        fail "$mode: steps 6-8 changed the weights although the schedule's rate there is 0"
      [ "$(weights_hash four.out)" != "$(weights_hash five.out)" ] || fail "$mode: step 5 (rate 0.0004) changed nothing"
    done
    # Sharded and single-server sync runs take the same scheduled steps.
    run one --set training.iterations=8 "${schedule[@]}"
    run two --set training.iterations=8 "${schedule[@]}" --set cluster.servers=2
    [ "$(weights_hash one.out)" = "$(weights_hash two.out)" ] || fail "2 shards and 1 server differ under a schedule"
    ;;
  early-stopping)
    stop=(--set training.patience=2 --set training.save_best=true --set training.iterations=400)
    run first "${stop[@]}" --save best.psgrad
    run second "${stop[@]}"
    line=$(grep '^stopped early after step' first.out) || fail "no line saying the run stopped early"
    stopped=$(sed -n 's/^stopped early after step \([0-9]*\):.*/\1/p' first.out)
    kept=$(sed -n 's/.*kept the weights of step \([0-9]*\):.*/\1/p' first.out)
    [ -n "$stopped" ] && [ -n "$kept" ] || fail "the summary does not name the step stopped at and the step kept: $line"
    [ "$stopped" -lt 400 ] || fail "stopped at $stopped, not early"
    grep -q "the 2 evaluations up to step $stopped did not improve" first.out || fail "the reason (patience 2) is not given"
    # The kept step has the best accuracy printed (the final evaluation, of step $stopped, counts too),
    # and the saved model is those weights.
    kept_accuracy=$(accuracy_at first.out "$kept")
    [ "$kept" = "$stopped" ] && kept_accuracy=$(accuracy_at first.out 'Final ')
    best_accuracy=$(sed -n 's/^.*\taccuracy: //p' first.out | sort -r | head -n1)
    [ -n "$kept_accuracy" ] && [ "$kept_accuracy" = "$best_accuracy" ] ||
      fail "kept step $kept ($kept_accuracy) is not the best ($best_accuracy)"
    "$psgrad" eval --model best.psgrad >eval.out 2>eval.err || fail "eval of the kept model failed"
    [ "$(sed -n 's/^accuracy: \([0-9.]*\) .*/\1/p' eval.out)" = "$kept_accuracy" ] ||
      fail "the saved model's accuracy is not the kept step's"
    grep -q "^kept weights: version $kept, hash" first.out || fail "no kept weights line for version $kept"
    # A sync run stops at the same step every time: each step waits for the evaluation's verdict.
    diff <(grep -v summary first.out) <(grep -v summary second.out) >/dev/null || fail "two early-stopped sync runs differ"
    ;;
  iteration-zero)
    run sync --set training.iterations=10
    run async --set training.iterations=10 --mode async
    zero_sync=$(accuracy_at sync.out 0); zero_async=$(accuracy_at async.out 0)
    [ -n "$zero_sync" ] && [ "$zero_sync" = "$zero_async" ] ||
      fail "iteration 0 differs between sync ($zero_sync) and async ($zero_async): it is not the initial weights"
    awk -v a="$zero_sync" 'BEGIN { exit !(a < 0.2) }' || fail "iteration 0 accuracy $zero_sync is not at chance"
    # Async evaluates every 10 gradients: 0, 10 (after 10 steps) and the final one after 20.
    [ "$(grep -cP '^\d+\taccuracy: ' async.out)" -eq 2 ] || fail "async printed other than lines 0 and 10"
    ;;
  set-replaces-choice)
    run mlp --set model.@layers=mlp.v1 --set optimizer.@optimizers=SGD.v1 --set training.iterations=2
    grep -q "note: .*model.hidden_width = 128 dropped: mlp.v1 has no such setting" mlp.err || fail "no note for hidden_width"
    grep -q "note: .*optimizer.beta1 = 0.9 dropped: SGD.v1 has no such setting" mlp.err || fail "no note for beta1"
    "$psgrad" train --config "$config" --no-metrics --quiet --set model.@layers=mlp.v1 --set training.iterations=2 \
      --set training.checkpoint_path=run.ckpt --set training.checkpoint_every=1 >quiet.out 2>quiet.err ||
      fail "quiet run failed"
    [ -s run.ckpt ] || fail "the quiet run wrote no checkpoint"
    # --quiet drops progress and routine notes (the checkpoint lines), not what the config lost.
    grep -q "checkpoint at iteration" quiet.err && fail "--quiet printed the checkpoint lines"
    [ "$(grep -c '' quiet.err)" -eq "$(grep -c '^psgrad: note: .* dropped' quiet.err)" ] ||
      fail "--quiet printed more than the config's notes: $(cat quiet.err)"
    grep -q "^psgrad: note: .*model.hidden_width = 128 dropped" quiet.err || fail "--quiet hid the config's note"
    ;;
  progress-width)
    # A real terminal of 60 columns: every state of the progress line fits in 59 (no wrap), and async
    # counts gradients against their total.
    for mode in sync async; do
      script -qfec "stty cols 60; '$psgrad' train --config '$config' --no-metrics --mode $mode --set training.iterations=30 --set evaluation.frequency=5" \
        "$mode.typescript" >/dev/null 2>&1 || fail "$mode run on a terminal failed"
      tr '\r' '\n' <"$mode.typescript" | sed 's/\x1b\[K//g' >"$mode.lines"
      grep -E '^(iteration|gradients) ' "$mode.lines" >"$mode.progress" || fail "$mode: no progress line on a terminal"
      long=$(awk 'length($0) > 59' "$mode.progress")
      [ -z "$long" ] || fail "$mode: progress longer than 59 columns on a 60-column terminal: $long"
    done
    grep -q "^iteration [0-9]*/30 " sync.lines || fail "sync progress does not count iterations"
    grep -q "^gradients [0-9]*/60 " async.lines || fail "async progress does not count gradients of 60"
    ;;
  version-help)
    "$psgrad" --version >version.out 2>version.err || fail "--version exited with $?"
    grep -qP '^psgrad \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)$' version.out || fail "no version and commit line"
    grep -qP '^CAF 0\.17\.\d+, Eigen 3\.\d+\.\d+, ' version.out || fail "no CAF and Eigen versions"
    grep -q '^vector instructions: ' version.out || fail "no vector instructions line"
    "$psgrad" >bare.out 2>bare.err || fail "psgrad alone exited with $?"
    grep -q "train" bare.out && grep -q -- "--version" bare.out || fail "psgrad alone did not print the help"
    # A group of commands alone asks for its help as well, under the same rule.
    for group in config data; do
      "$psgrad" "$group" >group.out 2>group.err || fail "psgrad $group alone exited with $?"
      grep -q "^Usage: $group \[OPTIONS\] SUBCOMMAND" group.out && grep -q "^Subcommands:" group.out ||
        fail "psgrad $group alone did not print its help: $(cat group.out group.err)"
    done
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "ok: $scenario"
