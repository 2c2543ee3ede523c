#!/usr/bin/env bash
# Soak of `netgw serve`: hours of periodic converges over a netgw-lab fabric (EOS, Junos, IOS, NX-OS,
# BIG-IP; SOAK_PER_VENDOR devices each), sampling the gateway's resources, then a verdict on whether
# any of them grows. Loopback only; bounded in time (SOAK_SECONDS). Figures: docs/reliability.md.
#
#   scripts/soak.sh                 build release binaries, run 2 hours, write SOAK_OUT/soak.csv and
#                                   SOAK_OUT/summary.txt; exit 1 when a figure exceeds its bound
#
# Every SOAK_INTERVAL seconds one converge of a seeded batch of SOAK_BATCH nodes is triggered through
# the HTTP API, each node's desired VLAN name flipped first (so the devices really change), and
# waited for (its latency recorded); every 5th run's event stream is opened and dropped; every
# SOAK_DRIFT_EVERY runs `netgw drift` runs over the whole fabric. Every SOAK_SAMPLE seconds a CSV
# row: serve's RSS, open fds, threads, history database size (with its WAL) and rows (runs, and
# all tables), the state directory's size, the mean converge latency since the last row, and
# netgw-lab's RSS. The history keeps SOAK_RETENTION runs, so pruning is at work.
#
# Summary: rows taken before the history first holds SOAK_RETENTION runs are warm-up; of the rest,
# the mean of the first 10% (start) and of the last 10% (end), the slope per hour between them, and
# the bound. Environment (defaults):
#   SOAK_SECONDS=7200 SOAK_SAMPLE=10 SOAK_INTERVAL=3 SOAK_PER_VENDOR=6 SOAK_BATCH=6
#   SOAK_RETENTION=50 SOAK_DRIFT_EVERY=20 SOAK_SEED=40
#   SOAK_OUT=<new temporary directory>   where the CSV, summary and logs go
#   SOAK_BIN_DIR=<dir>                   use netgw and netgw-lab from there (no build)
#   SOAK_SERVE_RETENTION=SOAK_RETENTION  the retention given to serve (a control: set it very high,
#                                        pruning is in effect off, and the soak must fail)
#   SOAK_SUMMARIZE=CSV                   only the summary of an earlier (or still running) soak's CSV
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SOAK_SECONDS=${SOAK_SECONDS:-7200}
SOAK_SAMPLE=${SOAK_SAMPLE:-10}
SOAK_INTERVAL=${SOAK_INTERVAL:-3}
SOAK_PER_VENDOR=${SOAK_PER_VENDOR:-6}
SOAK_BATCH=${SOAK_BATCH:-6}
SOAK_RETENTION=${SOAK_RETENTION:-50}
SOAK_SERVE_RETENTION=${SOAK_SERVE_RETENTION:-$SOAK_RETENTION}
SOAK_DRIFT_EVERY=${SOAK_DRIFT_EVERY:-20}
SOAK_SEED=${SOAK_SEED:-40}
out=${SOAK_OUT:-$(mktemp -d -t netgw-soak.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# verdict CSV SUMMARY: the summary of a soak's CSV (exit 1 when a figure exceeds its bound).
verdict() {
python3 - "$1" "$SOAK_RETENTION" "$2" <<'EOF'
import csv, sys
rows = [{k: (float(v) if v != "" else None) for k, v in r.items()} for r in csv.DictReader(open(sys.argv[1]))]
retention = int(sys.argv[2])
lines, failed = [], False
def say(s):
    lines.append(s)
warm = next((i for i, r in enumerate(rows) if r["history_runs"] >= retention), None)
if warm is None or len(rows) - warm < 10:
    say(f"FAIL: fewer than 10 samples after the history first held {retention} runs "
        f"({len(rows)} samples): run longer or lower SOAK_RETENTION")
    failed = True
else:
    steady = rows[warm:]
    k = max(1, len(steady) // 10)
    first, last = steady[:k], steady[-k:]
    def mean(rs, m):
        v = [r[m] for r in rs if r[m] is not None]
        return sum(v) / len(v) if v else 0.0
    hours = (mean(last, "t_s") - mean(first, "t_s")) / 3600 or 1e-9
    # metric, bound text, check(start, end, steady rows)
    MIB = 1024
    bounds = [
        ("serve_rss_kib", "end - start <= 32 MiB", lambda s, e, rs: e - s <= 32 * MIB),
        ("serve_fds", "end - start <= 8", lambda s, e, rs: e - s <= 8),
        ("serve_threads", "end - start <= 8", lambda s, e, rs: e - s <= 8),
        ("db_bytes", "end - start <= 8 MiB", lambda s, e, rs: e - s <= 8 * 2**20),
        ("history_runs", f"every sample <= retention + 4 = {retention + 4}",
         lambda s, e, rs: max(r["history_runs"] for r in rs) <= retention + 4),
        ("history_rows", "end <= 1.25 * start + 100", lambda s, e, rs: e <= 1.25 * s + 100),
        ("state_bytes", "end - start <= 1 MiB", lambda s, e, rs: e - s <= 2**20),
        ("latency_ms", "end <= 3 * start + 10 s", lambda s, e, rs: e <= 3 * s + 10000),
        ("serve_cpu_ms_per_run", "end <= 1.5 * start + 20", lambda s, e, rs: e <= 1.5 * s + 20),
        ("lab_rss_kib", "end - start <= 32 MiB", lambda s, e, rs: e - s <= 32 * MIB),
    ]
    say(f"samples {len(rows)}, warm-up {warm} (until the history held {retention} runs), "
        f"steady {len(steady)} over {steady[-1]['t_s'] - steady[0]['t_s']:.0f} s; start/end = mean of the "
        f"first/last {k} steady samples")
    say(f"{'metric':<20} {'start':>12} {'end':>12} {'slope/h':>12}  bound")
    for m, text, ok in bounds:
        if m not in steady[0]:
            say(f"{m:<20} not sampled by the soak that wrote this CSV")
            continue
        s, e = mean(first, m), mean(last, m)
        good = ok(s, e, steady)
        failed |= not good
        say(f"{m:<20} {s:>12.0f} {e:>12.0f} {(e - s) / hours:>12.1f}  {text}  {'ok' if good else 'EXCEEDED'}")
runs, failures = rows[-1]["runs"] if rows else 0, rows[-1]["failures"] if rows else 0
updated = rows[-1]["updated"] if rows else 0
say(f"converges {runs:.0f} ({updated:.0f} resources updated on the devices), failed {failures:.0f} (bound: 0)")
failed |= failures > 0 or runs == 0 or updated == 0
say("SOAK FAILED" if failed else "SOAK OK")
open(sys.argv[3], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if failed else 0)
EOF
}
if [ -n "${SOAK_SUMMARIZE:-}" ]; then
    verdict "$SOAK_SUMMARIZE" "$out/summary.txt"
    exit
fi

if [ -z "${SOAK_BIN_DIR:-}" ]; then
    (cd "$root" && nice -n 10 cargo build -q --release -p netgw -p netgw-labs)
    bin=$root/target/release
else
    bin=$(cd "$SOAK_BIN_DIR" && pwd)
fi

work=$out/work
rm -rf "$work"
mkdir -p "$work/repo/nodes" "$work/state"
lab_pid= serve_pid= sampler_pid=
cleanup() {
    for p in $sampler_pid $serve_pid $lab_pid; do
        kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
}
trap cleanup EXIT

# --- the fabric ----------------------------------------------------------------------------------
kinds=("e:arista_ceos" "j:juniper_vjunosswitch" "i:cisco_iol, type: L2" "n:cisco_n9kv" "f:f5_bigip-ve")
nodes=()
{
    echo "name: soak"
    echo "topology:"
    echo "  nodes:"
    for k in "${kinds[@]}"; do
        for i in $(seq 1 "$SOAK_PER_VENDOR"); do
            n=${k%%:*}$i
            nodes+=("$n")
            echo "    $n: {kind: ${k#*:}}"
        done
    done
} >"$work/soak.clab.yml"

nice -n 10 "$bin/netgw-lab" up "$work/soak.clab.yml" --no-snmp --inventory-out "$work/inventory.yml" \
    >"$work/lab.out" 2>"$work/lab.log" &
lab_pid=$!
for _ in $(seq 1 600); do
    grep -q '^READY' "$work/lab.out" 2>/dev/null && break
    kill -0 "$lab_pid" 2>/dev/null || { cat "$work/lab.log" >&2; echo "soak: netgw-lab failed to start" >&2; exit 1; }
    sleep 0.1
done
grep -q '^READY' "$work/lab.out" || { echo "soak: netgw-lab did not become ready" >&2; exit 1; }

# --- desired state: one VLAN per node whose name flips between two values --------------------------
declare -A flip
write_node() { # NODE NAME
    printf '{"name":"%s","run_list":["recipe[netdev::vlans]"],"normal":{"netdev":{"vlans":{"310":{"name":"%s"}}}}}\n' \
        "$1" "$2" >"$work/repo/nodes/$1.json.tmp"
    mv "$work/repo/nodes/$1.json.tmp" "$work/repo/nodes/$1.json"
}
for n in "${nodes[@]}"; do
    flip[$n]=0
    write_node "$n" soak_a
done

# --- serve ---------------------------------------------------------------------------------------
token=soak-token-$SOAK_SEED
db=$work/history.db
cat >"$work/serve.yml" <<EOF
listen: 127.0.0.1:0
db: $db
repo: $work/repo
inventory: $work/inventory.yml
retention: $SOAK_SERVE_RETENTION
node_timeout_secs: 120
tokens:
  - {name: soak, sha256: "$(printf %s "$token" | sha256sum | cut -d' ' -f1)", roles: [trigger, read]}
EOF
NETGW_STATE_DIR=$work/state nice -n 10 "$bin/netgw" serve --config "$work/serve.yml" \
    >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
url=
for _ in $(seq 1 300); do
    url=$(sed -n 's/^netgw serve: listening on //p' "$work/serve.out" 2>/dev/null | head -1)
    [ -n "$url" ] && break
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "soak: netgw serve failed to start" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "soak: netgw serve did not start listening" >&2; exit 1; }

api() { # METHOD PATH [BODY]
    curl -sS --max-time 30 -X "$1" -H "Authorization: Bearer $token" -H 'content-type: application/json' \
        ${3:+-d "$3"} "$url$2"
}

# --- the sampler ---------------------------------------------------------------------------------
csv=$out/soak.csv
: >"$work/latency.txt"
: >"$work/failures.txt"
: >"$work/updated.txt"
echo "t_s,serve_rss_kib,serve_fds,serve_threads,db_bytes,history_runs,history_rows,state_bytes,latency_ms,lab_rss_kib,runs,updated,failures,serve_cpu_ms_per_run" >"$csv"
status_field() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
file_bytes() { local s=0 f; for f in "$@"; do [ -e "$f" ] && s=$((s + $(stat -c %s "$f"))); done; echo $s; }
history_rows() { # RUNS ALL: row counts, read-only (WAL readers do not block the writer)
    local tables q
    tables=$(sqlite3 -readonly -cmd '.timeout 5000' "$db" "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
    q=$(for t in $tables; do printf '(SELECT count(*) FROM "%s")+' "$t"; done)
    sqlite3 -readonly -cmd '.timeout 5000' "$db" "SELECT (SELECT count(*) FROM runs), ${q}0" | tr '|' ' '
}
sampler() {
    # A file renamed under du, or a busy database, costs one figure, never the sampler.
    set +e
    local start seen=0 now lat total lines cpu cpu_seen=0 per_run
    local tick
    tick=$(getconf CLK_TCK)
    start=$(date +%s)
    while kill -0 "$serve_pid" 2>/dev/null; do
        now=$(($(date +%s) - start))
        lines=$(wc -l <"$work/latency.txt")
        lat=$(tail -n +"$((seen + 1))" "$work/latency.txt" | head -n "$((lines - seen))" | awk '{s += $1} END {if (NR) printf "%.0f", s / NR}')
        # serve's CPU time (user + system) per converge since the last row: what a run costs the
        # gateway, unlike the latency, whatever else the machine is running.
        cpu=$(awk -v t="$tick" '{print int(($14 + $15) * 1000 / t)}' "/proc/$serve_pid/stat" 2>/dev/null)
        per_run=
        [ "$lines" -gt "$seen" ] && [ -n "$cpu" ] && per_run=$(((cpu - cpu_seen) / (lines - seen)))
        cpu_seen=${cpu:-$cpu_seen}
        seen=$lines
        read -r hruns hrows < <(history_rows || echo "0 0")
        total=$(du -sb --exclude='*.run.lock' "$work/state" 2>/dev/null | cut -f1)
        echo "$now,$(status_field "$serve_pid" VmRSS),$(ls "/proc/$serve_pid/fd" | wc -l),$(status_field "$serve_pid" Threads),$(file_bytes "$db" "$db-wal" "$db-shm"),$hruns,$hrows,$total,$lat,$(status_field "$lab_pid" VmRSS),$lines,$(awk '{s += $1} END {print s + 0}' "$work/updated.txt"),$(wc -l <"$work/failures.txt"),$per_run" >>"$csv"
        sleep "$SOAK_SAMPLE"
    done
}
sampler &
sampler_pid=$!

# --- the load ------------------------------------------------------------------------------------
RANDOM=$SOAK_SEED
deadline=$(($(date +%s) + SOAK_SECONDS))
count=0
echo "soak: ${#nodes[@]} devices, $SOAK_SECONDS s, output in $out"
while [ "$(date +%s)" -lt "$deadline" ]; do
    count=$((count + 1))
    batch=()
    for _ in $(seq 1 "$SOAK_BATCH"); do batch+=("${nodes[RANDOM % ${#nodes[@]}]}"); done
    mapfile -t batch < <(printf '%s\n' "${batch[@]}" | sort -u)
    for n in "${batch[@]}"; do
        flip[$n]=$((1 - flip[$n]))
        if [ "${flip[$n]}" = 1 ]; then write_node "$n" soak_b; else write_node "$n" soak_a; fi
    done
    body=$(printf '%s\n' "${batch[@]}" | jq -R . | jq -cs '{nodes: .}')
    t0=$(date +%s%N)
    id=$(api POST /v1/converge "$body" | jq -r '.run_id // empty' || true)
    if [ -z "$id" ]; then
        echo "$count trigger refused" >>"$work/failures.txt"
        sleep "$SOAK_INTERVAL"
        continue
    fi
    if [ $((count % 5)) = 0 ]; then
        curl -sS -N --max-time 1 -H "Authorization: Bearer $token" "$url/v1/runs/$id/events" >/dev/null 2>&1 || true
    fi
    status=
    for _ in $(seq 1 600); do
        status=$(api GET "/v1/runs/$id" | jq -r '"\(.status // "") \(.summary.updated // 0)"' || true)
        read -r status updated <<<"$status"
        case $status in queued | running | "") sleep 0.2 ;; *) break ;; esac
    done
    echo $((($(date +%s%N) - t0) / 1000000)) >>"$work/latency.txt"
    echo "${updated:-0}" >>"$work/updated.txt"
    if [ "$status" != finished ]; then
        echo "$count run $id: ${status:-no answer}" >>"$work/failures.txt"
        api GET "/v1/runs/$id" >>"$work/failed-runs.json" || true
    fi
    if [ $((count % SOAK_DRIFT_EVERY)) = 0 ]; then
        # exit 0 (no drift) or 1 (drift: nodes flipped but not converged yet) are answers; more is a failure.
        rc=0
        NETGW_STATE_DIR=$work/state nice -n 10 "$bin/netgw" --repo "$work/repo" drift \
            --inventory "$work/inventory.yml" >"$work/drift.out" 2>&1 || rc=$?
        [ "$rc" -le 1 ] || echo "$count drift exit $rc" >>"$work/failures.txt"
    fi
    sleep "$SOAK_INTERVAL"
done
sleep "$SOAK_SAMPLE"
kill "$sampler_pid" 2>/dev/null && wait "$sampler_pid" 2>/dev/null || true
sampler_pid=

# --- the verdict ---------------------------------------------------------------------------------
verdict "$csv" "$out/summary.txt"
