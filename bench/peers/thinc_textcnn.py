#!/usr/bin/env python3
"""Thinc peer of psgrad_bench section 10: real Thinc (NumpyOps, one BLAS thread) trains the [model] and
[optimizer] of a psgrad config written in Thinc's language, resolved by Thinc's own registry, on the
examples psgrad_bench wrote (each example's token ids, its label), batch 128 as psgrad's workers take
them, for a given time after a warm-up. Prints one JSON line: samples per second, steps, Thinc's
version. Without Thinc the line says "skipped" and the exit code is still 0.
"""
import argparse
import json
import os
import sys
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the psgrad config (Thinc's format)")
    parser.add_argument("--examples", required=True, help="folder of ids.u64, offsets.u64, labels.u64")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed training")
    parser.add_argument("--warmup-seconds", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        import thinc
        from thinc.api import Config, registry
    except ImportError as error:
        print(json.dumps({"peer": "thinc_textcnn", "skipped": "python3-thinc not installed", "error": str(error)}))
        return 0
    config = Config().from_str(open(args.config).read())
    resolved = registry.resolve({"model": config["model"], "optimizer": config["optimizer"]})
    model, optimizer = resolved["model"], resolved["optimizer"]
    batch_size = int(config["training"]["batch_size"])
    folder = args.examples
    ids = numpy.fromfile(os.path.join(folder, "ids.u64"), dtype="<u8")
    offsets = numpy.fromfile(os.path.join(folder, "offsets.u64"), dtype="<u8").astype("int64")
    labels = numpy.fromfile(os.path.join(folder, "labels.u64"), dtype="<u8").astype("int64")
    classes = int(labels.max()) + 1
    examples = [ids[offsets[e]:offsets[e + 1]] for e in range(len(labels))]
    one_hot = numpy.eye(classes, dtype="float32")
    rng = numpy.random.default_rng(args.seed)
    order = rng.permutation(len(labels))
    model.initialize(X=[examples[i] for i in order[:batch_size]], Y=one_hot[labels[order[:batch_size]]])

    position = 0

    def step():
        nonlocal position, order
        if position + batch_size > len(order):
            order, position = rng.permutation(len(labels)), 0
        batch = order[position:position + batch_size]
        position += batch_size
        targets = one_hot[labels[batch]]
        guesses, backprop = model.begin_update([examples[i] for i in batch])
        backprop((guesses - targets) / len(batch))
        model.finish_update(optimizer)
        optimizer.step_schedules()

    end = time.perf_counter() + args.warmup_seconds
    while time.perf_counter() < end:
        step()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        step()
        steps += 1
    elapsed = time.perf_counter() - start
    print(json.dumps({"peer": "thinc_textcnn", "thinc": thinc.__version__, "steps": steps, "seconds": elapsed,
                      "samples_per_second": steps * batch_size / elapsed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
