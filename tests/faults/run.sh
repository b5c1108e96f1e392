#!/usr/bin/env bash
# Bad-network test: the release server on loopback port 0 with short HTTP/2 keepalive
# settings, a fault-injecting TCP proxy in front of it (tests/faults/proxy.py: latency
# and jitter, connections reset mid-stream, connections black-holed), live games and
# PlayMany streams playing through it and resuming from their histories, then every game
# replayed directly against the server and its replies compared. faults.py says what it
# checks. Bounded to 3 minutes; loopback only.
#
# Run by hand with: bash tests/faults/run.sh [faults.py options, see --help]
# It builds the release server only if there is none (cargo build --release --bin arbiter).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

. tests/lib/release_server.sh
prepare_tools tests/faults/requirements.txt

binary="${CARGO_TARGET_DIR:-target}/release/arbiter"
[ -x "$binary" ] || cargo build --release --bin arbiter
timeout 180 "$venv/bin/python" tests/faults/faults.py --binary "$binary" "$@"
