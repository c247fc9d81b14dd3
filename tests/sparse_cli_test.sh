#!/usr/bin/env bash
# End-to-end scenarios of `psgrad train` with a model with embedding tables on a generated file: Ctrl-C
# stops it at a step, prints the summary, saves the model, writes a checkpoint with a resume hint and exits
# 130.
# Usage: sparse_cli_test.sh PSGRAD_BINARY SCENARIO
set -uo pipefail
psgrad=$(realpath "$1")
scenario=$2
work_dir=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done; rm -rf "$work_dir"; }
trap cleanup EXIT
cd "$work_dir" || exit 1

fail() { echo "FAIL: $*"; for f in "$work_dir"/*.out "$work_dir"/*.err; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }

# Each line's words share one colour (a word's number mod 3), the label.
write_colours() {  # path count
  local names=(blue green red) i c
  RANDOM=7
  for ((i = 0; i < $2; i++)); do
    c=$((RANDOM % 3))
    printf '{"words":"w%d w%d","noise":[%d],"colour":"%s"}\n' $((3 * (RANDOM % 20) + c)) $((3 * (RANDOM % 20) + c)) \
      $((RANDOM % 10)) "${names[$c]}"
  done >"$1"
}

cat >colours.toml <<'TOML'
[training]
iterations = 1000000
batch_size = 32

[evaluation]
frequency = 20

[model]
"@layers" = "hashembed_mlp.v1"
embedding_widths = [4, 8]
embedding_rows = [50, 500]
hidden_width = 16

[data]
path = "colours.jsonl"
label = "colour"
dev_fraction = 0.25

[data.columns]
words = "text"
noise = "ids"
TOML

case "$scenario" in
  missing-data)
    # A data file that is not there: one line naming it and the commands that write one.
    "$psgrad" train --config colours.toml --no-metrics --set data.path=missing.jsonl >run.out 2>run.err &&
      fail "a missing data file was accepted"
    [ "$(wc -l <run.err)" -eq 1 ] || fail "expected one line: $(cat run.err)"
    grep -qF "missing.jsonl: not found (data.path); \`$psgrad data debian-packages --out missing.jsonl\` writes" run.err ||
      fail "the refusal does not name the file and the command that makes one: $(cat run.err)"
    ;;
  sigint)
    write_colours colours.jsonl 400
    "$psgrad" train --config colours.toml --metrics run.jsonl --save model.psg >run.out 2>run.err &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 300); do grep -qP '^20\taccuracy' run.out 2>/dev/null && break; sleep 0.1; done
    grep -qP '^20\taccuracy' run.out || fail "no accuracy line of iteration 20"
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    [ "$rc" -eq 130 ] || fail "exit code $rc, expected 130"
    grep -q "stopping after the current step" run.err || fail "no notice of the signal"
    grep -q "sync summary: workers 2" run.out || fail "no summary line"
    # The hint names the program as it was invoked, so that it runs as printed.
    grep -qF -- "resume with: $psgrad train --resume run-interrupted.ckpt" run.err || fail "no resume hint"
    [ -f run-interrupted.ckpt ] || fail "no checkpoint of the interrupted run beside its metrics"
    grep -q '"type":"interrupted"' run.jsonl || fail "no interrupted metrics record"
    tail -n1 run.jsonl | grep -q '^{"type":"summary"' || fail "the metrics file does not end with the summary"
    "$psgrad" predict --model model.psg colours.jsonl >predicted.out 2>predicted.err || fail "predict exited with $?"
    [ "$(wc -l <predicted.out)" -eq 400 ] || fail "predict printed $(wc -l <predicted.out) lines for 400 examples"
    "$psgrad" predict --model model.psg colours.jsonl >/dev/full 2>full.err && fail "predict into a full disk exited 0"
    grep -qx "psgrad predict: standard output: No space left on device" full.err ||
      fail "predict into a full disk: no line naming standard output: $(cat full.err)"
    grep -qvP '^[0-9]+\t(blue|green|red)\t' predicted.out && fail "a prediction line without a class name"
    # The hint's command continues it, here for 3 more iterations.
    stopped=$(grep -oP 'checkpoint at iteration \K[0-9]+' run.err | tail -n1)
    [ -n "$stopped" ] || fail "no note of the checkpoint's iteration"
    "$psgrad" train --resume run-interrupted.ckpt --no-metrics --set training.iterations=$((stopped + 3)) \
      >resumed.out 2>resumed.err || fail "the resumed run exited with $?"
    # Three more steps; the version may run a step ahead of the iteration when the signal came mid-step.
    grep -q "sync summary: workers 2, steps 3," resumed.out || fail "the resumed run did not take 3 more steps"
    grep -q "^final weights: version " resumed.out || fail "the resumed run printed no final weights"
    ;;
  save-best)
    # training.save_best keeps the best evaluation's dense weights and rows: the saved model scores what
    # that evaluation printed, and train --processes keeps the same weights.
    write_colours colours.jsonl 400
    best=(--set training.iterations=200 --set training.save_best=true --set optimizer.learn_rate=0.3 --no-metrics)
    "$psgrad" train --config colours.toml "${best[@]}" --save best.psg >run.out 2>run.err || fail "train exited with $?"
    kept=$(sed -n 's/^kept weights: version \([0-9]*\), hash .*/\1/p' run.out)
    [ -n "$kept" ] || fail "no kept weights line"
    [ "$kept" -lt 200 ] || fail "the run peaked at its end (step $kept), so it shows nothing kept"
    kept_accuracy=$(grep -P "^$kept\taccuracy: " run.out | sed 's/.*accuracy: //')
    [ -n "$kept_accuracy" ] || fail "no accuracy line of step $kept"
    "$psgrad" eval --model best.psg >eval.out 2>eval.err || fail "eval exited with $?"
    grep -q "weights version $kept)" eval.out || fail "the saved model is not of version $kept: $(head -n1 eval.out)"
    grep -q "^accuracy: $kept_accuracy " eval.out || fail "the saved model scores $(grep '^accuracy' eval.out), step $kept printed $kept_accuracy"
    "$psgrad" train --config colours.toml "${best[@]}" --processes --save processes.psg >processes.out 2>processes.err ||
      fail "train --processes exited with $?"
    [ "$(grep '^kept weights' processes.out)" = "$(grep '^kept weights' run.out)" ] ||
      fail "across processes other weights were kept: $(grep '^kept weights' processes.out)"
    "$psgrad" eval --model processes.psg >processes-eval.out 2>&1 || fail "eval of the processes' model exited with $?"
    diff <(grep -v '^model:' eval.out) <(grep -v '^model:' processes-eval.out) >/dev/null ||
      fail "the two saved models score differently"
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "ok: $scenario"
