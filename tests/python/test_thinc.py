# Thinc's model language from Python: Thinc configs as text, dicts and thinc Config objects, the models
# they train, and those models handed to Thinc with their weights.
import os
import random

import numpy
import pytest

import psgrad

try:
    import thinc.api as thinc_api
except ImportError:  # under CI nothing may be skipped
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("python3-thinc is not installed (scripts/setup.sh --test installs it)", allow_module_level=True)

TRAINING = {"iterations": 15, "batch_size": 64, "seed": 3}
MODEL = {
    "@layers": "chain.v1",
    "*": {
        "hidden": {"@layers": "Maxout.v1", "nO": 32, "nP": 2, "normalize": True, "dropout": 0.1},
        "block": {"@layers": "residual.v1", "layer": {"@layers": "Relu.v1", "nO": 32}},
        "output": {"@layers": "Softmax.v1"},
    },
}


def config(optimizer="Adam.v1"):
    return {"training": TRAINING, "evaluation": {"frequency": 5}, "model": MODEL,
            "optimizer": {"@optimizers": optimizer, "learn_rate": 0.005},
            "cluster": {"num_workers": 2, "mode": "sync"}}


def test_a_dict_a_thinc_config_and_their_text_train_the_same_weights(float_digits):
    x, y, x_dev, y_dev = float_digits
    as_dict = psgrad.train(config(), x, y, dev=(x_dev, y_dev))
    as_thinc = psgrad.train(thinc_api.Config(config()), x, y, dev=(x_dev, y_dev))
    as_text = psgrad.train(thinc_api.Config(config()).to_str(), x, y, dev=(x_dev, y_dev))
    assert as_dict.weights_hash == as_thinc.weights_hash == as_text.weights_hash
    assert as_dict.model.architecture == "chain.v1"


def test_to_thinc_gives_a_thinc_model_that_predicts_what_psgrad_predicts(float_digits):
    x, y, x_dev, y_dev = float_digits
    result = psgrad.train(config("RAdam.v1"), x, y, dev=(x_dev, y_dev))
    thinc_model = result.model.to_thinc()
    assert isinstance(thinc_model, thinc_api.Model)
    ours = result.model.predict_proba(x_dev[:50])
    theirs = thinc_model.predict(x_dev[:50])
    assert numpy.array_equal(ours.argmax(axis=1), theirs.argmax(axis=1))
    assert numpy.abs(ours - theirs).max() <= 1e-5


def test_to_thinc_of_a_registered_architecture_uses_its_thinc_twin(float_digits, tmp_path):
    x, y, x_dev, y_dev = float_digits
    text = ("[training]\niterations = 10\n[model]\n@layers = \"relu_relu_softmax.v1\"\nhidden_width = 16\n"
            "dropout = 0.2\n[optimizer]\n@optimizers = \"Adam.v1\"\n")
    result = psgrad.train(text, x, y, dev=(x_dev, y_dev))
    result.model.save(tmp_path / "model.psgrad")
    loaded = psgrad.load(tmp_path / "model.psgrad")
    theirs = loaded.to_thinc().predict(x_dev[:20])
    assert numpy.abs(loaded.predict_proba(x_dev[:20]) - theirs).max() <= 1e-5


def test_a_dict_that_is_not_sections_is_refused_naming_the_key():
    with pytest.raises(TypeError, match="top-level key 'model'"):
        psgrad.train({"model": "chain.v1"}, numpy.zeros((4, 3), "f"), numpy.zeros(4, "i"))


def test_a_thinc_language_model_with_a_table_front_trains_on_named_columns():
    # Words w<3k+c> tell colour c; the summary-like text column goes through HashEmbed, token windows and
    # Maxout per token, then the mean.
    draw = random.Random(5)
    rows = [draw.randrange(3) for _ in range(400)]
    words = [f"w{3 * draw.randrange(20) + c} w{3 * draw.randrange(20) + c} x{draw.randrange(9)}" for c in rows]
    labels = numpy.array(["blue", "green", "red"], dtype=object)[rows]
    text_model = {
        "@layers": "chain.v1",
        "*": {
            "ragged": {"@layers": "list2ragged.v1"},
            "embed": {"@layers": "with_array.v1", "layer": {"@layers": "HashEmbed.v1", "nO": 16, "nV": 500}},
            "window": {"@layers": "expand_window.v1", "window_size": 1},
            "convolve": {"@layers": "with_array.v1", "layer": {"@layers": "Maxout.v1", "nO": 16, "nP": 2}},
            "pool": {"@layers": "reduce_mean.v1"},
            "output": {"@layers": "Softmax.v1"},
        },
    }
    settings = {"training": {"iterations": 60, "batch_size": 32, "seed": 2}, "evaluation": {"frequency": 20},
                "model": text_model, "optimizer": {"@optimizers": "Adam.v1", "learn_rate": 0.01},
                "data": {"label": "colour", "dev_fraction": 0.25, "columns": {"words": "text"}},
                "cluster": {"num_workers": 2, "mode": "async"}}
    result = psgrad.train(settings, {"words": words}, labels)
    assert isinstance(result.model, psgrad.TablesModel)
    assert result.accuracy > 0.9, result.records
    predicted = result.model.predict({"words": ["w3 w6", "w1 w4", "w2 w5"]})
    assert list(predicted) == ["blue", "green", "red"]


@pytest.mark.parametrize("table", ["HashEmbed.v1", "SparseLinear.v2", "SparseLinear.v1"])
def test_to_thinc_of_a_tables_model_predicts_what_psgrad_predicts(table):
    # Integer ids reach the model as they are, so Thinc can be given the same inputs.
    draw = random.Random(9)
    rows = [draw.randrange(3) for _ in range(300)]
    ids = [[3 * draw.randrange(30) + c, draw.randrange(1000)] for c in rows]
    labels = numpy.array(["a", "b", "c"], dtype=object)[rows]
    if table == "HashEmbed.v1":
        graph = {"@layers": "chain.v1", "*": {
            "ragged": {"@layers": "list2ragged.v1"},
            "embed": {"@layers": "with_array.v1", "layer": {"@layers": "HashEmbed.v1", "nO": 8, "nV": 200, "seed": 4}},
            "hidden": {"@layers": "with_array.v1", "layer": {"@layers": "Maxout.v1", "nO": 8, "nP": 2}},
            "pool": {"@layers": "reduce_max.v1"},
            "output": {"@layers": "Softmax.v1"}}}
    else:
        graph = {"@layers": "chain.v1", "*": {"linear": {"@layers": table, "length": 512},
                                              "output": {"@layers": "softmax_activation.v1"}}}
    settings = {"training": {"iterations": 40, "batch_size": 32, "seed": 1}, "evaluation": {"frequency": 20},
                "model": graph, "optimizer": {"@optimizers": "Adam.v1", "learn_rate": 0.02},
                "data": {"label": "label", "dev_fraction": 0.25, "columns": {"ids": "ids"}},
                "cluster": {"num_workers": 2, "mode": "sync"}}
    result = psgrad.train(settings, {"ids": ids}, labels)
    thinc_model = result.model.to_thinc()
    examples = ids[:40]
    ours = result.model.predict_proba({"ids": examples})
    as_arrays = [numpy.array(row, dtype="uint64") for row in examples]
    if table.startswith("SparseLinear"):
        lengths = numpy.array([len(row) for row in as_arrays], dtype="int32")
        theirs = thinc_model.predict((numpy.concatenate(as_arrays), numpy.ones(int(lengths.sum()), "float32"), lengths))
    else:
        theirs = thinc_model.predict(as_arrays)
    assert numpy.array_equal(ours.argmax(axis=1), theirs.argmax(axis=1))
    assert numpy.abs(ours - theirs).max() <= 1e-5
