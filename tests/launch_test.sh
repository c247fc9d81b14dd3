#!/usr/bin/env bash
# `psgrad launch` with local processes: roles start once the server's port file says where it listens,
# stream their output prefixed with host and role, stop together on Ctrl-C, and bad input gets one
# clear line; `psgrad serve --port-file` on its own.
# Usage: launch_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$1
source_dir=$2
scenario=$3
config="$source_dir/configs/mnist.toml"
work_dir=$(mktemp -d)
export PSGRAD_DATA=${PSGRAD_DATA:-$source_dir/data}

# Under CI (CI=true) nothing may be skipped: a missing root, tool or capability fails the test.
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL: cannot run under CI=true: $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
fail() { echo "FAIL: $*"; for f in "$work_dir"/*.log "$work_dir"/*.out; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work_dir"' EXIT

# Every psgrad process whose parent is the given pid.
children_of() { pgrep -P "$1" 2>/dev/null || true; }

case "$scenario" in
  local)
    cd "$work_dir"
    printf 'localhost workers=1\n127.0.0.1   # a second worker\n' >"$work_dir/hosts"
    # A worker delay keeps the run going long enough to read every role's command line.
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --set training.iterations=30 \
      --set cluster.worker_delay_ms=10 --trace run-trace.json --save run.psgrad --metrics run.jsonl \
      >"$work_dir/launch.out" 2>"$work_dir/launch.log" & launch=$!
    # While it runs, no process of the run shows its join token on a command line.
    touch "$work_dir/cmdlines.out"
    while kill -0 $launch 2>/dev/null; do
      for pid in $(children_of $launch); do
        { echo -n "$pid: "; tr '\0' ' ' </proc/$pid/cmdline; echo; } >>"$work_dir/cmdlines.out" 2>/dev/null
      done
      sleep 0.02
    done
    wait $launch || fail "launch exited with code $?"
    [ "$(grep -- "--launched" "$work_dir/cmdlines.out" | sort -u | wc -l)" -ge 3 ] ||
      fail "did not see the 3 roles' command lines: $(sort -u "$work_dir/cmdlines.out")"
    grep -q -- "--token" "$work_dir/cmdlines.out" && fail "a join token on a command line"
    grep -q "^\[localhost server\] sync summary: workers 2, steps 30" "$work_dir/launch.out" ||
      fail "no summary from the server, prefixed with host and role"
    grep -qP "^\[localhost server\] 10\taccuracy" "$work_dir/launch.out" || fail "progress lines not streamed"
    # Each worker is labelled with the index the server gave it, whichever joined first.
    joined=$(grep -P "^\[(localhost|127\.0\.0\.1) worker \d\] psgrad work: joined 127\.0\.0\.1:\d+ as worker \d of 2" "$work_dir/launch.log")
    [ "$(echo "$joined" | grep -c .)" -eq 2 ] || fail "expected a prefixed joined line from each worker: $joined"
    echo "$joined" | grep -vP "^\[\S+ worker (\d)\] .* as worker \1 of 2" && fail "a worker's label disagrees with its index"
    [ "$(echo "$joined" | sed 's/.* as worker \([0-9]\) of.*/\1/' | sort | tr -d '\n')" = "01" ] || fail "not workers 0 and 1: $joined"
    grep -qP "^\[(localhost|127\.0\.0\.1) worker [01]\] psgrad work: training finished" "$work_dir/launch.log" ||
      fail "the workers' later lines lost their label"
    # --trace and --save reach the server, relative to the folder launch ran in.
    [ -s run-trace.json ] || fail "launch --trace wrote no trace"
    [ -s run.psgrad ] || fail "launch --save wrote no model"
    grep -q '"type":"summary"' run.jsonl || fail "launch --metrics: the server's metrics file has no summary"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --metrics m.jsonl --no-metrics --dry-run \
      >"$work_dir/both.out" 2>"$work_dir/both.err" && fail "launch took --metrics with --no-metrics"
    [ "$(wc -l <"$work_dir/both.err")" -eq 1 ] || fail "not one line for --metrics with --no-metrics: $(cat "$work_dir/both.err")"
    grep -q "^\[localhost server\] psgrad: trace in $PWD/run-trace.json" "$work_dir/launch.log" ||
      fail "the server did not name the trace it wrote"
    # A launched sync run gives the same weights as one process.
    "$psgrad" train --config "$config" --set training.iterations=30 --no-metrics >"$work_dir/local.out" 2>/dev/null ||
      fail "local run failed"
    diff <(sed -n 's/^\[localhost server\] \(final weights: .*\)/\1/p' "$work_dir/launch.out") \
      <(grep "^final weights: " "$work_dir/local.out") || fail "the launched run's weights differ from one process"
    ;;
  local-shards)
    printf 'localhost workers=2 shards=1\n' >"$work_dir/hosts"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --set training.iterations=20 --set cluster.mode=async \
      >"$work_dir/launch.out" 2>"$work_dir/launch.log" || fail "launch exited with code $?"
    grep -q "^\[localhost server\] async summary: workers 2, steps 40" "$work_dir/launch.out" || fail "no async summary"
    grep -q "^\[localhost shard 1\] psgrad shard: serving shard 1 of 2" "$work_dir/launch.log" || fail "no shard process"
    ;;
  interrupted)
    printf 'localhost workers=2\n' >"$work_dir/hosts"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --set training.iterations=100000 \
      --set training.checkpoint_path="$work_dir/run.ckpt" >"$work_dir/launch.out" 2>"$work_dir/launch.log" & launch=$!
    for _ in $(seq 200); do grep -qP "\t accuracy|\taccuracy" "$work_dir/launch.out" && break; sleep 0.05; done
    roles=$(children_of $launch)
    [ "$(echo $roles | wc -w)" -eq 3 ] || fail "expected 3 role processes, saw: $roles"
    started=$(date +%s%N)
    kill -INT $launch
    wait $launch; code=$?
    took=$(( ($(date +%s%N) - started) / 1000000 ))
    echo "launch stopped $took ms after Ctrl-C"
    [ "$code" -eq 130 ] || fail "exit code $code after Ctrl-C; expected 130"
    for pid in $roles; do kill -0 "$pid" 2>/dev/null && fail "role process $pid still runs"; done
    [ -s "$work_dir/run.ckpt" ] || fail "the server did not save the run"
    [ "$took" -lt 10000 ] || fail "stopping took $took ms"
    # The hint names the launch, and works as printed: the checkpoint holds the config and its --set.
    hint=$(sed -n 's/^\[localhost server\] psgrad: interrupted; resume with: //p' "$work_dir/launch.log")
    [[ "$hint" == "$psgrad launch --hostfile "*" --resume "* ]] || fail "the resume hint is not a launch command: $hint"
    steps=$(sed -n 's/.*checkpoint at iteration \([0-9]*\) written.*/\1/p' "$work_dir/launch.log" | tail -n 1)
    eval "$hint --set training.iterations=$((steps + 3)) --no-metrics" \
      >"$work_dir/resumed.out" 2>"$work_dir/resumed.log" || fail "the printed launch --resume exited with $?"
    grep -q "steps 3," "$work_dir/resumed.out" || fail "the resumed launch did not make exactly the 3 remaining steps"
    ;;
  launch-killed)
    # A launch killed outright: its roles see their standard input end and stop by themselves.
    printf 'localhost workers=2\n' >"$work_dir/hosts"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --set training.iterations=100000 --no-metrics \
      --set training.checkpoint_path="$work_dir/run.ckpt" >"$work_dir/launch.out" 2>"$work_dir/launch.log" & launch=$!
    for _ in $(seq 200); do grep -qP "\taccuracy" "$work_dir/launch.out" && break; sleep 0.05; done
    roles=$(children_of $launch)
    [ "$(echo $roles | wc -w)" -eq 3 ] || fail "expected 3 role processes, saw: $roles"
    kill -KILL $launch
    wait $launch 2>/dev/null
    for _ in $(seq 100); do
      alive=0; for pid in $roles; do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ $alive -eq 0 ] && break; sleep 0.1
    done
    for pid in $roles; do kill -0 "$pid" 2>/dev/null && { kill -KILL $roles; fail "role $pid outlived its launch by 10 s"; }; done
    [ -s "$work_dir/run.ckpt" ] || fail "the orphaned server did not save the run"
    ;;
  bad-input)
    check_error() {  # expected-text hostfile-text
      printf "$2" >"$work_dir/hosts"
      "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" >"$work_dir/bad.out" 2>"$work_dir/bad.log" &&
        fail "hostfile '$2' was accepted"
      [ "$(wc -l <"$work_dir/bad.log")" -eq 1 ] || fail "expected one line for '$2', got: $(cat "$work_dir/bad.log")"
      grep -qF -- "$1" "$work_dir/bad.log" || fail "expected '$1', got: $(cat "$work_dir/bad.log")"
    }
    check_error "hosts:2: unknown field 'slots=4'; expected workers=N or shards=K" 'a\nb slots=4\n'
    check_error "hosts:1: workers=x is not a whole number 0..1024" 'a workers=x\n'
    check_error "hosts: no workers" 'lonely\n'
    check_error "the server's host localhost cannot be reached from node2" 'localhost\nnode2\n'
    "$psgrad" launch --hostfile "$work_dir/none" --config "$config" 2>"$work_dir/bad.log" && fail "a missing hostfile"
    grep -q "none: cannot open hostfile" "$work_dir/bad.log" || fail "missing hostfile not named: $(cat "$work_dir/bad.log")"
    # Remote hosts need ssh: without it on PATH, one line says so before anything starts.
    printf 'node1\nnode2\n' >"$work_dir/hosts"
    PATH=/nonexistent "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" 2>"$work_dir/bad.log" &&
      fail "launched remote hosts without ssh"
    grep -q "ssh not found on PATH" "$work_dir/bad.log" || fail "no word about ssh: $(cat "$work_dir/bad.log")"
    "$psgrad" launch --config "$config" 2>"$work_dir/bad.log" && fail "launch without --hostfile or --slurm"
    grep -q "give --hostfile FILE" "$work_dir/bad.log" || fail "no word about --hostfile"
    # A config the server refuses: the server's one line, prefixed, and a non-zero exit; no worker starts.
    printf 'localhost workers=2\n' >"$work_dir/hosts"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --set training.bogus=1 \
      >"$work_dir/bad.out" 2>"$work_dir/bad.log" && fail "a bad --set was accepted"
    grep -q "^\[localhost server\] psgrad: .*training.bogus" "$work_dir/bad.log" || fail "the server's reason not shown"
    grep -q "server on localhost failed (exit 2)" "$work_dir/bad.log" || fail "the failed role not named"
    grep -q "^\[localhost worker" "$work_dir/bad.log" && fail "workers started for a server that failed"
    ;;
  port-file)
    # serve --port-file: once it listens, one line of JSON with the port 0 picked, gone once it stops.
    "$psgrad" serve --config "$config" --port 0 --port-file "$work_dir/server.json" --workers 1 \
      --set training.iterations=10 --no-metrics >"$work_dir/serve.out" 2>"$work_dir/serve.log" & serve=$!
    for _ in $(seq 200); do [ -f "$work_dir/server.json" ] && break; sleep 0.05; done
    [ -f "$work_dir/server.json" ] || fail "no port file"
    [ "$(wc -l <"$work_dir/server.json")" -eq 1 ] || fail "the port file is not one line: $(cat "$work_dir/server.json")"
    port=$(sed -n 's/^{"host":"127\.0\.0\.1","port":\([0-9]*\)}$/\1/p' "$work_dir/server.json")
    [ -n "$port" ] && [ "$port" -gt 0 ] || fail "port file not as expected: $(cat "$work_dir/server.json")"
    grep -q "listening on 127.0.0.1:$port, waiting for 1 workers" "$work_dir/serve.log" ||
      fail "the port file's port $port is not the one serve listens on"
    "$psgrad" work --connect "127.0.0.1:$port" --quiet 2>"$work_dir/work.log" || fail "a worker could not join at port $port"
    wait $serve || fail "serve exited with code $?"
    [ -e "$work_dir/server.json" ] && fail "the port file outlived the server"
    ls "$work_dir"/server.json.* >/dev/null 2>&1 && fail "a temporary port file was left behind"
    # '-': the same line on standard output, among the run's own lines.
    "$psgrad" serve --config "$config" --port 0 --port-file - --workers 1 --set training.iterations=10 --no-metrics \
      >"$work_dir/stdout.out" 2>"$work_dir/stdout.log" & serve=$!
    for _ in $(seq 200); do grep -q '^{"host"' "$work_dir/stdout.out" && break; sleep 0.05; done
    port=$(sed -n 's/^{"host":"127\.0\.0\.1","port":\([0-9]*\)}$/\1/p' "$work_dir/stdout.out")
    [ -n "$port" ] || fail "no address line on standard output: $(cat "$work_dir/stdout.out")"
    "$psgrad" work --connect "127.0.0.1:$port" --quiet 2>"$work_dir/work.log" || fail "a worker could not join at port $port"
    wait $serve || fail "serve --port-file - exited with code $?"
    # A folder that is not there: one line, before any data is loaded.
    "$psgrad" serve --config "$config" --port 0 --port-file "$work_dir/none/server.json" >"$work_dir/bad.out" \
      2>"$work_dir/bad.log" && fail "a port file in a missing folder was accepted"
    [ "$(wc -l <"$work_dir/bad.log")" -eq 1 ] || fail "expected one line, got: $(cat "$work_dir/bad.log")"
    grep -q "^psgrad serve: --port-file: cannot write beside $work_dir/none/server.json" "$work_dir/bad.log" ||
      fail "the missing folder not named: $(cat "$work_dir/bad.log")"
    [ -s "$work_dir/bad.out" ] && fail "serve started a run: $(cat "$work_dir/bad.out")"
    # launch learns the port from that file, in a folder of its own that it removes at the end.
    mkdir "$work_dir/tmp"
    printf 'localhost workers=2\n' >"$work_dir/hosts"
    TMPDIR="$work_dir/tmp" "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --set training.iterations=10 \
      --no-metrics >"$work_dir/launch.out" 2>"$work_dir/launch.log" || fail "launch exited with code $?"
    grep -q "^\[localhost server\] sync summary: workers 2, steps 10" "$work_dir/launch.out" || fail "no summary"
    grep -q '"port"' "$work_dir/launch.out" && fail "the address line reached the launch's output"
    [ -z "$(ls -A "$work_dir/tmp")" ] || fail "launch left $(ls -A "$work_dir/tmp") behind"
    ;;
  resume-data-dir)
    # launch --data-dir hands every role the data folder (PSGRAD_DATA points nowhere here), and launch
    # --resume continues the checkpoint an earlier launch wrote: 20 steps, then the 5 up to 25.
    printf 'localhost workers=2\n' >"$work_dir/hosts"
    ckpt="$work_dir/run.ckpt"
    data=$PSGRAD_DATA
    for part in first resumed; do
      iterations=20 resume=()
      [ "$part" = resumed ] && iterations=25 resume=(--resume "$ckpt")
      PSGRAD_DATA="$work_dir/no-data-here" "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" \
        --data-dir "$data" --set training.iterations=$iterations --set training.checkpoint_path="$ckpt" "${resume[@]}" \
        --no-metrics >"$work_dir/$part.out" 2>"$work_dir/$part.log" || fail "$part launch exited with code $?"
    done
    grep -q "^\[localhost server\] sync summary: workers 2, steps 20" "$work_dir/first.out" || fail "the first run did not make 20 steps"
    grep -q "^\[localhost server\] sync summary: workers 2, steps 5," "$work_dir/resumed.out" ||
      fail "the resumed launch did not make exactly the 5 remaining steps"
    # The same 25 steps in one process end with the same weights.
    "$psgrad" train --config "$config" --set training.iterations=25 --no-metrics >"$work_dir/local.out" 2>/dev/null ||
      fail "local run failed"
    diff <(sed -n 's/^\[localhost server\] \(final weights: .*\)/\1/p' "$work_dir/resumed.out") \
      <(grep "^final weights: " "$work_dir/local.out") || fail "20 + 5 launched steps differ from 25 in one process"
    ;;
  remote-psgrad)
    # --remote-psgrad names the binary on the other hosts (ssh roles); local roles run this one.
    printf 'localhost\nnode1 workers=1\n127.0.0.1 workers=1\n' >"$work_dir/hosts"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --remote-psgrad /opt/psgrad-1/bin/psgrad \
      --dry-run >"$work_dir/dry.out" 2>"$work_dir/dry.log" && fail "a local server with a remote worker was accepted"
    printf 'head\nnode1 workers=1\n' >"$work_dir/hosts"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --remote-psgrad /opt/psgrad-1/bin/psgrad \
      --dry-run >"$work_dir/dry.out" 2>"$work_dir/dry.log" || fail "dry run failed"
    [ "$(grep -c "exec /opt/psgrad-1/bin/psgrad " "$work_dir/dry.out")" -eq 2 ] ||
      fail "the roles over ssh do not run the --remote-psgrad binary: $(cat "$work_dir/dry.out")"
    ;;
  dry-run)
    printf 'head\nnode1 workers=2\nnode2 shards=1 workers=0\n' >"$work_dir/hosts"
    "$psgrad" launch --hostfile "$work_dir/hosts" --config "$config" --ssh-option IdentityFile=/k --dry-run \
      >"$work_dir/dry.out" 2>"$work_dir/dry.log" || fail "dry run failed"
    [ "$(wc -l <"$work_dir/dry.out")" -eq 4 ] || fail "expected 4 roles"
    grep -q "^head server: ssh -T -o IdentityFile=/k -o BatchMode=yes .* -- head 'cd .* serve --config .* --bind 0.0.0.0 .*--set cluster.num_workers=2 --set cluster.servers=2 --remote-shards --resume-command .*launch --hostfile .* --launched'" \
      "$work_dir/dry.out" || fail "server command not as expected: $(head -1 "$work_dir/dry.out")"
    # A server over ssh gives its address on its standard output: the launch cannot read its files.
    grep -q "^head server: .* serve --config .* --port 0 --port-file - " "$work_dir/dry.out" ||
      fail "the remote server is not asked for its address on standard output: $(head -1 "$work_dir/dry.out")"
    grep -q "^node2 shard 1: .*shard --index 1 --connect head:0 --launched" "$work_dir/dry.out" || fail "no shard"
    [ "$(grep -c "^node1 worker: .*work --connect head:0 --launched" "$work_dir/dry.out")" -eq 2 ] || fail "no 2 workers"
    ;;
  slurm-roles)
    # Slurm's own scontrol expands the node list; it needs a slurm.conf, not a running controller.
    command -v scontrol >/dev/null || skip "no scontrol (apt-get install slurm-client)"
    printf 'ClusterName=psgrad\nSlurmctldHost=localhost\nNodeName=localhost CPUs=2\nPartitionName=p Nodes=localhost Default=YES\n' \
      >"$work_dir/slurm.conf"
    export SLURM_CONF="$work_dir/slurm.conf" SLURM_NTASKS=4 SLURM_JOB_ID=123456 SLURM_NODELIST='gpu[07-08],cpu1'
    for task in 0 1 3; do
      SLURM_PROCID=$task "$psgrad" launch --slurm --config "$config" --dry-run >>"$work_dir/roles.out" 2>"$work_dir/roles.log" ||
        fail "task $task: $(cat "$work_dir/roles.log")"
    done
    diff "$work_dir/roles.out" - <<'ROLES' || fail "roles not as expected"
0: server on gpu07:23456 for 3 workers
1: worker 0 of 3, joining gpu07:23456
3: worker 2 of 3, joining gpu07:23456
ROLES
    # A model with 2 table shards: tasks 1 and 2 hold them.
    tables_config="$source_dir/configs/debian-packages.toml"
    : >"$work_dir/tables.out"
    for task in 0 1 2 3; do
      SLURM_PROCID=$task "$psgrad" launch --slurm --config "$tables_config" --set cluster.servers=2 --dry-run \
        >>"$work_dir/tables.out" 2>"$work_dir/roles.log" || fail "task $task of a run with tables: $(cat "$work_dir/roles.log")"
    done
    diff "$work_dir/tables.out" - <<'ROLES' || fail "roles of a run with tables not as expected"
0: server on gpu07:23456 for 1 workers
1: table shard 0 of 2, joining gpu07:23456
2: table shard 1 of 2, joining gpu07:23456
3: worker 0 of 1, joining gpu07:23456
ROLES
    SLURM_PROCID=0 SLURM_NODELIST='' "$psgrad" launch --slurm --config "$config" 2>"$work_dir/bad.log" && fail "no node list accepted"
    grep -q "SLURM_NODELIST is not set" "$work_dir/bad.log" || fail "no word about SLURM_NODELIST"
    SLURM_PROCID=7 "$psgrad" launch --slurm --config "$config" 2>"$work_dir/bad.log" && fail "task 7 of 4 accepted"
    grep -q "SLURM_PROCID=7 is not below SLURM_NTASKS=4" "$work_dir/bad.log" || fail "no word about SLURM_PROCID"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
echo "PASS: $scenario"
