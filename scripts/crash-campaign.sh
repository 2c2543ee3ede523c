#!/bin/sh
# SIGKILL campaign (issue 15): real `netgw converge` processes killed at seeded moments spread over
# every step of EOS, Junos, IOS, NX-OS and F5 converges against netgw-lab (60 ms per reply), then the
# next run must leave no device half-applied and name the recovery. ROUNDS rounds x 5 kills; the
# control repeats it with the intent journal off (NETGW_JOURNAL=off), where the half-applied devices
# must stay half-applied. Figures: README's RELIABILITY section and docs/reliability.md.
#
#   scripts/crash-campaign.sh [ROUNDS] [CONTROL_ROUNDS]      (defaults 62 and 12; SEED=15)
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${1:-62}
CONTROL=${2:-12}
SEED=${SEED:-15}
cargo build -q -p netgw --tests
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() {
    if ! cargo test -q -p netgw --test crash -- --nocapture --exact \
        sigkill_at_any_moment_leaves_no_device_half_applied_after_the_next_run >"$out" 2>&1; then
        cat "$out"
        echo "crash campaign FAILED" >&2
        exit 1
    fi
    grep '^CRASH' "$out"
}
CRASH_SEED=$SEED CRASH_ROUNDS=$ROUNDS run
CRASH_SEED=$SEED CRASH_ROUNDS=$CONTROL CRASH_JOURNAL=off run
