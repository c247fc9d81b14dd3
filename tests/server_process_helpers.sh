# Shell helpers the multi-process scenario scripts share; sourced, after they define `fail` and work_dir.

# Waits until the server process (pid $1) logs its listening port in $2; sets port.
await_listening_port() {  # pid log
  port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$2")
    [ -n "$port" ] && return 0
    kill -0 "$1" 2>/dev/null || fail "server exited before listening"
    sleep 0.1
  done
  fail "server did not start listening"
}

# Keeps the peak resident memory (VmHWM, kB) of a process in a file while the process lives.
follow_peak_memory() {  # pid file
  ( while kill -0 "$1" 2>/dev/null; do
      peak=$(awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null)
      [ -n "$peak" ] && echo "$peak" >"$2"
      sleep 0.05
    done ) &
}

# Self-signed CA, and certificates it signs, for the TLS scenarios.
make_identity() {  # name
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=psgrad test $1" \
    -keyout "$work_dir/$1.key" -out "$work_dir/$1.pem" 2>/dev/null || fail "openssl could not make $1"
}
make_signed() {  # name ca
  openssl req -newkey rsa:2048 -nodes -subj "/CN=psgrad $1" -keyout "$work_dir/$1.key" \
    -out "$work_dir/$1.csr" 2>/dev/null &&
    openssl x509 -req -in "$work_dir/$1.csr" -CA "$work_dir/$2.pem" -CAkey "$work_dir/$2.key" \
      -CAcreateserial -days 2 -out "$work_dir/$1.pem" 2>/dev/null || fail "openssl could not sign $1"
}
