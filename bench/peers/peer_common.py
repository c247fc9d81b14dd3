"""What the PyTorch peers of psgrad_bench section 8 share: the BLAS thread setting, the data, the model,
Thinc's clipped Adam, minibatches, dev accuracy, a clock that stops while a peer evaluates, and the one
JSON line each script prints.

Import this module before torch: it pins OpenBLAS to one thread, so that the only threads doing a
peer's arithmetic are the ones torch itself starts (torch.set_num_threads).
"""
import gzip
import json
import os
import socket
import struct
import sys
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"

SKIPPED = "python3-torch not installed"


def import_torch_or_skip(peer):
    """torch, or None after printing the "skipped" line (exit code 0: the peers are optional)."""
    try:
        import torch
        return torch
    except ImportError as error:
        emit({"peer": peer, "skipped": SKIPPED, "error": str(error), "python": sys.executable})
        return None


def emit(result):
    print(json.dumps(result), flush=True)


def emit_run(result, first_rank, args):
    """Prints a peer's JSON line: its description, rank 0's figures and what the run was asked to do."""
    if args.target_accuracy > 0:
        result.update(first_rank, target_accuracy=args.target_accuracy, eval_every=args.eval_every)
    else:
        result.update(first_rank, seconds_per_run=args.seconds, warmup_seconds=args.warmup_seconds)
    emit(result)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- data ---------------------------------------------------------------------------------------------

def find_idx(folder, stem, what, dims):
    """The file psgrad would read for e.g. ("train", "images", "idx3"): raw or .gz, either spelling."""
    for name in (f"{stem}-{what}-{dims}-ubyte", f"{stem}-{what}.{dims}-ubyte"):
        for candidate in (name, name + ".gz"):
            path = os.path.join(folder, candidate)
            if os.path.exists(path):
                return path
    raise FileNotFoundError(f"{folder}: no {stem}-{what}-{dims}-ubyte(.gz)")


def read_idx(path):
    """An IDX file as a uint8 array of the shape its header gives (big-endian sizes after the magic)."""
    import numpy as np
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    if magic >> 8 != 0x08:  # 0x08: unsigned bytes, the only type the MNIST files use
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_pair(folder, stem):
    """Inputs (bytes / 255 in float32, as io/named_datasets.cpp scales them) and int64 labels."""
    import numpy as np
    images = read_idx(find_idx(folder, stem, "images", "idx3"))
    labels = read_idx(find_idx(folder, stem, "labels", "idx1"))
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{folder}: {images.shape[0]} {stem} images but {labels.shape[0]} labels")
    inputs = images.reshape(images.shape[0], -1).astype(np.float32) / np.float32(255.0)
    return inputs, labels.astype(np.int64)


def load_tensors(torch, folder, with_dev=False):
    """(x_train, y_train) or (x_train, y_train, x_dev, y_dev): psgrad's train and dev splits of the folder
    (the t10k files are the dev set)."""
    stems = ("train", "t10k") if with_dev else ("train",)
    tensors = []
    for stem in stems:
        inputs, labels = load_pair(folder, stem)
        tensors += [torch.from_numpy(inputs), torch.from_numpy(labels)]
    return tuple(tensors)


# -- model and optimizer ------------------------------------------------------------------------------

def build_model(torch):
    """psgrad's relu_relu_softmax.v1: 784-128-128-10, dropout 0.2 after each hidden layer, softmax by the
    loss. PyTorch's default initialization rather than Thinc's: it changes the values, not the work."""
    from torch import nn
    return nn.Sequential(
        nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 10))


def thinc_adam(torch, parameters):
    """Thinc's Adam.v1 as configs/*.toml set it: 1e-3, (0.9, 0.999), eps 1e-8, no L2."""
    return torch.optim.Adam(parameters, lr=1e-3, betas=(0.9, 0.999), eps=1e-8)


def clip_each_gradient(torch, parameters, clip=1.0):
    """Thinc clips each parameter array on its own: scale by clip / norm once the norm reaches clip.
    min(clip / norm, 1) is the same factor without reading the norm back into Python."""
    with torch.no_grad():
        limit = torch.tensor(clip)
        for p in parameters:
            p.grad.mul_(torch.clamp(limit / p.grad.norm(), max=1.0))


def minibatches(torch, x, y, batch_size, seed):
    """Endless minibatches over the whole training set, a new permutation every epoch, the last partial
    batch kept; each worker of a parallel peer draws its own order (its own seed), as psgrad's do."""
    order = torch.Generator().manual_seed(seed)
    count = x.shape[0]
    while True:
        permutation = torch.randperm(count, generator=order)
        for start in range(0, count, batch_size):
            rows = permutation[start:start + batch_size]
            yield x.index_select(0, rows), y.index_select(0, rows)


def dev_accuracy(torch, model, x_dev, y_dev):
    was_training = model.training
    model.eval()
    with torch.no_grad():
        correct = (model(x_dev).argmax(dim=1) == y_dev).sum().item()
    model.train(was_training)
    return correct / y_dev.shape[0]


class TrainingClock:
    """Wall time of training alone: stopped while the peer evaluates, which psgrad's evaluator does on
    snapshots beside the training instead."""

    def __init__(self):
        self.start = time.perf_counter()
        self.paused = 0.0

    def seconds(self):
        return time.perf_counter() - self.start - self.paused

    def pause(self):
        clock = self

        class Paused:
            def __enter__(self):
                self.since = time.perf_counter()

            def __exit__(self, *exc):
                clock.paused += time.perf_counter() - self.since

        return Paused()


# -- what the BLAS is ---------------------------------------------------------------------------------

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
    """A short name for the table's note; "reference" makes the bench report no ratio."""
    for needle, kind in (("openblas", "OpenBLAS"), ("mkl", "MKL"), ("blis", "BLIS"), ("atlas", "ATLAS"),
                         ("/blas/libblas", "reference")):
        if needle in paths.lower():
            return kind
    return paths


def blas_core(paths):
    """The kernel OpenBLAS chose for this CPU (its DYNAMIC_ARCH core, e.g. "Haswell", "SkylakeX", "Zen"):
    the same library runs other code on another host kind. Empty for any other BLAS."""
    for path in paths.split(", "):
        if "openblas" not in path.lower():
            continue
        try:
            import ctypes
            library = ctypes.CDLL(path)
            library.openblas_get_corename.restype = ctypes.c_char_p
            return library.openblas_get_corename().decode()
        except (OSError, AttributeError):
            return ""
    return ""


def describe_torch(torch):
    blas = loaded_blas()
    return {"torch_version": torch.__version__, "blas": blas, "blas_kind": blas_kind(blas),
            "blas_core": blas_core(blas), "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}


# -- processes ----------------------------------------------------------------------------------------

def run_ranks(target, world, args, timeout):
    """Runs target(rank, world, port, args) in `world` fresh processes (spawned, so each imports torch
    itself) and returns {rank: what it returned}; a rank's exception, or the timeout, ends them all."""
    import multiprocessing
    import queue as queues
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    port = free_port()
    processes = [context.Process(target=_rank_main, args=(target, rank, world, port, args, results))
                 for rank in range(world)]
    for process in processes:
        process.start()
    answers = {}
    try:
        deadline = time.monotonic() + timeout
        while len(answers) < world:
            try:
                rank, ok, value = results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queues.Empty:
                raise RuntimeError(f"{world - len(answers)} of {world} processes gave no result in {timeout} s")
            if not ok:
                raise RuntimeError(f"process {rank} failed:\n{value}")
            answers[rank] = value
    finally:
        for process in processes:
            process.join(timeout=10 if len(answers) == world else 0.1)
            if process.is_alive():
                process.terminate()
                process.join()
    return answers


def _rank_main(target, rank, world, port, args, results):
    """Ends the process as soon as its answer is sent: torch 1.13 can deadlock tearing down a gloo
    process group that DDP's reducer still holds (its destructor joins a thread that waits for the
    GIL), and nothing here needs an orderly interpreter exit."""
    import traceback
    try:
        results.put((rank, True, target(rank, world, port, args)))
        code = 0
    except BaseException:  # noqa: B902: whatever ended the rank goes to the parent
        results.put((rank, False, traceback.format_exc()))
        code = 1
    results.close()
    results.join_thread()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def add_run_arguments(parser, workers_name):
    """The options every parallel peer takes: a timed run, or training until a dev accuracy."""
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist",
                        help="folder of train-/t10k- IDX files (raw or .gz), as psgrad reads them")
    parser.add_argument(f"--{workers_name}", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=128, help="per worker, as psgrad's training.batch_size")
    parser.add_argument("--threads-per-process", type=int, default=1, help="torch.set_num_threads in each process")
    parser.add_argument("--seconds", type=float, default=1.5, help="length of one timed run")
    parser.add_argument("--warmup-seconds", type=float, default=0.5, help="untimed training before the runs")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs")
    parser.add_argument("--target-accuracy", type=float, default=0.0,
                        help="instead of timed runs, train until this dev accuracy and report the time")
    parser.add_argument("--eval-every", type=int, default=10, help="steps between dev evaluations")
    parser.add_argument("--max-seconds", type=float, default=120.0, help="give up on the target after this")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before the processes are ended")


def steps_for(seconds, seconds_per_step):
    return max(1, int(round(seconds / max(seconds_per_step, 1e-6))))


if __name__ == "__main__":
    # The bench's probe: which torch and which BLAS, or "skipped".
    found = import_torch_or_skip("probe")
    if found is not None:
        emit({"peer": "probe", **describe_torch(found)})
