#!/usr/bin/env bash
# The simulated-cluster scaling table: N = 1, 2, 4, 8 workers x K = 1, 2 shard hosts, fp32 and bf16,
# sync, async and async with cluster.pipeline, every host on its own link (scripts/cluster-sim.sh). Writes one JSON line per run and
# prints a Markdown table: samples/s, MB per step on the busiest link direction, how much of that
# link's rate the run used, and what the link allows (the link rate over the busiest direction's bytes
# per step, as samples/s). Needs root (network namespaces). Runs are sized to about 3 s each on a
# 1 Gbit/s link (800 gradients in all), so the whole table takes about 5 minutes.
set -euo pipefail

source_dir=$(cd "$(dirname "$0")/.." && pwd)
link=1gbit delay=1ms out="" workers_list="1 2 4 8" shards_list="1 2" wires="fp32 bf16" modes="sync async async-pipeline" seeds=0
gradients=800 repeats=1 psgrad_flag=() worker_link_flag=()

usage() {
  cat <<'EOF'
Usage: bench/scaling-table.sh [--link RATE] [--worker-link RATE] [--delay D] [--json FILE] [--workers "1 2 4 8"] [--shards "1 2"]
                              [--wires "fp32 bf16"] [--modes "sync async async-pipeline sync-ordered sync-pipeline sync-pipeline-ordered"] [--gradients G]
                              [--seeds "0 1 2"]   (every run once per seed; default 0)
                              [--repeats R]       (the whole table R times: async runs differ between repeats)
                              [--psgrad BINARY]   (default: build/apps/psgrad of this checkout)
The JSON file (default bench/results/scaling-<date>-<commit>.jsonl) is rewritten, one line per run.
EOF
}
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --link) link=$2 ;;
    --worker-link) worker_link_flag=(--worker-link "$2") ;;
    --delay) delay=$2 ;;
    --json) out=$2 ;;
    --workers) workers_list=$2 ;;
    --shards) shards_list=$2 ;;
    --wires) wires=$2 ;;
    --modes) modes=$2 ;;
    --gradients) gradients=$2 ;;
    --seeds) seeds=$2 ;;
    --repeats) repeats=$2 ;;
    --psgrad) psgrad_flag=(--psgrad "$2") ;;
    *) echo "scaling-table: unknown flag $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done
[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || { echo "scaling-table: --repeats '$repeats': expected a whole number of at least 1" >&2; exit 2; }
[ -n "$out" ] || out="$source_dir/bench/results/scaling-$(date -u +%Y-%m-%d)-$(git -C "$source_dir" rev-parse --short HEAD).jsonl"
mkdir -p "$(dirname "$out")"
: >"$out"
failed=0

for repeat in $(seq "$repeats"); do
  for seed in $seeds; do
    for mode in $modes; do
      for wire in $wires; do
        for shards in $shards_list; do
          for workers in $workers_list; do
            # The same number of gradients for every N: sync sums N per iteration, async applies each.
            iterations=$(((gradients + workers - 1) / workers))
            # async-pipeline: async with cluster.pipeline = true (a worker computes while its last push and
            # the weights answering it are on the wire); sync-ordered: sync with cluster.ordered_answers;
            # sync-pipeline: sync with cluster.pipeline (each step from gradients a step old);
            # sync-pipeline-ordered: both.
            overlap=(); run_mode=$mode
            [ "$mode" = async-pipeline ] && overlap=(--set cluster.pipeline=true) run_mode=async
            [ "$mode" = sync-ordered ] && overlap=(--set cluster.ordered_answers=true) run_mode=sync
            [ "$mode" = sync-pipeline ] && overlap=(--set cluster.pipeline=true) run_mode=sync
            [ "$mode" = sync-pipeline-ordered ] && overlap=(--set cluster.pipeline=true --set cluster.ordered_answers=true) run_mode=sync
            "$source_dir/scripts/cluster-sim.sh" --workers "$workers" --shards "$shards" --link "$link" "${worker_link_flag[@]}" --delay "$delay" \
              --wire "$wire" --mode "$run_mode" --iterations "$iterations" --seed "$seed" --set evaluation.frequency=100000 \
              "${overlap[@]}" "${psgrad_flag[@]}" --json "$out" >&2 ||
              { echo "scaling-table: the run with $workers workers, $shards shard hosts, $wire, $mode, seed $seed failed (above); its row is missing" >&2
                failed=$((failed + 1)); }
          done
        done
      done
    done
  done
done

# One row per run; "link allows" is the busiest link direction's bound in samples/s.
python3 - "$out" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| mode | wire | shard hosts | workers | seed | samples/s | busiest link MB/step | link used | link allows (samples/s) | accuracy |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    samples_per_step = r["samples_per_second"] * r["wall_seconds"] / max(r["steps"], 1)
    allows = r["busiest_link_use"] and r["samples_per_second"] / r["busiest_link_use"]
    mode = r["mode"] + (" + pipeline" if r.get("pipeline") else "") + (" + ordered answers" if r.get("ordered_answers") else "")
    print(f'| {mode} | {r["wire"]} | {r["shards"]} | {r["workers"]} | {r["seed"]} | {r["samples_per_second"]:,} | '
          f'{r["busiest_link_bytes_per_step"] / 1e6:.2f} | {r["busiest_link_use"]:.2f} | {allows:,.0f} | {r["final_accuracy"]} |')
EOF
echo "scaling-table: wrote $out" >&2
((failed == 0)) || { echo "scaling-table: $failed run(s) failed" >&2; exit 1; }
