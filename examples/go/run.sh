#!/usr/bin/env bash
# CI entry of the Go client (examples/go): installs Go, protoc and grpc-go from Debian's
# packages where missing, generates the stubs (`go generate`), builds the client and its
# tests offline, in module mode with go.mod as it is, against a vendor directory of
# Debian's sources; runs the client against a running server; then starts three
# replicas of the server binary on 127.0.0.1 port 0 and runs the tests over them
# (replicas_test.go: balancing, draining, resuming; retry_test.go: the retry policy).
#
#   bash examples/go/run.sh --address HOST:PORT --binary PATH/TO/arbiter
#
# Exits non-zero on any failure. Build output and the Go build cache go to .tools/go/
# (git ignores .tools/), reused on a rerun. No module proxy is used: Debian's grpc
# (1.33.3), protobuf (1.28.1), golang/protobuf (1.5.2), x/net and x/text are the
# versions go.mod requires; its genproto (2020-04-13) and x/sys (0.3.0) are a little
# older than go.mod's. go.sum is not checked (a vendored build does not read it).
set -euo pipefail

. "$(dirname "$0")/../../tests/lib/client_args.sh"
parse_client_args go "$@"

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tools=$repo/.tools/go
gocode=/usr/share/gocode/src

# --- Debian's packages -----------------------------------------------------------------
# golang-github-golang-protobuf-1-5-dev is named so that apt does not pick the 1.3
# series for grpc's "1-3 | 1-5" dependency: grpc and the stubs need the APIv2-backed 1.5.
packages="golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev
  golang-google-genproto-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev"
missing=
for package in $packages; do
  dpkg-query -W -f '${db:Status-Status}' "$package" 2>/dev/null | grep -qx installed ||
    missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "go: installing$missing"
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  apt() { $sudo env DEBIAN_FRONTEND=noninteractive nice -n 10 apt-get -q -y -o DPkg::Lock::Timeout=600 "$@"; }
  # shellcheck disable=SC2086
  apt install --no-install-recommends $missing >/dev/null ||
    { apt update >/dev/null && apt install --no-install-recommends $missing >/dev/null; }
fi

# --- Build, offline --------------------------------------------------------------------
export GOPATH=$tools/gopath GOCACHE=$tools/cache GOPROXY=off GOFLAGS=-mod=vendor GO111MODULE=on
unformatted=$(gofmt -l "$here"/*.go)
if [ -n "$unformatted" ]; then
  echo "go: not gofmt-formatted: $unformatted" >&2
  exit 1
fi
(cd "$here" && GOFLAGS='' nice -n 10 go generate)

# The module is copied to $module, where a vendor directory links each module that
# go.mod requires to its source in $gocode (Debian installs one version of each).
# vendor/modules.txt lists the packages the build imports, found in GOPATH mode; a
# package that no module of go.mod provides fails the build here.
module=$tools/module
rm -rf "$module"
mkdir -p "$module"
cp "$here"/go.mod "$here"/*.go "$module"/
cp -r "$here"/arbiterv1 "$module"/
requires=$(cd "$module" && GOFLAGS='' go mod edit -json |
  awk -F'"' '/"Require"/ { r = 1 } r && /"Path"/ { p = $4 } r && /"Version"/ { print p "@" $4 }')
mkdir -p "$GOPATH/src/example.com"
ln -sfn "$module" "$GOPATH/src/example.com/arbiter-client"
mkdir -p "$module/vendor"
imports=$(cd "$GOPATH/src/example.com/arbiter-client" &&
  GO111MODULE=off GOFLAGS='' GOPATH="$GOPATH:/usr/share/gocode" \
    go list -deps -test -f '{{if not .Standard}}{{.ImportPath}}{{end}}' . |
  grep -v '^example.com/arbiter-client' | sort -u)
{
  for require in $requires; do
    path=${require%@*}
    echo "# $path ${require#*@}"
    goversion=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gocode/$path/go.mod" 2>/dev/null || true)
    echo "## explicit${goversion:+; go $goversion}"
    for package in $imports; do
      case $package/ in "$path"/*) echo "$package" ;; esac
    done
    mkdir -p "$module/vendor/$(dirname "$path")"
    ln -s "$gocode/$path" "$module/vendor/$path"
  done
} >"$module/vendor/modules.txt"
for package in $imports; do
  grep -qx "$package" "$module/vendor/modules.txt" ||
    { echo "go: $package is imported but no module in go.mod provides it" >&2; exit 1; }
done
(cd "$module" && nice -n 10 go vet . &&
  nice -n 10 go build -o "$tools/arbiter-client" . &&
  nice -n 10 go test -c -o "$tools/client.test" .)

# --- The client, against the server given ----------------------------------------------
# grpc-go 1.33 (Debian's) applies a retry policy only with GRPC_GO_RETRY=on; from 1.40 on
# it is the default.
export GRPC_GO_RETRY=on
echo "go: the client against $address"
timeout 120 "$tools/arbiter-client" "$address"

# --- Three replicas, balanced from the client ------------------------------------------
logs=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$logs"
}
trap cleanup EXIT
addresses='' metrics=''
# The third replica drains for 30 s on SIGTERM (the test watches it leave the rotation
# while still serving); the first two stop at once, ending their games UNAVAILABLE.
for drain in 0s 0s 30s; do
  log=$logs/replica${#pids[@]}.log
  "$binary" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
    --shutdown-drain "$drain" --shutdown-grace 0s >"$log" 2>&1 &
  pids+=($!)
  listening='' serving=''
  for _ in $(seq 1 300); do
    listening=$(sed -n 's/.*arbiter listening on \([0-9.]*:[0-9]*\).*/\1/p' "$log" | head -n 1)
    serving=$(sed -n 's/.*metrics on \(http:[^ ]*\).*/\1/p' "$log" | head -n 1)
    [ -n "$listening" ] && [ -n "$serving" ] && break
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$listening" ] || [ -z "$serving" ]; then
    echo "go: a replica did not start; its log:" >&2
    cat "$log" >&2
    exit 1
  fi
  addresses=$addresses${addresses:+,}$listening
  metrics=$metrics${metrics:+,}$serving
done
echo "go: the tests, with three replicas at $addresses"
pidlist=$(IFS=,; echo "${pids[*]}")
(cd "$here" && timeout 180 "$tools/client.test" -test.v \
  -replicas "$addresses" -metrics "$metrics" -pids "$pidlist")
if grep -l panicked "$logs"/*.log >&2; then
  echo "go: a replica panicked" >&2
  exit 1
fi
