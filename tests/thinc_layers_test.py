"""psgrad's layers and combinators compute what Thinc 8.1.7's compute, forward and backprop.

For each case below, Thinc resolves a [model] config with its own registry and initializes it on an input
and one-hot targets; the parameters are then drawn at random (so zero-initialized ones matter too), and
Thinc runs forward and backprop on a random d(output). tests/thinc_layer_dump.cpp builds the same config
with psgrad, takes the same parameters (in Thinc's model.walk() order), input and d(output), and writes
its output, input gradient and parameter gradients. Each must match Thinc's to 1e-5 relative (in norm).
Where python3-thinc is not installed, says so and exits 77 (skipped); under CI=true that fails instead.

Usage: python3 thinc_layers_test.py THINC_LAYER_DUMP
"""
import subprocess
import sys

from thinc_checks import case_seed, compared, require_thinc, run_cases

TOLERANCE = 1e-5
INPUTS, CLASSES, ROWS = 6, 4, 5


def layer(name, **arguments):
    return [f'@layers = "{name}"'] + [f"{key} = {value}" for key, value in arguments.items()]


def single(name, **arguments):
    return "[model]\n" + "\n".join(layer(name, **arguments)) + "\n"


def sections(*parts):
    """parts: (section path, lines) pairs, in the order they are written."""
    return "".join(f"[{path}]\n" + "\n".join(lines) + "\n" for path, lines in parts)


CASES = {
    "Linear.v1": single("Linear.v1", nO=4),
    "Relu.v1": single("Relu.v1", nO=4),
    # LayerNorm over a handful of Relu or Maxout outputs is ill-conditioned (a row of units all but one at 0
    # leaves rounding to dominate, in Thinc as in psgrad): these normalize 16.
    "Relu.v1 normalize": single("Relu.v1", nO=16, normalize="true"),
    "Maxout.v1": single("Maxout.v1", nO=4, nP=3),
    "Maxout.v1 normalize": single("Maxout.v1", nO=16, nP=2, normalize="true"),
    "Mish.v1": single("Mish.v1", nO=4),
    "Swish.v1": single("Swish.v1", nO=4),
    "Gelu.v1": single("Gelu.v1", nO=4),
    "HardSwish.v1": single("HardSwish.v1", nO=4),
    "Sigmoid.v1": single("Sigmoid.v1", nO=4),
    "Softmax.v1": single("Softmax.v1"),
    "Softmax.v2": single("Softmax.v2"),
    "LayerNorm.v1": single("LayerNorm.v1"),
    "Dropout.v1": single("Dropout.v1", rate=0.3),
    "noop.v1": single("noop.v1") + "[model.*]\n",
    "expand_window.v1": single("expand_window.v1", window_size=2),
    "chain.v1": sections(("model", layer("chain.v1")),
                         ("model.*.relu", layer("Relu.v1", nO=7)),
                         ("model.*.maxout", layer("Maxout.v1", nO=5, nP=2)),
                         ("model.*.softmax", layer("Softmax.v1"))),
    "residual.v1": sections(("model", layer("residual.v1")),
                            ("model.layer", layer("chain.v1")),
                            ("model.layer.*.mish", layer("Mish.v1", nO=INPUTS)),
                            ("model.layer.*.norm", layer("LayerNorm.v1"))),
    "add.v1": sections(("model", layer("add.v1")),
                       ("model.layer1", layer("Gelu.v1", nO=4)),
                       ("model.layer2", layer("Linear.v1", nO=4)),
                       ("model.*", [])),  # Thinc's config needs it, empty: its layers go to layer1 and layer2
    "concatenate.v1": sections(("model", layer("concatenate.v1")),
                               ("model.*.swish", layer("Swish.v1", nO=3)),
                               ("model.*.hard", layer("HardSwish.v1", nO=2)),
                               ("model.*.sigmoid", layer("Sigmoid.v1", nO=2))),
    "clone.v1": sections(("model", layer("clone.v1", n=3)),
                         ("model.orig", layer("Relu.v1", nO=INPUTS))),
    # init_W / init_b sections: Thinc and psgrad both accept them (the parameters are then drawn here).
    "Relu.v1 init_W init_b": sections(("model", layer("Relu.v1", nO=4)),
                                      ("model.init_W", ['@initializers = "he_normal_init.v1"']),
                                      ("model.init_b", ['@initializers = "uniform_init.v1"', "lo = -0.5", "hi = 0.5"])),
    "Maxout.v1 init_W init_b": sections(("model", layer("Maxout.v1", nO=4, nP=3)),
                                        ("model.init_W", ['@initializers = "glorot_normal_init.v1"']),
                                        ("model.init_b", ['@initializers = "lecun_uniform_init.v1"'])),
    # Written out of alphabetical order: positional layers go in the order they are written.
    "a whole model": sections(("model", layer("chain.v1")),
                              ("model.*.z_hidden", layer("Maxout.v1", nO=16, nP=3, normalize="true")),
                              ("model.*.block", layer("residual.v1")),
                              ("model.*.block.layer", layer("Relu.v1", nO=16, normalize="true")),
                              ("model.*.a_both", layer("concatenate.v1")),
                              ("model.*.a_both.*.x", layer("noop.v1")),
                              ("model.*.a_both.*.x.*", []),
                              ("model.*.a_both.*.y", layer("Gelu.v1", nO=3)),
                              ("model.*.out", layer("Softmax.v2", nO=CLASSES))),
}




def run_case(name, text, dump, folder):
    import numpy
    from thinc.api import Config, registry

    rng = numpy.random.default_rng(case_seed(name))
    model = registry.resolve(Config().from_str(text))["model"]
    X = rng.uniform(-3.0, 3.0, (ROWS, INPUTS)).astype("float32")
    Y = numpy.eye(CLASSES, dtype="float32")[rng.integers(0, CLASSES, ROWS)]
    # Thinc's concatenate hands Y to layers whose nO is written, and refuses the change: without Y there.
    model.initialize(X=X, Y=None if "concatenate" in text else Y)
    params = []
    for node in model.walk(order="dfs_pre"):
        for param in node.param_names:
            if node.has_param(param):
                value = rng.normal(0.0, 0.7, node.get_param(param).shape).astype("float32")
                node.set_param(param, value)
                params.append((node, param))
    output, backprop = model(X, is_train=False)
    d_output = rng.normal(0.0, 1.0, output.shape).astype("float32")
    d_input = backprop(d_output)
    flat = [node.get_param(param).ravel() for node, param in params]
    numpy.save(folder / "X.npy", X)
    numpy.save(folder / "dY.npy", d_output)
    numpy.save(folder / "params.npy", numpy.concatenate(flat) if flat else numpy.zeros(0, "float32"))
    (folder / "model.cfg").write_text(text)
    done = subprocess.run([dump, str(folder / "model.cfg"), str(CLASSES), str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        return [f"{name}: psgrad refused it: {done.stderr.strip()}"]
    checks = [("output", numpy.load(folder / "Y.npy"), output), ("input gradient", numpy.load(folder / "dX.npy"), d_input)]
    ours = numpy.load(folder / "grads.npy")
    start = 0
    for node, param in params:
        theirs = node.get_grad(param)
        checks.append((f"{node.name}.{param} gradient", ours[start:start + theirs.size].reshape(theirs.shape), theirs))
        start += theirs.size
    return compared(name, checks, TOLERANCE)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    require_thinc()
    return run_cases(CASES, run_case, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
