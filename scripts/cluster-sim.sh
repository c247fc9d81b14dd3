#!/usr/bin/env bash
# Simulates a cluster on one machine: one network namespace per host, each host's veth link to a bridge
# shaped with tc, `psgrad serve` on the first host, each shard process and each worker on a host of its
# own. Prints one summary line per run and removes every namespace and process it made, also on Ctrl-C
# or failure. Needs root, iproute2 and tc; on kernels without netem, --delay also needs iptables and
# build/apps/psgrad-link-delay.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/cluster-sim.sh [--workers N] [--shards K] [--link RATE] [--worker-link RATE] [--delay D] [--wire ENC]
                              [--mode sync|async|ssp] [--iterations I] [--seed S] [--json FILE]
                              [--launcher direct|ssh] [--absent-hosts A] [--config C] [--psgrad BINARY]
                              [--timeout SECONDS] [--keep-logs DIR] [--set KEY=VALUE]...

  --workers N      worker hosts, one `psgrad work` each (default 2)
  --shards K       parameter-server shards (cluster.servers): the server holds shard 0, shards 1..K-1
                   run as `psgrad shard` on hosts of their own (default 1); for a model with embedding
                   tables, K table shards, each `psgrad shard --tables` on a host of its own
  --link RATE      every host's link rate, each way, as tc writes it: 100mbit, 1gbit, ... (default 1gbit)
  --worker-link R  the worker hosts' link rate instead (default: --link), to see a run where only the
                   server's and shards' links bound it
  --delay D        one-way delay of a host's link: every packet between two hosts waits D (0ms, 1ms,
                   500us ...; default 1ms): tc netem as the sender's link sends it, or, where the
                   kernel has no netem, psgrad-link-delay (next to psgrad) as the receiver's link
                   delivers it
  --wire ENC       how weights and gradients cross the network (cluster.wire): fp32 (default), bf16, topk
  --mode MODE      sync, async or ssp (default sync)
  --iterations I   training.iterations (default 50)
  --seed S         training.seed (default 0)
  --json FILE      also append the summary as one JSON line to FILE
  --launcher L     direct: start each role in its namespace (default); ssh: every host runs Debian's
                   sshd with a key made for this run, and `psgrad launch --hostfile` on the first host
                   starts every role over ssh
  --absent-hosts A with --launcher ssh: A more hostfile lines of addresses where no host answers, to see
                   how a launch reports an unreachable host (the run then fails)
  --config C       the run's config (default configs/mnist.toml)
  --psgrad BINARY  the psgrad binary (default build/apps/psgrad)
  --timeout S      give up (and clean up) after S seconds (default 300)
  --keep-logs DIR  copy every process's output to DIR
  --set KEY=VALUE  any other config override for the run (repeatable), e.g. evaluation.frequency=100000
EOF
}

say() { echo "cluster-sim: $*" >&2; }
die() { say "$*"; exit 1; }

source_dir=$(cd "$(dirname "$0")/.." && pwd)
workers=2 shards=1 link=1gbit worker_link="" delay=1ms wire=fp32 mode=sync iterations=50 seed=0 json="" timeout=300
config="$source_dir/configs/mnist.toml" psgrad="$source_dir/build/apps/psgrad" keep_logs="" launcher=direct absent_hosts=0
extra_sets=()

while (($#)); do
  flag=$1
  [ "$flag" = --help ] || [ "$flag" = -h ] && { usage; exit 0; }
  (($# >= 2)) || die "$flag needs a value (see --help)"
  value=$2
  case "$flag" in
    --workers) workers=$value ;;
    --shards) shards=$value ;;
    --link) link=$value ;;
    --worker-link) worker_link=$value ;;
    --delay) delay=$value ;;
    --wire) wire=$value ;;
    --mode) mode=$value ;;
    --iterations) iterations=$value ;;
    --seed) seed=$value ;;
    --json) json=$value ;;
    --config) config=$value ;;
    --psgrad) psgrad=$value ;;
    --timeout) timeout=$value ;;
    --keep-logs) keep_logs=$value ;;
    --launcher) launcher=$value ;;
    --absent-hosts) absent_hosts=$value ;;
    --set) [[ $value =~ ^[a-z_]+\.[a-z_@.0-9]+=.+$ ]] || die "--set $value: expected section.key=value"
           extra_sets+=(--set "$value") ;;
    *) die "unknown flag $flag (see --help)" ;;
  esac
  shift 2
done

whole_number() {  # name value min max
  [[ $2 =~ ^[0-9]+$ ]] && (($2 >= $3 && $2 <= $4)) || die "--$1 $2: expected a whole number $3..$4"
}
whole_number workers "$workers" 1 64
whole_number shards "$shards" 1 16
whole_number iterations "$iterations" 1 1000000
whole_number seed "$seed" 0 4294967295
whole_number timeout "$timeout" 1 86400
whole_number absent-hosts "$absent_hosts" 0 16
[[ $link =~ ^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$ ]] || die "--link $link: expected a rate like 100mbit or 1gbit"
[ -n "$worker_link" ] || worker_link=$link
[[ $worker_link =~ ^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit)$ ]] ||
  die "--worker-link $worker_link: expected a rate like 100mbit or 1gbit"
[[ $delay =~ ^[0-9]+(\.[0-9]+)?(us|ms|s)$ ]] || die "--delay $delay: expected a time like 0ms, 1ms or 500us"
case "$mode" in sync|async|ssp) ;; *) die "--mode $mode: expected sync, async or ssp" ;; esac
case "$launcher" in direct|ssh) ;; *) die "--launcher $launcher: expected direct or ssh" ;; esac

# The --set overrides each wire encoding needs; a new encoding is one more case here.
wire_overrides() {
  case "$1" in
    fp32) ;;  # the default: weights and gradients as raw 32-bit floats
    bf16 | topk) echo "cluster.wire=\"$1\"" ;;
    *) die "--wire $1: expected fp32, bf16 or topk" ;;
  esac
}
wire_overrides "$wire"  # validate before anything is made
readarray -t wire_sets < <(wire_overrides "$wire")

[ "$(id -u)" -eq 0 ] || die "needs root to make network namespaces (run it with sudo)"
command -v ip >/dev/null && ip netns list >/dev/null 2>&1 || die "needs iproute2 with 'ip netns' (apt-get install iproute2)"
command -v tc >/dev/null || die "needs tc (apt-get install iproute2)"
[ -x "$psgrad" ] || die "no psgrad binary at $psgrad (build first, or give --psgrad)"
[ -f "$config" ] || die "no config at $config"
if [ "$launcher" = ssh ]; then
  [ -x /usr/sbin/sshd ] || die "--launcher ssh needs Debian's sshd (apt-get install openssh-server)"
  command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || die "--launcher ssh needs ssh (apt-get install openssh-client)"
fi
psgrad=$(cd "$(dirname "$psgrad")" && pwd)/$(basename "$psgrad")
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")

# Names carry this script's pid so two runs never collide; every address lives inside these namespaces.
prefix="psgrad-sim-$$"
switch="$prefix-switch"
namespaces=()
work_dir=$(mktemp -d)
started=$SECONDS

cleanup() {
  local code=$?
  trap - EXIT INT TERM
  # Processes keep a namespace alive after its name is gone: end every process in ours first.
  local ns pids
  for ns in "${namespaces[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null || true
  done
  for ns in "${namespaces[@]}"; do
    for _ in $(seq 20); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.05; done
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  if [ -n "$keep_logs" ]; then mkdir -p "$keep_logs" && cp "$work_dir"/*.log "$work_dir"/*.out "$keep_logs"/ 2>/dev/null || true; fi
  rm -rf "$work_dir"
  exit "$code"
}
trap cleanup EXIT
trap 'say "interrupted: removing what it made"; exit 130' INT
trap 'say "terminated: removing what it made"; exit 143' TERM

new_namespace() {  # name
  ip netns add "$1" || die "could not create network namespace $1"
  namespaces+=("$1")
  ip -n "$1" link set lo up
}

# A model with embedding tables ([tables] in its resolved config) has all K of its table shards on hosts
# of their own; a dense model's server holds its shard 0.
tables=false
"$psgrad" config show "$config" >"$work_dir/resolved.toml" 2>"$work_dir/resolved.log" ||
  die "$config: $(head -n 1 "$work_dir/resolved.log")"
grep -qx '\[tables\]' "$work_dir/resolved.toml" && tables=true
shard_hosts=$((shards - 1))
$tables && shard_hosts=$shards
# Host 0 serves; hosts 1..shard_hosts hold shards; the rest are workers.
host_count=$((1 + shard_hosts + workers))
address() { echo "10.77.$(($1 / 250)).$(($1 % 250 + 1))"; }

new_namespace "$switch"
ip -n "$switch" link add name br0 type bridge
ip -n "$switch" link set br0 up

# tbf's bucket: two of the 64 KiB GSO segments veths pass, and no more. A bucket sized to a timer
# tick (4 ms, 0.5 MB at 1 Gbit/s) let a whole 0.47 MB message through at the veth's speed whenever the
# link had idled that long (while a worker computed), so sync and single-worker runs looked close to
# the link's rate when they were not; tbf's watchdog runs on high-resolution timers, so a small
# bucket keeps the rate.
bits_per_second() {  # tc rate -> bits per second
  local n=${1%%[a-z]*} m
  case "${1#"$n"}" in bit) m=1 ;; kbit) m=1000 ;; mbit) m=1000000 ;; gbit) m=1000000000 ;; esac
  awk -v n="$n" -v m="$m" 'BEGIN { printf "%.0f", n * m }'
}
host_link() {  # host -> its link's tc rate: the server's and shards' hosts come first
  if (($1 <= shard_hosts)); then echo "$link"; else echo "$worker_link"; fi
}
burst=131072
no_delay=$(awk -v d="${delay%%[a-z]*}" 'BEGIN { print (d == 0) ? "yes" : "" }')
# How --delay is applied: tc's netem where the kernel has it; otherwise psgrad-link-delay, which holds
# each packet an iptables NFQUEUE rule hands it (kernels built without sch_netem, like this project's VM).
link_delay="$(dirname "$psgrad")/psgrad-link-delay"
delay_method=none delay_note=""
if [ -z "$no_delay" ]; then
  if tc -n "$switch" qdisc add dev br0 root netem delay "$delay" 2>/dev/null; then
    tc -n "$switch" qdisc del dev br0 root
    delay_method=netem
  else
    # Everything the user-space delay needs, probed before any host is made: the first thing missing
    # is the reason the delay is not applied.
    missing="" why=""
    if [ ! -x "$link_delay" ]; then
      missing="no psgrad-link-delay" why="no $link_delay (it is built when libnetfilter-queue-dev is installed)"
    elif ! command -v iptables >/dev/null; then
      missing="no iptables" why="no iptables (apt-get install iptables)"
    elif [ ! -e /proc/net/netfilter/nfnetlink_queue ] ||
         ! ip netns exec "$switch" iptables -w -A OUTPUT -j NFQUEUE --queue-num 0 --queue-bypass 2>/dev/null; then
      missing="no NFQUEUE" why="the kernel has no NFQUEUE"
    else
      ip netns exec "$switch" iptables -w -D OUTPUT -j NFQUEUE --queue-num 0 --queue-bypass
    fi
    if [ -z "$missing" ]; then
      delay_method=user-space delay_note=" (user space: psgrad-link-delay)"
    else
      delay_note=" (not applied: no sch_netem, $missing)"
      say "--delay $delay is not applied, links are rate-limited only: no sch_netem in this kernel, and $why"
    fi
  fi
fi

link_delay_pids=()
start_link_delay() {  # namespace host
  local ready="$work_dir/link-delay-h$2.ready" log="$work_dir/link-delay-h$2.log"
  ip netns exec "$1" "$link_delay" --delay "$delay" --queue 0 --ready-file "$ready" >"$log" 2>&1 &
  link_delay_pids+=($!)
  for _ in $(seq 100); do [ -f "$ready" ] && break; sleep 0.05; done
  [ -f "$ready" ] || die "psgrad-link-delay did not start on host $2: $(tail -n 1 "$log")"
  # The delay is taken where a packet arrives (INPUT), after its link's rate; either end gives a packet
  # between two hosts one delay. Not where it leaves: a packet held there still counts against its
  # socket, and TCP's small-queue limit then lets next to nothing more out while it waits (0.47 MB took
  # 0.9 s to cross with 5 ms each way; netem releases a packet from its socket, NFQUEUE cannot).
  # --queue-bypass lets packets pass undelayed rather than be dropped should the delay process be gone.
  ip netns exec "$1" iptables -w -A INPUT -i eth0 -j NFQUEUE --queue-num 0 --queue-bypass ||
    die "could not add the NFQUEUE rule for host $2's delay"
}

for ((h = 0; h < host_count; h++)); do
  ns="$prefix-h$h"
  new_namespace "$ns"
  ip -n "$switch" link add name "p$h" type veth peer name eth0 netns "$ns"
  ip -n "$switch" link set "p$h" master br0 up
  ip -n "$ns" addr add "$(address $h)/16" dev eth0
  ip -n "$ns" link set eth0 up
  rate=$(host_link "$h")
  # What the host sends: rate-limited, and delayed here by netem (psgrad-link-delay delays it where it
  # arrives).
  case "$delay_method" in
    netem) tc -n "$ns" qdisc add dev eth0 root netem delay "$delay" rate "$rate" limit 100000 ;;
    user-space) start_link_delay "$ns" "$h"
                tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 100ms ;;
    none) tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 100ms ;;
  esac
  # What the host receives: rate-limited on the switch's side of its link.
  tc -n "$switch" qdisc add dev "p$h" root tbf rate "$rate" burst "$burst" latency 100ms
done

switch_bytes() {  # every byte the hosts sent into the switch
  local total=0 h n
  for ((h = 0; h < host_count; h++)); do
    n=$(ip -n "$switch" -s link show dev "p$h" | awk '/RX:/ { getline; print $1; exit }')
    total=$((total + n))
  done
  echo "$total"
}

# The bytes of the busiest link direction: what one host sent or received (the server's link, unless
# shards or workers outweigh it). Links are full duplex, so that direction bounds the run.
port_bytes() {  # host -> "sent received", as the switch's port for that host counts them
  ip -n "$switch" -s link show dev "p$1" | awk '/RX:/ { getline; rx = $1 } /TX:/ { getline; tx = $1 } END { print rx, tx }'
}
port_counts() {
  local h
  for ((h = 0; h < host_count; h++)); do port_bytes "$h"; done
}

fail_with_log() {  # message log
  say "$1; the last lines of $(basename "$2"):"
  tail -n 15 "$2" | sed 's/^/  /' >&2
  # The other roles' last words: a worker or shard that failed first is often the cause.
  local other
  for other in "$work_dir"/shard*.log "$work_dir"/worker*.log; do
    [ -s "$other" ] && [ "$other" != "$2" ] && echo "  $(basename "$other" .log): $(tail -n 1 "$other")" >&2
  done
  exit 1
}
over_time() { ((SECONDS - started > timeout)); }
wait_for() {  # pid name log
  while kill -0 "$1" 2>/dev/null; do
    over_time && fail_with_log "$2 did not finish within $timeout s" "$3"
    sleep 0.1
  done
  wait "$1" || fail_with_log "$2 failed (exit $?)" "$3"
}
common_sets=(--set "training.iterations=$iterations" --set "training.seed=$seed" --set cluster.join_timeout_ms=60000
             --set "cluster.mode=\"$mode\"")
for override in "${wire_sets[@]}"; do common_sets+=(--set "$override"); done
common_sets+=("${extra_sets[@]}")

start_direct() {
  local serve_args=(serve --config "$config" --bind "$server_address" --port "$port" --workers "$workers"
                    --set "cluster.servers=$shards" "${common_sets[@]}" --no-metrics)
  ((shards > 1)) && ! $tables && serve_args+=(--remote-shards)
  ip netns exec "$prefix-h0" "$psgrad" "${serve_args[@]}" >"$work_dir/serve.out" 2>"$work_dir/serve.log" &
  local server_pid=$!
  until grep -q "listening on" "$work_dir/serve.log"; do
    kill -0 "$server_pid" 2>/dev/null || fail_with_log "the server exited before listening" "$work_dir/serve.log"
    over_time && fail_with_log "the server did not listen within $timeout s" "$work_dir/serve.log"
    sleep 0.05
  done
  local others=() k w entry
  for ((k = 1; k <= shard_hosts; k++)); do
    local which=(--index "$k")
    $tables && which=(--tables "$((k - 1))")
    ip netns exec "$prefix-h$k" "$psgrad" shard "${which[@]}" --connect "$server_address:$port" \
      >"$work_dir/shard$k.out" 2>"$work_dir/shard$k.log" &
    others+=("$!:shard$k")
  done
  for ((w = 0; w < workers; w++)); do
    ip netns exec "$prefix-h$((1 + shard_hosts + w))" "$psgrad" work --connect "$server_address:$port" \
      >"$work_dir/worker$w.out" 2>"$work_dir/worker$w.log" &
    others+=("$!:worker$w")
  done
  wait_for "$server_pid" "the server" "$work_dir/serve.log"
  for entry in "${others[@]}"; do wait_for "${entry%%:*}" "${entry#*:}" "$work_dir/${entry#*:}.log"; done
  summary_file="$work_dir/serve.out"
}

# Every host runs sshd on its own address with a host key and an authorized client key made for this
# run; `psgrad launch` on host 0 reaches them all (itself too) with that key and nothing else.
start_sshd_hosts() {
  local keys="$work_dir/ssh" h
  mkdir -p "$keys"
  ssh-keygen -q -t ed25519 -N '' -C "psgrad cluster-sim host" -f "$keys/host_key"
  ssh-keygen -q -t ed25519 -N '' -C "psgrad cluster-sim client" -f "$keys/client_key"
  cp "$keys/client_key.pub" "$keys/authorized_keys"
  echo "10.77.*.* $(cut -d' ' -f1,2 "$keys/host_key.pub")" >"$keys/known_hosts"
  mkdir -p /run/sshd  # sshd's privilege-separation directory, which Debian's ssh service makes when it runs
  for ((h = 0; h < host_count; h++)); do
    cat >"$keys/sshd_config.h$h" <<SSHD
ListenAddress $(address $h)
HostKey $keys/host_key
AuthorizedKeysFile $keys/authorized_keys
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SSHD
    ip netns exec "$prefix-h$h" /usr/sbin/sshd -D -e -f "$keys/sshd_config.h$h" 2>"$work_dir/sshd-h$h.log" &
  done
  for ((h = 0; h < host_count; h++)); do
    until ip netns exec "$prefix-h$h" bash -c "exec 3<>/dev/tcp/$(address $h)/22" 2>/dev/null; do
      over_time && fail_with_log "sshd on host $h did not listen" "$work_dir/sshd-h$h.log"
      sleep 0.05
    done
  done
}

start_ssh_launch() {
  start_sshd_hosts
  local h k w keys="$work_dir/ssh"
  {
    address 0
    for ((k = 1; k <= shard_hosts; k++)); do echo "$(address $k) shards=1 workers=0"; done
    for ((w = 0; w < workers; w++)); do echo "$(address $((1 + shard_hosts + w))) workers=1"; done
    for ((w = 0; w < absent_hosts; w++)); do echo "$(address $((host_count + w))) workers=1"; done
  } >"$work_dir/hostfile"
  ip netns exec "$prefix-h0" "$psgrad" launch --hostfile "$work_dir/hostfile" --config "$config" \
    "${common_sets[@]}" --no-metrics \
    --ssh-option "IdentityFile=$keys/client_key" --ssh-option "UserKnownHostsFile=$keys/known_hosts" \
    --ssh-option StrictHostKeyChecking=yes --ssh-option IdentitiesOnly=yes \
    >"$work_dir/launch.out" 2>"$work_dir/launch.log" &
  wait_for $! "psgrad launch" "$work_dir/launch.log"
  summary_file="$work_dir/launch.out"
}

server_address=$(address 0)
port=4242  # private to this run's namespaces, so never in use
bytes_before=$(switch_bytes)
ports_before=$(port_counts)
if [ "$launcher" = ssh ]; then start_ssh_launch; else start_direct; fi
bytes=$(($(switch_bytes) - bytes_before))
host_rates=$(for ((h = 0; h < host_count; h++)); do bits_per_second "$(host_link "$h")"; echo; done)
# The busiest link direction: the one that used most of its own link's rate (with one rate for every
# host, the one that carried most bytes). "bytes rate" of it.
busiest_link=$(paste <(echo "$ports_before") <(port_counts) <(echo "$host_rates") |
  awk '{ s = $3 - $1; r = $4 - $2; b = (s > r) ? s : r
         if (b / $5 > m) { m = b / $5; bytes = b; rate = $5 } } END { printf "%.0f %.0f", bytes, rate }')
busiest=${busiest_link% *} rate_bits=${busiest_link#* }

# "sync summary: workers 2, steps 50, final accuracy 0.812, wall 0.53 s, 97574 samples/s[, ...]"
summary=$(grep " summary: workers" "$summary_file" | tail -n 1)
[ -n "$summary" ] || fail_with_log "the server printed no summary" "$summary_file"
steps=$(sed -n 's/.*steps \([0-9]*\).*/\1/p' <<<"$summary")
accuracy=$(sed -n 's/.*final accuracy \([0-9.]*\).*/\1/p' <<<"$summary")
wall=$(sed -n 's/.*wall \([0-9.]*\) s.*/\1/p' <<<"$summary")
samples_per_second=$(sed -n 's/.* \([0-9]*\) samples\/s.*/\1/p' <<<"$summary")
bytes_per_step=$(awk -v b="$bytes" -v s="$steps" 'BEGIN { printf "%.0f", b / s }')
mb_per_step=$(awk -v b="$bytes_per_step" 'BEGIN { printf "%.2f", b / 1e6 }')
# How much of the busiest link direction's rate the run used: its bytes over the run's wall time.
link_use=$(awk -v b="$busiest" -v w="$wall" -v r="$rate_bits" 'BEGIN { printf "%.2f", (w > 0) ? b * 8 / w / r : 0 }')
busiest_per_step=$(awk -v b="$busiest" -v s="$steps" 'BEGIN { printf "%.0f", b / s }')

# A delay process that died let its host's packets pass undelayed from then on (--queue-bypass): say so.
for ((h = 0; h < ${#link_delay_pids[@]}; h++)); do
  if ! kill -0 "${link_delay_pids[h]}" 2>/dev/null; then
    last=$(tail -n 1 "$work_dir/link-delay-h$h.log")
    say "psgrad-link-delay on host $h ended during the run${last:+: $last}; its packets went undelayed from then on"
    delay_method=none delay_note=" (not applied throughout: the delay process on host $h ended)"
  fi
done

worker_link_note=""; [ "$worker_link" != "$link" ] && worker_link_note=" (workers' $worker_link)"
echo "cluster-sim: workers $workers, shards $shards, link $link$worker_link_note delay $delay$delay_note, wire $wire, mode $mode," \
     "launcher $launcher, $samples_per_second samples/s, $mb_per_step MB per step, final accuracy $accuracy, steps $steps, wall $wall s," \
     "busiest link $link_use of its rate"
if [ -n "$json" ]; then
  delay_applied=true; [ "$delay_method" = none ] && [ -z "$no_delay" ] && delay_applied=false
  # The last cluster.pipeline (cluster.ordered_answers) given with --set holds, as in psgrad's own --set.
  pipeline=false ordered_answers=false
  for override in "${extra_sets[@]}"; do
    [[ $override == cluster.pipeline=* ]] && pipeline=${override#cluster.pipeline=}
    [[ $override == cluster.ordered_answers=* ]] && ordered_answers=${override#cluster.ordered_answers=}
  done
  printf '{"workers":%d,"shards":%d,"link":"%s","worker_link":"%s","delay":"%s","delay_applied":%s,"delay_method":"%s","wire":"%s","mode":"%s","pipeline":%s,"ordered_answers":%s,"launcher":"%s","iterations":%d,"seed":%d,"steps":%d,"samples_per_second":%d,"bytes_per_step":%d,"busiest_link_bytes_per_step":%d,"busiest_link_use":%s,"final_accuracy":%s,"wall_seconds":%s}\n' \
    "$workers" "$shards" "$link" "$worker_link" "$delay" "$delay_applied" "$delay_method" "$wire" "$mode" "$pipeline" "$ordered_answers" "$launcher" "$iterations" "$seed" "$steps" \
    "$samples_per_second" "$bytes_per_step" "$busiest_per_step" "$link_use" "$accuracy" "$wall" >>"$json"
fi
