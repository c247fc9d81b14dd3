# psgrad.serve, psgrad.work and psgrad.launch as processes of the command line: a served run the package's
# workers join, returning what psgrad.train returns.
import json
import threading
import time

import numpy

import psgrad
from conftest import CONFIG


def test_serve_and_work_run_a_job_whose_model_loads(float_digits, tmp_path):
    x, y, x_dev, y_dev = float_digits
    folder = tmp_path / "arrays"
    folder.mkdir()
    for name, array in (("x_train", x), ("y_train", y), ("x_test", x_dev), ("y_test", y_dev)):
        numpy.save(folder / f"{name}.npy", array)
    config = tmp_path / "run.toml"
    config.write_text(CONFIG + f'\n[data]\npath = "{folder}"\n')
    port_file = tmp_path / "port.json"
    outcome = {}

    def serve():
        outcome["serve"] = psgrad.serve(config=config, port=0, port_file=port_file, no_metrics=True,
                                        save=tmp_path / "served.psgrad", token="python-test")

    server = threading.Thread(target=serve)
    server.start()
    # The port file appears once the server listens; the server ends on its own if it cannot start.
    while not port_file.exists() and server.is_alive():
        time.sleep(0.05)
    assert port_file.exists(), "the server ended before it listened"
    address = json.loads(port_file.read_text().splitlines()[0])
    workers = [threading.Thread(target=lambda: psgrad.work(connect=f"{address['host']}:{address['port']}",
                                                           token="python-test", quiet=True))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers + [server]:
        worker.join()

    served = psgrad.load(tmp_path / "served.psgrad")
    local = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev))
    # A sync run computes the same weights in one process or over the network.
    assert all(numpy.array_equal(served.weights()[name], array) for name, array in local.model.weights().items())
    # And serve returns what train returns: the records, the summary and the model, with no metrics file left.
    result = outcome["serve"]
    assert isinstance(result, psgrad.TrainResult)
    assert result.weights_hash == local.weights_hash
    assert result.accuracy == local.accuracy
    assert [record["iteration"] for record in result.records] == [record["iteration"] for record in local.records]
    assert [record["dev_accuracy"] for record in result.records] == [record["dev_accuracy"] for record in local.records]
    assert result.records[-1]["final"] and result.summary["steps"] == local.summary["steps"]
    assert all(numpy.array_equal(result.model.weights()[name], array) for name, array in local.model.weights().items())
    assert not list(tmp_path.glob("runs"))


def test_keyword_arguments_become_the_command_lines_options(tmp_path):
    arguments = psgrad.roles.command_arguments(
        {"port_file": tmp_path / "p.json", "retry": True, "quiet": False, "token": None, "set": ["a.b=1", "c.d=2"],
         "port": 0})
    assert arguments == ["--port-file", str(tmp_path / "p.json"), "--retry", "--set", "a.b=1", "--set", "c.d=2",
                         "--port", "0"]


def test_launch_passes_its_hostfile_on(tmp_path, capfd):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("localhost workers=2\n")
    config = tmp_path / "run.toml"
    config.write_text(CONFIG)
    assert psgrad.launch(hostfile=hostfile, config=config, dry_run=True) is None  # nothing ran
    assert str(config) in capfd.readouterr().out


def test_launch_trains_on_arrays_and_returns_what_train_returns(float_digits, tmp_path):
    # The arrays become one data file that every role on this machine reads: the server and both workers.
    x, y, x_dev, y_dev = float_digits
    hostfile = tmp_path / "hosts"
    hostfile.write_text("localhost workers=2\n")
    config = tmp_path / "run.toml"
    config.write_text(CONFIG)
    launched = psgrad.launch(hostfile=hostfile, config=config, X=x, y=y, dev=(x_dev, y_dev))
    local = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev))
    assert isinstance(launched, psgrad.TrainResult)
    assert launched.weights_hash == local.weights_hash
    assert launched.accuracy == local.accuracy
    assert [record["dev_accuracy"] for record in launched.records] == [record["dev_accuracy"] for record in local.records]
    numpy.testing.assert_array_equal(launched.model.predict(x_dev), local.model.predict(x_dev))


def test_serve_takes_pixels_as_train_does(digits, tmp_path):
    # uint8 pixels are divided by 255 as psgrad.train divides them, whatever data.scale the config gives.
    x, y, x_dev, y_dev = digits
    config = tmp_path / "run.toml"
    config.write_text(CONFIG.replace("num_workers = 2", "num_workers = 1"))
    port_file = tmp_path / "port.json"
    outcome = {}
    server = threading.Thread(target=lambda: outcome.update(result=psgrad.serve(
        X=x, y=y, dev=(x_dev, y_dev), config=config, port=0, port_file=port_file, token="python-test")))
    server.start()
    while not port_file.exists() and server.is_alive():
        time.sleep(0.05)
    assert port_file.exists(), "the server ended before it listened"
    address = json.loads(port_file.read_text().splitlines()[0])
    assert psgrad.work(connect=f"{address['host']}:{address['port']}", token="python-test", quiet=True) == 0
    server.join()
    local = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev), workers=1)
    assert outcome["result"].weights_hash == local.weights_hash
