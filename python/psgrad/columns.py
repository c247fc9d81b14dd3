"""Named columns from Python (a pandas DataFrame or a dict of arrays or lists) written as JSON Lines, the
named-column format the command line reads."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, List, Optional, Sequence, Tuple

from ._core import InputError


def is_columns(X: Any) -> bool:
    """Named columns: a dict of arrays or lists, or a pandas DataFrame."""
    return isinstance(X, Mapping) or (hasattr(X, "columns") and hasattr(X, "iloc"))


def plain(value: Any) -> Any:
    """A JSON value of a NumPy scalar or array (an ids column's list of ids), or the value itself."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return value


def write_examples(path: str, X: Any, y: Any, columns: Sequence[Tuple[str, str]], label: str, what: str) -> int:
    """Writes X's columns that the model reads (and y under the label's name, when given) as JSON Lines,
    the named-column format the command line reads. Returns the number of examples."""
    names = [name for name, _ in columns]
    values: List[List[Any]] = []
    for name in names:
        present = name in X if isinstance(X, Mapping) else name in X.columns
        if not present:
            raise InputError(f"{what}: no column '{name}', which [data.columns] declares")
        column = X[name]
        values.append(list(column.tolist() if hasattr(column, "tolist") else column))
    count = len(values[0])
    for name, column in zip(names, values):
        if len(column) != count:
            raise InputError(f"{what}: column '{name}' has {len(column)} values, column '{names[0]}' {count}")
    labels: Optional[List[Any]] = None
    if y is not None:
        labels = list(y.tolist() if hasattr(y, "tolist") else y)
        if len(labels) != count:
            raise InputError(f"{what}: {len(labels)} labels for {count} examples")
    with open(path, "w", encoding="utf-8") as out:
        for row in range(count):
            example = {name: plain(column[row]) for name, column in zip(names, values)}
            if labels is not None:
                example[label] = plain(labels[row])
            try:
                out.write(json.dumps(example, ensure_ascii=False, allow_nan=False))
            except (TypeError, ValueError) as problem:
                raise InputError(f"{what}: example {row}: {problem}") from None
            out.write("\n")
    return count
