#!/usr/bin/env bash
# Load test of `netgw serve` on loopback: 10,000 triggers in at most 60 s across 100 nodes, with the
# server's RSS sampled from /proc. Bounded in count and time; not part of the test suite.
# Usage: scripts/load-serve.sh [--requests N] [--nodes N] [--clients N] [--seconds S] [--spread S]
# (--spread 0: as fast as possible; default: evenly over 55 s)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p netgw --bin netgw --example load_serve
exec target/release/examples/load_serve --netgw target/release/netgw "$@"
