#!/usr/bin/env bash
# The load benchmark: Arbiter against the empty-handler baseline, side by side in one run.
# Builds both servers and the load generator with the release profile, then runs the
# generator on CPU 1 while it starts each server pinned to CPU 0. Arguments go to the
# generator (see examples/load.rs or `bash benches/load.sh --help`), for example:
#
#     bash benches/load.sh                       # every workload, 3 rounds (about 7 minutes)
#     bash benches/load.sh --rounds 1 --only Othello
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin arbiter --example baseline_server --example load
exec taskset -c 1 target/release/examples/load "$@"
