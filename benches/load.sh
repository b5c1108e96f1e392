#!/usr/bin/env bash
# The load benchmark: Arbiter against the empty-handler baseline (tools/baseline_server.rs),
# side by side, each server a fresh process pinned to CPU 0, the load generator on CPU 1.
#
# Two generators, both run by default:
#
#   h2load    tools/h2load.rs drives the unary workloads, whole live games posted
#             at once, CheckBatch (1,000 checks per call; 50 of 100x100) and PlayMany
#             (1,000 games stepped together to their ends, the whole session one body,
#             then half-close), with h2load (Debian's nghttp2-client, installed here if missing)
#             from gRPC request bodies framed from the proto, at saturation (16
#             connections x 32 streams) and at one call in flight. Rounds alternate Arbiter, Arbiter with --metrics-listen (as
#             production runs), the same-bytes baseline (baseline_server --same-bytes:
#             Arbiter's reply bytes from stock prost types built once and cloned) and
#             the empty baseline; the batch workloads also per item (checks/s or
#             moves/s, CPU per item, ratios to the same run's unary calls). Every measured call is checked: h2load
#             must count no failure, log HTTP 200 for each call, and receive exactly
#             calls x the expected reply frame in DATA bytes (a gRPC error is a
#             trailers-only 200 without DATA); a tonic call before and after each run
#             must return the whole expected reply (Arbiter's computed by the real
#             service in-process, the baseline's the empty message).
#   tonic     tools/load.rs, a tonic client: the only generator of the live games
#             (PlayTicTacToe, PlayOthello, PlayConnectFour, PlayGomoku: h2load cannot
#             play them), and a second point of view on the unary workloads. Run without
#             metrics on the unary workloads and the games, then with --metrics-listen on
#             the games.
#
# Both report calls/s, p50/p99 latency, the server's CPU time per call (utime + stime of
# /proc/PID/stat) and the Arbiter/baseline ratios, as Markdown tables on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
Usage: bash benches/load.sh [OPTIONS]

Runs the load benchmark of Arbiter against the empty-handler baseline (servers on CPU 0,
load on CPU 1, fresh processes, alternating, several rounds). Default: both generators,
3 rounds, metrics off and on (about 17 minutes on 2 cores).

Options:
  --h2load-only       only the h2load run of the unary workloads (tools/h2load.rs)
  --tonic-only        only the tonic-client runs (tools/load.rs): live games and unary
  --rounds N          rounds per workload (default 3)
  --only LIST         only the workloads whose names contain one of these
                      (comma-separated), e.g. --only Othello,PlayTicTacToe
  --no-metrics        skip the runs with Arbiter's --metrics-listen on
  --no-same-bytes     skip the same-bytes baseline (baseline_server --same-bytes)
  --quick             a validation run: 1 round, short warm-ups and measurements
  --h2load-arg ARG    pass ARG to target/release/examples/h2load (repeatable; see its --help)
  --tonic-arg ARG     pass ARG to target/release/examples/load (repeatable; see its --help)
  -h, --help          this help

Every call must succeed with the expected reply, or the run exits non-zero.
Rerun exactly what BENCHMARKS.md shows: bash benches/load.sh
EOF
}

run_h2load=1
run_tonic=1
rounds=3
only=""
metrics=1
same_bytes=1
quick=0
h2load_args=()
tonic_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --h2load-only) run_tonic=0 ;;
    --tonic-only) run_h2load=0 ;;
    --rounds) rounds=$2; shift ;;
    --only) only=$2; shift ;;
    --no-metrics) metrics=0 ;;
    --no-same-bytes) same_bytes=0 ;;
    --quick) quick=1 ;;
    --h2load-arg) h2load_args+=("$2"); shift ;;
    --tonic-arg) tonic_args+=("$2"); shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$quick" = 1 ]; then
  rounds=1
  short=(--warmup 300ms --duration 1s --latency-duration 500ms)
else
  short=()
fi

if [ "$run_h2load" = 1 ] && ! command -v h2load >/dev/null; then
  apt-get install -y nghttp2-client || { apt-get update && apt-get install -y nghttp2-client; }
fi

cargo build --release --bin arbiter --example baseline_server --example load --example h2load

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(h2load --version 2>/dev/null | head -1); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$run_h2load" = 1 ]; then
  echo
  echo "## h2load: unary workloads, live games, CheckBatch and PlayMany"
  echo
  metrics_arg=(--metrics both)
  [ "$metrics" = 1 ] || metrics_arg=(--metrics off)
  only_arg=()
  [ -z "$only" ] || only_arg=(--only "$only")
  [ "$same_bytes" = 0 ] || only_arg+=(--same-bytes)
  target/release/examples/h2load --rounds "$rounds" "${metrics_arg[@]}" "${only_arg[@]}" \
    "${short[@]}" "${h2load_args[@]}"
fi

# One run of the tonic client (tools/load.rs, on CPU 1) under the heading "tonic
# client: $1", on the workloads $2; any further arguments go to it before the common ones.
tonic_run() {
  local heading=$1 workloads=$2
  shift 2
  echo
  echo "## tonic client: $heading"
  echo
  taskset -c 1 target/release/examples/load --rounds "$rounds" --only "$workloads" \
    "$@" "${short[@]}" "${tonic_args[@]}"
}

if [ "$run_tonic" = 1 ]; then
  # The unary workloads of the issue and the live games; the CheckConnectFour 10x10,
  # 25x25 and 50x50 sweep runs with --only 'CheckConnectFour'.
  tonic_only=${only:-"CheckOthelloMove 8x8,ListOthelloMoves 8x8,CheckConnectFour 6x7,CheckConnectFour 100x100,JudgeTicTacToe,CheckGomokuMove 15x15,Play"}
  tonic_run "unary workloads and live games, metrics off" "$tonic_only"
  if [ "$metrics" = 1 ]; then
    games_only=${only:-"Play"}
    tonic_run "live games, Arbiter with --metrics-listen 127.0.0.1:0" "$games_only" \
      --arbiter-arg=--metrics-listen --arbiter-arg=127.0.0.1:0
  fi
fi
