#!/usr/bin/env bash
# One engine for both kinds of model: {dense MLP, model with embedding tables} x {sync, async, ssp} x
# {one process, --processes}, each run stopped at a checkpoint and resumed. The resumed run makes exactly
# the remaining steps and ends at the uninterrupted run's version; sync ends with its weights, bit for bit.
# async_pipeline and sync_pipeline are those modes with cluster.pipeline (two pushes out per worker); a
# pipelined sync run's uninterrupted twin stops at the same checkpoint, where the pipeline drains.
# Usage: engine_matrix_test.sh PSGRAD_BINARY SOURCE_DIR MODEL(dense|tables)
#        MODE(sync|async|ssp|async_pipeline|sync_pipeline) PLACE(one|processes)
set -uo pipefail
psgrad=$(realpath "$1")
source_dir=$2
model=$3
mode=$4
label=$4
place=$5
work_dir=$(mktemp -d)
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}
export PSGRAD_JOIN_TOKEN=engine-matrix-test

fail() { echo "FAIL ($model $label $place): $*"; for f in "$work_dir"/*.log "$work_dir"/*.out; do echo "--- $f"; cat "$f"; done; exit 1; }
trap 'kill $(jobs -p) 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work_dir"' EXIT

case "$model" in
  dense)
    config="$work_dir/dense.toml"
    sed -e 's/^hidden_width = 128/hidden_width = 32/' "$source_dir/configs/mnist.toml" >"$config"
    ;;
  tables)
    source "$(dirname "${BASH_SOURCE[0]}")/tables_config.sh"
    "$psgrad" data click-logs --rows 2000 --out "$work_dir/clicks.jsonl" >/dev/null 2>&1 || fail "click-logs"
    config="$work_dir/tables.toml"
    write_tables_config "$config" "$work_dir/clicks.jsonl"
    ;;
  *) fail "unknown model $model" ;;
esac

place_args=()
[ "$place" = processes ] && place_args=(--processes)
full_args=()
if [ "$mode" = async_pipeline ] || [ "$mode" = sync_pipeline ]; then
  mode=${mode%_pipeline}
  place_args+=(--set cluster.pipeline=true)
  [ "$mode" = sync ] && full_args=(--set training.checkpoint_every=20 --set training.checkpoint_path="\"$work_dir/full.ckpt\"")
fi
common=(--config "$config" --set cluster.mode="\"$mode\"" --set cluster.num_workers=2 --set evaluation.frequency=1000
        "${place_args[@]}")

run() {  # name args...
  local name=$1; shift
  "$psgrad" train "${common[@]}" "$@" >"$work_dir/$name.out" 2>"$work_dir/$name.log" ||
    fail "the $name run exited with $?"
}
final_line() { grep '^final weights: ' "$work_dir/$1.out"; }

# Sync counts a step per iteration; async and ssp a step per worker's gradient, 2 per iteration.
per=1
[ "$mode" = sync ] || per=2
ckpt="$work_dir/run.ckpt"
run full --set training.iterations=30 --no-metrics "${full_args[@]}"
run first --set training.iterations=20 --set training.checkpoint_path="\"$ckpt\"" --metrics "$work_dir/first.jsonl"
grep -q "checkpoint at iteration $((20 * per)) written" "$work_dir/first.log" || fail "no checkpoint at version $((20 * per))"
run resumed --set training.iterations=30 --set training.checkpoint_path="\"$ckpt\"" --resume "$ckpt" \
  --metrics "$work_dir/resumed.jsonl"

# Its workers computed the 10 remaining iterations' gradients: 20 of them.
gradients=$(/usr/bin/python3 -c 'import json,sys
print(sum(next(r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "summary")["gradients_per_worker"]))' \
  "$work_dir/resumed.jsonl") || fail "no summary in the resumed run's metrics"
[ "$gradients" -eq 20 ] || fail "the resumed run's workers computed $gradients gradients, not the 20 that remained"
# The resumed run's clocks carry on from the checkpoint: its (final) evaluation counts the examples of
# both runs, and at least the time both trained for (the checkpoint is taken after the first's training).
/usr/bin/python3 - "$work_dir/first.jsonl" "$work_dir/resumed.jsonl" <<'EOF' || fail "the resumed run's clocks did not carry on"
import json, sys
first, resumed = ([json.loads(line) for line in open(path)] for path in sys.argv[1:3])
def summary(records): return next(r for r in records if r["type"] == "summary")
last = [r for r in first if r["type"] == "eval"][-1]
end = [r for r in resumed if r["type"] == "eval"][-1]
samples = last["samples"] + summary(resumed)["samples"]
trained = summary(first)["training_seconds"] + summary(resumed)["training_seconds"]
if end["samples"] != samples or end["wall_seconds"] < trained:
    sys.exit(f"the resumed run ended at samples {end['samples']}, wall {end['wall_seconds']} s; "
             f"both runs consumed {samples} and trained {trained} s")
EOF
final_line resumed | grep -q "^final weights: version $((30 * per)), hash " || fail "the resumed run did not end at version $((30 * per))"
final_line full | grep -q "^final weights: version $((30 * per)), hash " || fail "the uninterrupted run did not end at version $((30 * per))"
grep -qE '^Final 	accuracy: [01]\.[0-9]{3}$' "$work_dir/resumed.out" || fail "the resumed run printed no final accuracy"
if [ "$mode" = sync ]; then
  [ "$(final_line full)" = "$(final_line resumed)" ] ||
    fail "sync: resumed weights ($(final_line resumed)) are not the uninterrupted run's ($(final_line full))"
fi
echo "ok: $model $label $place: $(final_line resumed)"
