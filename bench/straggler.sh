#!/usr/bin/env bash
# Straggler comparison: sync, sync with a backup worker, ssp (staleness 1, 2, 4) and async with the
# last worker slowed by STRAGGLER_MS per gradient (2 workers; the "-3w" rows use 3). Prints samples/s
# and the wall seconds to reach 0.85 dev accuracy.
# Usage: bench/straggler.sh [PSGRAD_BINARY] [STRAGGLER_MS] [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
psgrad=${1:-build/apps/psgrad}
straggler_ms=${2:-3}
iterations=${3:-200}
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT

printf '%-16s %12s %14s %10s\n' mode samples/s "s to 0.85" final
run() {  # label args...
  local label=$1; shift
  local metrics="$work_dir/$label.jsonl"
  local summary
  summary=$("$psgrad" train --config configs/mnist.toml --set training.iterations="$iterations" \
    --set evaluation.frequency=5 --set cluster.straggler_delay_ms="$straggler_ms" --metrics "$metrics" "$@" \
    2>/dev/null | grep summary)
  local rate final to_target
  rate=$(sed -n 's/.* \([0-9]*\) samples\/s.*/\1/p' <<<"$summary")
  final=$(sed -n 's/.*final accuracy \([0-9.]*\).*/\1/p' <<<"$summary")
  # The first evaluation at or above 0.85: its wall time since training started.
  to_target=$(grep '"type":"eval"' "$metrics" | awk -F'"wall_seconds":|,"samples"|"dev_accuracy":|,"dev_loss"' \
    '{ if ($4 + 0 >= 0.85) { print $2; exit } }' || true)
  printf '%-16s %12s %14s %10s\n' "$label" "$rate" "${to_target:-never}" "$final"
}
run sync --mode sync
run sync-backup --mode sync --set cluster.backup_workers=1
run sync-3w --mode sync --workers 3
run sync-3w-backup --mode sync --workers 3 --set cluster.backup_workers=1
run ssp-1 --mode ssp --set cluster.staleness=1
run ssp-2 --mode ssp --set cluster.staleness=2
run ssp-4 --mode ssp --set cluster.staleness=4
run async --mode async
