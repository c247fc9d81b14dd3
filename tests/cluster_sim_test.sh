#!/usr/bin/env bash
# The cluster simulator (scripts/cluster-sim.sh) on real network namespaces: a short run's summary, and
# that nothing it made is left behind, after a run and after Ctrl-C; `psgrad launch` over ssh between
# its hosts. Skips (exit 77) without root, `ip netns` or (for ssh) sshd.
# Usage: cluster_sim_test.sh PSGRAD_BINARY SOURCE_DIR SCENARIO
set -uo pipefail
psgrad=$1
source_dir=$2
scenario=$3
sim="$source_dir/scripts/cluster-sim.sh"
work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT

# Under CI (CI=true) nothing may be skipped: a missing root, tool or capability fails the test.
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL: cannot run under CI=true: $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
fail() { echo "FAIL: $*"; cat "$work_dir"/*.log 2>/dev/null; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "the cluster simulator needs root to make network namespaces"
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || skip "no 'ip netns' (iproute2) on this machine"
command -v tc >/dev/null || skip "no tc (iproute2) on this machine"

# What scripts/cluster-sim.sh needs to delay packets in user space where the kernel has no netem: empty
# when all is there, otherwise what is missing.
user_space_delay_missing() {
  [ -x "$(dirname "$psgrad")/psgrad-link-delay" ] || { echo "psgrad-link-delay is not built (it needs libnetfilter-queue-dev; scripts/setup.sh --test installs it)"; return; }
  command -v iptables >/dev/null || { echo "no iptables on this machine (scripts/setup.sh --test installs it)"; return; }
  [ -e /proc/net/netfilter/nfnetlink_queue ] || { echo "this kernel has no NFQUEUE"; return; }
  local probe="psgrad-delay-probe-$$"
  ip netns add "$probe" 2>/dev/null || { echo "could not make a namespace to probe NFQUEUE"; return; }
  ip netns exec "$probe" iptables -w -A OUTPUT -j NFQUEUE --queue-num 0 --queue-bypass 2>/dev/null ||
    echo "this kernel has no NFQUEUE target for iptables"
  ip netns del "$probe"
}

# Everything a run with this pid made: namespaces, and processes still inside them.
leftovers() {  # pid
  ip netns list | grep -o "^psgrad-sim-$1-[a-z0-9]*" || true
}

case "$scenario" in
  smoke)
    bash "$sim" --psgrad "$psgrad" --workers 2 --shards 1 --link 1gbit --delay 1ms --iterations 20 --timeout 60 \
      --json "$work_dir/run.jsonl" >"$work_dir/sim.out" 2>"$work_dir/sim.log" & sim_pid=$!
    wait $sim_pid || fail "the simulator failed (exit $?)"
    cat "$work_dir/sim.out"
    line=$(grep "^cluster-sim: workers 2, shards 1, link 1gbit delay 1ms" "$work_dir/sim.out")
    [ "$(wc -l <"$work_dir/sim.out")" -eq 1 ] || fail "expected exactly one summary line"
    [[ $line =~ wire\ fp32,\ mode\ sync,\ launcher\ direct,\ ([0-9]+)\ samples/s,\ ([0-9.]+)\ MB\ per\ step,\ final\ accuracy\ ([0-9.]+),\ steps\ 20 ]] ||
      fail "summary line not as expected: $line"
    mb=${BASH_REMATCH[2]} accuracy=${BASH_REMATCH[3]}
    # A sync step: each of 2 workers pulls the weights (0.47 MB) and pushes a gradient of the same size.
    awk -v m="$mb" 'BEGIN { exit !(m > 1.7 && m < 2.5) }' || fail "$mb MB per step; expected about 1.9"
    awk -v a="$accuracy" 'BEGIN { exit !(a > 0.3) }' || fail "final accuracy $accuracy after 20 steps"
    grep -q '"workers":2,"shards":1,"link":"1gbit"' "$work_dir/run.jsonl" || fail "no JSON line"
    if [ -z "$(user_space_delay_missing)" ]; then
      grep -q '"delay_applied":true' "$work_dir/run.jsonl" || fail "--delay 1ms was not applied: $line"
    fi
    [ -z "$(leftovers $sim_pid)" ] || fail "namespaces left behind: $(leftovers $sim_pid)"
    ;;
  worker-link)
    # --worker-link shapes the worker hosts' links alone, and the busiest link is measured against its
    # own rate. One sync worker moves its 0.47 MB pull and 0.47 MB push over its own 100 Mbit/s link, so
    # a step takes at least 2 x (0.47 MB less tbf's 128 KiB bucket) / 100 Mbit/s = 55 ms: at most 2,340
    # samples/s, where the server's 1 Gbit/s alone allows several times that. That link's use, taken at
    # 100 Mbit/s, is about half (one direction at a time); taken at the server's 1 Gbit/s it would be a
    # tenth of that.
    bash "$sim" --psgrad "$psgrad" --workers 1 --link 1gbit --worker-link 100mbit --delay 0ms --iterations 20 \
      --timeout 60 --json "$work_dir/run.jsonl" >"$work_dir/sim.out" 2>"$work_dir/sim.log" & sim_pid=$!
    wait $sim_pid || fail "the simulator failed (exit $?)"
    cat "$work_dir/sim.out"
    grep -q "^cluster-sim: workers 1, shards 1, link 1gbit (workers' 100mbit) delay 0ms" "$work_dir/sim.out" ||
      fail "the summary line does not name the workers' link rate"
    grep -q '"link":"1gbit","worker_link":"100mbit"' "$work_dir/run.jsonl" || fail "no worker_link in the JSON line"
    rate=$(sed -n 's/.* \([0-9]*\) samples\/s.*/\1/p' "$work_dir/sim.out")
    [ -n "$rate" ] && [ "$rate" -le 2340 ] || fail "$rate samples/s: faster than a 100 Mbit/s worker link allows (2,340)"
    use=$(sed -n 's/.*busiest link \([0-9.]*\) of its rate.*/\1/p' "$work_dir/sim.out")
    awk -v u="$use" 'BEGIN { exit !(u >= 0.3 && u <= 1.05) }' ||
      fail "busiest link at $use of its rate; expected about 0.5, measured against the worker's 100 Mbit/s"
    [ -z "$(leftovers $sim_pid)" ] || fail "namespaces left behind: $(leftovers $sim_pid)"
    ;;
  delayed-steps)
    # The delay reaches the run itself: with 20 ms each way a sync step of one worker (its push, then
    # the answer) takes at least 40 ms, so no more than 128 / 0.04 = 3,200 samples/s; undelayed, this
    # run makes several times that. And TCP still moves: a delay that starved it (packets held where
    # they leave, against TCP's small-queue limit) took seconds a step and lost the worker; here a step
    # takes 80-130 ms, so 400 samples/s (0.32 s a step) leaves room for a loaded machine.
    missing=$(user_space_delay_missing)
    if [ -n "$missing" ] && ! { ip netns add "psgrad-netem-probe-$$" &&
         tc -n "psgrad-netem-probe-$$" qdisc add dev lo root netem delay 1ms 2>/dev/null; }; then
      ip netns del "psgrad-netem-probe-$$" 2>/dev/null
      skip "no netem and $missing"
    fi
    ip netns del "psgrad-netem-probe-$$" 2>/dev/null
    bash "$sim" --psgrad "$psgrad" --workers 1 --delay 20ms --iterations 30 --timeout 60 \
      --json "$work_dir/run.jsonl" >"$work_dir/sim.out" 2>"$work_dir/sim.log" & sim_pid=$!
    wait $sim_pid || fail "the simulator failed (exit $?)"
    cat "$work_dir/sim.out"
    grep -q '"delay":"20ms","delay_applied":true' "$work_dir/run.jsonl" || fail "the delay was not applied"
    rate=$(sed -n 's/.* \([0-9]*\) samples\/s.*/\1/p' "$work_dir/sim.out")
    [ -n "$rate" ] && [ "$rate" -le 3200 ] || fail "$rate samples/s: faster than 20 ms each way allows (3,200)"
    [ "$rate" -ge 400 ] || fail "$rate samples/s: TCP starved by the delay (expected about 1,000-1,600)"
    [ -z "$(leftovers $sim_pid)" ] || fail "namespaces left behind: $(leftovers $sim_pid)"
    ;;
  link-delay)
    # psgrad-link-delay on a veth pair between two namespaces of this test's own. A connect to a port
    # where nothing listens takes one round trip (the SYN out, the RST back), so with the delay on what
    # the connecting side receives it takes at least the delay.
    delay_binary="$(dirname "$psgrad")/psgrad-link-delay"
    missing=$(user_space_delay_missing)
    [ -z "$missing" ] || skip "$missing"
    a="psgrad-delay-$$-a" b="psgrad-delay-$$-b" delay_pid=""
    trap '[ -n "$delay_pid" ] && kill -KILL $delay_pid 2>/dev/null; ip netns del $a 2>/dev/null; ip netns del $b 2>/dev/null; rm -rf "$work_dir"' EXIT
    ip netns add $a && ip netns add $b || fail "could not make namespaces"
    ip link add name veth-a netns $a type veth peer name veth-b netns $b || fail "could not make a veth pair"
    ip -n $a addr add 10.78.0.1/24 dev veth-a && ip -n $b addr add 10.78.0.2/24 dev veth-b || fail "addresses"
    for ns in $a $b; do ip -n $ns link set lo up; done
    ip -n $a link set veth-a up && ip -n $b link set veth-b up || fail "links up"
    round_trips() {  # five connects from a to b, in ms
      ip netns exec $a bash -c 'for i in 1 2 3 4 5; do
        start=$EPOCHREALTIME; { : 3<>/dev/tcp/10.78.0.2/9; } 2>/dev/null; end=$EPOCHREALTIME
        echo "$start $end"; done' | awk '{ printf "%.2f\n", ($2 - $1) * 1000 }'
    }
    before=$(round_trips)
    ip netns exec $a "$delay_binary" --delay 30ms --queue 3 --ready-file "$work_dir/ready" \
      >"$work_dir/delay.log" 2>&1 & delay_pid=$!
    for _ in $(seq 100); do [ -f "$work_dir/ready" ] && break; sleep 0.05; done
    [ -f "$work_dir/ready" ] || fail "psgrad-link-delay did not start"
    ip netns exec $a iptables -w -A INPUT -i veth-a -j NFQUEUE --queue-num 3 --queue-bypass || fail "iptables rule"
    during=$(round_trips)
    kill -TERM $delay_pid; wait $delay_pid; code=$?; delay_pid=""
    [ "$code" -eq 0 ] || fail "psgrad-link-delay exited with $code on SIGTERM"
    after=$(round_trips)
    echo "round trips in ms without delay: $(echo $before); with --delay 30ms: $(echo $during); after it stopped: $(echo $after)"
    [ "$(echo "$during" | wc -l)" -eq 5 ] || fail "connects with the delay did not all finish"
    echo "$during" | awk '$1 < 30 { exit 1 }' || fail "a round trip took under the 30 ms delay"
    echo "$during" | sort -n | head -1 | awk '$1 >= 530 { exit 1 }' || fail "every round trip took over 0.5 s more than the delay"
    echo "$before" | sort -n | head -1 | awk '$1 >= 30 { exit 1 }' || fail "round trips took 30 ms before the delay started"
    # Once the process is gone, --queue-bypass lets packets pass undelayed instead of dropping them.
    [ "$(echo "$after" | wc -l)" -eq 5 ] || fail "connects after the delay stopped did not all finish"
    echo "$after" | sort -n | head -1 | awk '$1 >= 30 { exit 1 }' || fail "still delayed after psgrad-link-delay stopped"
    ;;
  interrupted)
    # Ctrl-C while the hosts train: the simulator removes every namespace and process it made.
    # A background job of a script starts with SIGINT ignored; env gives it back its default, as at a terminal.
    env --default-signal=INT bash "$sim" --psgrad "$psgrad" --workers 2 --iterations 100000 --timeout 60 \
      >"$work_dir/sim.out" 2>"$work_dir/sim.log" & sim_pid=$!
    for _ in $(seq 200); do
      [ -n "$(ip netns pids "psgrad-sim-$sim_pid-h2" 2>/dev/null)" ] && break
      sleep 0.05
    done
    [ -n "$(leftovers $sim_pid)" ] || fail "the simulator made no namespaces"
    sleep 1
    kill -INT $sim_pid
    for _ in $(seq 100); do kill -0 $sim_pid 2>/dev/null || break; sleep 0.1; done
    kill -0 $sim_pid 2>/dev/null && { kill -TERM $sim_pid; wait $sim_pid; fail "Ctrl-C did not stop the simulator"; }
    wait $sim_pid; code=$?
    [ "$code" -eq 130 ] || fail "exit code $code after Ctrl-C; expected 130"
    grep -q "interrupted: removing what it made" "$work_dir/sim.log" || fail "no word about the interruption"
    [ -z "$(leftovers $sim_pid)" ] || fail "namespaces left behind: $(leftovers $sim_pid)"
    pgrep -f "psgrad-sim-$sim_pid" && fail "processes left behind"
    ;;
  ssh-launch)
    # `psgrad launch` over real ssh between three simulated hosts: a server and two workers, each in
    # its own namespace running sshd with keys made for the run.
    [ -x /usr/sbin/sshd ] || skip "no sshd (apt-get install openssh-server)"
    bash "$sim" --psgrad "$psgrad" --launcher ssh --workers 2 --iterations 20 --timeout 60 \
      --keep-logs "$work_dir/logs" >"$work_dir/sim.out" 2>"$work_dir/sim.log" & sim_pid=$!
    wait $sim_pid || { cat "$work_dir/logs/"*.log; fail "the simulator failed (exit $?)"; }
    cat "$work_dir/sim.out"
    grep -q "^cluster-sim: workers 2, shards 1, .*, launcher ssh, [0-9]* samples/s" "$work_dir/sim.out" ||
      fail "no summary line"
    for h in 0 1 2; do
      grep -q "Accepted publickey for" "$work_dir/logs/sshd-h$h.log" || fail "host $h was not reached over ssh"
    done
    # The server numbers workers in the order they join, which a loaded machine may swap.
    grep -q "^\[10.77.0.2 worker [01]\] psgrad work: joined 10.77.0.1:" "$work_dir/logs/launch.log" ||
      fail "the first worker's lines did not come back from 10.77.0.2"
    grep -q "^\[10.77.0.3 worker [01]\] psgrad work: training finished" "$work_dir/logs/launch.log" ||
      fail "the second worker's lines did not come back from 10.77.0.3"
    [ "$(grep -o '^\[10.77.0.[23] worker [01]\] psgrad work: joined' "$work_dir/logs/launch.log" |
      sed 's/.*worker \([01]\).*/\1/' | sort | tr -d '\n')" = "01" ] ||
      fail "the two workers did not join as worker 0 and worker 1"
    # Simulated hosts are network namespaces of one machine: their payloads must cross the links.
    ! grep -q "shared memory" "$work_dir/logs/launch.log" || fail "simulated hosts passed payloads through shared memory"
    # The same weights as one process: the run really trained across the hosts.
    "$psgrad" train --config "$source_dir/configs/mnist.toml" --set training.iterations=20 --no-metrics \
      >"$work_dir/local.out" 2>/dev/null || fail "local run failed"
    diff <(sed -n 's/^\[10.77.0.1 server\] \(final weights: .*\)/\1/p' "$work_dir/logs/launch.out") \
      <(grep "^final weights: " "$work_dir/local.out") || fail "weights over ssh differ from one process"
    [ -z "$(leftovers $sim_pid)" ] || fail "namespaces left behind: $(leftovers $sim_pid)"
    ;;
  embedding-model)
    # A model with embedding tables across simulated hosts: its table shards on hosts of their own
    # (here 2, hosts 1 and 2), the server's dense part on host 0, each worker on a host; the run ends
    # with the weights of the same run in one process. With one table shard too.
    "$psgrad" data click-logs --rows 2000 --out "$work_dir/clicks.jsonl" >/dev/null 2>&1 || fail "click-logs"
    source "$source_dir/tests/tables_config.sh"
    write_tables_config "$work_dir/tables.toml" "$work_dir/clicks.jsonl"
    "$psgrad" train --config "$work_dir/tables.toml" --no-metrics --set cluster.servers=2 >"$work_dir/local.out" 2>/dev/null ||
      fail "local run failed"
    for shards in 2 1; do
      bash "$sim" --psgrad "$psgrad" --config "$work_dir/tables.toml" --workers 2 --shards $shards --iterations 20 --seed 1 \
        --timeout 60 --keep-logs "$work_dir/logs$shards" >"$work_dir/sim.out" 2>"$work_dir/sim.log" & sim_pid=$!
      wait $sim_pid || { cat "$work_dir/logs$shards/"*.log; fail "the simulator failed with $shards table shards (exit $?)"; }
      cat "$work_dir/sim.out"
      grep -q "^cluster-sim: workers 2, shards $shards, .* samples/s, .*, steps 20," "$work_dir/sim.out" || fail "no summary line"
      for ((k = 1; k <= shards; k++)); do
        grep -q "psgrad shard: holding table shard $((k - 1)) of $shards" "$work_dir/logs$shards/shard$k.log" ||
          fail "host $k held no table shard $((k - 1))"
      done
      diff <(grep "^final weights: " "$work_dir/logs$shards/serve.out") <(grep "^final weights: " "$work_dir/local.out") ||
        fail "weights across $shards simulated table shard hosts differ from one process"
      [ -z "$(leftovers $sim_pid)" ] || fail "namespaces left behind: $(leftovers $sim_pid)"
    done
    ;;
  ssh-unreachable)
    # A hostfile line whose host does not answer: one line names it, the run stops, nothing is left.
    [ -x /usr/sbin/sshd ] || skip "no sshd (apt-get install openssh-server)"
    start=$SECONDS
    bash "$sim" --psgrad "$psgrad" --launcher ssh --workers 1 --absent-hosts 1 --iterations 20 --timeout 60 \
      --keep-logs "$work_dir/logs" >"$work_dir/sim.out" 2>"$work_dir/sim.log" & sim_pid=$!
    wait $sim_pid && fail "a run with an unreachable host succeeded"
    took=$((SECONDS - start))
    echo "a launch with an unreachable host ended after $took s"
    grep -q "^psgrad launch: worker on 10.77.0.3 failed (exit 255: ssh could not connect to or log in to 10.77.0.3)" \
      "$work_dir/logs/launch.log" || fail "the unreachable host was not named"
    grep -q "^psgrad launch: a role failed before training began: stopping the run" "$work_dir/logs/launch.log" ||
      fail "the run was not stopped"
    [ "$took" -lt 45 ] || fail "took $took s"
    [ -z "$(leftovers $sim_pid)" ] || fail "namespaces left behind: $(leftovers $sim_pid)"
    ;;
  bad-flags)
    for args in "--wire fp16:expected fp32, bf16 or topk" "--mode turbo:expected sync, async or ssp" \
                "--link fast:expected a rate" "--worker-link 1gb:worker-link 1gb: expected a rate" "--workers 0:expected a whole number 1..64"; do
      flags=${args%%:*} expected=${args#*:}
      # shellcheck disable=SC2086
      bash "$sim" --psgrad "$psgrad" $flags >"$work_dir/bad.out" 2>"$work_dir/bad.log" && fail "$flags was accepted"
      grep -q "$expected" "$work_dir/bad.log" || fail "$flags: expected '$expected', got: $(cat "$work_dir/bad.log")"
    done
    ;;
  scaling-table-repeats)
    # bench/scaling-table.sh --repeats: the whole table again, every run a row and a JSON line.
    table="$source_dir/bench/scaling-table.sh"
    bash "$table" --psgrad "$psgrad" --link 1gbit --workers 1 --shards 1 --wires fp32 --modes sync --gradients 10 \
      --repeats 2 --json "$work_dir/runs.jsonl" >"$work_dir/table.out" 2>"$work_dir/table.log" ||
      fail "the table failed (exit $?)"
    cat "$work_dir/table.out"
    [ "$(wc -l <"$work_dir/runs.jsonl")" -eq 2 ] || fail "expected 2 JSON lines, got $(wc -l <"$work_dir/runs.jsonl")"
    [ "$(grep -c '^| sync | fp32 | 1 | 1 | 0 |' "$work_dir/table.out")" -eq 2 ] || fail "expected 2 table rows"
    # A bad count is refused before the JSON file is touched.
    bash "$table" --psgrad "$psgrad" --repeats 0 --json "$work_dir/runs.jsonl" >/dev/null 2>"$work_dir/bad.log" &&
      fail "--repeats 0 was accepted"
    grep -q "expected a whole number of at least 1" "$work_dir/bad.log" || fail "unexpected refusal: $(cat "$work_dir/bad.log")"
    [ "$(wc -l <"$work_dir/runs.jsonl")" -eq 2 ] || fail "the refused run emptied the JSON file"
    ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
echo "PASS: $scenario"
