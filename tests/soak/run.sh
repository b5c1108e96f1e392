#!/usr/bin/env bash
# Soak: the release server on loopback port 0 (with --metrics-listen and short HTTP/2
# keepalive settings) and the fault-injecting TCP proxy of tests/faults/proxy.py in front
# of it; for --duration seconds (600 by default) at once: live games and PlayMany streams
# through the proxy resuming from their histories, unary and CheckBatch calls through the
# proxy whose answers are checked, malformed ~1 MB requests sent directly to the server
# (each answered INVALID_ARGUMENT, or every item `invalid`), and the proxy cycling its
# faults (a silent connection, resets mid-stream, latency and jitter). Then every game
# replayed directly and every reply compared, the gauges back to 0, no panic, and the
# server's resident memory flat after the warm-up. soak.py says what it checks.
# Loopback only; bounded by `timeout` to the duration plus 5 minutes.
#
# Run by hand with: bash tests/soak/run.sh [--duration SECONDS] [--warmup SECONDS]
#                   [--binary PATH] [other soak.py options, see --help]
# Without --binary it builds the release server only if there is none (cargo build
# --release --bin arbiter). A run shorter than 3 minutes with no --warmup gets a third
# of its duration as warm-up (--duration 60: --warmup 20), not the default minute.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

. tests/lib/release_server.sh
prepare_tools tests/faults/requirements.txt

binary='' duration=600 warmup='' rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --duration) duration=${2:?--duration needs seconds}; shift 2 ;;
    --warmup) warmup=${2:?--warmup needs seconds}; shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
case $duration in
  ''|*[!0-9]*) echo "soak: --duration must be whole seconds, got '$duration'" >&2; exit 2 ;;
esac
if [ -z "$warmup" ]; then
  if [ "$duration" -lt 180 ]; then warmup=$((duration / 3)); else warmup=60; fi
fi
if [ -z "$binary" ]; then
  binary="${CARGO_TARGET_DIR:-target}/release/arbiter"
  [ -x "$binary" ] || cargo build --release --bin arbiter
fi

timeout --kill-after=30 $((duration + 300)) "$venv/bin/python" tests/soak/soak.py --binary "$binary" \
  --duration "$duration" --warmup "$warmup" ${rest[@]+"${rest[@]}"}
