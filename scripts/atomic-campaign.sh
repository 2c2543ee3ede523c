#!/bin/sh
# Atomic-converge fault campaign (issue 20, docs/atomic.md): TX transactions, each on a fresh netgw-lab
# fabric of PER_VENDOR devices of each of the five vendors, one fault per transaction on a seeded-random
# device at a seeded-random step of phase 1 (connect, auth, facts, plan) or phase 2 (commit refused,
# reset before or after the commit, reset at verify); counts networks left mixed (goal 0) right after
# the run and after every device-side commit timer fired. The control that shows the count catches a
# mixed network is the test `the_check_sees_a_network_left_mixed_by_a_node_by_node_converge`, run too.
#
#   scripts/atomic-campaign.sh [TX] [PER_VENDOR]   (defaults 500 and 10; SEED=424242, PARALLEL=3 transactions at once)
set -eu
cd "$(dirname "$0")/.."
TX=${1:-500}
PER_VENDOR=${2:-10}
SEED=${SEED:-424242}
cargo build -q -p netgw --test atomic
ATOMIC_CAMPAIGN_TX=$TX ATOMIC_CAMPAIGN_PARALLEL=${PARALLEL:-3} ATOMIC_CAMPAIGN_PER_VENDOR=$PER_VENDOR ATOMIC_CAMPAIGN_SEED=$SEED \
    cargo test -q -p netgw --test atomic -- --nocapture --test-threads 1 \
    campaign_counts_no_mixed_network the_check_sees_a_network_left_mixed_by_a_node_by_node_converge
