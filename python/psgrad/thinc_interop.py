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


def to_thinc(model: Any) -> Any:
    """A thinc Model built from the model's own config by Thinc's registry, with its trained weights."""
    try:
        from thinc.api import Config, registry
    except ImportError as error:
        raise ImportError("to_thinc needs Thinc (Debian: python3-thinc)") from error
    section = tomllib.loads(model.config).get("model")
    if section is None:
        raise ValueError("to_thinc: the model's config has no [model] section")
    _register_architectures(registry)
    thinc_model = registry.resolve(Config({"model": section}))["model"]
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
