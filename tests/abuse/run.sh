#!/usr/bin/env bash
# Abuse test: starts the release server on a free loopback port, runs abuse.py (hostile
# traffic while well-formed calls are checked), then checks the server is still up,
# answering, and never panicked. Bounded in time; loopback only.
#
# Run by hand with: bash tests/abuse/run.sh [--scale N]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

venv="$repo/.tools/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/abuse/requirements.txt

cargo build --release --bin arbiter
port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
address="127.0.0.1:$port"
log=$(mktemp)
./target/release/arbiter --listen "$address" >"$log" 2>&1 &
pid=$!
stop() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$log"
}
trap stop EXIT

for _ in $(seq 1 120); do
  if "$venv/bin/python" -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=1)" 2>/dev/null; then
    break
  fi
  kill -0 "$pid" 2>/dev/null || { echo "abuse: the server exited; its log:" >&2; cat "$log" >&2; exit 1; }
  sleep 0.5
done

status=0
timeout 600 "$venv/bin/python" tests/abuse/abuse.py --address "$address" --pid "$pid" "$@" || status=$?
if grep -q "panicked" "$log"; then
  echo "abuse: the server panicked; its log:" >&2
  cat "$log" >&2
  status=1
fi
kill -0 "$pid" 2>/dev/null || { echo "abuse: the server died" >&2; status=1; }
exit "$status"
