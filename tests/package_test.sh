#!/usr/bin/env bash
# Installing psgrad as a Debian tool: `cmake --install` into a prefix, and the Debian package `cpack -G
# DEB` makes, inspected, installed with apt (root: the test installs it on this machine and removes it,
# also when it fails), used from PATH and from Debian's /usr/bin/python3 without PYTHONPATH, removed.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build_dir=$(realpath "$1")
source_dir=$(realpath "$2")
work_dir=$(mktemp -d)
installed_here=false
cleanup() {
  $installed_here && DEBIAN_FRONTEND=noninteractive apt-get remove -y psgrad >/dev/null 2>&1
  rm -rf "$work_dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}
short_run=(train --set training.iterations=5 --set evaluation.frequency=5 --no-metrics)

# cmake --install into a prefix of its own: the binary, the Python package for Debian's python3 of that
# prefix, the configs; the package finds the binary installed beside it.
prefix="$work_dir/prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work_dir/install.log" 2>&1 || fail "cmake --install failed"
site=$(ls -d "$prefix"/lib/python3.*/dist-packages) || fail "no Python package under $prefix/lib"
for file in bin/psgrad share/psgrad/configs/mnist.toml share/psgrad/examples/tutorial.py; do
  [ -e "$prefix/$file" ] || fail "cmake --install did not install $file"
done
"$prefix/bin/psgrad" --version | grep -q "^psgrad " || fail "the installed psgrad --version"
"$prefix/bin/psgrad" "${short_run[@]}" --config "$prefix/share/psgrad/configs/mnist.toml" >"$work_dir/prefix-run.log" 2>&1 ||
  fail "a short run of the installed binary with its installed config"
(cd / && PYTHONPATH="$site" /usr/bin/python3 -c "import psgrad.roles; print(psgrad.__file__); print(psgrad.roles.command_line())") \
  >"$work_dir/prefix-python.log" 2>&1 || fail "import psgrad from $site"
[ "$(sed -n 2p "$work_dir/prefix-python.log")" = "$prefix/bin/psgrad" ] ||
  fail "the installed package does not run the installed binary: $(cat "$work_dir/prefix-python.log")"

# The Debian package: named as Debian names them, its Depends the runtime libraries it links.
(cd "$build_dir" && cpack -G DEB -B "$work_dir/package") >"$work_dir/cpack.log" 2>&1 || fail "cpack -G DEB failed"
deb=$(ls "$work_dir"/package/psgrad_*_"$(dpkg --print-architecture)".deb) || fail "no psgrad_<version>_<arch>.deb"
dpkg-deb -I "$deb" >"$work_dir/info.log" || fail "dpkg-deb -I"
depends=$(sed -n 's/^ Depends: //p' "$work_dir/info.log")
for package in libcaf-core0.17 libcaf-io0.17 libcaf-openssl0.17 libzip4 libcsv3 liblz4-1 libfmt9 python3-numpy; do
  [[ ", $depends," == *", $package"[\ ,]* ]] || fail "Depends does not name $package: $depends"
done
dpkg-deb -c "$deb" | awk '{print $6}' >"$work_dir/contents.log"
for file in ./usr/bin/psgrad ./usr/lib/python3/dist-packages/psgrad/__init__.py ./usr/share/psgrad/configs/mnist.toml; do
  grep -qx "$file" "$work_dir/contents.log" || fail "the package does not hold $file"
done
grep -q "_core.cpython-.*\.so$" "$work_dir/contents.log" || fail "the package does not hold the Python module"

# Installed with apt on this machine, used, removed.
if [ "$(id -u)" -ne 0 ]; then
  [ "${CI:-}" = true ] && fail "cannot run under CI=true: installing the package needs root"
  echo "SKIP: installing the package needs root"; exit 77
fi
dpkg -s psgrad >/dev/null 2>&1 && fail "a psgrad package is installed on this machine already; remove it first"
installed_here=true
DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb" >"$work_dir/apt.log" 2>&1 || fail "apt-get install $deb"
[ "$(cd / && command -v psgrad)" = /usr/bin/psgrad ] || fail "psgrad is not on PATH as /usr/bin/psgrad"
(cd "$work_dir" && env -u PYTHONPATH psgrad "${short_run[@]}" --config /usr/share/psgrad/configs/mnist.toml) \
  >"$work_dir/deb-run.log" 2>&1 || fail "a short run of the packaged psgrad"
(cd / && env -u PYTHONPATH /usr/bin/python3 -c "import psgrad.roles; print(psgrad.__file__); print(psgrad.roles.command_line())") \
  >"$work_dir/deb-python.log" 2>&1 || fail "import psgrad in /usr/bin/python3 without PYTHONPATH"
[ "$(cat "$work_dir/deb-python.log")" = $'/usr/lib/python3/dist-packages/psgrad/__init__.py\n/usr/bin/psgrad' ] ||
  fail "not the packaged psgrad: $(cat "$work_dir/deb-python.log")"
DEBIAN_FRONTEND=noninteractive apt-get remove -y psgrad >"$work_dir/remove.log" 2>&1 || fail "apt-get remove psgrad"
installed_here=false
for path in /usr/bin/psgrad /usr/lib/python3/dist-packages/psgrad /usr/share/psgrad /usr/share/doc/psgrad; do
  [ -e "$path" ] && fail "apt-get remove psgrad left $path behind"
done
echo "ok"
