#!/usr/bin/env bash
# CI entry of the TypeScript client (examples/typescript/): installs what is missing
# (Node from Debian's packages if there is none, the npm packages of package-lock.json),
# builds it as README.md says (`npm ci && npm run build`: types generated from proto/ by
# proto-loader-gen-types, tsc, the proto copied into dist/proto), runs the client
# (`node dist/client.js`) against a running server, then starts three replicas of the
# server binary on 127.0.0.1 port 0, runs the client balanced over them from a copy of
# dist/ outside the repository (`node dist/client.js A,B,C`, as README.md writes it), and
# runs `npm test` (node --test: src/arbiter.test.ts, the channel against bare HTTP/2
# witnesses; src/replicas.test.ts, balancing, draining and resuming over the replicas).
# The replicas are killed on exit whatever happens; every step is bounded by `timeout`.
#
#   bash examples/typescript/run.sh --address HOST:PORT --binary PATH_TO_ARBITER
#
# A rerun reuses node_modules/ when package-lock.json has not changed since it was
# installed. Exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/lib/client_args.sh"
. "$here/../../tests/lib/release_server.sh"
parse_client_args typescript "$@"
cd "$here"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "typescript: installing Node.js and npm from Debian's packages"
  DEBIAN_FRONTEND=noninteractive nice -n 10 apt-get install -y -q -o DPkg::Lock::Timeout=600 nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "typescript: Node.js 20 or newer is needed, this is $(node --version)" >&2
  exit 1
fi

# npm ci installs exactly the lock file; it is skipped while node_modules holds that
# install already (npm writes node_modules/.package-lock.json as it installs).
stamp=node_modules/.installed-from-lock
if ! [ -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "typescript: npm ci"
  timeout 600 nice -n 10 npm ci --no-audit --no-fund
  cp package-lock.json "$stamp"
fi
echo "typescript: npm run build"
timeout 300 nice -n 10 npm run --silent build

echo "typescript: the client against $address"
timeout 120 node dist/client.js "$address"

logs=$(mktemp -d)
pids=()
stop_replicas() {
  for pid in "${pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$logs"
}
trap stop_replicas EXIT

replicas='' pidlist=''
for i in 1 2 3; do
  # A short drain and grace: the test stops one replica gracefully and waits for it.
  # Not under `timeout`: the test signals the replicas by pid, and the trap kills them.
  "$binary" --listen 127.0.0.1:0 --shutdown-drain 1s --shutdown-grace 1s >"$logs/$i.log" 2>&1 &
  pids+=($!)
  disown $! # not a job of this shell, which would report the replica the test kills
done
for i in 1 2 3; do
  pid=${pids[$((i - 1))]}
  replica=$(address_in "$logs/$i.log" "$pid") || { echo "typescript: replica $i did not start" >&2; exit 1; }
  replicas=$replicas${replicas:+,}$replica
  pidlist=$pidlist${pidlist:+,}$pid
done

# dist/ carries its proto: a copy of it beside the same node_modules runs anywhere.
elsewhere=$logs/elsewhere
mkdir -p "$elsewhere"
cp -r dist package.json "$elsewhere"/
ln -s "$here/node_modules" "$elsewhere/node_modules"
echo "typescript: the client balanced over three replicas, from a copy of dist/ outside the repository"
(cd "$elsewhere" && timeout 120 node dist/client.js "$replicas")

echo "typescript: npm test, with three replicas at $replicas"
status=0
ARBITER_REPLICAS=$replicas ARBITER_PIDS=$pidlist timeout 300 npm test || status=$?
if grep -q panicked "$logs"/*.log; then
  echo "typescript: a replica panicked; the logs:" >&2
  cat "$logs"/*.log >&2
  status=1
fi
exit "$status"
