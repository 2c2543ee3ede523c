#!/usr/bin/env bash
# System calls and thread switches of one netgw converge, per device (docs/bench.md, "What bounds each vendor"):
# a fresh netgw-lab of N devices (IOS unless BENCH_AB_PLATFORM says nxos, eos, junos or f5), a first
# run (one VLAN and one description to change on every device), then an unchanged one, each under
# `perf stat` with the kernel's syscall tracepoints (needs perf and permission to read tracepoints).
#
#   scripts/bench-count.sh N [NETGW_BIN]      (default target/release/netgw; needs target/release/netgw-lab)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n 2,7p "$0"; exit 2; }
n=$1 bin=${2:-target/release/netgw}
platform=${BENCH_AB_PLATFORM:-ios}
. scripts/bench-lib.sh
work=$(mktemp -d -t netgw-count.XXXXXX)
lab_pid=
trap '[ -n "$lab_pid" ] && kill "$lab_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
start_lab_in "$platform" "$n" "$work"
events=context-switches
for s in syncfs fsync openat openat2 renameat renameat2 unlink statx flock futex; do
    events+=",syscalls:sys_enter_$s"
done
for run in first unchanged; do
    NETGW_STATE_DIR="$work/state" perf stat -x, -e "$events" -o "$work/$run.stat" "$bin" converge \
        --inventory "$work/inventory.yml" --repo "$work/bench-repo" --concurrency 100 --format json > "$work/$run.json"
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(sys.argv[2], "run:", s["succeeded"], "succeeded,", s["updated"], "updated")' \
        "$work/$run.json" "$run"
    awk -F, -v n="$n" '/^[0-9]/ { sub(/^syscalls:sys_enter_/, "", $3); printf "  %-18s %9d  %6.2f per device\n", $3, $1, $1 / n }' "$work/$run.stat"
done
