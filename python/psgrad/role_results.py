"""psgrad.serve and psgrad.launch return what psgrad.train returns: the server's records, summary and
model, read back from the metrics file and the model file the role writes. Arrays given to them become
a data file that every role on this machine reads (data.path)."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy

from . import _core
from .columns import is_columns, write_examples
from .roles import run_role



def _overrides(options: Mapping[str, Any]) -> List[str]:
    given = options.get("set") or []
    return [given] if isinstance(given, str) else [str(item) for item in given]


def write_arrays(folder: str, X: Any, y: Any, dev: Optional[Tuple[Any, Any]]) -> List[str]:
    """Features and labels as an .npz the command line reads (x_train, y_train; dev as x_test, y_test), with
    the arrays' meaning kept as psgrad.train gives it: uint8 pixels divided by 255, float32 rows scaled by
    data.scale."""
    if y is None:
        raise _core.InputError("y: labels are needed with X")
    arrays = {"x_train": numpy.asarray(X), "y_train": numpy.asarray(y)}
    if dev is not None:
        try:
            arrays["x_test"], arrays["y_test"] = (numpy.asarray(part) for part in dev)
        except (TypeError, ValueError):
            raise _core.InputError("dev: expected a pair (X_dev, y_dev)") from None
    overrides = []
    if arrays["x_train"].dtype == numpy.uint8:
        for name in ("x_train", "x_test"):
            if name in arrays:
                arrays[name] = arrays[name].astype(numpy.float32) / numpy.float32(255)
        overrides.append("data.scale=1")
    path = os.path.join(folder, "data.npz")
    numpy.savez(path, **arrays)
    return overrides + [f"data.path={path}"]


def write_columns(folder: str, options: Mapping[str, Any], X: Any, y: Any, dev: Optional[Tuple[Any, Any]]) -> List[str]:
    """Named columns as JSON Lines files, as psgrad.train writes them, for the config's [data.columns]."""
    config = options.get("config")
    if config is None:
        raise _core.InputError("config: named columns are written for the columns a config declares; pass config=")
    layout = _core.columns_layout(os.fspath(config), True, _overrides(options), [], "")
    train_path = os.path.join(folder, "train.jsonl")
    write_examples(train_path, X, y, layout["columns"], layout["label"], "X")
    overrides = [f"data.path={train_path}"]
    if dev is not None:
        try:
            dev_x, dev_y = dev
        except (TypeError, ValueError):
            raise _core.InputError("dev: expected a pair (X_dev, y_dev)") from None
        dev_path = os.path.join(folder, "dev.jsonl")
        write_examples(dev_path, dev_x, dev_y, layout["columns"], layout["label"], "dev")
        overrides.append(f"data.dev_path={dev_path}")
    return overrides


def read_metrics(path: str) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """The eval records and the summary of a metrics file, keyed as psgrad.train's records and summary."""
    records: List[Dict[str, Any]] = []
    summary: Dict[str, Any] = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            kind = record.pop("type", None)
            if kind == "eval":
                records.append(record)
            elif kind == "summary":
                summary = record
    return records, summary


def run_for_result(command: str, options: Mapping[str, Any], positional: Sequence[str], X: Any, y: Any,
                   dev: Optional[Tuple[Any, Any]], load: Callable[[str], Any]) -> Optional[Dict[str, Any]]:
    """Runs the role with a metrics file and a saved model (in a temporary folder unless the caller named
    them), then reads both back; None for a run that trained nothing (launch's dry_run)."""
    options = dict(options)
    with tempfile.TemporaryDirectory(prefix="psgrad-") as folder:
        if X is not None:
            written = write_columns(folder, options, X, y, dev) if is_columns(X) else write_arrays(folder, X, y, dev)
            options["set"] = _overrides(options) + written
        options.pop("no_metrics", None)  # the records come from it; a temporary one leaves no file behind
        if not options.get("metrics"):
            options["metrics"] = os.path.join(folder, "run.jsonl")
        if not options.get("save"):
            options["save"] = os.path.join(folder, "model.psgrad")
        run_role(command, options, positional)
        if options.get("dry_run"):
            return None
        records, summary = read_metrics(os.fspath(options["metrics"]))
        return {
            "records": records,
            "summary": summary,
            "accuracy": summary.get("final_accuracy", 0.0),
            "model": load(os.fspath(options["save"])),
            "weights_hash": summary.get("weights_hash", ""),
        }
