# Shared by the scripted tests (tests/interop/run.sh, tests/abuse/run.sh): sourced, not run.
#
# prepare_tools REQUIREMENTS  installs the Python packages into .tools/venv (git ignores
#                             it) and sets $venv.
# start_release_server        builds the release server, starts it on loopback port 0,
#                             reads the address it bound from its log and sets $address,
#                             $port, $pid and $log; the server is stopped by its own pid
#                             when the script exits, whatever happens.
# server_log_is_clean         fails, printing the log, if the server panicked or died.
# address_in LOG PID          the address a server logged, once it has.

prepare_tools() {
  venv="$repo/.tools/venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$1"
}

start_release_server() {
  cargo build --release --bin arbiter
  log=$(mktemp)
  # Port 0: the OS picks a free port and the server keeps it; the address it bound is
  # read from its start-up line ("arbiter listening on ADDR"). No port is freed and
  # bound again, so no other process can take it in between.
  ./target/release/arbiter --listen 127.0.0.1:0 >"$log" 2>&1 &
  pid=$!
  trap stop_release_server EXIT
  address=$(address_in "$log" "$pid") || return 1
  port=${address##*:}
}

# address_in LOG PID: the address the server PID logged to LOG ("arbiter listening on
# ADDR"), waited for up to 60 s; fails, printing the log, if the server exits first or
# logs none.
address_in() {
  local log=$1 pid=$2 found=
  for _ in $(seq 1 600); do
    found=$(sed -n 's/.*arbiter listening on \([0-9.]*:[0-9]*\).*/\1/p' "$log" | head -n 1)
    if [ -n "$found" ]; then
      echo "$found"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the server exited before listening; its log:" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "the server logged no address in 60 s; its log:" >&2
  cat "$log" >&2
  return 1
}

stop_release_server() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
}

server_log_is_clean() {
  if grep -q "panicked" "$log"; then
    echo "the server panicked; its log:" >&2
    cat "$log" >&2
    return 1
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "the server died; its log:" >&2
    cat "$log" >&2
    return 1
  fi
}
