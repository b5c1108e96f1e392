#!/usr/bin/env bash
# Interop tests: builds the release server, starts it on a free port on 127.0.0.1, waits
# for its health check to answer SERVING, runs the grpcurl and Python checks in
# interop.py, and stops the server by its own pid whatever happens.
#
# Run by hand with: bash tests/interop/run.sh
# It installs what it needs (tests/interop/requirements.txt) into .tools/venv, which git
# ignores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

venv="$repo/.tools/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/interop/requirements.txt
grpcurl="$venv/bin/grpcurl"

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

ready=
for _ in $(seq 1 120); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "interop: the server exited before serving; its log:" >&2
    cat "$log" >&2
    exit 1
  fi
  if "$grpcurl" -plaintext -max-time 2 -d '{"service": ""}' "$address" grpc.health.v1.Health/Check 2>/dev/null | grep -q '"SERVING"'; then
    ready=1
    break
  fi
  sleep 0.5
done
if [ -z "$ready" ]; then
  echo "interop: the server never answered SERVING on $address; its log:" >&2
  cat "$log" >&2
  exit 1
fi

status=0
"$venv/bin/python" tests/interop/interop.py --address "$address" --grpcurl "$grpcurl" || status=$?
if grep -q "panicked" "$log"; then
  echo "interop: the server panicked; its log:" >&2
  cat "$log" >&2
  status=1
fi
exit "$status"
