#!/usr/bin/env bash
# The shared-PostgreSQL campaign (issue 19, docs/serve.md "Several gateways on one PostgreSQL"):
# three `netgw serve` gateways and one `netgw converge --database` run on one throwaway PostgreSQL
# (scripts/peers/postgres.sh), DEVICES test devices, TRIGGERS triggers spread over the gateways by a
# seeded generator, one gateway SIGKILLed after a third of them, PostgreSQL restarted after two
# thirds. Asserted: every accepted trigger's run reaches a final state, every node run the killed
# gateway left is taken over and finished, no two device sessions of one node overlap.
# Bounded: the test's own waits (180 s per run at most) and TIMEOUT for the whole campaign.
#
#   scripts/pg-campaign.sh [DEVICES [TRIGGERS [SEED]]]     defaults: 1000 5000 1592590361
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES=${1:-1000}
TRIGGERS=${2:-5000}
SEED=${3:-1592590361}
TIMEOUT=${TIMEOUT:-1800}
bash scripts/peers/postgres.sh install
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
NETGW_CAMPAIGN_DEVICES=$DEVICES NETGW_CAMPAIGN_TRIGGERS=$TRIGGERS NETGW_CAMPAIGN_SEED=$SEED \
    timeout "$TIMEOUT" cargo test -p netgw --test pg_serve \
    campaign_sample_loses_no_trigger_and_never_overlaps -- --nocapture 2>&1 |
    grep -E '^campaign:|^test |test result|panicked|overlapped|never'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
