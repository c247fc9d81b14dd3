"""psgrad from Python: data-parallel training with a parameter server, in this process.

    import psgrad
    result = psgrad.train(CONFIG, X, y, dev=(X_dev, y_dev), mode="sync", workers=2)
    result.model.predict(X_dev)

train() runs the same C++ core as `psgrad train` (every actor in this process), on NumPy arrays
instead of data files; serve(), work() and launch() run the multi-process roles as processes of the
psgrad command line, and serve() and launch() return what train() returns. Errors arrive as psgrad.Error (psgrad.InputError for refused input) with the
one-line message the command line prints. See docs/python.md.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy

from . import _core, role_results, thinc_interop
from .columns import is_columns, write_examples
from ._core import Error, InputError, Model
from .roles import run_role

__all__ = ["train", "TrainResult", "Model", "TablesModel", "load", "plot", "serve", "work", "launch", "Error",
           "InputError"]

ConfigSource = Union[str, "os.PathLike[str]", Mapping, Any]  # text, a path, a dict or a thinc Config

# A trained model as a thinc Model with its weights (Thinc installed): result.model.to_thinc().
Model.to_thinc = thinc_interop.to_thinc
Record = Dict[str, Any]


class TrainResult:
    """What psgrad.train returns.

    records: every evaluation as a dict, keyed as the metrics file's "eval" lines (iteration, version,
        wall_seconds, samples, dev_accuracy, dev_loss, train_loss, staleness_mean, staleness_max,
        gradients_per_worker, final, ...); the last one has final=True.
    summary: the run's summary as a dict, keyed as the metrics file's "summary" line.
    accuracy: the final dev accuracy.
    model: a psgrad.Model of the kept weights (the final ones; with training.save_best the best evaluated),
        or a psgrad.TablesModel for a model with embedding tables.
    weights_hash: the final weights' hash, as `psgrad train` prints it ("final weights: ..., hash ...").
    """

    def __init__(self, core: Dict[str, Any]) -> None:
        self.records: List[Record] = list(core["records"])
        self.summary: Record = dict(core["summary"])
        self.accuracy: float = float(core["accuracy"])
        self.model: Union[Model, "TablesModel"] = core["model"]
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
    (which every config holds), names a file; a thinc Config or a dict of sections is its Thinc text;
    anything else is config text."""
    if config is None:  # resume= alone: the checkpoint's own run (the core refuses it without one)
        return "", False
    if isinstance(config, os.PathLike):
        return os.fspath(config), True
    if not isinstance(config, str):
        return thinc_interop.config_text(config), False
    one_line = "\n" not in config.strip()
    return config, os.path.isfile(config) or (one_line and "=" not in config and "[" not in config)


def _check_arguments(text: str, overrides: List[str], settings: List[Tuple[str, str, Any]],
                     on_progress: Any) -> None:
    """What the core would take only to fail later or in C++'s words, refused here in one line."""
    if on_progress is not None and not callable(on_progress):
        raise InputError(f"on_progress: expected a callable or None, got {type(on_progress).__name__}")
    for what, value in [("config", text)] + [("set", item) for item in overrides]:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as bad:
            raise InputError(f"{what}: not text that UTF-8 can hold ({bad.reason} at character {bad.start})") from None
    for name, key, value in settings:
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
            raise InputError(f"{name}: {value} is out of range for {key} (an integer below 2**63)")


class TablesModel:
    """A trained model with embedding tables: what psgrad.train returns as result.model for one, and
    psgrad.load reads back. Its examples are named columns, as in training: a pandas DataFrame or a
    dict of arrays, with the columns its config's [data.columns] declares. Its files are the command
    line's: `psgrad predict` and `psgrad eval` read what save writes, and psgrad.load reads theirs."""

    def __init__(self, core: Any) -> None:
        self._core = core

    def predict_proba(self, X: Any) -> numpy.ndarray:
        """Each example's class probabilities: a float32 array of shape (n, classes), classes in the
        order of class_names."""
        with tempfile.TemporaryDirectory(prefix="psgrad-") as folder:
            path = os.path.join(folder, "examples.jsonl")
            write_examples(path, X, None, self._core.columns, self._core.label, "X")
            return self._core.predict_file(path)

    def predict(self, X: Any) -> numpy.ndarray:
        """Each example's predicted class name: an array of shape (n,)."""
        names = numpy.asarray(self.class_names, dtype=object)
        return names[numpy.argmax(self.predict_proba(X), axis=1)]

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the model file (atomically): for psgrad.load, `psgrad eval` and `psgrad predict`."""
        self._core.save(os.fspath(path))

    @property
    def class_names(self) -> List[str]:
        """The classes, as the training data's labels named them."""
        return list(self._core.class_names)

    @property
    def columns(self) -> List[Tuple[str, str]]:
        """The columns it reads: (name, kind), kind "text", "ids" or "number"."""
        return [tuple(column) for column in self._core.columns]

    @property
    def label(self) -> str:
        return str(self._core.label)

    @property
    def architecture(self) -> str:
        return str(self._core.architecture)

    @property
    def version(self) -> int:
        """Optimizer steps behind the weights."""
        return int(self._core.version)

    @property
    def config(self) -> str:
        """The resolved config the model was trained with."""
        return str(self._core.config)

    def to_thinc(self) -> Any:
        """A thinc Model resolved from this model's config by Thinc's registry, with the trained tables
        (whole: the rows training made and every other row as it starts) and dense weights; for a model
        of one id or text column. Its input is a list of each example's ids as uint64 arrays (a text's
        tokens hashed as psgrad hashes them), or (keys, values, lengths) for SparseLinear."""
        return thinc_interop.tables_to_thinc(self)

    def __repr__(self) -> str:
        return f"<psgrad.TablesModel {self.architecture}: {len(self.columns)} columns, {len(self.class_names)} classes, version {self.version}>"


def load(path: Union[str, "os.PathLike[str]"]) -> Union[Model, TablesModel]:
    """Reads a model file written by Model.save, TablesModel.save or `psgrad train --save`: a
    psgrad.Model, or a psgrad.TablesModel for a model with embedding tables."""
    if _core.is_tables_model_file(os.fspath(path)):
        return TablesModel(_core.load_tables(os.fspath(path)))
    return _core.load(path)


def _train_columns(text: str, is_path: bool, X: Any, y: Any, dev: Optional[Tuple[Any, Any]], overrides: List[str],
                   settings: List[Tuple[str, str, Any]], on_progress: Optional[Callable[[Record], None]],
                   resume: str, outputs: Dict[str, str]) -> "TrainResult":
    layout = _core.columns_layout(text, is_path, overrides, settings, resume)
    with tempfile.TemporaryDirectory(prefix="psgrad-") as folder:
        train_path = os.path.join(folder, "train.jsonl")
        write_examples(train_path, X, y, layout["columns"], layout["label"], "X")
        dev_path = ""
        if dev is not None:
            try:
                dev_x, dev_y = dev
            except (TypeError, ValueError):
                raise InputError("dev: expected a pair (X_dev, y_dev)") from None
            dev_path = os.path.join(folder, "dev.jsonl")
            write_examples(dev_path, dev_x, dev_y, layout["columns"], layout["label"], "dev")
        model_path = os.path.join(folder, "model.psgrad")
        core = _core.train_columns(text, is_path, train_path, dev_path, overrides, settings, on_progress, resume,
                                   model_path, outputs)
        core["model"] = TablesModel(_core.load_tables(model_path))
    return TrainResult(core)


def train(
    config: Optional[ConfigSource],
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
    metrics: Optional[Union[str, "os.PathLike[str]"]] = None,
    tensorboard: Optional[Union[str, "os.PathLike[str]"]] = None,
    trace: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> TrainResult:
    """Trains a model with every actor in this process, as `psgrad train` does, on NumPy arrays.

    config: the config's text (TOML, as in configs/mnist.toml), or the path of a config file: an
        os.PathLike, or a str naming a file or holding one line with neither "=" nor "[" (a missing
        file is then refused by name). Its [data] section is not read for examples (the arrays are the
        data), but data.scale applies.
    X: the training examples, float32 features or uint8 pixels, shaped (n, features) or
        (n, rows, cols); for a model with embedding tables, named columns instead: a pandas DataFrame or
        a dict of arrays or lists with the columns [data.columns] declares (a text column's strings, an
        ids column's id or list of ids, a number column's numbers), written as JSON Lines for the
        command line's reader. Then y holds the labels (strings or integers) and dev=(X_dev, y_dev) may
        be omitted: data.dev_fraction or data.dev_path of the config then gives the dev examples. A C-contiguous float32 X (with data.scale 1) is used where it lies, not copied:
        keep it unchanged until train returns (resizing it in place from another thread frees the memory
        the workers read: the process may crash; pass X.copy() then). uint8 pixels are divided by 255, as IDX images are.
    y: integer class labels, shape (n,); the classes are 0 to the largest label of y and dev's y.
    dev: (X_dev, y_dev), the examples each evaluation scores, as X and y.
    mode, workers: cluster.mode ("sync", "async" or "ssp") and cluster.num_workers, as the command
        line's --mode and --workers; None keeps the config's.
    on_progress: called with each evaluation's record (a dict, see TrainResult.records) with the GIL
        held, from a thread of the run. An exception it raises stops the run (saved as for Ctrl-C) and
        is raised from train.
    seed: training.seed; checkpoint: training.checkpoint_path (None keeps the config's).
    set: "section.key=value" overrides, as --set.
    resume: a checkpoint file to continue from, as --resume. With config=None, the checkpoint's own run
        continues (its config, with set, seed, mode and workers on top), as `psgrad train --resume` alone.
    metrics, tensorboard, trace: the files `psgrad train --metrics`, `--tensorboard` and `--trace` write,
        in the same formats (`psgrad plot` draws the metrics file); None writes none.
    Paths given here (checkpoint, resume, metrics, tensorboard, trace) are relative to the working folder.

    Training runs on threads of its own with the GIL released. Ctrl-C (KeyboardInterrupt) stops it as
    SIGINT stops `psgrad train`: the run stops after the current step and is saved where a checkpoint
    path is set; then KeyboardInterrupt reaches the caller. Refused input raises psgrad.InputError, a
    failed run psgrad.Error, each with the line the command line prints.
    """
    text, is_path = _config_source(config)
    settings: List[Tuple[str, str, Any]] = []
    for name, key, value in (
        ("mode", "cluster.mode", mode),
        ("workers", "cluster.num_workers", workers),
        ("seed", "training.seed", seed),
        # Relative to the working folder, as every path a Python caller gives (a config file's own keys are
        # relative to its folder).
        ("checkpoint", "training.checkpoint_path", os.path.abspath(checkpoint) if checkpoint is not None else None),
    ):
        if value is not None:
            settings.append((name, key, value))
    overrides = [set] if isinstance(set, str) else [str(item) for item in set]
    _check_arguments(text, overrides, settings, on_progress)
    resume_path = os.path.abspath(resume) if resume is not None else ""
    outputs = {kind: os.path.abspath(path) for kind, path in
               (("metrics", metrics), ("tensorboard", tensorboard), ("trace", trace)) if path is not None}
    if is_columns(X):
        return _train_columns(text, is_path, X, y, dev, overrides, settings, on_progress, resume_path, outputs)
    if dev is None:
        raise InputError("dev: each evaluation scores dev examples; pass dev=(X_dev, y_dev)")
    try:
        dev_x, dev_y = dev
    except (TypeError, ValueError):
        raise InputError("dev: expected a pair (X_dev, y_dev)") from None
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
        resume_path,
        outputs,
    )
    return TrainResult(core)


def plot(metrics: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
         output: Union[str, "os.PathLike[str]"] = "curves.png", **options: Any) -> int:
    """Draws learning curves as `psgrad plot` does, from metrics files: the ones psgrad.train(metrics=...)
    and `psgrad train` write. output: the image (.png, .svg or .pdf); other keywords are the command's
    options (title="...", label="file"). Needs gnuplot. Returns 0; a refusal raises psgrad.InputError."""
    paths = [metrics] if isinstance(metrics, (str, os.PathLike)) else list(metrics)
    return run_role("plot", {"output": output, **options}, [os.fspath(path) for path in paths])


def _role_result(command: str, options: Dict[str, Any], positional: Sequence[str], X: Any, y: Any,
                 dev: Optional[Tuple[Any, Any]]) -> Optional[TrainResult]:
    core = role_results.run_for_result(command, options, positional, X, y, dev, load)
    return TrainResult(core) if core is not None else None


def serve(X: Any = None, y: Any = None, dev: Optional[Tuple[Any, Any]] = None, **options: Any) -> TrainResult:
    """Runs `psgrad serve` with these options until the run ends: config="run.toml", workers=2,
    port=0, port_file="p.json", set=["training.iterations=50"], save="model.psgrad", ... (each
    keyword is the command line's option, underscores for dashes; True for a flag).

    Returns a TrainResult as psgrad.train does: the server's records and summary (from its metrics file,
    a temporary one unless metrics= names it) and the saved model (a temporary file unless save= names
    it). X, y and dev, as psgrad.train takes them, are written once to a data file the run reads
    (data.path): workers on this machine (psgrad.work, `psgrad work`) read the same file.

    It runs as a child process of the psgrad command line, not in this process: a role watches SIGINT
    and SIGTERM on a thread of its own and exits at once on a second signal, which inside Python would
    take Ctrl-C from the interpreter (psgrad.roles says more). KeyboardInterrupt is passed on as SIGINT,
    so the run stops and saves, and is raised again. A refusal raises psgrad.InputError and a failure
    psgrad.Error, with the role's last line.
    """
    result = _role_result("serve", options, (), X, y, dev)
    assert result is not None
    return result


def work(**options: Any) -> int:
    """Runs `psgrad work` with these options until its server ends the run: connect="host:port",
    token=..., data_dir=..., retry=True, ... As psgrad.serve, a child process of the command line.
    Returns 0: the run's records, summary and model are the server's (psgrad.serve returns them)."""
    return run_role("work", options)


def launch(hostfile: Optional[Union[str, "os.PathLike[str]"]] = None, X: Any = None, y: Any = None,
           dev: Optional[Tuple[Any, Any]] = None, **options: Any) -> Optional[TrainResult]:
    """Runs `psgrad launch` (every role of a run on the hosts of a hostfile): hostfile="hosts.txt",
    config="run.toml", set=[...], dry_run=True, ... As psgrad.serve, a child process of the command
    line, and it returns the server's TrainResult as psgrad.serve does (None with dry_run: nothing ran).
    X, y and dev become a data file every role on this machine reads; roles on other hosts need a
    data.path of their own. KeyboardInterrupt stops every role it started."""
    return _role_result("launch", {"hostfile": hostfile, **options}, (), X, y, dev)
