#!/usr/bin/env bash
# psgrad_bench's peer section on a machine without PyTorch: it is skipped, not failed. Two ways torch
# can be missing: no interpreter at the --python path, and an interpreter where `import torch` fails
# (a torch package earlier on PYTHONPATH that raises ImportError stands in for an uninstalled one).
# Usage: bench_peers_skipped_test.sh BENCH_BINARY
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/no-torch/torch"
echo 'raise ImportError("No module named torch (hidden by the test)")' >"$work/no-torch/torch/__init__.py"

check_skipped() {  # label out_dir log
  local label=$1 out=$2 log=$3 json
  json=$(ls "$out"/*.json)
  grep -q 'skipped: python3-torch not installed' "$log" || { echo "$label: no skip message"; cat "$log"; exit 1; }
  for key in peer.torch_ddp.samples_per_second peer.torch_rpc_sync.ratio_local peer.torch_rpc_async.ratio_processes \
             peer.torch.ratio; do
    grep -q "\"key\": \"$key\"" "$json" || { echo "$label: row $key missing from $json"; exit 1; }
  done
  grep -q '"status": "skipped: python3-torch not installed"' "$json" || { echo "$label: no skipped status"; exit 1; }
  # Only section 8 ran: a skipped peer is no miss, so no target is checked at all.
  grep -q '"targets": \[\]' "$json" || { echo "$label: a target was checked without its figures"; exit 1; }
  echo "$label: skipped cleanly"
}

"$bench" --quick --sections 8 --python "$work/missing/python3" --out "$work/out1" >"$work/log1" 2>&1 ||
  { echo "no interpreter: the bench failed"; cat "$work/log1"; exit 1; }
check_skipped "no interpreter" "$work/out1" "$work/log1"

if command -v python3 >/dev/null; then
  PYTHONPATH="$work/no-torch" "$bench" --quick --sections 8 --python "$(command -v python3)" --out "$work/out2" \
    >"$work/log2" 2>&1 || { echo "torch not importable: the bench failed"; cat "$work/log2"; exit 1; }
  check_skipped "torch not importable" "$work/out2" "$work/log2"
fi
