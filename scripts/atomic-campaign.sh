#!/bin/sh
# Atomic-converge fault campaign (issue 20, docs/atomic.md): TX transactions, each on a fresh netgw-lab
# fabric of PER_VENDOR devices of each of the five vendors, one fault per transaction on a seeded-random
# device at a seeded-random step of phase 1 (connect, auth, facts, plan) or phase 2 (commit refused,
# reset before or after the commit, reset at verify); counts networks left mixed (goal 0) right after
# the run and after every device-side commit timer fired. Runs in batches of BATCH transactions (seed
# SEED+batch), each printing its table as it finishes, then the totals. The control that shows the count
# catches a mixed network is the test `the_check_sees_a_network_left_mixed_by_a_node_by_node_converge`,
# run first.
#
#   scripts/atomic-campaign.sh [TX] [PER_VENDOR]
#       defaults 500 and 10; SEED=424242, BATCH=25, PARALLEL=3 transactions at once
#
# Kill mode (MODE=kill): KILLS SIGKILLs of the `netgw converge --atomic` process at seeded-random moments
# of phase 2 (a seeded-random phase of the transaction record, then a seeded-random delay), each on a
# fresh fabric of PER_VENDOR devices per vendor answering after LATENCY_MS; the next run is a why-run over
# one seeded-random member, which must recover the whole transaction: counts networks left mixed after
# it (goal 0) and checks each went the way its record said (all old before `confirming`, all new from
# it). The control `the_count_sees_a_mixed_network_without_the_transaction_record` runs first.
#
#   MODE=kill scripts/atomic-campaign.sh [KILLS] [PER_VENDOR]
#       defaults 200 and 10; SEED=424242, BATCH=10 kills per batch, LATENCY_MS=150
set -eu
cd "$(dirname "$0")/.."
SEED=${SEED:-424242}
cargo build -q -p netgw --test atomic
if [ "${MODE:-fault}" = kill ]; then
    KILLS=${1:-200}
    PER_VENDOR=${2:-10}
    BATCH=${BATCH:-10}
    cargo test -q -p netgw --test atomic -- --exact the_count_sees_a_mixed_network_without_the_transaction_record
    out=$(mktemp)
    all=$(mktemp)
    trap 'rm -f "$out" "$all"' EXIT
    done_k=0
    batch=0
    while [ "$done_k" -lt "$KILLS" ]; do
        n=$((KILLS - done_k))
        [ "$n" -gt "$BATCH" ] && n=$BATCH
        if ! ATOMIC_KILLS=$n ATOMIC_KILL_PER_VENDOR=$PER_VENDOR ATOMIC_KILL_LATENCY_MS=${LATENCY_MS:-150} \
            ATOMIC_KILL_SEED=$((SEED + batch)) cargo test -q -p netgw --test atomic -- --nocapture --exact \
            sigkill_in_phase_two_leaves_all_old_or_all_new_after_the_next_run >"$out" 2>&1; then
            echo "batch $batch FAILED:"
            grep -E '^kill [0-9]' "$out" | cut -c1-600 || true
        fi
        grep -E '^(seed|\| [a-z(])' "$out" | grep -v '^| record' | sed "s/^/batch $batch: /" | tee -a "$all"
        done_k=$((done_k + n))
        batch=$((batch + 1))
    done
    awk -F'|' '/^batch [0-9]+: \| [a-z(]/ { k[$2] += $3; a[$2] += $4; b[$2] += $5; c[$2] += $6; K += $3; A += $4; B += $5; C += $6 }
        END { print "TOTAL | record at the kill | kills | mixed at the kill | mixed after the next run | all new after |";
              for (p in k) printf "TOTAL |%s| %d | %d | %d | %d |\n", p, k[p], a[p], b[p], c[p];
              printf "TOTAL | all | %d | %d | %d | %d |\n", K, A, B, C }' "$all"
    exit 0
fi
TX=${1:-500}
PER_VENDOR=${2:-10}
BATCH=${BATCH:-25}
cargo test -q -p netgw --test atomic -- --exact the_check_sees_a_network_left_mixed_by_a_node_by_node_converge
out=$(mktemp)
all=$(mktemp)
trap 'rm -f "$out" "$all"' EXIT
done_tx=0
batch=0
while [ "$done_tx" -lt "$TX" ]; do
    n=$((TX - done_tx))
    [ "$n" -gt "$BATCH" ] && n=$BATCH
    if ! ATOMIC_CAMPAIGN_TX=$n ATOMIC_CAMPAIGN_PARALLEL=${PARALLEL:-3} ATOMIC_CAMPAIGN_PER_VENDOR=$PER_VENDOR \
        ATOMIC_CAMPAIGN_SEED=$((SEED + batch)) cargo test -q -p netgw --test atomic -- --nocapture --exact \
        campaign_counts_no_mixed_network >"$out" 2>&1; then
        echo "batch $batch FAILED:"
    fi
    grep -E '^(seed|\| [A-Z]|networks|tx [0-9]|note: )' "$out" | sed "s/^/batch $batch: /" | tee -a "$all"
    done_tx=$((done_tx + n))
    batch=$((batch + 1))
done
# Totals per fault: the columns of every batch's table rows.
awk -F'|' '/^batch [0-9]+: \| [A-Z]/ { t[$2] += $3; a[$2] += $4; b[$2] += $5; o[$2] += $6; T += $3; A += $4; B += $5; O += $6 }
    END { print "TOTAL | fault | transactions | mixed right after | mixed after timers | failed elsewhere first |";
          for (f in t) printf "TOTAL |%s| %d | %d | %d | %d |\n", f, t[f], a[f], b[f], o[f];
          printf "TOTAL | all | %d | %d | %d | %d |\n", T, A, B, O }' "$all"
