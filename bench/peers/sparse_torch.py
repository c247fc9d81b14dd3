#!/usr/bin/env python3
"""PyTorch peer of psgrad_bench section 9: hashembed_mlp.v1 on the click-log keys psgrad trains on.

One EmbeddingBag(mode="sum", sparse=True) per field, the same Relu/Relu/softmax layers, SparseAdam for
the tables and Adam for the rest, Thinc's per-array clipping at 1.0, batch 128. Training runs for a
fixed time after a warm-up, once per thread count; the result is one JSON line on stdout. Without
torch the line says "skipped" and the exit code is still 0.
"""
import argparse
import sys
import time

import peer_common as common  # before numpy and torch: it sets OPENBLAS_NUM_THREADS=1
import sparse_common as sparse


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", required=True, help="keys.json written by psgrad_bench")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one timed run")
    parser.add_argument("--warmup-seconds", type=float, default=0.5, help="untimed training before the runs")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per thread count")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch.set_num_threads values")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    torch = common.import_torch_or_skip("sparse_torch")
    if torch is None:
        return 0
    description = sparse.read_description(args.keys)
    fields, labels = sparse.load_part(description["train"])
    torch.manual_seed(args.seed)
    model = sparse.build_model(torch, description)
    model.train()
    optimizer_list = sparse.optimizers(torch, model, description["learn_rate"])
    stream = sparse.minibatches(torch, fields, labels, description["batch_size"], args.seed,
                                description["pooling"] == "mean")

    def train_for(seconds):
        samples = 0
        start = time.perf_counter()
        while True:
            samples += sparse.training_step(torch, model, optimizer_list, next(stream))
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return samples, elapsed

    runs = {}
    for threads in [int(t) for t in args.threads.split(",") if t]:
        torch.set_num_threads(threads)
        train_for(args.warmup_seconds)
        runs[str(threads)] = [samples / elapsed for samples, elapsed in
                              (train_for(args.seconds) for _ in range(args.repeats))]
    def median(values):
        ordered = sorted(values)
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])

    medians = {threads: median(rates) for threads, rates in runs.items()}
    best_threads = max(medians, key=medians.get)
    common.emit({
        "peer": "sparse_torch",
        **common.describe_torch(torch),
        "examples": int(labels.shape[0]),
        "fields": len(fields),
        "seconds_per_run": args.seconds,
        "runs": runs,
        "best_threads": int(best_threads),
        "best_samples_per_second": medians[best_threads],
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
