#!/usr/bin/env bash
# Runs pytest on the Python package's tests with Debian's interpreter and the package of this build.
# Where the interpreter, pytest, numpy or the built module is missing, says which and exits 77 (CTest's
# skip); under CI=true that fails instead, so a green CI run means the tests ran.
# Usage: run_pytest.sh BUILD_DIR SOURCE_DIR [pytest arguments...]
set -uo pipefail
build_dir=$1 source_dir=$2
shift 2
python=/usr/bin/python3

missing=""
if [ ! -x "$python" ]; then
  missing="$python (Debian's python3)"
elif ! "$python" -c "import pytest" 2>/dev/null; then
  missing="pytest for $python (Debian: python3-pytest)"
elif ! "$python" -c "import numpy" 2>/dev/null; then
  missing="numpy for $python (Debian: python3-numpy)"
elif ! compgen -G "$build_dir/python/psgrad/_core*.so" >/dev/null; then
  missing="the module $build_dir/python/psgrad/_core (Debian: pybind11-dev python3-dev, then configure again)"
fi
if [ -n "$missing" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "cannot run under CI=true: missing $missing; CI must give this test what it needs"
    exit 1
  fi
  echo "skipped: missing $missing"
  exit 77
fi

# No bytecode or pytest cache in the source tree.
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$build_dir/python" PSGRAD_BUILD_DIR="$build_dir"
export PSGRAD_BINARY="$build_dir/apps/psgrad"
cd "$source_dir/tests/python" && exec "$python" -m pytest -q -p no:cacheprovider "$@"
