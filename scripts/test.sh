#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this).
#
# 1. installs what the tests need on a fresh Debian 12 machine: the third-party peers (apt packages,
#    Python venvs under .peers/), each through its scripts/peers/NAME.sh install;
# 2. checks formatting and lints;
# 3. runs every test of the workspace. Tests that need a peer fail loudly if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing test peers"
for script in scripts/peers/*.sh; do
    # lib.sh is the helpers the peer scripts source, not a peer.
    [ "$script" = scripts/peers/lib.sh ] && continue
    echo "-- $script install"
    bash "$script" install
done

# The state of every netgw the tests start (a new repo path each) goes into one directory removed at the
# end, not into the user's ~/.local/state/netgw; tests that check the default location set their own.
NETGW_STATE_DIR=$(mktemp -d -t netgw-test-state.XXXXXX)
export NETGW_STATE_DIR
trap 'rm -rf "$NETGW_STATE_DIR"' EXIT

# A fresh machine builds everything once: incremental state would only add gigabytes of disk.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo test"
cargo test --workspace --all-targets --no-fail-fast
