#!/usr/bin/env bash
# psgrad_bench's sparse section (9) on its own, without PyTorch: every key of bench/README.md is written,
# psgrad's own figures are measured (the run across processes and its ratio to one process too), and the
# PyTorch rows are null with the skip note. The accuracy rows need apt's package lists; without them they
# must say why instead.
# Usage: bench_sparse_section_test.sh BENCH_BINARY
set -euo pipefail
bench=$1
command -v python3 >/dev/null || { echo "skipped: python3 is needed to read the bench's JSON"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bench" --quick --sections 9 --python "$work/missing/python3" --out "$work/out" >"$work/log" 2>&1 ||
  { echo "the sparse section failed"; cat "$work/log"; exit 1; }

python3 - "$work"/out/*.json <<'PY'
import json, sys
rows = {row["key"]: row for row in json.load(open(sys.argv[1]))["rows"]}
problems = []
measured = ["sparse.rows_pulled_per_s_per_shard", "sparse.rows_pushed_per_s_per_shard",
            "sparse.rows_pulled_per_s_per_shard.width_64", "sparse.rows_pushed_per_s_per_shard.width_64",
            "sparse.server_row_ns", "sparse.plain_loop_row_ns", "sparse.server_vs_plain_loop",
            "sparse.bytes_per_step", "sparse.dense_equivalent_bytes_per_step", "sparse.unique_keys_per_step",
            "sparse.table_2_24.bytes_per_step", "sparse.table_2_24.dense_equivalent_bytes_per_step",
            "sparse.table_2_24.unique_keys_per_step"]
measured += [f"sparse.samples_per_s.local_{k}_shards.{mode}" for k in (1, 2, 4) for mode in ("sync", "async")]
measured += ["sparse.samples_per_s.loopback_3_processes", "sparse.samples_per_s.local_command",
             "sparse.loopback_vs_local", "sparse.loopback_vs_bench_process"]
for key in measured:
    if key not in rows:
        problems.append(f"row {key} missing")
    elif rows[key]["median"] is None or rows[key]["median"] <= 0:
        problems.append(f"row {key} not measured: {rows[key]}")
for key in ("sparse.torch_samples_per_s", "sparse.psgrad_async_vs_torch", "sparse.debian_packages.torch_accuracy"):
    row = rows.get(key)
    if row is None or row["median"] is not None or "skipped" not in row.get("note", "") and "not measured" not in row.get("note", ""):
        problems.append(f"row {key} should be null with a reason: {row}")
# Each ratio divides the runs of each repeat: its median lies within the ratios of the rates' extremes.
if not problems:
    details = json.load(open(sys.argv[1]))["details"]["sparse"]["samples_per_s"]["loopback_3_processes"]
    for key, local in (("sparse.loopback_vs_local", "local_command"),
                       ("sparse.loopback_vs_bench_process", "in_bench_process")):
        runs = list(zip(details["loopback"], details[local]))
        ratio = rows[key]["median"]
        if not runs or not min(a / b for a, b in runs) <= ratio <= max(a / b for a, b in runs):
            problems.append(f"{key} {ratio} is not within its runs' ratios {runs}")
    if len(details["in_bench_process_page_faults"]) != len(details["loopback"]):
        problems.append(f"page faults of the runs in the bench process: {details}")
# Tables 256 times larger move the same keys: the whole-table figure grows with them, a step's bytes do not.
if not problems:
    small, large = rows["sparse.bytes_per_step"]["median"], rows["sparse.table_2_24.bytes_per_step"]["median"]
    dense_small = rows["sparse.dense_equivalent_bytes_per_step"]["median"]
    dense_large = rows["sparse.table_2_24.dense_equivalent_bytes_per_step"]["median"]
    if not dense_large > 100 * dense_small or not large < dense_small:
        problems.append(f"bytes per step {small} and {large}, whole tables {dense_small} and {dense_large}")
for part in ("psgrad_accuracy", "majority_accuracy"):
    row = rows.get(f"sparse.debian_packages.{part}")
    if row is None:
        problems.append(f"row sparse.debian_packages.{part} missing")
    elif row["median"] is None and not row.get("note", "").startswith("not measured"):
        problems.append(f"row sparse.debian_packages.{part} is null without saying why: {row}")
    elif row["median"] is not None and not 0 <= row["median"] <= 1:
        problems.append(f"row sparse.debian_packages.{part} is no accuracy: {row}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("sparse section: every key written, psgrad measured, PyTorch skipped with its reason")
PY
