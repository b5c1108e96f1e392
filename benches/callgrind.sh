#!/usr/bin/env bash
# Instructions per call: each server under valgrind's callgrind, driven by h2load with the
# request bodies of the load benchmark. Instruction counts do not move with the machine's
# noise (load runs here vary by about +-6% between identical servers), so they settle
# differences that the load figures cannot.
#
# For every workload: the server starts fresh under callgrind on a port it picks, takes
# WARMUP calls, its counters are zeroed (callgrind_control -z), takes CALLS calls, and
# its counters are dumped; the figure is the dump's instructions divided by CALLS (every
# thread of the server; the kernel's part is not counted). Every call must come back
# with its expected reply bytes (the same check as tools/h2load.rs: DATA received
# = calls x the reply frame; for the workloads on the clock, whose replies say each
# side's time left, within 16 bytes an item), or the run stops.
#
# CheckBatch and PlayMany calls carry many items (checks, or moves: the ITEMS of
# target/h2load/NAME.items): those take CALLS/ITEMS calls (at least 2; WARMUP/ITEMS, at
# least 1, for the warm-up) on one connection, two in flight, and the table also shows
# instructions per item, beside the one-decision calls'.
#
# With --games, the live games instead: each server plays GAMES whole games of each kind
# (after as many for warm-up), one move in flight (benches/callgrind_play.py, a grpcio
# client: the moves tools/load.rs plays); the figure is per message, stream opening
# and closing included. Arbiter's moves are recorded and replayed to the baseline.
#
# With --encoding gzip|deflate|zstd, every request body is compressed (python3's gzip and
# zlib at level 6, as tonic compresses; the zstd command at level 3, zstd's default) and
# posted with grpc-encoding; with --compressed-replies the calls also accept that
# encoding, so that Arbiter compresses its replies, whose size is then taken from the
# first call (and every other call must match it). For Arbiter only: the baseline accepts
# no compressed request.
#
# Usage: bash benches/callgrind.sh [--calls N] [--warmup N] [--only LIST] [--annotate]
#                                   [--games [--game-count N]]
#                                   [--encoding NAME [--compressed-replies]]
#                                   [--server NAME=BINARY[,ARG...]]...
#   default servers: arbiter=target/release/arbiter and
#                    baseline=target/release/examples/baseline_server; a server whose
#                    NAME starts with "baseline" is checked against the empty reply,
#                    any other (and "baseline-same", the same-bytes baseline, run as
#                    --server baseline-same=target/release/examples/baseline_server,--same-bytes)
#                    against Arbiter's
#   --only           workloads whose name contains one of these (comma-separated)
#   --annotate       also print callgrind_annotate's top functions for each run
# The request bodies and expected replies come from tools/h2load.rs (target/h2load);
# they are generated first if missing (target/release/examples/h2load --prepare). Needs valgrind (apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

calls=5000
warmup=2000
only=""
annotate=0
games=0
game_count=100
encoding=""
compressed_replies=0
servers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) calls="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --annotate) annotate=1; shift ;;
    --games) games=1; shift ;;
    --game-count) game_count="$2"; shift 2 ;;
    --server) servers+=("$2"); shift 2 ;;
    --encoding) encoding="$2"; shift 2 ;;
    --compressed-replies) compressed_replies=1; shift ;;
    -h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ ${#servers[@]} -eq 0 ]; then
  servers=("arbiter=target/release/arbiter" "baseline=target/release/examples/baseline_server")
fi
command -v valgrind >/dev/null || { echo "valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
command -v h2load >/dev/null || { echo "h2load is missing (apt-get install nghttp2-client)" >&2; exit 1; }

out=target/callgrind
mkdir -p "$out"
if ! ls target/h2load/PlayMany*.request >/dev/null 2>&1; then
  cargo build --release --bins --examples
  ./target/release/examples/h2load --prepare >/dev/null
fi

# Starts "$@" under callgrind; sets pid and addr.
start() {
  local log=$1; shift
  : >"$log"
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out.%p" "$@" \
    --listen 127.0.0.1:0 >"$log" 2>&1 &
  pid=$!
  addr=""
  for _ in $(seq 1 600); do
    addr=$(sed -n 's/.* listening on \([0-9.:]*\).*/\1/p' "$log" | head -1)
    [ -n "$addr" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "no listening line from $*" >&2; cat "$log" >&2; exit 1
}

# The extra headers of every call (--encoding).
headers=()
if [ -n "$encoding" ]; then
  headers+=(-H "grpc-encoding: $encoding")
  [ $compressed_replies = 1 ] && headers+=(-H "grpc-accept-encoding: $encoding")
fi

# Writes request body $1 (a gRPC frame) to $2 with its message compressed in $encoding.
encode() {
  local message
  case "$encoding" in
    gzip|deflate)
      python3 -c '
import gzip, sys, zlib
body, out = open(sys.argv[1], "rb").read(), b""
while body:  # every message of the body (a whole stream holds several)
    length = int.from_bytes(body[1:5], "big")
    message, body = body[5:5 + length], body[5 + length:]
    packed = gzip.compress(message, 6, mtime=0) if sys.argv[3] == "gzip" else zlib.compress(message, 6)
    out += b"\x01" + len(packed).to_bytes(4, "big") + packed
open(sys.argv[2], "wb").write(out)
' "$1" "$2" "$encoding" ;;
    zstd)
      python3 -c '
import subprocess, sys
body, out = open(sys.argv[1], "rb").read(), b""
while body:  # every message of the body, each with the zstd command at level 3
    length = int.from_bytes(body[1:5], "big")
    message, body = body[5:5 + length], body[5 + length:]
    packed = subprocess.run(["zstd", "-q", "-3", "-c"], input=message, capture_output=True, check=True).stdout
    out += b"\x01" + len(packed).to_bytes(4, "big") + packed
open(sys.argv[2], "wb").write(out)
' "$1" "$2" ;;
    *) echo "unknown encoding $encoding (gzip, deflate or zstd)" >&2; exit 2 ;;
  esac
}

# The DATA bytes of one call of body $1 to $2.
reply_bytes() {
  h2load -n 1 -d "$1" -H 'content-type: application/grpc' -H 'te: trailers' "${headers[@]}" "$2" |
    sed -n 's/^traffic: .*(\([0-9]*\)) data.*/\1/p'
}

# Posts $2 calls of body $1 to $3 and checks each came back with $4 bytes of DATA ($5
# connections, $6 streams in flight on each); within $7 bytes a call, for replies whose
# clocks differ from run to run.
drive() {
  local body=$1 n=$2 url=$3 reply_size=$4 c=${5:-4} m=${6:-8} margin=${7:-0} result data expected
  result=$(h2load -c "$c" -m "$m" -n "$n" -d "$body" -H 'content-type: application/grpc' \
    -H 'te: trailers' "${headers[@]}" "$url")
  data=$(sed -n 's/^traffic: .*(\([0-9]*\)) data.*/\1/p' <<<"$result")
  expected=$(( n * reply_size ))
  if ! grep -q "$n succeeded, 0 failed" <<<"$result" || [ -z "$data" ] ||
    [ $(( data > expected ? data - expected : expected - data )) -gt $(( n * margin )) ]; then
    echo "$url: expected $n calls and $expected bytes of DATA (within $(( n * margin ))); h2load said:" >&2
    echo "$result" >&2
    exit 1
  fi
}

# Zeroes the counters of $pid, runs "$@", dumps them; sets dump and total.
measure() {
  callgrind_control -z "$pid" >/dev/null 2>&1
  "$@"
  callgrind_control -d "$pid" >/dev/null 2>&1
  dump=$(ls "$out/callgrind.out.$pid".* | head -1)
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  total=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$dump" | head -1)
  [ -n "$total" ] || total=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$dump" | head -1)
}

if [ $games = 1 ]; then
  python=${PYTHON:-.tools/venv/bin/python}
  if [ ! -x "$python" ]; then
    python3 -m venv .tools/venv
    "$python" -m pip install --quiet --disable-pip-version-check -r tests/interop/requirements.txt
  fi
  printf '| live game | server | instructions per message |\n|---|---|---:|\n'
  for game in PlayTicTacToe PlayOthello PlayConnectFour PlayGomoku; do
    if [ -n "$only" ] && ! grep -q -E "$(tr , '|' <<<"$only")" <<<"$game"; then continue; fi
    script="$out/$game.moves.json"
    rm -f "$script"
    # Servers that play by the rules first: they record the script the others replay.
    for server in "${servers[@]}"; do [[ "${server%%=*}" == baseline* ]] || echo "$server"; done >"$out/order"
    for server in "${servers[@]}"; do [[ "${server%%=*}" == baseline* ]] && echo "$server"; done >>"$out/order"
    while read -r server; do
      label=${server%%=*}
      IFS=, read -ra argv <<<"${server#*=}"
      if [[ "$label" == baseline* ]]; then
        [ -f "$script" ] || { echo "the baseline needs an Arbiter server first (--games)" >&2; exit 1; }
        follow=(--script "$script")
      else
        follow=(--record "$script")
      fi
      start "$out/$game.$label.log" "${argv[@]}"
      "$python" benches/callgrind_play.py "$addr" "$game" "$game_count" "${follow[@]}" >/dev/null
      measure "$python" benches/callgrind_play.py "$addr" "$game" "$game_count" "${follow[@]}" \
        >"$out/$game.$label.sent"
      sent=$(cat "$out/$game.$label.sent")
      printf '| %s | %s | %d |\n' "$game" "$label" $(( total / sent ))
      mv "$dump" "$out/$game.$label.callgrind"
      rm -f "$out/callgrind.out.$pid"*
    done <"$out/order"
  done
  exit 0
fi

printf '| workload | server | instructions per call | items per call | instructions per item |\n|---|---|---:|---:|---:|\n'
for request in target/h2load/*.request; do
  name=$(basename "$request" .request)
  workload=${name//_/ }
  if [ -n "$only" ]; then
    keep=0
    IFS=, read -ra wanted <<<"$only"
    for w in "${wanted[@]}"; do [[ "$workload" == *"$w"* ]] && keep=1; done
    [ $keep = 1 ] || continue
  fi
  rpc=${name%%_*}
  items=1
  [ -f "target/h2load/$name.items" ] && items=$(cat "target/h2load/$name.items")
  n=$calls; w=$warmup; c=4; m=8
  if [ "$rpc" = CheckBatch ] || [ "$rpc" = PlayMany ]; then
    n=$(( (calls + items - 1) / items )); [ $n -ge 2 ] || n=2
    w=$(( (warmup + items - 1) / items )); [ $w -ge 1 ] || w=1
    c=1; m=2
  fi
  for server in "${servers[@]}"; do
    label=${server%%=*}
    IFS=, read -ra argv <<<"${server#*=}"
    # A server labelled baseline... answers as the baseline; any other as Arbiter.
    kind=arbiter
    [[ "$label" == baseline* ]] && kind=baseline
    [[ "$label" == baseline-same* ]] && kind=arbiter
    reply="target/h2load/$name.$kind.reply"
    [ -f "$reply" ] || { echo "no expected reply $reply for $label" >&2; exit 1; }
    body=$request
    if [ -n "$encoding" ]; then
      body="$out/$name.$encoding.request"
      encode "$request" "$body"
      workload="${name//_/ } ($encoding request, $(stat -c %s "$body") bytes of $(stat -c %s "$request"))"
      [ $compressed_replies = 1 ] && workload="$workload, $encoding replies"
    fi
    start "$out/$name.$label.log" "${argv[@]}"
    url="http://$addr/arbiter.v1.ArbiterService/$rpc"
    reply_size=$(stat -c %s "$reply")
    if [ $compressed_replies = 1 ]; then
      reply_size=$(reply_bytes "$body" "$url")
      workload="$workload ($reply_size bytes of $(stat -c %s "$reply"))"
    fi
    # A clocked workload's replies say each side's time left, whose varints vary in
    # length: 16 bytes an item either way (two Durations' nanos, and a length or two).
    margin=0
    [[ "$name" == *clocked* && $kind == arbiter ]] && margin=$(( items * 16 ))
    drive "$body" "$w" "$url" "$reply_size" "$c" "$m" "$margin"
    measure drive "$body" "$n" "$url" "$reply_size" "$c" "$m" "$margin"
    printf '| %s | %s | %d | %d | %d |\n' "$workload" "$label" $(( total / n )) "$items" \
      $(( total / n / items ))
    if [ $annotate = 1 ]; then
      callgrind_annotate --inclusive=no "$dump" 2>/dev/null | sed -n '1,40p' >"$out/$name.$label.top"
      echo "(top functions: $out/$name.$label.top)" >&2
    fi
    mv "$dump" "$out/$name.$label.callgrind"
    rm -f "$out/callgrind.out.$pid"*
  done
done
