# Models with embedding tables from Python: named columns in (a pandas DataFrame or a dict of arrays),
# the same run as the command line's on the same examples, and a TablesModel that predicts, saves and
# loads as the command line's model files.
import json
import random

import numpy
import pandas
import pytest

import psgrad
from conftest import printed_weights_hash, run_command_line

TABLES_CONFIG = """
[training]
iterations = 60
batch_size = 32
seed = 2

[evaluation]
frequency = 20

[model]
"@layers" = "hashembed_mlp.v1"
embedding_widths = [4, 8]
embedding_rows = [50, 500]
hidden_width = 16

[data]
label = "colour"
dev_fraction = 0.25

[data.columns]
words = "text"
noise = "ids"

[cluster]
num_workers = 2
mode = "sync"
"""

COLOURS = ["blue", "green", "red"]


def colour_examples(count, seed):
    """Rows whose words tell the colour (word w<3k+c> for colour c) beside noise ids that do not."""
    draw = random.Random(seed)
    rows = []
    for _ in range(count):
        c = draw.randrange(3)
        words = f"w{3 * draw.randrange(20) + c} w{3 * draw.randrange(20) + c}"
        rows.append({"words": words, "noise": [draw.randrange(10)], "colour": COLOURS[c]})
    return rows


def as_frame(rows):
    frame = pandas.DataFrame({"words": [r["words"] for r in rows], "noise": [r["noise"] for r in rows]})
    return frame, numpy.array([r["colour"] for r in rows], dtype=object)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_dataframe_trains_as_the_command_line_trains_the_same_examples(tmp_path):
    train_rows, dev_rows = colour_examples(300, 1), colour_examples(100, 2)
    X, y = as_frame(train_rows)
    X_dev, y_dev = as_frame(dev_rows)
    result = psgrad.train(TABLES_CONFIG, X, y, dev=(X_dev, y_dev))
    assert isinstance(result.model, psgrad.TablesModel)
    assert [r["iteration"] for r in result.records] == [0, 20, 40, 60]
    assert result.summary["steps"] == 60

    write_jsonl(tmp_path / "train.jsonl", train_rows)
    write_jsonl(tmp_path / "dev.jsonl", dev_rows)
    config = tmp_path / "run.toml"
    config.write_text(TABLES_CONFIG.replace("dev_fraction = 0.25", f'path = "{tmp_path / "train.jsonl"}"\n'
                                            f'dev_path = "{tmp_path / "dev.jsonl"}"'))
    done = run_command_line("train", "--config", config, "--no-metrics", "--save", tmp_path / "cli.psgrad")
    assert result.weights_hash == printed_weights_hash(done.stdout)

    # The trained model predicts class names, as `psgrad predict` of the command line's model does.
    predicted = result.model.predict(X_dev)
    assert predicted.shape == (100,)
    printed = run_command_line("predict", "--model", tmp_path / "cli.psgrad", tmp_path / "dev.jsonl").stdout
    assert [line.split("\t")[1] for line in printed.splitlines()] == list(predicted)
    probabilities = result.model.predict_proba(X_dev)
    assert probabilities.shape == (100, 3)
    assert numpy.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    assert result.model.class_names == COLOURS


def test_a_dict_of_arrays_trains_with_the_configs_dev_fraction_and_saves_a_model_the_command_line_reads(tmp_path):
    rows = colour_examples(400, 3)
    X = {"words": numpy.array([r["words"] for r in rows]), "noise": [r["noise"] for r in rows],
         "unused": numpy.zeros(400)}
    y = [r["colour"] for r in rows]
    result = psgrad.train(TABLES_CONFIG, X, y, mode="async")
    assert result.summary["mode"] == "async"
    result.model.save(tmp_path / "model.psgrad")
    write_jsonl(tmp_path / "all.jsonl", rows)
    scored = run_command_line("eval", "--model", tmp_path / "model.psgrad", "--data", tmp_path / "all.jsonl").stdout
    assert scored.startswith(f"model: {tmp_path / 'model.psgrad'} (hashembed_mlp.v1")
    loaded = psgrad.load(tmp_path / "model.psgrad")
    assert isinstance(loaded, psgrad.TablesModel)
    assert loaded.columns == [("noise", "ids"), ("words", "text")]
    assert loaded.label == "colour"
    assert list(loaded.predict(X)) == list(result.model.predict(X))


def test_load_reads_a_model_with_tables_saved_by_the_command_line(tmp_path):
    rows = colour_examples(200, 4)
    write_jsonl(tmp_path / "data.jsonl", rows)
    config = tmp_path / "run.toml"
    config.write_text(TABLES_CONFIG.replace("dev_fraction = 0.25", f'path = "{tmp_path / "data.jsonl"}"\n'
                                            "dev_fraction = 0.25"))
    run_command_line("train", "--config", config, "--no-metrics", "--save", tmp_path / "cli.psgrad")
    loaded = psgrad.load(tmp_path / "cli.psgrad")
    assert isinstance(loaded, psgrad.TablesModel)
    assert loaded.class_names == COLOURS
    X, _ = as_frame(rows)
    assert set(loaded.predict(X)) <= set(COLOURS)


def test_a_missing_or_ragged_column_is_one_line_naming_it():
    X, y = as_frame(colour_examples(50, 5))
    with pytest.raises(psgrad.InputError, match=r"^X: no column 'words', which \[data.columns\] declares$"):
        psgrad.train(TABLES_CONFIG, X.drop(columns=["words"]), y)
    ragged = {"words": ["w1"] * 50, "noise": [[1]] * 49}
    with pytest.raises(psgrad.InputError, match=r"^X: column 'words' has 50 values, column 'noise' 49$"):
        psgrad.train(TABLES_CONFIG, ragged, y)
    with pytest.raises(psgrad.InputError, match=r"^X: 3 labels for 50 examples$"):
        psgrad.train(TABLES_CONFIG, X, y[:3])
