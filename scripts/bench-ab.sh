#!/usr/bin/env bash
# Two netgw binaries alternated on one netgw-lab of N devices (docs/bench.md, "Reproduce"): on a
# shared machine wall time drifts with other work, so the binaries are compared in the same stretch,
# run by run, not table against table. IOS devices unless BENCH_AB_PLATFORM says nxos, eos, junos or f5.
#
#   scripts/bench-ab.sh N ROUNDS OLD_BIN NEW_BIN      (the binaries: paths to two `netgw` builds)
#
# First each binary converges a fresh lab once (`first`: one VLAN and one description to change on
# every device); then the two alternate ROUNDS times on the second lab (`unchanged`: nothing to
# change); BENCH_AB_FIRSTS=K alternates K pairs of first runs, each on a fresh lab (for changes
# whose cost is in the first run: the intent journal, creating state files; labs are deleted only at
# exit, as freeing inodes slows the next creations, docs/bench.md). Every run must report N
# succeeded and 2N (first) or 0 (unchanged) updated, or the script stops. Per run it prints user
# and sys CPU seconds, wall seconds and peak RSS (`/usr/bin/time`), and, when `perf stat` can count
# them, user and kernel instructions. Needs target/release/netgw-lab.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 4 ] || { sed -n 2,15p "$0"; exit 2; }
n=$1 rounds=$2 old=$3 new=$4
platform=${BENCH_AB_PLATFORM:-ios}
# write_topology, write_repo: the same lab and repo as scripts/bench.sh.
. scripts/bench-lib.sh
lab_bin=${BENCH_LAB_BIN:-target/release/netgw-lab}
work=$(mktemp -d -t netgw-ab.XXXXXX)
lab_pid=
stop_lab() {
    [ -n "$lab_pid" ] || return 0
    kill "$lab_pid" 2>/dev/null || true
    wait "$lab_pid" 2>/dev/null || true
    lab_pid=
}
trap 'stop_lab; rm -rf "$work"' EXIT

start_lab() { # dir
    NICE=1 start_lab_in "$platform" "$n" "$1"
}

# Instruction counts need a hardware PMU, which many VMs do not expose (perf then says "not supported").
perf_ok=false
/usr/bin/perf stat -x, -e instructions:u true 2>&1 | grep -q '^[0-9]' && perf_ok=true

run() { # label bin dir want_updated
    local label=$1 bin=$2 d=$3 want=$4
    local perf=()
    $perf_ok && perf=(/usr/bin/perf stat -x, -o "$work/perf.txt" -e instructions:u,instructions:k)
    # netgw's saves end in a `syncfs`, which also writes whatever else is dirty on the file system
    # (a build just before: seconds): flushed first, so each run pays for its own writes only.
    sync
    /usr/bin/time -f '%U %S %e %M' -o "$work/time.txt" "${perf[@]}" "$bin" converge \
        --inventory "$d/inventory.yml" --repo "$d/bench-repo" --concurrency "${BENCH_CONCURRENCY:-100}" --format json > "$work/out.json"
    python3 - "$work/out.json" "$n" "$want" <<'EOF' || { echo "$label: NOT VERIFIED" >&2; exit 1; }
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["succeeded"] == int(sys.argv[2]) and s["failed"] == 0 and s["updated"] == int(sys.argv[3]), s
EOF
    read -r u s e m < "$work/time.txt"
    local iu=- ik=-
    if $perf_ok; then
        iu=$(awk -F, '/instructions:u/ {print $1}' "$work/perf.txt")
        ik=$(awk -F, '/instructions:k/ {print $1}' "$work/perf.txt")
    fi
    printf '%-10s user %6.2f sys %6.2f cpu %6.2f wall %6.2f rss_mb %5d instr_u %s instr_k %s load %s\n' \
        "$label" "$u" "$s" "$(echo "$u + $s" | bc)" "$e" "$((m / 1024))" "$iu" "$ik" "$(cut -d' ' -f1 /proc/loadavg)"
}

for i in $(seq 1 "${BENCH_AB_FIRSTS:-1}"); do
    for which in old new; do
        bin=$old
        [ $which = new ] && bin=$new
        stop_lab
        d="$work/lab-$which-$i"
        mkdir -p "$d"
        start_lab "$d"
        run "$which-first" "$bin" "$d" $((2 * n))
    done
done
# The last lab (converged by `new`) serves the unchanged runs of both.
for _ in $(seq 1 "$rounds"); do
    run old "$old" "$d" 0
    run new "$new" "$d" 0
done
