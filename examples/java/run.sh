#!/usr/bin/env bash
# CI entry of the Java (grpc-java) client: installs what is missing from Debian's packages,
# builds examples/java offline with Maven against Debian's Maven repository
# (/usr/share/maven-repo: grpc-java 1.41.3, protobuf 3.21, protoc and its grpc-java plugin,
# JUnit 5.9), with grpc-java's client-side health checking (grpc-services, which Debian does
# not package) compiled from Debian's grpc-java source package of the same version; runs the
# JUnit tests (`mvn test`), the client against a running server (every check of
# ArbiterClient), then starts three replicas of the server binary on loopback port 0 and runs
# the balancing check (ReplicasCheck: round robin, a game outliving its replica, a draining
# replica leaving the rotation). Exits non-zero on any failure.
#
# Maven Central is not used (CI has no access to it): CI proves grpc-java 1.41.3, Debian's
# newest (trixie's too), not the 1.85 that `mvn compile exec:java` gets from Maven Central.
#
#   bash examples/java/run.sh --address HOST:PORT --binary PATH_TO_ARBITER
#
# The Maven local repository lives in .tools/java/m2, grpc-services' sources in
# .tools/java/grpc-services-VERSION and the build in examples/java/target, all ignored by git
# and reused by the next run.
set -euo pipefail

. "$(dirname "$0")/../../tests/lib/client_args.sh"
parse_client_args java "$@"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

# Debian's packages: the JDK and Maven, protoc with the grpc-java plugin and the well-known
# types (libprotobuf-dev: google/protobuf/duration.proto), grpc-java and what
# it needs at run time (netty, gson, perfmark, guava, the google.rpc protos), and the Maven
# plugins of the build, JUnit 5 and surefire (the tests).
packages=(
  default-jdk-headless maven
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc-java-plugin
  libgrpc-java libprotobuf-java libgoogle-common-protos-java libnetty-java
  libgoogle-gson-java libperfmark-java libanimal-sniffer-java libguava-java
  liberror-prone-java libjsr305-java libgeronimo-annotation-1.3-spec-java
  libmaven-compiler-plugin-java libmaven-resources-plugin-java
  libexec-maven-plugin-java libbuild-helper-maven-plugin-java junit5
  libsurefire-java libmaven-antrun-plugin-java
)
missing=()
for package in "${packages[@]}"; do
  if [ "$package" = default-jdk-headless ] && command -v javac >/dev/null; then
    continue # any installed JDK 17 or newer does
  fi
  dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q '^install ok installed$' \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "java: installing ${missing[*]}"
  apt_install() {
    DEBIAN_FRONTEND=noninteractive timeout 900 nice -n 10 apt-get install -y -q \
      --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
  }
  apt_install || {
    timeout 600 apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null
    apt_install
  }
fi

# mvn_debian SECONDS ARGS...: Maven, offline against Debian's repository, bounded in time.
mvn_debian() {
  local seconds="$1"
  shift
  # -U: a failed look-up in the file repository is not cached across runs.
  timeout "$seconds" nice -n 10 mvn -B -q -U -Ddebian -s "$here/debian-settings.xml" \
    -Dmaven.repo.local="$repo/.tools/java/m2" -Dgrpc.services.dir="$services" \
    -f "$here/pom.xml" "$@"
}

# grpc-java's client-side health checking (the round robin that watches grpc.health.v1, so
# that a draining replica leaves the rotation) is in grpc-services, which Debian does not
# build: its four files are taken from Debian's source package of the installed grpc-java
# (apt verifies it against the signed Sources index), and the debian profile compiles them.
grpc_version="$(dpkg-query -W -f='${Version}' libgrpc-java)" # such as 1.41.3+ds-1
upstream="${grpc_version%%+*}"
services="$repo/.tools/java/grpc-services-$upstream"
if [ ! -f "$services/complete" ]; then
  echo "java: fetching grpc-services $upstream from Debian's grpc-java source package"
  work="$(mktemp -d)"
  chmod 755 "$work" # apt's downloads run as _apt
  . /etc/os-release
  echo "deb-src http://deb.debian.org/debian $VERSION_CODENAME main" >"$work/sources.list"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  apt_src=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=-
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
  timeout 600 apt-get "${apt_src[@]}" update -q >/dev/null
  # Only the upstream tarball is needed: its address and SHA-256 from the signed Sources
  # index, checked by apt-helper as it downloads.
  orig="$(apt-get "${apt_src[@]}" source --print-uris -q "grpc-java=$grpc_version" \
    | grep "\.orig\.tar\.")"
  read -r url name _ sha <<<"$orig"
  url="${url//\'/}"
  timeout 600 /usr/lib/apt/apt-helper download-file "$url" "$work/$name" "$sha" >/dev/null
  from="grpc-java-$upstream/services/src/main"
  tar -xf "$work/$name" -C "$work" \
    "$from/java/io/grpc/protobuf/services/HealthCheckingLoadBalancerFactory.java" \
    "$from/java/io/grpc/protobuf/services/HealthCheckingLoadBalancerUtil.java" \
    "$from/java/io/grpc/protobuf/services/internal/HealthCheckingRoundRobinLoadBalancerProvider.java" \
    "$from/proto/grpc/health/v1/health.proto" \
    "$from/resources/META-INF/services/io.grpc.LoadBalancerProvider"
  rm -rf "$services"
  mkdir -p "$(dirname "$services")"
  mv "$work/$from" "$services"
  rm -rf "$work"
  touch "$services/complete"
fi

echo "java: grpc-java $grpc_version (grpc-services $upstream from its source), $(protoc --version)," \
  "$(javac -version 2>&1), $(mvn -B -v 2>/dev/null | sed -n "s/.*\(Apache Maven [0-9.]*\).*/\1/p")"
echo "java: building and running the JUnit tests (mvn test)"
mvn_debian 600 test

echo "java: the client against $address"
mvn_debian 120 exec:java -Dexec.args="$address"

# Three replicas on loopback port 0, each with its metrics on another port 0; killed on exit
# whatever happens.
logs="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

replicas=()
for i in 1 2 3; do
  # A long drain, so that a replica sent SIGTERM keeps serving while the check runs.
  "$binary" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --shutdown-drain 30s \
    >"$logs/replica$i.log" 2>&1 &
  pids+=($!)
  disown $! # the check kills one: no job notice for it
done
for i in 1 2 3; do
  log="$logs/replica$i.log" grpc="" metrics=""
  for _ in $(seq 150); do
    grpc="$(sed -n 's/.*arbiter listening on \([^ ]*\).*/\1/p' "$log" | head -1)"
    metrics="$(sed -n 's/.*metrics on \(http:[^ ]*\).*/\1/p' "$log" | head -1)"
    [ -n "$grpc" ] && [ -n "$metrics" ] && break
    sleep 0.2
  done
  if [ -z "$grpc" ] || [ -z "$metrics" ]; then
    echo "java: replica $i did not start:" >&2
    cat "$log" >&2
    exit 1
  fi
  replicas+=("$grpc,$metrics,${pids[$((i - 1))]}")
done

echo "java: balancing over ${replicas[*]}"
mvn_debian 180 exec:java -Dexec.mainClass=arbiter.examples.ReplicasCheck \
  -Dexec.args="${replicas[*]}"
echo "java: all checks passed"
