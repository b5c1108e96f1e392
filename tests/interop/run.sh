#!/usr/bin/env bash
# Interop tests: builds the release server, starts it on 127.0.0.1 port 0 (the address
# it bound is read from its log), waits for its health check to answer SERVING, and stops
# it by its own pid whatever happens. Against it: the grpcurl and Python checks of
# interop.py, with the Python client's package (examples/python) as installed, run from
# outside the checkout; replicas.py, three replicas of its own driven from grpcio with
# client-side round robin and health checking; README.md as run (readme_commands.py:
# `cargo run --release` as written on the default port 127.0.0.1:50051, `--help`, the
# grpcurl install and every README command as written, the Rust and Python client
# commands, and README's claims); examples/grpcurl.sh, each reply compared with the one
# README.md and docs/walkthrough.md show (doc_replies.py); the Python client's tests; and
# the Go, Java and TypeScript clients (examples/go, examples/java, examples/typescript),
# the same checks from their own stacks.
#
# Run by hand with: bash tests/interop/run.sh
# It installs what it needs (tests/interop/requirements.txt, and the Python client's
# package with its requirements) into .tools/venv, which git ignores. README's commands
# install into .venv, as README says (git ignores it too).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

. tests/lib/release_server.sh
prepare_tools tests/interop/requirements.txt
# The Python client's package, built as pip builds it (its stubs generated from its copy
# of the contract, which must be proto/'s), with what its tests need.
"$venv/bin/pip" install --quiet --disable-pip-version-check ./examples/python \
  -r examples/python/requirements.txt
grpcurl="$venv/bin/grpcurl"
start_release_server

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
echo "interop: three replicas from grpcio, round robin with client-side health checking"
# Bounded: a replica that never logs its address would otherwise hold the run.
timeout 300 "$venv/bin/python" tests/interop/replicas.py --binary "$repo/target/release/arbiter" || status=$?
echo "interop: README.md as run: cargo run --release on 127.0.0.1:50051, --help, its commands as written, its claims"
# On 127.0.0.1:50051 as README says; where that port is taken, against this server, saying so.
python3 tests/interop/readme_commands.py --serve --address "$address" || status=$?
echo "interop: examples/grpcurl.sh, every call of README.md and docs/walkthrough.md, each reply as they show"
python3 tests/interop/doc_replies.py --address "$address" --grpcurl "$grpcurl" \
  --every-rpc docs/walkthrough.md README.md docs/walkthrough.md || status=$?
echo "interop: the Python client's tests (examples/python)"
"$venv/bin/python" -m pytest -q -p no:cacheprovider examples/python || status=$?
# The Go, Java and TypeScript clients, each built as its own ecosystem builds it (offline,
# from Debian's packages and npm), run against this server, then over three replicas of
# their own (balancing, draining, resuming). Each says what it installs and checks.
for client in go java typescript; do
  echo "interop: the $client client (examples/$client)"
  started=$SECONDS
  timeout 900 bash "examples/$client/run.sh" --address "$address" --binary "$repo/target/release/arbiter" || status=$?
  echo "interop: the $client client took $((SECONDS - started)) s"
done
server_log_is_clean || status=1
exit "$status"
