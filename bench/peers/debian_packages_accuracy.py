#!/usr/bin/env python3
"""PyTorch peer of psgrad_bench section 9's accuracy: hashembed_mlp.v1 trained on the keys of the Debian
package records psgrad trains on, on psgrad's train part for a number of epochs, scored on its dev
part. Prints one JSON line: the dev accuracy, the majority class's, and the training time. Without
torch the line says "skipped" and the exit code is still 0.
"""
import argparse
import math
import sys
import time

import peer_common as common  # before numpy and torch: it sets OPENBLAS_NUM_THREADS=1
import sparse_common as sparse

import numpy as np


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", required=True, help="keys.json written by psgrad_bench, with train and dev")
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--tables", choices=("lazy_adam", "sparse_adam"), default="lazy_adam",
                        help="the tables' optimizer: psgrad's row-wise lazy Adam, or torch's SparseAdam")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def dev_accuracy(torch, model, fields, labels, mean, batch_size=1024):
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, labels.shape[0], batch_size):
            rows = np.arange(start, min(start + batch_size, labels.shape[0]))
            bags, targets = sparse.batch_of(torch, fields, labels, rows, mean)
            correct += (model(bags).argmax(dim=1) == targets).sum().item()
    model.train()
    return correct / labels.shape[0]


def main():
    args = parse_args()
    torch = common.import_torch_or_skip("debian_packages_accuracy")
    if torch is None:
        return 0
    torch.set_num_threads(args.threads)
    description = sparse.read_description(args.keys)
    train_fields, train_labels = sparse.load_part(description["train"])
    dev_fields, dev_labels = sparse.load_part(description["dev"])
    mean = description["pooling"] == "mean"
    torch.manual_seed(args.seed)
    model = sparse.build_model(torch, description)
    model.train()
    optimizer_list = sparse.optimizers(torch, model, description["learn_rate"], args.tables)
    batch_size = description["batch_size"]
    stream = sparse.minibatches(torch, train_fields, train_labels, batch_size, args.seed, mean)
    steps = max(1, math.ceil(args.epochs * train_labels.shape[0] / batch_size))
    start = time.perf_counter()
    for _ in range(steps):
        sparse.training_step(torch, model, optimizer_list, next(stream))
    training_seconds = time.perf_counter() - start
    majority = np.bincount(train_labels, minlength=description["classes"]).argmax()
    common.emit({
        "peer": "debian_packages_accuracy",
        **common.describe_torch(torch),
        "train_examples": int(train_labels.shape[0]),
        "dev_examples": int(dev_labels.shape[0]),
        "epochs": args.epochs,
        "steps": steps,
        "tables_optimizer": args.tables,
        "training_seconds": training_seconds,
        "dev_accuracy": dev_accuracy(torch, model, dev_fields, dev_labels, mean),
        "majority_accuracy": float((dev_labels == majority).mean()),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
