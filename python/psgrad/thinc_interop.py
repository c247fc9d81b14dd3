"""psgrad and Thinc side by side: a Thinc Config (or a dict) as psgrad's config text, and a trained
psgrad model as a Thinc model with its weights, so a run can go on in Thinc or spaCy."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from typing import Any, List

import numpy


def config_text(config: Any) -> str:
    """Thinc's config text of a thinc.api.Config (its own to_str) or of a dict of sections, nested as
    Thinc nests them: a dict is a section, positional layers sit under "*"."""
    if hasattr(config, "to_str") and callable(config.to_str):
        return str(config.to_str())
    if not isinstance(config, Mapping):
        raise TypeError(f"config: expected config text, a path, a dict or a thinc Config, got {type(config).__name__}")
    lines: List[str] = []

    def section(path: List[str], table: Mapping) -> None:
        lines.append(f"[{'.'.join(path)}]")
        inner = []
        for key, value in table.items():
            if isinstance(value, Mapping):
                inner.append((str(key), value))
            else:
                lines.append(f"{key} = {json.dumps(value)}")
        lines.append("")
        for key, value in inner:
            if key == "*" and not value:  # Thinc wants it written even when empty (noop's, add's)
                lines.extend([f"[{'.'.join(path + ['*'])}]", ""])
            elif key == "*":
                for name, layer in value.items():
                    section(path + ["*", str(name)], layer)
            else:
                section(path + [key], value)

    for name, table in config.items():
        if not isinstance(table, Mapping):
            raise TypeError(f"config: top-level key {name!r}: expected a section (a dict), got {type(table).__name__}")
        section([str(name)], table)
    return "\n".join(lines)


def _register_architectures(registry: Any) -> None:
    """psgrad's registered architectures in Thinc's registry, as the tutorial registers its own."""
    from thinc.api import Relu, Softmax, chain

    def hidden(width: int, dropout: float) -> Any:
        return Relu(width, dropout=dropout)

    if "relu_relu_softmax.v1" not in registry.layers:
        registry.layers("relu_relu_softmax.v1")(
            lambda hidden_width, dropout: chain(hidden(hidden_width, dropout), hidden(hidden_width, dropout), Softmax()))
    if "mlp.v1" not in registry.layers:
        registry.layers("mlp.v1")(
            lambda widths, dropout, activation="relu": chain(*[hidden(width, dropout) for width in widths], Softmax()))


_TABLE_NODES = ("hashembed", "embed", "sparse_linear")


def _resolved_model(model: Any) -> Any:
    try:
        from thinc.api import Config, registry
    except ImportError as error:
        raise ImportError("to_thinc needs Thinc (Debian: python3-thinc)") from error
    section = tomllib.loads(model.config).get("model")
    if section is None:
        raise ValueError("to_thinc: the model's config has no [model] section")
    _register_architectures(registry)
    return registry.resolve(Config({"model": section}))["model"]


def tables_to_thinc(model: Any) -> Any:
    """A TablesModel of one id column as a thinc Model: its tables whole (every row training made, the
    initial row of every other), its dense weights, both in Thinc's walk order. Its input is what Thinc's
    layers take: a list of each example's ids (uint64), or (keys, values, lengths) for SparseLinear."""
    if len([kind for _, kind in model.columns if kind != "number"]) != 1 or any(k == "number" for _, k in model.columns):
        raise ValueError("to_thinc: only a model of one id or text column has a Thinc model of the same input")
    thinc_model = _resolved_model(model)
    sparse_linear = any(node.name == "sparse_linear" for node in thinc_model.walk())
    ids = [numpy.array([1, 2], dtype="uint64")]
    inputs = (ids[0], numpy.ones(2, "float32"), numpy.array([2], "int32")) if sparse_linear else ids
    thinc_model.initialize(X=inputs, Y=numpy.eye(len(model.class_names), dtype="float32")[:1])
    dense = list(model._core.dense_weights())
    for node in thinc_model.walk(order="dfs_pre"):
        for name in node.param_names:
            if not node.has_param(name):
                continue
            shape = node.get_param(name).shape
            if node.name in _TABLE_NODES and name != "b":
                table = model._core.table(0)
                if node.name == "sparse_linear" and node.attrs.get("v1_indexing"):
                    # SparseLinear.v1: psgrad's row k is its flat W[k]; what its indexing never reaches is 0.
                    values = numpy.zeros(int(numpy.prod(shape)), dtype="float32")
                    values[:table.size] = table.ravel()
                elif node.name == "sparse_linear":
                    # SparseLinear.v2 keeps class c's weight of row r at c * length + r.
                    values = table.T.ravel()
                else:
                    values = table
            else:
                if not dense:
                    raise ValueError("to_thinc: Thinc's model has more dense arrays than psgrad's")
                values = dense.pop(0)
            if values.size != int(numpy.prod(shape)):
                raise ValueError(f"to_thinc: {node.name}.{name} holds {int(numpy.prod(shape))} values in Thinc, "
                                 f"{values.size} in psgrad")
            node.set_param(name, numpy.ascontiguousarray(values, dtype="float32").reshape(shape))
    if dense:
        raise ValueError(f"to_thinc: psgrad's model has {len(dense)} dense arrays Thinc's has not")
    return thinc_model


def to_thinc(model: Any) -> Any:
    """A thinc Model built from the model's own config by Thinc's registry, with its trained weights."""
    thinc_model = _resolved_model(model)
    inputs = numpy.zeros((1, model.input_width), dtype="float32")
    targets = numpy.eye(model.num_classes, dtype="float32")[:1]
    thinc_model.initialize(X=inputs, Y=targets)
    weights = list(model.weights().values())
    slots = [(node, name) for node in thinc_model.walk(order="dfs_pre") for name in node.param_names
             if node.has_param(name)]
    if len(slots) != len(weights):
        raise ValueError(f"to_thinc: Thinc's model has {len(slots)} parameter arrays, psgrad's {len(weights)}")
    for (node, name), values in zip(slots, weights):
        shape = node.get_param(name).shape
        if values.size != int(numpy.prod(shape)):
            raise ValueError(f"to_thinc: {node.name}.{name} holds {int(numpy.prod(shape))} values in Thinc, "
                             f"{values.size} in psgrad")
        node.set_param(name, numpy.ascontiguousarray(values, dtype="float32").reshape(shape))
    return thinc_model
