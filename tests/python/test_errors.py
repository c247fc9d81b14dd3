# Refusals and failures as psgrad.InputError / psgrad.Error with the command line's one-line message.
import re

import numpy
import pytest

import psgrad
from conftest import CONFIG, run_command_line


def test_error_kinds_are_runtime_and_value_errors():
    assert issubclass(psgrad.Error, RuntimeError)
    assert issubclass(psgrad.InputError, psgrad.Error)
    assert issubclass(psgrad.InputError, ValueError)


def test_a_malformed_config_raises_with_its_line(float_digits):
    x, y, x_dev, y_dev = float_digits
    malformed = CONFIG.replace("iterations = 20", "iterations = = 20")
    line = CONFIG.splitlines().index("iterations = 20") + 1
    with pytest.raises(psgrad.InputError, match=rf"^<string>:{line}:\d+: "):
        psgrad.train(malformed, x, y, dev=(x_dev, y_dev))


def test_a_config_files_refusal_is_the_line_the_command_line_prints(float_digits, tmp_path):
    x, y, x_dev, y_dev = float_digits
    config = tmp_path / "bad.toml"
    config.write_text(CONFIG.replace("batch_size = 64", "batch_size = -64"))
    refused = run_command_line("train", "--config", config, "--no-metrics", check=False)
    assert refused.returncode == 2
    printed = refused.stderr.strip().splitlines()[-1]
    assert printed.startswith("psgrad: ")

    with pytest.raises(psgrad.InputError) as raised:
        psgrad.train(config, x, y, dev=(x_dev, y_dev))
    assert str(raised.value) == printed[len("psgrad: "):]


def test_arguments_standing_for_config_keys_get_the_keys_checks(float_digits):
    x, y, x_dev, y_dev = float_digits
    with pytest.raises(psgrad.InputError, match="cluster.mode"):
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), mode="sideways")
    with pytest.raises(psgrad.InputError, match="cluster.num_workers"):
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), workers=0)
    with pytest.raises(psgrad.InputError, match="training.nonsense"):
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=["training.nonsense=1"])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda x, y: (x.astype(numpy.float64), y), r"^X: dtype float64; expected float32 features or uint8 pixels"),
        (lambda x, y: (x[:, :1, None, None], y), r"^X: shape \({n}, 1, 1, 1\); expected \(examples, features\)"),
        (lambda x, y: (x, y[:-1]), r"^X holds {n} examples but y holds {n_less} labels$"),
        (lambda x, y: (x, y.astype(numpy.float32)), r"^y: dtype float32; expected whole-number class labels"),
        (lambda x, y: (x, numpy.where(numpy.arange(len(y)) == 7, -1, y)),
         r"^y: label -1 at index 7: expected a whole number from 0 to 255"),
        # An unsigned label is named as it is, not as the signed number of its bits.
        (lambda x, y: (x, numpy.where(numpy.arange(len(y)) == 3, numpy.uint64(2**64 - 1), y.astype(numpy.uint64))),
         r"^y: label 18446744073709551615 at index 3: expected a whole number from 0 to 255"),
        (lambda x, y: (numpy.where(numpy.arange(x.size).reshape(x.shape) == 790, numpy.nan, x).astype(numpy.float32), y),
         r"^X: example 1, feature 6: nan is not a finite number$"),
    ],
)
def test_arrays_that_do_not_fit_are_refused_naming_the_argument(float_digits, change, message):
    x, y, x_dev, y_dev = float_digits
    message = message.format(n=len(x), n_less=len(x) - 1)
    x, y = change(x, y)
    with pytest.raises(psgrad.InputError, match=message):
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev))


def test_a_missing_dev_set_or_config_file_is_named(float_digits, tmp_path):
    x, y, _, _ = float_digits
    with pytest.raises(psgrad.InputError, match=r"^dev: "):
        psgrad.train(CONFIG, x, y)
    missing = tmp_path / "missing.toml"
    with pytest.raises(psgrad.InputError, match=f"^{re.escape(str(missing))}: "):
        psgrad.train(str(missing), x, y, dev=(x, y))


def test_a_failing_role_raises_with_the_line_it_printed(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(psgrad.InputError, match=f"^psgrad: {re.escape(str(missing))}: "):
        psgrad.serve(config=missing, no_metrics=True)


def test_a_model_with_embedding_tables_given_a_matrix_asks_for_named_columns(float_digits):
    x, y, x_dev, y_dev = float_digits
    tables = CONFIG.replace('"relu_relu_softmax.v1"\nhidden_width = 32', '"hashembed_mlp.v1"\nhidden_width = 32')
    assert tables != CONFIG
    with pytest.raises(psgrad.InputError) as raised:
        psgrad.train(tables, x, y, dev=(x_dev, y_dev))
    message = str(raised.value)
    assert message.startswith('<string>: model.@layers "hashembed_mlp.v1" has embedding tables: pass X as named columns')
    assert "\n" not in message


def test_named_columns_for_a_model_without_tables_ask_for_a_matrix(float_digits):
    x, y, x_dev, y_dev = float_digits
    with pytest.raises(psgrad.InputError, match=r'reads a matrix of features: pass X as a NumPy array'):
        psgrad.train(CONFIG, {"pixels": list(range(len(y)))}, y, dev=(x_dev, y_dev))


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"seed": 2**70}, r"^seed: 1180591620717411303424 is out of range for training.seed \(an integer below 2\*\*63\)$"),
        ({"workers": 2**64}, r"^workers: 18446744073709551616 is out of range for cluster.num_workers"),
        ({"on_progress": 5}, r"^on_progress: expected a callable or None, got int$"),
        ({"set": ["training.seed=\udc80"]}, r"^set: not text that UTF-8 can hold \(surrogates not allowed at character 14\)$"),
    ],
)
def test_arguments_python_would_pass_to_cpp_badly_are_one_line_input_errors(float_digits, arguments, message):
    x, y, x_dev, y_dev = float_digits
    with pytest.raises(psgrad.InputError, match=message):
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), **arguments)


def test_a_lone_surrogate_in_config_text_is_one_short_line(float_digits):
    x, y, x_dev, y_dev = float_digits
    with pytest.raises(psgrad.InputError) as refused:
        psgrad.train(CONFIG + "# \udc80\n", x, y, dev=(x_dev, y_dev))
    assert str(refused.value).startswith("config: not text that UTF-8 can hold (surrogates not allowed at character ")
    assert len(str(refused.value)) < 200


def test_a_config_note_warns_at_the_callers_line(float_digits):
    x, y, x_dev, y_dev = float_digits
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=['model.@layers="mlp.v1"', "training.iterations=2"])
    notes = [w for w in caught if "dropped" in str(w.message)]
    assert notes, [str(w.message) for w in caught]
    assert notes[0].filename == __file__


def test_features_so_large_the_model_overflows_are_refused_not_answered_with_nan(float_digits, tmp_path):
    x, y, x_dev, y_dev = float_digits
    model = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev)).model
    huge = numpy.full((3, x.shape[1]), 3e38, dtype=numpy.float32)
    huge[0] = x_dev[0]  # a usual example first: the refusal names the one that overflows
    message = ("X: example 1: its class probabilities are not finite numbers: features as large as 3e+38 "
               "overflow the model's float arithmetic")
    with pytest.raises(psgrad.InputError) as raised:
        model.predict_proba(huge)
    assert str(raised.value) == message
    with pytest.raises(psgrad.InputError):
        model.predict(huge)
    # The command line refuses the same examples in the same words, naming the file.
    model_path, inputs = tmp_path / "model.psg", tmp_path / "huge.npy"
    model.save(model_path)
    numpy.save(inputs, huge)
    refused = run_command_line("predict", "--model", model_path, inputs, check=False)
    assert refused.returncode != 0
    assert refused.stdout == ""
    assert refused.stderr.strip() == f"psgrad predict: {inputs}: " + message[len("X: "):]
