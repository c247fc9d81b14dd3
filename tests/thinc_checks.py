"""What the comparisons with real Thinc share (tests/thinc_*_test.py): skipping where Thinc is missing (a
failure under CI=true), the relative error in norm, and running each case in a folder of its own."""
import os
import sys
import tempfile
import zlib
from pathlib import Path


def skip(reason):
    if os.environ.get("CI") == "true":
        print(f"FAIL: cannot run under CI=true: {reason}")
        sys.exit(1)
    print(f"SKIP: {reason}")
    sys.exit(77)


def require_thinc():
    try:
        import numpy  # noqa: F401
        import thinc  # noqa: F401
    except ImportError as error:
        skip(f"python3-thinc is not installed ({error}); scripts/setup.sh --test installs it")


def case_seed(name):
    """A case's draws: the same in every run (Python's own str hash changes from process to process), other
    draws with THINC_CHECK_SALT set. Over a few hundred salts, about one draw in 200 to 400 exceeds 1e-5
    somewhere: a bias gradient whose column sum nearly cancels, or a LayerNorm row whose Relu units are
    all but one at 0 (LayerNorm divides by sqrt(variance + 1e-8)). There float32 rounding differs between
    any two implementations by more than 1e-5 of a small norm; the fixed draws keep each run the same."""
    return zlib.crc32((name + os.environ.get("THINC_CHECK_SALT", "")).encode())


def relative_error(ours, theirs):
    """|ours - theirs| / |theirs|, in norm, in double."""
    import numpy
    scale = max(float(numpy.linalg.norm(theirs)), 1e-12)
    return float(numpy.linalg.norm(ours.astype("float64") - theirs.astype("float64"))) / scale


def run_cases(cases, run_case, dump):
    """run_case(name, text, dump, folder) -> problems, for each case; prints them; the exit code."""
    problems = []
    with tempfile.TemporaryDirectory() as temporary:
        for index, (name, text) in enumerate(cases.items()):
            folder = Path(temporary) / str(index)
            folder.mkdir()
            try:
                problems += run_case(name, text, dump, folder)
            except Exception as error:  # Thinc refused the case: a defect of the case, said as one
                problems.append(f"{name}: Thinc: {type(error).__name__}: {str(error).strip()}")
    for problem in problems:
        print(problem)
    print(f"{len(cases)} cases, {len(problems)} problems")
    return 1 if problems else 0


def compared(name, checks, tolerance):
    """Problems of (what, ours, Thinc's) arrays: another shape, or a relative error beyond tolerance.
    Prints the case's line."""
    problems = []
    for what, mine, theirs in checks:
        if mine.shape != theirs.shape:
            problems.append(f"{name}: {what}: shape {mine.shape} vs Thinc's {theirs.shape}")
        elif not relative_error(mine, theirs) <= tolerance:
            problems.append(f"{name}: {what}: relative error {relative_error(mine, theirs):.2e} > {tolerance}")
    print(f"{'ok ' if not problems else 'BAD'} {name}: {len(checks)} arrays compared")
    return problems
