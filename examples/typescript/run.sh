#!/usr/bin/env bash
# CI entry of the TypeScript client (examples/typescript/): finds Node 20 or newer (the
# machine's, else Node 20 from Debian 13's packages, unpacked into .tools/node: see below),
# installs the npm packages of package-lock.json, builds the client as README.md says
# (`npm ci && npm run build`: types generated from proto/ by proto-loader-gen-types, tsc, the
# proto copied into dist/proto), runs the client (`node dist/client.js`) against a running
# server, then starts three replicas of the server binary on 127.0.0.1 port 0, runs the
# client balanced over them from a copy of dist/ outside the repository (`node
# dist/client.js A,B,C`, as README.md writes it), and runs `npm test` (node --test:
# src/arbiter.test.ts, the channel and the retry policy against bare HTTP/2 witnesses;
# src/replicas.test.ts, balancing, draining and resuming over the replicas). The replicas
# are killed on exit whatever happens; every step is bounded by `timeout`.
#
#   bash examples/typescript/run.sh --address HOST:PORT --binary PATH_TO_ARBITER
#   ARBITER_NODE=debian13 bash examples/typescript/run.sh ...  # Debian 13's Node 20 even
#                                                              # where the machine has one
#
# A rerun reuses .tools/node, and node_modules/ when package-lock.json has not changed since
# it was installed. Exits non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/../../tests/lib/client_args.sh"
. "$here/../../tests/lib/release_server.sh"
parse_client_args typescript "$@"
cd "$here"

# --- Node 20 or newer ------------------------------------------------------------------------
# The machine's node and npm when that node is 20 or newer. Otherwise (Debian 12 has Node 18,
# a fresh machine none; or ARBITER_NODE=debian13) Node 20 from Debian 13 (trixie), with
# trixie's security updates, fetched the way examples/go/run.sh fetches Go: the .debs of nodejs and of all
# it depends on, resolved by apt against trixie's signed index, kept apart in .tools/node/apt
# (the machine's sources and package database are neither read nor changed), unpacked with
# `dpkg-deb -x` into .tools/node/root. Nothing is installed system-wide. Two things make
# Debian 13's node run from there on Debian 12:
#  - it needs trixie's C library (2.38 or newer; Debian 12 has 2.36) and libraries (libstdc++
#    13, OpenSSL 3.4, ICU 76, libuv 1.46): the node binary is given trixie's dynamic loader in
#    .tools as its interpreter, and an rpath to trixie's libraries beside it ($ORIGIN), by
#    trixie's patchelf; every other program keeps the machine's own;
#  - Debian builds Node with six built-in modules (acorn, acorn-walk, undici, minimatch,
#    cjs-module-lexer's two) read at start-up from files under /usr/share/nodejs, a path
#    compiled into libnode: in the copy in .tools that path is rewritten, at the same length,
#    as /proc/self/fd/99/, and the `node` that run.sh puts first on PATH (.tools/node/bin/node)
#    opens .tools/node/root/usr/share/nodejs as file descriptor 99, which node's child
#    processes inherit (node --test's runners, npm's scripts).
# npm is not taken from Debian 13 (its npm needs some 400 packages, node-gyp's compilers and
# Python among them): corepack, which Debian 13's nodejs ships, fetches npm $npm_version from
# the npm registry and checks it against the SHA-512 below (the registry's dist.integrity).
npm_version=11.21.3
npm_sha512=e427fe8c4f9772d6e11ffce338ea970be8adcbb79e73f4e4938425dfcb5feb0fb586da76c183c7984e1cd51d44b370d8db6ec0735e3e48bae5609c2406271b4e
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "${ARBITER_NODE:-}" != debian13 ] && command -v node >/dev/null && command -v npm >/dev/null &&
  [ "$(node_major)" -ge 20 ]; then
  echo "typescript: the machine's Node $(node --version), npm $(npm --version)"
else
  if [ "${ARBITER_NODE:-}" = debian13 ]; then
    echo "typescript: ARBITER_NODE=debian13: Node 20 from Debian 13"
  elif command -v node >/dev/null; then
    echo "typescript: the machine has Node $(node --version 2>/dev/null || echo '(unusable)')$(command -v npm >/dev/null || echo ' without npm'): Node 20 from Debian 13"
  else
    echo "typescript: the machine has no Node: Node 20 from Debian 13"
  fi
  tools=$repo/.tools/node
  root=$tools/root
  packages="nodejs patchelf"
  node_stamp="$packages npm@$npm_version+sha512.$npm_sha512"
  if ! [ -f "$tools/complete" ] || [ "$(cat "$tools/complete")" != "$node_stamp" ]; then
    apt_dir=$tools/apt
    rm -rf "$root" "$tools/bin" "$tools/corepack" "$tools/complete"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" \
      "$apt_dir/none" "$root" "$tools/bin"
    {
      echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main"
      echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security trixie-security main"
    } >"$apt_dir/sources.list"
    : >"$apt_dir/status" # nothing installed: apt takes every dependency from trixie
    apt_trixie() {
      timeout 600 nice -n 10 apt-get -q -o Dir::Etc::SourceList="$apt_dir/sources.list" \
        -o Dir::Etc::SourceParts="$apt_dir/none" -o Dir::Etc::Preferences="$apt_dir/none/preferences" \
        -o Dir::Etc::PreferencesParts="$apt_dir/none" -o Dir::State::Lists="$apt_dir/lists" \
        -o Dir::Cache="$apt_dir/cache" -o Dir::State::status="$apt_dir/status" \
        -o APT::Sandbox::User=root -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false "$@"
    }
    apt_trixie update >/dev/null
    # shellcheck disable=SC2086
    closure=$(apt_trixie install -s --no-install-recommends $packages | awk '$1 == "Inst" { print $2 }')
    if [ -z "$closure" ]; then
      echo "typescript: apt found no $packages in trixie" >&2
      exit 1
    fi
    echo "typescript: fetching from Debian 13 (trixie):" $closure
    rm -f "$apt_dir/debs"/*.deb
    # shellcheck disable=SC2086
    (cd "$apt_dir/debs" && apt_trixie download $closure >/dev/null)
    for deb in "$apt_dir/debs"/*.deb; do
      dpkg-deb -x "$deb" "$root"
      echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$root/.versions"
    done

    libnode='' loader=''
    for candidate in "$root"/usr/lib/*/libnode.so.*; do
      [ -f "$candidate" ] && [ ! -L "$candidate" ] && libnode=$candidate && break
    done
    for candidate in "$root"/usr/lib64/ld-linux*.so.* "$root"/usr/lib/ld-linux*.so.* "$root"/usr/lib/*/ld-linux*.so.*; do
      [ -e "$candidate" ] && loader=$candidate && break
    done
    if [ -z "$libnode" ] || [ -z "$loader" ]; then
      echo "typescript: no libnode or no dynamic loader in what trixie gave" >&2
      exit 1
    fi
    libdir=$(dirname "$libnode")
    # patchelf from trixie, run by trixie's loader on trixie's libraries.
    patchelf() { "$loader" --library-path "$libdir" "$root/usr/bin/patchelf" "$@"; }
    patchelf --set-interpreter "$loader" --force-rpath \
      --set-rpath "\$ORIGIN/../lib/${libdir#"$root/usr/lib/"}" "$root/usr/bin/node"
    # Every string that starts with /usr/share/nodejs/ (18 bytes) starts with
    # /proc/self/fd/99// instead.
    perl -0777 -pi -e 's{\0/usr/share/nodejs/}{\0/proc/self/fd/99//}g' "$libnode"
    if [ "$(grep -c -a '/proc/self/fd/99//' "$libnode")" = 0 ]; then
      echo "typescript: libnode names no /usr/share/nodejs/ path to rewrite" >&2
      exit 1
    fi

    {
      echo '#!/bin/bash'
      echo '# Node 20 from Debian 13, unpacked by examples/typescript/run.sh: its built-in modules are'
      echo '# read from file descriptor 99, and where the machine has no CA certificates (OpenSSL'"'"'s'
      echo '# store is the default of Debian'"'"'s node) Node'"'"'s own are used.'
      echo "exec 99<$(printf %q "$root/usr/share/nodejs") || exit 1"
      echo 'if ! [ -e /etc/ssl/certs/ca-certificates.crt ]; then'
      echo '  export NODE_OPTIONS="--use-bundled-ca${NODE_OPTIONS:+ $NODE_OPTIONS}"'
      echo 'fi'
      echo "exec $(printf %q "$root/usr/bin/node") \"\$@\""
    } >"$tools/bin/node"
    {
      echo '#!/bin/bash'
      echo "# npm $npm_version, fetched by corepack (Debian 13's) and checked against its SHA-512."
      echo "export COREPACK_HOME=$(printf %q "$tools/corepack") COREPACK_ENABLE_DOWNLOAD_PROMPT=0"
      echo 'export COREPACK_ENABLE_AUTO_PIN=0 COREPACK_ENABLE_STRICT=0'
      echo "exec $(printf %q "$tools/bin/node") $(printf %q "$root/usr/share/nodejs/corepack/dist/corepack.js") npm@$npm_version+sha512.$npm_sha512 \"\$@\""
    } >"$tools/bin/npm"
    chmod +x "$tools/bin/node" "$tools/bin/npm"
    echo "typescript: npm $npm_version from the npm registry, by corepack"
    timeout 300 "$tools/bin/npm" --version >/dev/null
    echo "$node_stamp" >"$tools/complete"
  fi
  export PATH="$tools/bin:$PATH"
  echo "typescript: Node $(node --version) (Debian's nodejs $(awk '$1 == "nodejs" { print $2 }' "$root/.versions")), npm $(npm --version)"
fi
if [ "$(node_major)" -lt 20 ]; then
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
