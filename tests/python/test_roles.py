# psgrad.serve and psgrad.work as processes of the command line: a served run the package's workers join.
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

    assert outcome["serve"] == 0
    served = psgrad.load(tmp_path / "served.psgrad")
    local = psgrad.train(CONFIG, x, y, dev=(x_dev, y_dev)).model
    # A sync run computes the same weights in one process or over the network.
    assert all(numpy.array_equal(served.weights()[name], array) for name, array in local.weights().items())


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
    assert psgrad.launch(hostfile=hostfile, config=config, dry_run=True) == 0
    assert str(config) in capfd.readouterr().out
