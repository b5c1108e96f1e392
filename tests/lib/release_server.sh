# Shared by the scripted tests (tests/interop/run.sh, tests/abuse/run.sh): sourced, not run.
#
# prepare_tools REQUIREMENTS  installs the Python packages into .tools/venv (git ignores
#                             it) and sets $venv.
# start_release_server        builds the release server, starts it on a free loopback
#                             port and sets $address, $port, $pid and $log; the server is
#                             stopped by its own pid when the script exits, whatever happens.
# server_log_is_clean         fails, printing the log, if the server panicked or died.

prepare_tools() {
  venv="$repo/.tools/venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$1"
}

start_release_server() {
  cargo build --release --bin arbiter
  port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  address="127.0.0.1:$port"
  log=$(mktemp)
  ./target/release/arbiter --listen "$address" >"$log" 2>&1 &
  pid=$!
  trap stop_release_server EXIT
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
