#!/usr/bin/env bash
# Abuse test: starts the release server on loopback port 0, runs abuse.py (hostile
# traffic while well-formed calls are checked), then checks the server is still up,
# answering, and never panicked. Bounded in time; loopback only.
#
# Run by hand with: bash tests/abuse/run.sh [--scale N]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

. tests/lib/release_server.sh
prepare_tools tests/abuse/requirements.txt
start_release_server

for _ in $(seq 1 120); do
  if "$venv/bin/python" -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=1)" 2>/dev/null; then
    break
  fi
  kill -0 "$pid" 2>/dev/null || { echo "abuse: the server exited; its log:" >&2; cat "$log" >&2; exit 1; }
  sleep 0.5
done

status=0
timeout 600 "$venv/bin/python" tests/abuse/abuse.py --address "$address" --pid "$pid" "$@" || status=$?
server_log_is_clean || status=1
exit "$status"
