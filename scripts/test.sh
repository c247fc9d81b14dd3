#!/usr/bin/env bash
# Builds psgrad with the test tools (scripts/setup.sh --test) and runs the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
ctest --test-dir "${PSGRAD_BUILD_DIR:-build}" --output-on-failure -j 2 --timeout 300
