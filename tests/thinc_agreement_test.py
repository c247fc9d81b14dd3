"""Thinc's own Config().from_str and psgrad's Thinc reader give the same values for the same configs.

Reads configs/tutorial.cfg, tests/data/thinc/*.cfg and what `psgrad config show --format cfg` writes
with Thinc (interpolate=True) and with tests/thinc_config_dump.cpp, and compares the two trees value by
value: the same keys, the same types (an integer is not a float, a boolean not an integer) and the same
values. A few texts both must refuse. Where python3-thinc is not installed, says so and exits 77
(skipped); under CI=true that fails instead.

Usage: python3 thinc_agreement_test.py THINC_CONFIG_DUMP PSGRAD SOURCE_DIR
"""
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# A TOML config whose strings Thinc's format must quote with care: '$', quotes, backslashes, and text
# that would read as a number, a boolean or a list.
UNUSUAL_TOML = r'''
[training]
checkpoint_path = 'C:\runs\"best"\${x}$$.bin'
seed = 9223372036854775807
[model]
"@layers" = "mlp.v1"
widths = [300, 100, 7]
dropout = 0.30000000000000004
[optimizer]
"@optimizers" = "Adam.v1"
[optimizer.learn_rate]
"@schedules" = "warmup_linear.v1"
initial_rate = 1e-300
warmup_steps = 20
total_steps = 200
[data]
path = "1.5"
dev_path = "true"
[cluster]
join_token = "[1, 2]"
host = "tab\there\nnewline \u00e9"
'''

# Texts Thinc refuses; psgrad's reader must refuse them too.
REFUSED = {
    "a sub-section without its parent": "[a.b]\nx = 1\n",
    "a reference to a missing key": "[a]\nx = ${b.y}\n[b]\nz = 1\n",
    "a key written twice": "[a]\nx = 1\nx = 2\n",
    "a lone dollar sign": "[a]\nx = costs $5\n",
    "a whole section inside a string": "[a]\nx = \"see ${b}\"\n[b]\ny = 1\n",
    "keys that refer to each other": "[a]\nx = ${a.y}\ny = ${a.x}\n",
    "a key outside any section": "x = 1\n[a]\ny = 2\n",
    "a positional section without its parent": "[a.*.b]\nx = 1\n",
    "a line without '='": "[a]\nlonely\n",
    "a value in [DEFAULT]": "[DEFAULT]\nx = 1\n[a]\ny = 2\n",
}


def skip(reason):
    if os.environ.get("CI") == "true":
        print(f"FAIL: cannot run under CI=true: {reason}")
        sys.exit(1)
    print(f"SKIP: {reason}")
    sys.exit(77)


def differences(thinc, psgrad, path="config"):
    """Where the two trees differ, as "path: what Thinc has vs what psgrad has" lines."""
    if type(thinc) is not type(psgrad):
        return [f"{path}: {thinc!r} ({type(thinc).__name__}) vs {psgrad!r} ({type(psgrad).__name__})"]
    if isinstance(thinc, dict):
        found = []
        for key in sorted(set(thinc) | set(psgrad)):
            if key not in thinc or key not in psgrad:
                found.append(f"{path}.{key}: only {'Thinc' if key in thinc else 'psgrad'} has it")
            else:
                found += differences(thinc[key], psgrad[key], f"{path}.{key}")
        return found
    if isinstance(thinc, list):
        if len(thinc) != len(psgrad):
            return [f"{path}: {len(thinc)} elements vs {len(psgrad)}"]
        return [line for i, (a, b) in enumerate(zip(thinc, psgrad)) for line in differences(a, b, f"{path}[{i}]")]
    if isinstance(thinc, float) and math.isnan(thinc) and math.isnan(psgrad):
        return []
    return [] if thinc == psgrad else [f"{path}: {thinc!r} vs {psgrad!r}"]


def read_with_psgrad(dump, path):
    run = subprocess.run([dump, str(path)], capture_output=True, text=True, timeout=60)
    if run.returncode == 0:
        return json.loads(run.stdout), None
    return None, run.stderr.strip()


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    dump, psgrad, source_dir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    try:
        from thinc.api import Config
    except ImportError:
        skip("python3-thinc not installed (Debian: apt-get install python3-thinc)")
    work = tempfile.TemporaryDirectory()
    configs = [source_dir / "configs" / "tutorial.cfg", source_dir / "configs" / "mnist-thinc-layers.cfg"]
    configs += sorted((source_dir / "tests" / "data" / "thinc").glob("*.cfg"))
    (Path(work.name) / "unusual.toml").write_text(UNUSUAL_TOML, encoding="utf8")
    for name, config in [("shown-mnist.cfg", source_dir / "configs" / "mnist.toml"),
                         ("shown-thinc-layers.cfg", source_dir / "configs" / "mnist-thinc-layers.cfg"),
                         ("shown-unusual.cfg", Path(work.name) / "unusual.toml")]:
        shown = subprocess.run([psgrad, "config", "show", str(config), "--format", "cfg"], capture_output=True,
                               text=True, timeout=60, check=True)
        (Path(work.name) / name).write_text(shown.stdout, encoding="utf8")
        configs.append(Path(work.name) / name)
    failures = 0
    for path in configs:
        expected = Config().from_str(path.read_text(encoding="utf8"), interpolate=True)
        got, error = read_with_psgrad(dump, path)
        if error is not None:
            print(f"FAIL: {path.name}: Thinc reads it, psgrad refuses it: {error}")
            failures += 1
            continue
        found = differences(json.loads(json.dumps(expected)), got)
        for line in found:
            print(f"FAIL: {path.name}: {line}")
        failures += bool(found)
        if not found:
            print(f"ok: {path.name}: the same {sum(1 for _ in walk(expected))} values")
    with work:
        for name, text in REFUSED.items():
            try:
                Config().from_str(text, interpolate=True)
                thinc_refuses = False
            except Exception:  # Thinc raises configparser's errors as well as its own
                thinc_refuses = True
            path = Path(work.name) / "refused.cfg"
            path.write_text(text, encoding="utf8")
            got, error = read_with_psgrad(dump, path)
            if not thinc_refuses or error is None or "\n" in error:
                psgrad_gives = repr(error) if error is not None else json.dumps(got)
                print(f"FAIL: {name}: Thinc {'refuses' if thinc_refuses else 'reads'} it, psgrad gives {psgrad_gives}")
                failures += 1
            else:
                print(f"ok: {name}: both refuse it; psgrad: {error}")
    return 1 if failures else 0


def walk(tree):
    """Every leaf value of a tree."""
    if isinstance(tree, dict):
        for value in tree.values():
            yield from walk(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from walk(value)
    else:
        yield tree


if __name__ == "__main__":
    sys.exit(main())
