#!/bin/sh
# Crash campaigns against netgw-lab (60 ms per reply), one device per vendor per round:
# EOS, Junos, IOS, NX-OS, F5, and IOS with a configuration archive (its revert timer). Figures:
# docs/reliability.md.
#
#   scripts/crash-campaign.sh kill    [ROUNDS] [CONTROL_ROUNDS]  (1) SIGKILL of `netgw converge`
#                                     at seeded moments; control: intent journal off
#                                     (defaults 52 and 10)
#   scripts/crash-campaign.sh timeout [ROUNDS] [CONTROL_ROUNDS]  (2) node timeouts expiring at
#                                     seeded steps; control: timeouts inside the commit step with
#                                     no restore budget (defaults 52 and 4)
#   scripts/crash-campaign.sh serve   [ROUNDS] [CONTROL_ROUNDS]  (3) `netgw serve` SIGTERM / SIGKILL
#                                     (alternating) during a run, then restarted; control: journal
#                                     off, SIGKILL inside the commit steps (defaults 52 and 4)
#   scripts/crash-campaign.sh all                                 the three, default sizes
#   scripts/crash-campaign.sh [ROUNDS] [CONTROL_ROUNDS]           same as `kill`
#
# SEED (default 15) seeds all three. Each round is 6 stops.
set -eu
cd "$(dirname "$0")/.."
SEED=${SEED:-15}
mode=kill
case "${1:-}" in
kill | timeout | serve | all)
    mode=$1
    shift
    ;;
esac
cargo build -q -p netgw --tests
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# run TEST PREFIX: one test of tests/it/crash.rs, its figure lines printed, its output shown on failure.
run() {
    if ! cargo test -q -p netgw --test it -- --nocapture --exact "crash::$1" >"$out" 2>&1; then
        cat "$out"
        echo "crash campaign FAILED ($1)" >&2
        exit 1
    fi
    grep "^$2" "$out"
}
kill_campaign() {
    CRASH_SEED=$SEED CRASH_ROUNDS=$1 run sigkill_at_any_moment_leaves_no_device_half_applied_after_the_next_run CRASH
    CRASH_SEED=$SEED CRASH_ROUNDS=$2 CRASH_JOURNAL=off run sigkill_at_any_moment_leaves_no_device_half_applied_after_the_next_run CRASH
}
timeout_campaign() {
    CRASH_SEED=$SEED CRASH_TIMEOUT_ROUNDS=$1 run node_timeouts_at_any_step_leave_no_device_half_applied TIMEOUT
    CRASH_SEED=$SEED CRASH_TIMEOUT_ROUNDS=$2 CRASH_TIMEOUT_CONTROL=1 run node_timeouts_at_any_step_leave_no_device_half_applied TIMEOUT
}
serve_campaign() {
    CRASH_SEED=$SEED CRASH_SERVE_ROUNDS=$1 run serve_stopped_at_any_moment_leaves_no_device_half_applied_and_a_final_history SERVE
    CRASH_SEED=$SEED CRASH_SERVE_ROUNDS=$2 CRASH_SERVE_CONTROL=1 run serve_stopped_at_any_moment_leaves_no_device_half_applied_and_a_final_history SERVE
}
case $mode in
kill) kill_campaign "${1:-52}" "${2:-10}" ;;
timeout) timeout_campaign "${1:-52}" "${2:-4}" ;;
serve) serve_campaign "${1:-52}" "${2:-4}" ;;
all)
    kill_campaign 52 10
    timeout_campaign 52 4
    serve_campaign 52 4
    ;;
esac
