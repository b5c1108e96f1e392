#!/usr/bin/env bash
# Rolling-restart test: three release replicas, each stopped in turn and replaced by a
# new replica on a new port, behind grpcio's client-side round robin and then behind
# nginx (grpc_pass), while hundreds of live games and PlayMany streams play and resume
# from their histories and unary calls go on; every game is then replayed without a
# restart and its replies compared. Run twice: a graceful restart (--stop term: SIGTERM,
# the drain), then a crash (--stop kill: SIGKILL, with a client that retries the unary
# RPCs by the service config's retry policy and also resumes a game whose stream a proxy
# reset). Then a graceful restart behind nginx with a fixed upstream, as nginx is run in
# front of VMs (--upstream fixed: nginx is never told a replica stops, and each
# replacement starts on the same address), with DEPLOY.md's nginx configuration and the
# retry policy. rolling.py says what it checks. Each run is bounded (timeout), the whole under
# six minutes after the build; loopback only. Installs nginx (Debian's nginx-light) if
# there is none.
#
# Run by hand with: bash tests/rolling/run.sh [rolling.py options for both runs, see
# --help], or one run alone with rolling.py --stop term|kill.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

. tests/lib/release_server.sh
prepare_tools tests/rolling/requirements.txt

nginx=$(command -v nginx || true)
[ -z "$nginx" ] && [ -x /usr/sbin/nginx ] && nginx=/usr/sbin/nginx
if [ -z "$nginx" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "rolling: nginx is not installed and this user cannot install it (apt-get install nginx-light)" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
  nginx=/usr/sbin/nginx
fi

cargo build --release --bin arbiter
status=0
for run in "--stop term" "--stop kill" "--stop term --upstream fixed --retry-policy"; do
  echo "rolling: $run"
  started=$SECONDS
  # shellcheck disable=SC2086 # the run's options, split on purpose
  timeout 170 "$venv/bin/python" tests/rolling/rolling.py $run \
    --binary "${CARGO_TARGET_DIR:-target}/release/arbiter" --nginx "$nginx" "$@" || status=$?
  echo "rolling: $run took $((SECONDS - started)) s"
done
exit "$status"
