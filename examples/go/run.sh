#!/usr/bin/env bash
# CI entry of the Go client (examples/go): fetches Go 1.24, grpc-go 1.64 and the protoc
# plugins from Debian 13 (trixie)'s packages, and buf from npm; generates the stubs with
# `buf generate` (buf.gen.yaml, as README.md says); checks that go.mod names the versions
# of the Debian sources it builds from and that go.sum holds their hashes; builds, vets
# and runs the client against a running server, offline, against a vendor directory of
# those sources; then starts three replicas of the server binary on 127.0.0.1 port 0 and
# runs `go test` over them (replicas_test.go: balancing, draining, resuming, a malformed
# request; retry_test.go: the retry policy and a cancelled resume loop).
#
#   bash examples/go/run.sh --address HOST:PORT --binary PATH/TO/arbiter
#
# Exits non-zero on any failure. Nothing is installed system-wide (but Node.js and npm
# from Debian 12 when there is no npm at all, for buf): the .debs are unpacked with
# `dpkg-deb -x` into .tools/go/root, with apt's trixie index kept in .tools/go/apt, and
# buf goes to .tools/buf (git ignores .tools/); a rerun reuses them. No module proxy is
# used: the build is offline, in module mode with go.mod as it is.
#
# One module is not the version go.mod names: google.golang.org/genproto/googleapis/rpc
# (go.mod: v0.0.0-20240318140521-94a12d6c2237, what grpc-go 1.64.0 requires). Debian
# packages no version of that module, only the 2021 genproto it was split from, whose
# googleapis/rpc packages (code, errdetails, status: stubs of the same google/rpc
# protos) the build uses in its place. Debian's grpc-go also regenerated its own stubs
# with github.com/golang/protobuf's ptypes, so the build vendors Debian's
# github.com/golang/protobuf 1.5.4 as well (the version grpc-go 1.64.0's go.mod requires,
# so the one a user's build selects too, though upstream's packages import it no more);
# the copy of go.mod that the build reads names it, as vendoring requires.
set -euo pipefail

. "$(dirname "$0")/../../tests/lib/client_args.sh"
parse_client_args go "$@"

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tools=$repo/.tools/go
root=$tools/root
gocode=$root/usr/share/gocode/src

# --- Debian 13's packages, unpacked into $root -------------------------------------------
packages="golang-1.24-go golang-1.24-src protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev
  golang-google-protobuf-dev golang-google-genproto-dev golang-github-golang-protobuf-1-5-dev
  golang-golang-x-net-dev golang-golang-x-sys-dev golang-golang-x-text-dev"
packages=$(echo $packages)
if ! [ -f "$root/.packages" ] || [ "$(cat "$root/.packages")" != "$packages" ]; then
  echo "go: fetching from Debian 13 (trixie): $packages"
  apt_dir=$tools/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$apt_dir/none"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    >"$apt_dir/sources.list"
  : >"$apt_dir/status"
  # apt with trixie's index of its own: the machine's sources, preferences and package
  # database are neither read nor changed.
  apt_trixie() {
    timeout 600 nice -n 10 apt-get -q -o Dir::Etc::SourceList="$apt_dir/sources.list" \
      -o Dir::Etc::SourceParts="$apt_dir/none" -o Dir::Etc::Preferences="$apt_dir/none/preferences" \
      -o Dir::Etc::PreferencesParts="$apt_dir/none" -o Dir::State::Lists="$apt_dir/lists" \
      -o Dir::Cache="$apt_dir/cache" -o Dir::State::status="$apt_dir/status" \
      -o APT::Sandbox::User=root -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false "$@"
  }
  apt_trixie update >/dev/null
  rm -f "$apt_dir/debs"/*.deb
  # shellcheck disable=SC2086
  (cd "$apt_dir/debs" && apt_trixie download $packages >/dev/null)
  rm -rf "$root"
  mkdir -p "$root"
  for deb in "$apt_dir/debs"/*.deb; do
    dpkg-deb -x "$deb" "$root"
    echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$root/.versions"
  done
  echo "$packages" >"$root/.packages"
fi

# --- buf, from npm -------------------------------------------------------------------------
buf=$repo/.tools/buf/node_modules/.bin/buf
if [ "$("$buf" --version 2>/dev/null)" != 1.75.0 ]; then
  if ! command -v npm >/dev/null; then
    echo "go: installing Node.js and npm from Debian's packages, for buf"
    DEBIAN_FRONTEND=noninteractive nice -n 10 apt-get install -y -q -o DPkg::Lock::Timeout=600 nodejs npm >/dev/null
  fi
  echo "go: npm install @bufbuild/buf@1.75.0"
  timeout 600 nice -n 10 npm install --prefix "$repo/.tools/buf" --no-audit --no-fund @bufbuild/buf@1.75.0 >/dev/null
fi

export PATH="$root/usr/lib/go-1.24/bin:$root/usr/bin:$(dirname "$buf"):$PATH"
export GOTOOLCHAIN=local GOPATH=$tools/gopath GOCACHE=$tools/cache GOPROXY=off GOFLAGS=-mod=vendor GO111MODULE=on
echo "go: $(go version); protoc-gen-go $(protoc-gen-go --version | sed 's/.* //'); protoc-gen-go-grpc $(protoc-gen-go-grpc --version | sed 's/.* //'); buf $(buf --version)"

# --- go.mod names the versions of the Debian sources; go.sum holds their hashes -----------
requires=$(cd "$here" && GOFLAGS='' go mod edit -json |
  awk -F'"' '/"Require"/ { r = 1 } r && /"Path"/ { p = $4 } r && /"Version"/ { print p "@" $4 }')
debian_version() { # the upstream version of a Debian package, as a module version
  local version
  version=$(awk -v p="$1" '$1 == p { print $2 }' "$root/.versions")
  version=${version#*:}
  echo "v${version%-*}"
}
# The h1: hash that go.sum holds for a go.mod file (golang.org/x/mod/sumdb/dirhash's Hash1).
gomod_hash() {
  printf '%s  go.mod\n' "$(sha256sum <"$1" | cut -d' ' -f1)" | sha256sum | cut -d' ' -f1 |
    python3 -c 'import base64, sys; print("h1:" + base64.b64encode(bytes.fromhex(sys.stdin.read().strip())).decode())'
}
for require in $requires; do
  path=${require%@*} version=${require#*@}
  for line in "$path $version h1:" "$path $version/go.mod h1:"; do
    grep -q "^$line" "$here/go.sum" || { echo "go: go.sum has no line $line" >&2; exit 1; }
  done
  case $path in
    google.golang.org/grpc) package=golang-google-grpc-dev ;;
    google.golang.org/protobuf) package=golang-google-protobuf-dev ;;
    golang.org/x/net) package=golang-golang-x-net-dev ;;
    golang.org/x/sys) package=golang-golang-x-sys-dev ;;
    golang.org/x/text) package=golang-golang-x-text-dev ;;
    google.golang.org/genproto/googleapis/rpc)
      echo "go: $path $version: Debian has no such module; its genproto $(awk '$1 == "golang-google-genproto-dev" { print $2 }' "$root/.versions") stands in"
      continue ;;
    *) echo "go: go.mod requires $path, which this script does not know" >&2; exit 1 ;;
  esac
  if [ "$(debian_version $package)" != "$version" ]; then
    echo "go: go.mod requires $path $version, Debian's $package is $(debian_version $package)" >&2
    exit 1
  fi
  # Debian ships the module's go.mod as released: its hash must be go.sum's.
  if ! grep -qx "$path $version/go.mod $(gomod_hash "$gocode/$path/go.mod")" "$here/go.sum"; then
    echo "go: go.sum's hash of $path $version/go.mod is not that of Debian's $package" >&2
    exit 1
  fi
  echo "go: $path $version is Debian's $package $(awk -v p=$package '$1 == p { print $2 }' "$root/.versions")"
done

# --- The stubs, and the build, offline -------------------------------------------------------
unformatted=$(gofmt -l "$here"/*.go)
if [ -n "$unformatted" ]; then
  echo "go: not gofmt-formatted: $unformatted" >&2
  exit 1
fi
echo "go: buf generate"
(cd "$here" && buf generate)

# The module is copied to $module, where a vendor directory links each module that
# go.mod requires to its source in $gocode (Debian ships one version of each).
# vendor/modules.txt lists the packages the build imports, found in GOPATH mode; a
# package that no module provides fails the build here.
module=$tools/module
rm -rf "$module"
mkdir -p "$module"
cp "$here"/go.mod "$here"/go.sum "$here"/*.go "$module"/
cp -r "$here"/gen "$module"/
golang_protobuf=$(debian_version golang-github-golang-protobuf-1-5-dev)
(cd "$module" && GOFLAGS='' go mod edit -require "github.com/golang/protobuf@$golang_protobuf")
mkdir -p "$GOPATH/src/example.com"
ln -sfn "$module" "$GOPATH/src/example.com/arbiter-client"
imports=$(cd "$GOPATH/src/example.com/arbiter-client" &&
  GO111MODULE=off GOFLAGS='' GOPATH="$GOPATH:$root/usr/share/gocode" \
    go list -deps -test -f '{{if not .Standard}}{{.ImportPath}}{{end}}' . |
  grep -v '^example.com/arbiter-client' | sort -u)
mkdir -p "$module/vendor"
vendor() { # vendor PATH VERSION: one module's entry in modules.txt, and its link
  local path=$1 version=$2 goversion
  echo "# $path $version"
  goversion=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gocode/$path/go.mod" 2>/dev/null || true)
  # Debian regenerated grpc-go's stubs with protoc-gen-go 1.36, whose code needs go 1.21
  # (unsafe.StringData), while grpc-go's go.mod says go 1.19: at least 1.21, then.
  case $goversion in '' | 1.1[0-9] | 1.1[0-9].* | 1.20 | 1.20.* | 1.[0-9]) goversion=1.21 ;; esac
  echo "## explicit; go $goversion"
  for package in $imports; do
    case $package/ in "$path"/*) echo "$package" ;; esac
  done
  mkdir -p "$module/vendor/$(dirname "$path")"
  ln -s "$gocode/$path" "$module/vendor/$path"
}
{
  for require in $requires "github.com/golang/protobuf@$golang_protobuf"; do
    vendor "${require%@*}" "${require#*@}"
  done
} >"$module/vendor/modules.txt"
for package in $imports; do
  grep -qx "$package" "$module/vendor/modules.txt" ||
    { echo "go: $package is imported but no vendored module provides it" >&2; exit 1; }
done
(cd "$module" && nice -n 10 go vet . && nice -n 10 go build -o "$tools/arbiter-client" .)

# --- The client, against the server given ------------------------------------------------
echo "go: the client against $address"
timeout 120 "$tools/arbiter-client" "$address"

# --- Three replicas, and go test ----------------------------------------------------------
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
echo "go: go test, with three replicas at $addresses"
pidlist=$(IFS=,; echo "${pids[*]}")
(cd "$module" && timeout 300 nice -n 10 go test -count=1 -v . \
  -args -replicas "$addresses" -metrics "$metrics" -pids "$pidlist")
if grep -l panicked "$logs"/*.log >&2; then
  echo "go: a replica panicked" >&2
  exit 1
fi
