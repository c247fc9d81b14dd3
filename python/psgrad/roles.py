"""The multi-process roles, serve, work and launch, as processes of the psgrad command line.

They run as child processes rather than in the Python process: each role watches SIGINT and SIGTERM
on a thread of its own from its start (blocking them everywhere else), ends the process at once on a
second signal, and `launch` forwards signals to the processes it starts. Inside Python that would take
Ctrl-C away from the interpreter and could end it mid-script. A child process keeps the command line's
behaviour exactly, and Ctrl-C still stops the role cleanly: it is passed on as SIGINT.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import Any, List, Mapping, Optional, Sequence

from . import _core


def installed_command_line() -> Optional[str]:
    """<prefix>/bin/psgrad beside an installed package (<prefix>/lib/python3*/dist-packages/psgrad)."""
    package = os.path.dirname(os.path.realpath(__file__))
    parts = package.split(os.sep)
    if len(parts) < 5 or parts[-2] != "dist-packages" or not parts[-3].startswith("python3") or parts[-4] != "lib":
        return None
    return os.path.join(os.sep.join(parts[:-4]) or os.sep, "bin", "psgrad")


def command_line() -> str:
    """The psgrad binary the roles run: $PSGRAD_BINARY, else the one installed beside this package,
    else the one built with it."""
    path = os.environ.get("PSGRAD_BINARY") or installed_command_line() or _core.command_line
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise _core.Error(
            f"{path}: the psgrad command line is not there; build it (cmake --build build --target psgrad) "
            "or set PSGRAD_BINARY"
        )
    return path


def command_arguments(options: Mapping[str, Any]) -> List[str]:
    """Keyword arguments as the command line's options: port_file="p" -> --port-file p, True -> a flag,
    False or None -> left out, a list -> the option once per item (set=["a.b=1", ...])."""
    arguments: List[str] = []
    for name, value in options.items():
        option = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            arguments.append(option)
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            arguments += [option, os.fspath(item) if isinstance(item, os.PathLike) else str(item)]
    return arguments


def run_role(command: str, options: Mapping[str, Any], positional: Sequence[str] = ()) -> int:
    """Runs `psgrad <command> <options>` to its end, its output passed through; returns its exit code 0.

    A refusal (exit code 2) raises psgrad.InputError, any other failure psgrad.Error, each with the last
    line the role printed. KeyboardInterrupt stops the role as Ctrl-C does (it saves its run), waits for
    it, and is raised again.
    """
    child = subprocess.Popen(
        [command_line(), command, *positional, *command_arguments(options)], stderr=subprocess.PIPE, text=True,
        errors="replace"
    )
    last_line: List[Optional[str]] = [None]

    def relay_errors() -> None:
        for line in child.stderr:  # type: ignore[union-attr]
            sys.stderr.write(line)
            sys.stderr.flush()
            if line.strip():
                last_line[0] = line.strip()

    relay = threading.Thread(target=relay_errors, daemon=True)
    relay.start()
    try:
        code = child.wait()
    except KeyboardInterrupt:
        # A terminal's Ctrl-C reached the child too; the role counts the two as one request.
        child.send_signal(signal.SIGINT)
        child.wait()
        relay.join()
        raise
    relay.join()
    if code == 0:
        return code
    if code < 0:
        raise _core.Error(f"psgrad {command} ended by signal {-code}")
    message = last_line[0] or f"psgrad {command} exited with code {code}"
    raise (_core.InputError if code == 2 else _core.Error)(message)
