#!/usr/bin/env bash
# The shared-PostgreSQL campaign (docs/serve.md "Several gateways on one PostgreSQL"):
# three `netgw serve` gateways and one `netgw converge --database` run on one throwaway PostgreSQL
# (scripts/peers/postgres.sh), netgw-lab with DEVICES Junos devices (NETCONF over SSH, 40 ms per
# reply), TRIGGERS triggers spread over the gateways by a seeded generator, one gateway SIGKILLed
# after a third of them, PostgreSQL restarted after two thirds. Asserted: every accepted trigger's run
# reaches a final state, every node run the killed gateway left is taken over and finished, every
# triggered device ends with its desired VLAN, and netgw-lab saw no two sessions of one device open
# together (longer than 100 ms). Niced: the machine is shared.
# Bounded: the test's own waits (300 s per run at most) and TIMEOUT for the whole campaign.
#
#   scripts/pg-campaign.sh [DEVICES [TRIGGERS [SEED]]]     defaults: 1000 5000 1592590361
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES=${1:-1000}
TRIGGERS=${2:-5000}
SEED=${3:-1592590361}
TIMEOUT=${TIMEOUT:-2700}
bash scripts/peers/postgres.sh install
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
NETGW_CAMPAIGN_DEVICES=$DEVICES NETGW_CAMPAIGN_TRIGGERS=$TRIGGERS NETGW_CAMPAIGN_SEED=$SEED \
    timeout "$TIMEOUT" nice -n 19 cargo test -p netgw --test it \
    pg_serve::campaign_sample_loses_no_trigger_and_never_overlaps -- --nocapture 2>&1 |
    grep -E "^campaign:|^test |test result|panicked|overlapped|never|^sw-"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
