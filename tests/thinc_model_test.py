"""Real Thinc, given psgrad's trained weights, predicts what psgrad predicts, for whole model configs.

For each config below, `psgrad train` trains it briefly and saves the model and its weights; Thinc
resolves the same config text's [model] with its own registry (relu_relu_softmax.v1 registered as the
tutorial registers it), takes the weights in its model.walk() order, and predicts a batch of inputs that
`psgrad predict` also predicts. The classes must be equal and the probabilities within 1e-5. Where
python3-thinc is not installed, says so and exits 77 (skipped); under CI=true that fails instead.

Usage: python3 thinc_model_test.py PSGRAD SOURCE_DIR   (PSGRAD_DATA: the data folder)
"""
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

from thinc_checks import skip

CONFIGS = ["configs/tutorial.cfg", "configs/mnist-thinc-layers.cfg"]
TOLERANCE = 1e-5



def register_tutorial_architecture():
    """The tutorial's own registration of relu_relu_softmax.v1."""
    from thinc.api import Relu, Softmax, chain, registry

    @registry.layers("relu_relu_softmax.v1")
    def relu_relu_softmax(hidden_width: int, dropout: float):
        return chain(Relu(hidden_width, dropout=dropout), Relu(hidden_width, dropout=dropout), Softmax())


def thinc_probabilities(config_text, weights_path, inputs, classes):
    import numpy
    from thinc.api import Config, registry

    model = registry.resolve({"model": Config().from_str(config_text)["model"]})["model"]
    model.initialize(X=inputs[:2], Y=numpy.eye(classes, dtype="float32")[:2])
    raw = Path(weights_path).read_bytes()
    count = int(numpy.frombuffer(raw[24:32], dtype="<u8")[0])
    weights = numpy.frombuffer(raw[32:], dtype="<f4")
    if weights.size != count:
        raise ValueError(f"{weights_path}: {weights.size} floats, the header says {count}")
    start = 0
    for node in model.walk(order="dfs_pre"):
        for name in node.param_names:
            if node.has_param(name):
                shape = node.get_param(name).shape
                size = int(numpy.prod(shape))
                node.set_param(name, weights[start:start + size].reshape(shape).copy())
                start += size
    if start != weights.size:
        raise ValueError(f"Thinc's model has {start} parameters, psgrad saved {weights.size}")
    return model.predict(inputs)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    try:
        import numpy
        import thinc  # noqa: F401
    except ImportError as error:
        skip(f"python3-thinc is not installed ({error}); scripts/setup.sh --test installs it")
    psgrad, source = sys.argv[1], Path(sys.argv[2])
    register_tutorial_architecture()
    problems = []
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        inputs = numpy.random.default_rng(7).uniform(0.0, 1.0, (64, 784)).astype("float32")
        numpy.save(folder / "inputs.npy", inputs)
        for config in CONFIGS:
            model_file, weights_file = folder / "model.bin", folder / "weights.bin"
            trained = subprocess.run([psgrad, "train", "--config", str(source / config), "--no-metrics", "--quiet",
                                      "--set", "training.iterations=20", "--save", str(model_file),
                                      "--save-weights", str(weights_file)], capture_output=True, text=True)
            if trained.returncode != 0:
                problems.append(f"{config}: psgrad train failed: {trained.stderr.strip()}")
                continue
            predicted = subprocess.run([psgrad, "predict", "--model", str(model_file), "--scale", "1", "--format",
                                        "csv", str(folder / "inputs.npy")], capture_output=True, text=True)
            if predicted.returncode != 0:
                problems.append(f"{config}: psgrad predict failed: {predicted.stderr.strip()}")
                continue
            rows = list(csv.reader(predicted.stdout.splitlines()))[1:]
            ours = numpy.array([[float(value) for value in row[2:]] for row in rows], dtype="float64")
            theirs = thinc_probabilities((source / config).read_text(), weights_file, inputs, ours.shape[1])
            agree = int((ours.argmax(axis=1) == theirs.argmax(axis=1)).sum())
            difference = float(numpy.abs(ours - theirs).max())
            print(f"{config}: {agree} of {len(inputs)} classes agree, largest probability difference {difference:.2e}")
            if agree != len(inputs) or not difference <= TOLERANCE:
                problems.append(f"{config}: Thinc with psgrad's weights predicts otherwise")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
