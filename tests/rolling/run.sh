#!/usr/bin/env bash
# Rolling-restart test: three release replicas, each restarted in turn (SIGTERM, the
# drain, a new replica on a new port), behind grpcio's client-side round robin and then
# behind nginx (grpc_pass), while hundreds of live games and PlayMany streams play and
# resume from their histories; every game is then replayed without a restart and its
# replies compared. rolling.py says what it checks. Bounded to a few minutes; loopback
# only. Installs nginx (Debian's nginx-light) if there is none.
#
# Run by hand with: bash tests/rolling/run.sh [rolling.py options, see --help]
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
timeout 300 "$venv/bin/python" tests/rolling/rolling.py \
  --binary "${CARGO_TARGET_DIR:-target}/release/arbiter" --nginx "$nginx" "$@"
