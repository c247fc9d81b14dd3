"""psgrad from Python: data-parallel training with a parameter server, in this process.

    import psgrad
    result = psgrad.train(CONFIG, X, y, dev=(X_dev, y_dev), mode="sync", workers=2)
    result.model.predict(X_dev)

train() runs the same C++ core as `psgrad train` (every actor in this process), on NumPy arrays
instead of data files; serve(), work() and launch() run the multi-process roles as processes of the
psgrad command line. Errors arrive as psgrad.Error (psgrad.InputError for refused input) with the
one-line message the command line prints. See docs/python.md.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy

from . import _core
from ._core import Error, InputError, Model, load
from .roles import run_role

__all__ = ["train", "TrainResult", "Model", "load", "serve", "work", "launch", "Error", "InputError"]

ConfigSource = Union[str, "os.PathLike[str]"]
Record = Dict[str, Any]


class TrainResult:
    """What psgrad.train returns.

    records: every evaluation as a dict, keyed as the metrics file's "eval" lines (iteration, version,
        wall_seconds, samples, dev_accuracy, dev_loss, train_loss, staleness_mean, staleness_max,
        gradients_per_worker, final, ...); the last one has final=True.
    summary: the run's summary as a dict, keyed as the metrics file's "summary" line.
    accuracy: the final dev accuracy.
    model: a psgrad.Model of the kept weights (the final ones; with training.save_best the best evaluated).
    weights_hash: the final weights' hash, as `psgrad train` prints it ("final weights: ..., hash ...").
    """

    def __init__(self, core: Dict[str, Any]) -> None:
        self.records: List[Record] = list(core["records"])
        self.summary: Record = dict(core["summary"])
        self.accuracy: float = float(core["accuracy"])
        self.model: Model = core["model"]
        self.weights_hash: str = str(core["weights_hash"])

    def frame(self) -> Any:
        """The records as a pandas DataFrame, one row per evaluation (needs pandas: python3-pandas)."""
        try:
            import pandas
        except ImportError as missing:
            raise ImportError("TrainResult.frame() needs pandas (Debian: python3-pandas)") from missing
        return pandas.DataFrame.from_records(self.records)

    def __repr__(self) -> str:
        return (
            f"<psgrad.TrainResult accuracy {self.accuracy:.3f}, {len(self.records)} records, "
            f"weights hash {self.weights_hash}>"
        )


def _config_source(config: ConfigSource) -> Tuple[str, bool]:
    """(text or path, whether it is a path). A path-like, or a one-line string with neither '=' nor '['
    (which every config holds), names a file; anything else is config text."""
    if isinstance(config, os.PathLike):
        return os.fspath(config), True
    if not isinstance(config, str):
        raise TypeError(f"config: expected config text or a path, got {type(config).__name__}")
    one_line = "\n" not in config.strip()
    return config, os.path.isfile(config) or (one_line and "=" not in config and "[" not in config)


def train(
    config: ConfigSource,
    X: Any,
    y: Any,
    dev: Optional[Tuple[Any, Any]] = None,
    mode: Optional[str] = None,
    workers: Optional[int] = None,
    on_progress: Optional[Callable[[Record], None]] = None,
    seed: Optional[int] = None,
    checkpoint: Optional[Union[str, "os.PathLike[str]"]] = None,
    set: Iterable[str] = (),
    resume: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> TrainResult:
    """Trains a model with every actor in this process, as `psgrad train` does, on NumPy arrays.

    config: the config's text (TOML, as in configs/mnist.toml), or the path of a config file: an
        os.PathLike, or a str naming a file or holding one line with neither "=" nor "[" (a missing
        file is then refused by name). Its [data] section is not read for examples (the arrays are the
        data), but data.scale applies.
    X: the training examples, float32 features or uint8 pixels, shaped (n, features) or
        (n, rows, cols). A C-contiguous float32 X (with data.scale 1) is used where it lies, not copied:
        keep it unchanged until train returns. uint8 pixels are divided by 255, as IDX images are.
    y: integer class labels, shape (n,); the classes are 0 to the largest label of y and dev's y.
    dev: (X_dev, y_dev), the examples each evaluation scores, as X and y.
    mode, workers: cluster.mode ("sync", "async" or "ssp") and cluster.num_workers, as the command
        line's --mode and --workers; None keeps the config's.
    on_progress: called with each evaluation's record (a dict, see TrainResult.records) with the GIL
        held, from a thread of the run. An exception it raises stops the run (saved as for Ctrl-C) and
        is raised from train.
    seed: training.seed; checkpoint: training.checkpoint_path (None keeps the config's).
    set: "section.key=value" overrides, as --set.
    resume: a checkpoint file to continue from, as --resume.

    Training runs on threads of its own with the GIL released. Ctrl-C (KeyboardInterrupt) stops it as
    SIGINT stops `psgrad train`: the run stops after the current step and is saved where a checkpoint
    path is set; then KeyboardInterrupt reaches the caller. Refused input raises psgrad.InputError, a
    failed run psgrad.Error, each with the line the command line prints.
    """
    if dev is None:
        raise InputError("dev: each evaluation scores dev examples; pass dev=(X_dev, y_dev)")
    try:
        dev_x, dev_y = dev
    except (TypeError, ValueError):
        raise InputError("dev: expected a pair (X_dev, y_dev)") from None
    text, is_path = _config_source(config)
    settings: List[Tuple[str, str, Any]] = []
    for name, key, value in (
        ("mode", "cluster.mode", mode),
        ("workers", "cluster.num_workers", workers),
        ("seed", "training.seed", seed),
        ("checkpoint", "training.checkpoint_path", os.fspath(checkpoint) if checkpoint is not None else None),
    ):
        if value is not None:
            settings.append((name, key, value))
    overrides = [set] if isinstance(set, str) else [str(item) for item in set]
    core = _core.train(
        text,
        is_path,
        numpy.asarray(X),
        numpy.asarray(y),
        numpy.asarray(dev_x),
        numpy.asarray(dev_y),
        overrides,
        settings,
        on_progress,
        os.fspath(resume) if resume is not None else "",
    )
    return TrainResult(core)


def serve(**options: Any) -> int:
    """Runs `psgrad serve` with these options until the run ends: config="run.toml", workers=2,
    port=0, port_file="p.json", set=["training.iterations=50"], save="model.psgrad", ... (each
    keyword is the command line's option, underscores for dashes; True for a flag).

    It runs as a child process of the psgrad command line, not in this process: a role watches SIGINT
    and SIGTERM on a thread of its own and exits at once on a second signal, which inside Python would
    take Ctrl-C from the interpreter (psgrad.roles says more). KeyboardInterrupt is passed on as SIGINT,
    so the run stops and saves, and is raised again. Returns 0; a refusal raises psgrad.InputError and a
    failure psgrad.Error, with the role's last line.
    """
    return run_role("serve", options)


def work(**options: Any) -> int:
    """Runs `psgrad work` with these options until its server ends the run: connect="host:port",
    token=..., data_dir=..., retry=True, ... As psgrad.serve, a child process of the command line."""
    return run_role("work", options)


def launch(hostfile: Optional[Union[str, "os.PathLike[str]"]] = None, **options: Any) -> int:
    """Runs `psgrad launch` (every role of a run on the hosts of a hostfile): hostfile="hosts.txt",
    config="run.toml", set=[...], dry_run=True, ... As psgrad.serve, a child process of the command
    line; KeyboardInterrupt stops every role it started."""
    return run_role("launch", {"hostfile": hostfile, **options})
