#!/usr/bin/env bash
# The tutorial's experiment: synchronous, then asynchronous parameter-server training on real MNIST
# digits, 2 workers, 200 iterations, evaluation every 10.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh  # only what building and training need: no test tools, no peers
psgrad=${PSGRAD_BUILD_DIR:-build}/apps/psgrad
"$psgrad" train --config configs/mnist.toml --mode sync "$@"
echo
"$psgrad" train --config configs/mnist.toml --mode async "$@"
