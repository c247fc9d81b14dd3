#!/usr/bin/env bash
# Builds the libFuzzer targets in a separate clang build and fuzzes each for a few seconds; fails on any
# crash, hang, leak or out-of-memory. Usage: run_fuzz.sh <binary dir> (the fuzz build goes in <dir>/fuzz).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 <binary dir>" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
build=$(cd "$1" && pwd)/fuzz
bin=$build/tests/fuzz
seconds=${PSGRAD_FUZZ_SECONDS:-5}

# A machine without clang fails the test (it is never counted as skipped): it says what to install.
if ! command -v clang++ >/dev/null 2>&1; then
  echo "run_fuzz: clang++ not found; install clang and libclang-rt-14-dev (scripts/setup.sh --test does)" >&2
  exit 1
fi

# -O1 -g keeps asserts, compiles faster than -O2 and still fuzzes quickly; -j2 because the machine has
# two cores shared with others.
start=$SECONDS
mkdir -p "$build"
if ! { cmake -S "$repo" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DPSGRAD_FUZZ=ON \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" &&
       cmake --build "$build" -j 2; } >"$build/build.log" 2>&1; then
  tail -n 40 "$build/build.log"
  echo "run_fuzz: the fuzz build failed; the whole log is in $build/build.log" >&2
  exit 1
fi
echo "run_fuzz: clang build took $((SECONDS - start)) s"

# Each run starts from the seeds alone, so its length and findings do not depend on earlier runs.
rm -rf "$build/seeds" "$build/corpus"
"$bin/fuzz_seeds" "$build/seeds"
mkdir -p "$build/artifacts"

failed=()
for pair in fuzz_idx:idx fuzz_payload:payload fuzz_checkpoint:checkpoint fuzz_own_data:own-data \
            fuzz_sparse_data:sparse-data; do
  target=${pair%%:*}
  seeds=$build/seeds/${pair#*:}
  corpus=$build/corpus/$target
  mkdir -p "$corpus"
  log=$build/$target.log
  start=$SECONDS
  # New inputs go to the first directory, keeping the generated seeds untouched.
  if "$bin/$target" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=5 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$target-" "$corpus" "$seeds" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "run_fuzz: $target: ${runs:-?} executions in $((SECONDS - start)) s, no failures"
  else
    tail -n 40 "$log"
    echo "run_fuzz: $target FAILED; log $log, reproducer in $build/artifacts/" >&2
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  echo "run_fuzz: failing targets: ${failed[*]}" >&2
  exit 1
fi
