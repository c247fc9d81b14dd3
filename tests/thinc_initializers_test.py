"""Thinc 8.1.7 draws each initializer of an init_W / init_b section by the formula psgrad draws it by
(tests/test_weight_initializers.cpp checks psgrad against the same table): Thinc resolves a config with
the section and initializes the layer, and the bound of each uniform kind and the spread of each normal
kind of what it drew are the formula's. Where python3-thinc is not installed, says so and exits 77
(skipped); under CI=true that fails instead.

Usage: python3 thinc_initializers_test.py
"""
import math
import sys

from thinc_checks import require_thinc

INPUTS = 100

# (layer lines, array, initializer, arguments, kind, scale): uniform kinds draw U(-scale, scale) (or
# U(lo, hi)), normal kinds N(0, scale). Shapes are Thinc's: Relu W (64, 100); Maxout W (32, 4, 100), b (32, 4).
RELU = ['@layers = "Relu.v1"', "nO = 64"]
MAXOUT = ['@layers = "Maxout.v1"', "nO = 32", "nP = 4"]
CASES = [
    (RELU, "W", "glorot_uniform_init.v1", [], "uniform", math.sqrt(6.0 / (64 + 100))),
    (RELU, "W", "he_uniform_init.v1", [], "uniform", math.sqrt(6.0 / 100)),
    (RELU, "W", "lecun_uniform_init.v1", [], "uniform", math.sqrt(3.0 / 100)),
    (RELU, "W", "glorot_normal_init.v1", [], "normal", math.sqrt(2.0 / (64 + 100))),
    (RELU, "W", "he_normal_init.v1", [], "normal", math.sqrt(2.0 / 100)),
    (RELU, "W", "lecun_normal_init.v1", [], "normal", math.sqrt(1.0 / 100)),
    (RELU, "W", "normal_init.v1", ["mean = 0.5"], "normal", 0.5),
    (RELU, "W", "normal_init.v1", [], "zero", 0.0),
    (RELU, "W", "zero_init.v1", [], "zero", 0.0),
    (RELU, "b", "uniform_init.v1", ["lo = 0.5", "hi = 0.6"], "between", (0.5, 0.6)),
    (MAXOUT, "W", "he_uniform_init.v1", [], "uniform", math.sqrt(6.0 / 4)),
    (MAXOUT, "b", "glorot_uniform_init.v1", [], "uniform", math.sqrt(6.0 / (32 + 4))),
]


def drawn(layer_lines, array, initializer, arguments):
    import numpy
    from thinc.api import Config, registry

    numpy.random.seed(7)
    text = ("[model]\n" + "\n".join(layer_lines) + f"\n[model.init_{array}]\n@initializers = \"{initializer}\"\n"
            + "\n".join(arguments) + "\n")
    model = registry.resolve(Config().from_str(text))["model"]
    model.initialize(X=numpy.zeros((2, INPUTS), dtype="float32"))
    return model.get_param(array).ravel().astype("float64")


def problem(case):
    layer_lines, array, initializer, arguments, kind, scale = case
    values = drawn(layer_lines, array, initializer, arguments)
    largest = float(abs(values).max())
    if kind == "zero":
        return None if largest == 0.0 else f"not all zero (largest {largest})"
    if kind == "between":
        low, high = scale
        return None if values.min() >= low and values.max() <= high else f"outside [{low}, {high}]"
    if kind == "uniform":
        if largest > scale * (1 + 1e-6) or largest < 0.9 * scale:
            return f"largest magnitude {largest:.5f}, expected just under {scale:.5f}"
        return None
    spread = float(values.std())
    return None if abs(spread - scale) <= 0.05 * scale else f"spread {spread:.5f}, expected {scale:.5f}"


def main():
    if len(sys.argv) != 1:
        print(__doc__)
        return 2
    require_thinc()
    failures = []
    for case in CASES:
        found = problem(case)
        name = f"{case[0][0]} init_{case[1]} = {case[2]} {' '.join(case[3])}".strip()
        print(f"{'FAIL' if found else 'ok'}: {name}" + (f": {found}" if found else ""))
        if found:
            failures.append(name)
    print(f"{len(CASES) - len(failures)} of {len(CASES)} initializers draw by psgrad's formula")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
