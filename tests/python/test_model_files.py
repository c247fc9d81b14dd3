# psgrad.Model: predictions as `psgrad predict` makes them, model files shared with the command line.
import re

import numpy
import pytest

import psgrad
from conftest import CONFIG, run_command_line


@pytest.fixture(scope="module")
def trained(float_digits):
    x, y, x_dev, y_dev = float_digits
    return psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev)).model


def test_predict_matches_psgrad_predict_on_the_saved_model(trained, float_digits, tmp_path):
    _, _, x_dev, _ = float_digits
    trained.save(tmp_path / "model.psgrad")
    numpy.save(tmp_path / "x.npy", x_dev)
    printed = run_command_line("predict", "--model", tmp_path / "model.psgrad", "--format", "csv",
                               tmp_path / "x.npy").stdout.splitlines()
    assert printed[0] == "row,predicted," + ",".join(f"p{c}" for c in range(trained.num_classes))
    rows = [line.split(",") for line in printed[1:]]
    labels = numpy.array([int(row[1]) for row in rows])
    # The command line writes each probability's shortest digits that read back as the same float32.
    probabilities = numpy.array([[numpy.float32(p) for p in row[2:]] for row in rows], dtype=numpy.float32)

    assert numpy.array_equal(trained.predict(x_dev), labels)
    assert numpy.array_equal(trained.predict_proba(x_dev), probabilities)


def test_a_saved_model_loads_back_with_the_same_weights_and_predictions(trained, digits, tmp_path):
    _, _, images_dev, _ = digits
    trained.save(tmp_path / "model.psgrad")
    loaded = psgrad.load(tmp_path / "model.psgrad")
    assert (loaded.architecture, loaded.input_width, loaded.num_classes, loaded.version, loaded.config) == (
        trained.architecture, trained.input_width, trained.num_classes, trained.version, trained.config)
    saved, read = trained.weights(), loaded.weights()
    assert saved.keys() == read.keys()
    assert all(numpy.array_equal(saved[name], read[name]) for name in saved)
    assert numpy.array_equal(loaded.predict_proba(images_dev), trained.predict_proba(images_dev))


def test_uint8_images_predict_as_their_pixels_divided_by_255(trained, digits):
    _, _, images_dev, _ = digits
    as_floats = images_dev.reshape(len(images_dev), -1).astype(numpy.float32) / numpy.float32(255)
    assert numpy.array_equal(trained.predict_proba(images_dev), trained.predict_proba(as_floats))


def test_weights_are_named_and_shaped_as_the_model_files_layout(trained, tmp_path):
    trained.save(tmp_path / "model.psgrad")
    # The file holds its layout's description, a line per array: "relu1.W 32x784 @0".
    described = re.findall(rb"([A-Za-z0-9_]+\.[A-Za-z0-9_]+) (\d+)x(\d+) @\d+", (tmp_path / "model.psgrad").read_bytes())
    layout = {name.decode(): (int(rows), int(cols)) for name, rows, cols in described}
    weights = trained.weights()
    assert layout and {name: array.shape for name, array in weights.items()} == layout
    assert all(array.dtype == numpy.float32 for array in weights.values())


def test_predicting_other_widths_is_refused_with_the_command_lines_message(trained):
    with pytest.raises(psgrad.InputError, match=r"^X: 10 features per example do not match the model "):
        trained.predict(numpy.zeros((3, 10), numpy.float32))
    with pytest.raises(psgrad.InputError, match=r"^X: image size 5x5 \(25 inputs\) does not match the model "):
        trained.predict(numpy.zeros((3, 5, 5), numpy.uint8))


def test_loading_a_file_that_is_not_a_model_names_it(tmp_path):
    bad = tmp_path / "bad.psgrad"
    bad.write_bytes(b"not a model")
    with pytest.raises(psgrad.InputError, match=re.escape(str(bad))):
        psgrad.load(bad)
