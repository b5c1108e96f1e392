#!/usr/bin/env bash
# CI entry of the Go client (examples/go): builds the module as committed (main.go,
# channel.go, the tests, and the generated stubs in arbiterv1/), offline, from Debian 13
# (trixie)'s packages; checks that the committed stubs are what buf.gen.yaml generates
# with the plugin versions README.md names; builds, vets and runs the client against a
# running server; then starts three replicas of the server binary on 127.0.0.1 port 0
# and runs `go test` over them (replicas_test.go: balancing, draining, resuming, a
# malformed request; retry_test.go: the retry policy, its list of RPCs against the
# stubs', and a cancelled resume loop).
#
#   bash examples/go/run.sh --address HOST:PORT --binary PATH/TO/arbiter
#
# Which grpc-go this proves, plainly. go.mod requires google.golang.org/grpc v1.83.2, the
# first release with no known advisory (every release before it is named by one of
# GO-2026-4762, GO-2026-6061, CVE-2026-84304 and GHSA-2v4p-qf9q-27wj), and the versions it
# requires of protobuf-go, x/net, x/sys, x/text and googleapis/rpc. No Debian suite
# packages those versions and no module proxy is reachable from CI, so this script
# compiles and tests against Debian 13's newest builds instead, from trixie-backports
# where it has them: grpc-go 1.79.3 (golang-google-grpc-dev 1.79.3-1~bpo13+1),
# protobuf-go 1.36.5, x/net 0.62.0, x/sys 0.50.0, x/text 0.44.0 and genproto's
# googleapis/rpc of 2026-04-14. It prints each module's pair (go.mod's version, the
# build's); the copy of go.mod that the build reads names Debian's versions, and so does
# the tested binary's build info (`go version -m`, printed): the build says what it is,
# not what go.mod asks for.
#
# Why it is still a proof: the client's code and its committed stubs compile against
# grpc-go's API, are vetted, pass their tests and get every RPC's answer right from a real
# server and three replicas, through grpc-go's channel, retry policy, round robin, health
# checking and transport. The stubs need no more of grpc-go than 1.64 has
# (grpc.SupportPackageIsVersion9), grpc-go keeps its API within v1, and the experimental
# resolver and resolver/manual packages dialReplicas uses are the same files in 1.79.3
# and 1.83.1 (1.83.2 is 1.83.1 with a security fix and newer golang.org/x modules).
# What it does not prove: that the build a user gets, go.mod's versions fetched through
# the module proxy and checked against go.sum, passes the same run. go.sum holds those
# versions' published hashes; this script checks that it holds both lines of each.
#
# Nothing is installed system-wide (but Node.js and npm from Debian 12 when there is no
# npm at all, for buf): the .debs are unpacked with `dpkg-deb -x` into .tools/go/root,
# with apt's index of trixie and trixie-backports kept in .tools/go/apt, and buf goes to
# .tools/buf (git ignores .tools/); a rerun reuses them. No module proxy is used.
set -euo pipefail

. "$(dirname "$0")/../../tests/lib/client_args.sh"
parse_client_args go "$@"

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tools=$repo/.tools/go
root=$tools/root
gocode=$root/usr/share/gocode/src

# --- Debian 13's packages (NAME/SUITE), unpacked into $root ----------------------------------
# The Go toolchain: 1.26, a supported release at least as new as go.mod's `go 1.25.0`.
# The plugins: protoc-gen-go 1.36.5 (upstream v1.36.5) and the protoc-gen-go-grpc of
# Debian's grpc-go 1.79.3, whose cmd/protoc-gen-go-grpc is upstream's tag v1.6.0.
packages="golang-1.26-go/trixie-backports golang-1.26-src/trixie-backports
  protoc-gen-go/trixie protoc-gen-go-grpc/trixie-backports
  golang-google-grpc-dev/trixie-backports golang-google-protobuf-dev/trixie
  golang-google-genproto-dev/trixie-backports golang-golang-x-net-dev/trixie-backports
  golang-golang-x-sys-dev/trixie-backports golang-golang-x-text-dev/trixie-backports
  golang-github-golang-protobuf-1-5-dev/trixie"
packages=$(echo $packages)
if ! [ -f "$root/.packages" ] || [ "$(cat "$root/.packages")" != "$packages" ]; then
  echo "go: fetching from Debian 13 (trixie, trixie-backports): $packages"
  apt_dir=$tools/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$apt_dir/none"
  for suite in trixie trixie-backports; do
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main"
  done >"$apt_dir/sources.list"
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
deb_version() { awk -v p="$1" '$1 == p { print $2 }' "$root/.versions"; }
debian_version() { # the upstream version of a Debian package, as a module version
  local version
  version=$(deb_version "$1")
  version=${version#*:}
  version=${version%-*}
  echo "v${version%+dfsg}"
}

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

export PATH="$root/usr/lib/go-1.26/bin:$root/usr/bin:$(dirname "$buf"):$PATH"
export GOTOOLCHAIN=local GOPATH=$tools/gopath GOCACHE=$tools/cache GOPROXY=off GOFLAGS=-mod=vendor GO111MODULE=on
echo "go: $(go version) (Debian's golang-1.26-go $(deb_version golang-1.26-go)); protoc-gen-go $(protoc-gen-go --version | sed 's/.* //'); protoc-gen-go-grpc $(protoc-gen-go-grpc --version | sed 's/.* //'); buf $(buf --version)"

# --- The committed stubs are what buf.gen.yaml generates ------------------------------------
unformatted=$(gofmt -l "$here"/*.go "$here"/arbiterv1)
if [ -n "$unformatted" ]; then
  echo "go: not gofmt-formatted: $unformatted" >&2
  exit 1
fi
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
(cd "$here" && buf generate --output "$generated")
if ! diff -r "$generated/arbiterv1" "$here/arbiterv1" >&2 || [ "$(ls "$generated")" != arbiterv1 ]; then
  echo "go: arbiterv1/ is not what \`buf generate\` writes from proto/ with protoc-gen-go" \
    "$(protoc-gen-go --version | sed 's/.* //') and protoc-gen-go-grpc v$(protoc-gen-go-grpc --version | sed 's/.* //')" \
    "(the diff above): regenerate it (README.md says how) and commit it" >&2
  exit 1
fi
echo "go: arbiterv1/ is what buf generate writes from proto/ (regenerated and compared)"

# --- Which build of each module: go.mod's version, and Debian's it is built from ------------
module_path=$(awk '$1 == "module" { print $2; exit }' "$here/go.mod")
requires=$(cd "$here" && GOFLAGS='' go mod edit -json |
  awk -F'"' '/"Require"/ { r = 1 } r && /"Path"/ { p = $4 } r && /"Version"/ { print p "@" $4 }')
# Debian's genproto of 2026-04-14 (git afd174a) is upstream's googleapis/rpc
# v0.0.0-20260414002931-afd174a4e478; Debian ships it without its own go.mod.
genproto_rpc=v0.0.0-20260414002931-afd174a4e478
case $(deb_version golang-google-genproto-dev) in
  0.0~git20260414.afd174a-*) ;;
  *) echo "go: Debian's genproto is $(deb_version golang-google-genproto-dev), not git20260414.afd174a: set genproto_rpc" >&2
     exit 1 ;;
esac
built=() # PATH@VERSION of each module as built
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
    google.golang.org/genproto/googleapis/rpc) package=golang-google-genproto-dev ;;
    *) echo "go: go.mod requires $path, which this script does not know" >&2; exit 1 ;;
  esac
  if [ "$package" = golang-google-genproto-dev ]; then debian=$genproto_rpc; else debian=$(debian_version $package); fi
  built+=("$path@$debian")
  if [ "$debian" = "$version" ]; then
    echo "go: $path $version: built from Debian's $package $(deb_version $package), the same version"
  else
    echo "go: $path: go.mod requires $version; built from Debian's $package $(deb_version $package), which is $debian"
  fi
done

# Debian regenerated grpc-go's own stubs (binarylog, health, ...) with
# github.com/golang/protobuf's ptypes, so the build vendors Debian's golang/protobuf too,
# 1.5.4, the version grpc-go 1.83.2 requires (so the one a user's build selects, though
# upstream's packages import it no more); only the build's copy of go.mod names it.
golang_protobuf=$(debian_version golang-github-golang-protobuf-1-5-dev)
built+=("github.com/golang/protobuf@$golang_protobuf")
echo "go: github.com/golang/protobuf $golang_protobuf: Debian's golang-github-golang-protobuf-1-5-dev $(deb_version golang-github-golang-protobuf-1-5-dev), for Debian's grpc-go stubs"

# --- The build, offline ----------------------------------------------------------------------
# The module is copied to $module, whose go.mod names the versions built (Debian's), and
# where a vendor directory links each required module to its source in $gocode (Debian
# ships one version of each). vendor/modules.txt lists the packages the build imports,
# found in GOPATH mode; a package that no module provides fails the build here.
module=$tools/module
rm -rf "$module"
mkdir -p "$module"
cp "$here"/go.mod "$here"/go.sum "$here"/*.go "$here"/retry_policy.json "$module"/
cp -r "$here"/arbiterv1 "$module"/
for require in "${built[@]}"; do
  (cd "$module" && GOFLAGS='' go mod edit -require "$require")
done
rm -rf "$GOPATH/src"
mkdir -p "$GOPATH/src/$(dirname "$module_path")"
ln -sfn "$module" "$GOPATH/src/$module_path"
imports=$(cd "$GOPATH/src/$module_path" &&
  GO111MODULE=off GOFLAGS='' GOPATH="$GOPATH:$root/usr/share/gocode" \
    go list -deps -test -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./... |
  grep -v "^$module_path" | sort -u)
mkdir -p "$module/vendor"
vendor() { # vendor PATH VERSION: one module's entry in modules.txt, and its link
  local path=$1 version=$2 source=$gocode/$1 goversion
  goversion=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$source/go.mod" 2>/dev/null || true)
  # googleapis/rpc has no go.mod of its own in Debian's genproto: genproto's go line.
  [ -n "$goversion" ] || goversion=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gocode/google.golang.org/genproto/go.mod")
  echo "# $path $version"
  echo "## explicit; go $goversion"
  for package in $imports; do
    case $package/ in "$path"/*) echo "$package" ;; esac
  done
  mkdir -p "$module/vendor/$(dirname "$path")"
  ln -s "$source" "$module/vendor/$path"
}
{
  for require in "${built[@]}"; do
    vendor "${require%@*}" "${require#*@}"
  done
} >"$module/vendor/modules.txt"
for package in $imports; do
  grep -qx "$package" "$module/vendor/modules.txt" ||
    { echo "go: $package is imported but no vendored module provides it" >&2; exit 1; }
done
(cd "$module" && nice -n 10 go vet ./... && nice -n 10 go build -o "$tools/arbiter-client" .)
echo "go: the binary's build info (go version -m), the modules it was built from:"
go version -m "$tools/arbiter-client" | awk '$1 == "dep" { print "go:   " $2 " " $3 }'

# --- The client, against the server given ------------------------------------------------
echo "go: the client against $address"
started=$SECONDS
timeout 120 "$tools/arbiter-client" "$address"
echo "go: the client took $((SECONDS - started)) s"

# --- Three replicas, and go test ----------------------------------------------------------
logs=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$logs" "$generated"
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
echo "go: passed, built with grpc-go $(go version -m "$tools/arbiter-client" | awk '$2 == "google.golang.org/grpc" { print $3 }') (Debian's); go.mod requires grpc-go $(awk '$1 == "google.golang.org/grpc" { print $2 }' "$here/go.mod")"
