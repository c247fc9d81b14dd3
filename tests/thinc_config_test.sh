#!/usr/bin/env bash
# configs/tutorial.cfg, the tutorial's CONFIG string in Thinc's format, end to end on the built binary.
# Usage: thinc_config_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$(realpath "$1")
source_dir=$(realpath "$2")
scenario=$3
tutorial="$source_dir/configs/tutorial.cfg"
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}
cd "$work_dir" || exit 1
fail() {
  echo "FAIL: $*"
  for f in "$work_dir"/*.out "$work_dir"/*.err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
  exit 1
}

case "$scenario" in
  tutorial-matches-mnist)
    # The same experiment in both formats: the same seed-0 sync run, to the last bit of the weights.
    "$psgrad" train --config "$tutorial" --no-metrics >tutorial.out 2>tutorial.err ||
      fail "train --config tutorial.cfg failed"
    "$psgrad" train --config "$source_dir/configs/mnist.toml" --no-metrics >mnist.out 2>mnist.err ||
      fail "train --config mnist.toml failed"
    tutorial_hash=$(grep '^final weights: ' tutorial.out)
    [ -n "$tutorial_hash" ] || fail "the tutorial.cfg run printed no final weights line"
    [ "$tutorial_hash" = "$(grep '^final weights: ' mnist.out)" ] ||
      fail "tutorial.cfg and mnist.toml trained to other weights"
    grep -q "note: .*/tutorial.cfg: ray.num_cpus, ray.object_store_memory ignored" tutorial.err ||
      fail "no note of the ignored [ray] keys"
    # The README's seed-0 sync example is this run, when the data is the README's.
    readme_hash=$(grep -m1 '^final weights: ' "$source_dir/README.md")
    [ "$tutorial_hash" = "$readme_hash" ] ||
      fail "tutorial.cfg trained to \"$tutorial_hash\", the README says \"$readme_hash\""
    # --set works on it as on TOML, and so does a flag.
    "$psgrad" train --config "$tutorial" --set training.iterations=3 --set evaluation.frequency=1 --workers 1 \
      --no-metrics >short.out 2>short.err || fail "train --config tutorial.cfg --set ... failed"
    grep -q '^sync summary: workers 1, steps 3,' short.out ||
      fail "--workers 1 or training.iterations=3 did not reach the run"
    # Evaluations at iterations 0, 1 and 2, then the final one (every 10 would be 0 and the final one).
    [ "$(grep -c $'\taccuracy: ' short.out)" -eq 4 ] ||
      fail "--set evaluation.frequency=1 did not evaluate every iteration"
    echo "ok: $tutorial_hash"
    ;;
  show-cfg)
    # config show --format cfg prints the full config in Thinc's format, which reads back as the same.
    "$psgrad" config show "$tutorial" --format cfg --set training.iterations=20 >shown.cfg 2>show.err ||
      fail "config show --format cfg failed"
    grep -qx 'iterations = 20' shown.cfg && grep -qx '@layers = "relu_relu_softmax.v1"' shown.cfg ||
      fail "config show --format cfg did not write Thinc's format with the --set value"
    grep -qx 'num_workers = 2' shown.cfg || fail "ray.num_workers did not become cluster.num_workers"
    grep -q '^\[ray\]' shown.cfg && fail "the [ray] section was written back"
    "$psgrad" config check shown.cfg >check.out 2>check.err || fail "config check refused config show's cfg output"
    grep -qx "shown.cfg: ok" check.out || fail "config check did not print 'shown.cfg: ok'"
    "$psgrad" config show shown.cfg --format cfg >reshown.cfg || fail "config show of its own cfg output failed"
    diff shown.cfg reshown.cfg >/dev/null || fail "config show --format cfg output does not re-read to the same config"
    "$psgrad" config show shown.cfg >shown.toml &&
      "$psgrad" config show "$tutorial" --set training.iterations=20 >direct.toml || fail "config show as TOML failed"
    diff shown.toml direct.toml >/dev/null || fail "the cfg output and the tutorial give other TOML"
    # A bad value: one line naming the file, the line and the key.
    printf '[training]\niterations = 200\nbatch_size = 0\n' >bad.cfg
    "$psgrad" config check bad.cfg >bad.out 2>bad.err && fail "batch_size = 0 was accepted"
    [ "$(wc -l <bad.err)" -eq 1 ] && grep -q '^bad.cfg:3: training.batch_size: expected an integer' bad.err ||
      fail "expected one line naming bad.cfg:3 and the key: $(cat bad.err)"
    "$psgrad" config show "$tutorial" --format yaml >/dev/null 2>yaml.err && fail "--format yaml was accepted"
    echo "ok"
    ;;
  *)
    echo "unknown scenario: $scenario"
    exit 2
    ;;
esac
