#!/usr/bin/env bash
# Scale benchmark: netgw converging N simulated devices, against the tools netops use today
# and a bare-SSH floor, on this machine. Results: bench-results/ (raw JSON lines + summary), the table
# on stdout; docs/bench.md explains the method and the numbers.
#
#   scripts/bench.sh [N ...]                 default: 1 100 1000 10000
#
# Environment:
#   BENCH_TOOLS    what to run (default all): netgw-ios netgw-nxos netgw-eos-https netgw-eos-http
#                  netgw-junos netgw-f5, netgw-f5-parallel (F5 with `rest_parallel_reads: true`),
#                  netgw-atomic (IOS, `converge --atomic`: its ratio to netgw-ios is printed under the
#                  table), the floors floor (IOS) floor-nxos floor-eos floor-junos floor-f5
#                  floor-f5-parallel floor-peer, the Python peers scrapli netmiko nornir ansible (IOS), scrapli-nxos
#                  netmiko-nxos (NX-OS), pyeapi (EOS eAPI over HTTPS), ncclient (Junos NETCONF), bigrest
#                  (F5 iControl REST over HTTPS)
#   BENCH_CONCURRENCY  sessions at once for netgw, the floor, scrapli, Netmiko and Nornir (default 100)
#   BENCH_FORKS    Ansible forks (default 50)
#   BENCH_LIMIT    hard limit per run, seconds (default 900); a run past it is killed: "did not finish"
#   BENCH_PY_MAX_N largest N the Python peers are run at (default 1000; Ansible: BENCH_ANSIBLE_MAX_N,
#                  default 1000)
#   BENCH_LATENCY_MS   every device delays each round trip by this much (netgw-lab latency-ms; default 0)
#   BENCH_PORTS    front-panel ports of every device (netgw-lab's `ports` label; default 8, the lab's
#                  smallest device), e.g. 48 for access switches of real size
#   BENCH_VENV     the Python peers' venv, used as it is (default .peers/venv-bench, installed from
#                  labs/bench/requirements.txt when missing or stale)
#   BENCH_NO_BUILD=1   use the binaries already in BENCH_BIN_DIR (default target/release)
#   BENCH_OUT      results directory (default bench-results)
#
# Every device starts fresh: each (tool, N) gets its own netgw-lab process, stopped afterwards. netgw
# converges three times in a row: `first` (one VLAN and one description to change on every device),
# `second` and `third` (nothing to change; the third is the steady state of periodic runs). The
# gateway side is measured by labs/bench/measure.py (wall, user+sys CPU of the process tree, peak RSS);
# the simulator's own CPU over the run is recorded beside it (it shares the 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(1 100 1000 10000)
tools=${BENCH_TOOLS:-"netgw-ios netgw-atomic netgw-nxos netgw-eos-https netgw-eos-http netgw-junos netgw-f5 netgw-f5-parallel floor floor-nxos floor-eos floor-junos floor-f5 floor-f5-parallel floor-peer scrapli netmiko nornir ansible scrapli-nxos netmiko-nxos pyeapi ncclient bigrest"}
conc=${BENCH_CONCURRENCY:-100}
forks=${BENCH_FORKS:-50}
limit=${BENCH_LIMIT:-900}
py_max=${BENCH_PY_MAX_N:-1000}
ansible_max=${BENCH_ANSIBLE_MAX_N:-1000}
latency=${BENCH_LATENCY_MS:-0}
bin=${BENCH_BIN_DIR:-target/release}
out=${BENCH_OUT:-bench-results}
venv=${BENCH_VENV:-.peers/venv-bench}
py=python3
# write_topology, write_repo: shared with scripts/bench-ab.sh.
. scripts/bench-lib.sh

if [ -z "${BENCH_NO_BUILD:-}" ]; then
    echo "== building netgw, netgw-lab and the floors (release)"
    cargo build --release -q -p netgw -p netgw-labs
fi

needs_py=false
for t in $tools; do case $t in scrapli* | netmiko* | nornir | ansible | pyeapi | ncclient | bigrest) needs_py=true ;; esac; done
if $needs_py && [ -z "${BENCH_VENV:-}" ]; then
    if [ ! -x "$venv/bin/python" ] || ! cmp -s labs/bench/requirements.txt "$venv/.requirements"; then
        echo "== installing the Python peers into $venv (PyPI)"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q -r labs/bench/requirements.txt
        cp labs/bench/requirements.txt "$venv/.requirements"
    fi
fi

mkdir -p "$out/raw"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw="$out/raw/$stamp.jsonl"
work=$(mktemp -d -t netgw-bench.XXXXXX)
lab_pid=
lab_out=
stop_lab() {
    if [ -n "$lab_pid" ]; then
        kill "$lab_pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$lab_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$lab_pid" 2>/dev/null || true
        wait "$lab_pid" 2>/dev/null || true
        lab_pid=
    fi
}
cleanup() {
    stop_lab
    [ -z "${BENCH_KEEP:-}" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== machine"
{
    echo "nproc: $(nproc)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "kernel: $(uname -srm)"
    echo "rustc: $(rustc --version)"
    free -h | sed -n 2p | awk '{print "memory: " $2 " total, " $7 " available"}'
    echo "ulimit -n: $(ulimit -n) (netgw-lab raises its own to the hard limit $(ulimit -Hn))"
    echo "uptime: $(uptime)"
    echo "device latency: $latency ms per round trip"
    echo "ports per device: ${BENCH_PORTS:-8}"
} | tee "$work/machine.txt"

start_lab() { # platform n dir [extra args]
    local platform=$1 n=$2 dir=$3
    shift 3
    write_topology "$platform" "$dir/bench.clab.yml"
    # --no-snmp: the Python tools gather no SNMP facts, so netgw does not either (like for like; SNMP facts
    # cost about 1 CPU-s per 1,000 devices on each side, docs/snmp.md).
    "$bin/netgw-lab" up "$dir/bench.clab.yml" --inventory-out "$dir/inventory.yml" --count "$n" --no-snmp "$@" \
        > "$dir/lab.out" 2> "$dir/lab.log" &
    lab_pid=$!
    lab_out="$dir/lab.out"
    for _ in $(seq 1 1200); do
        grep -q '^READY' "$dir/lab.out" 2>/dev/null && return 0
        kill -0 "$lab_pid" 2>/dev/null || { cat "$dir/lab.log" >&2; echo "netgw-lab failed" >&2; return 1; }
        sleep 0.1
    done
    echo "netgw-lab not ready after 120 s" >&2
    return 1
}


# Measures one run, and what the lab's devices answered during it ($work/counts-before.json, -after).
measure() { # name stdout-file -- cmd...
    local name=$1 so=$2
    shift 3
    lab_counts "$lab_out" > "$work/counts-before.json"
    # netgw's saves end in a `syncfs`, which also writes whatever else is dirty on the file system
    # (a build just before: seconds): flushed first, so each run pays for its own writes only.
    sync
    "$py" labs/bench/measure.py --out "$work/m.json" --limit "$limit" --lab-pid "$lab_pid" --stdout "$so" -- "$@" \
        2> "$work/measure.err" || true
    lab_counts "$lab_out" > "$work/counts-after.json"
    cat "$work/m.json"
}

# Append one result line: tool n run measure.json stdout-file
record() {
    "$py" - "$@" "$work/counts-before.json" "$work/counts-after.json" "$latency" "${BENCH_PORTS:-8}" >> "$raw" <<'EOF'
import json, sys
tool, n, run, mfile, sofile, conc, c0file, c1file, latency, ports = sys.argv[1:11]
m = json.load(open(mfile))
r = {"tool": tool, "n": int(n), "run": run, "concurrency": int(conc), "latency_ms": int(latency),
     "ports": int(ports), **m}
try:
    c0, c1 = json.load(open(c0file)), json.load(open(c1file))
    r["round_trips_per_device"] = round((c1["round_trips"] - c0["round_trips"]) / int(n), 2)
    r["commands_per_device"] = round((c1["commands"] - c0["commands"]) / int(n), 2)
    r["peak_connections"] = c1["peak_open"]
except (OSError, ValueError, KeyError) as e:
    print(f"   {tool}: no lab counts ({e})", file=sys.stderr)
try:
    text = open(sofile).read()
except OSError:
    text = ""
ok = False
if tool.startswith("netgw"):
    try:
        rep = json.loads(text)
        s = rep["summary"]
        r.update(nodes=s["nodes"], succeeded=s["succeeded"], failed=s["failed"], updated=s["updated"],
                 resources=s["resources"])
        want = 2 * int(n) if run == "first" else 0
        ok = s["succeeded"] == int(n) and s["failed"] == 0 and s["updated"] == want
        steps = {}
        for node in rep["nodes"]:
            for st in node.get("steps", []):
                steps[st["step"]] = steps.get(st["step"], 0.0) + st["duration_secs"]
        r["step_secs_sum"] = {k: round(v, 2) for k, v in steps.items()}
        if not ok:
            r["errors"] = [f'{x["name"]}: {x.get("error")}' for x in rep["nodes"] if x["status"] != "success"][:5]
    except (ValueError, KeyError) as e:
        r["errors"] = [f"report: {e}", text[-300:]]
elif tool == "ansible":
    import re
    hosts = re.findall(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", text, re.M)
    good = sum(1 for h in hosts if h[3] == "0" and h[4] == "0")
    r.update(succeeded=good, failed=int(n) - good)
    ok = good == int(n)
    if not ok:
        r["errors"] = [l for l in text.splitlines() if "fatal:" in l or "FAILED" in l][:5]
else:
    try:
        s = json.loads(text.strip().splitlines()[-1])
        r.update(succeeded=s["ok"], failed=s["failed"])
        ok = s["ok"] == int(n) and s["failed"] == 0
        if s.get("errors"):
            r["errors"] = s["errors"][:5]
    except (ValueError, KeyError, IndexError) as e:
        r["errors"] = [f"output: {e}", text[-300:]]
r["verified"] = ok and not m["timed_out"] and m["rc"] == 0
print(json.dumps(r))
w = r["wall_secs"]
print(f'   {tool:16} N={n:<6} {run:6} wall {w:8.2f} s  cpu {r["cpu_secs"]:7.2f} s  rss {r["peak_tree_rss_mb"]:7.1f} MB  '
      f'round trips/device {r.get("round_trips_per_device")}  peak conn {r.get("peak_connections")}  '
      f'lab cpu {r.get("lab_cpu_secs")} s  load {r["load_before"]}  '
      f'{"ok" if r["verified"] else "NOT VERIFIED" + (" (did not finish)" if m["timed_out"] else "")}',
      file=sys.stderr)
EOF
}

run_netgw() { # tool platform n [lab args]
    local tool=$1 platform=$2 n=$3
    shift 3
    local d="$work/$tool-$n"
    local mode=()
    [ "$tool" = netgw-atomic ] && mode=(--atomic)
    mkdir -p "$d"
    start_lab "$platform" "$n" "$d" "$@"
    if [ "$tool" = netgw-f5-parallel ]; then
        # Every host's `data.netgw` (netgw-lab writes one per host, with its CA file).
        sed -i 's|^      netgw:$|      netgw:\n        rest_parallel_reads: true|' "$d/inventory.yml"
    fi
    write_repo "$platform" "$d" > /dev/null
    for run in first second third; do
        measure "$tool" "$d/$run.json" -- "$bin/netgw" converge "${mode[@]}" --inventory "$d/inventory.yml" \
            --repo "$d/bench-repo" --concurrency "$conc" --format json > "$d/m-$run.json"
        record "$tool" "$n" "$run" "$d/m-$run.json" "$d/$run.json" "$conc"
    done
    stop_lab
}

run_peer() { # tool platform n
    local tool=$1 platform=$2 n=$3
    local d="$work/$tool-$n"
    mkdir -p "$d"
    start_lab "$platform" "$n" "$d"
    local c=$conc
    case $tool in
        floor | floor-nxos)
            measure "$tool" "$d/out.json" -- "$bin/ssh-floor" --inventory "$d/inventory.yml" \
                --platform "$platform" --concurrency "$conc" > "$d/m.json" ;;
        floor-junos)
            measure "$tool" "$d/out.json" -- "$bin/netconf-floor" --inventory "$d/inventory.yml" \
                --concurrency "$conc" > "$d/m.json" ;;
        floor-eos | floor-f5)
            measure "$tool" "$d/out.json" -- "$bin/http-floor" --inventory "$d/inventory.yml" \
                --platform "$platform" --concurrency "$conc" > "$d/m.json" ;;
        floor-f5-parallel)
            measure "$tool" "$d/out.json" -- "$bin/http-floor" --inventory "$d/inventory.yml" \
                --platform f5 --parallel --concurrency "$conc" > "$d/m.json" ;;
        floor-peer)
            measure "$tool" "$d/out.json" -- "$bin/ssh-floor" --inventory "$d/inventory.yml" \
                --concurrency "$conc" --commands labs/bench/floor-peer-commands.txt > "$d/m.json" ;;
        scrapli | netmiko | nornir | scrapli-nxos | netmiko-nxos | pyeapi | ncclient | bigrest)
            measure "$tool" "$d/out.json" -- "$venv/bin/python" labs/bench/peers.py "$tool" \
                --inventory "$d/inventory.yml" --concurrency "$conc" --work "$d" > "$d/m.json" ;;
        ansible)
            c=$forks
            "$py" - "$d" <<'EOF'
import re, sys
d = sys.argv[1]
text = open(f"{d}/inventory.yml").read()
hosts = re.findall(r"^  (\S+):\n    hostname: \S+\n    port: (\d+)", text, re.M)
with open(f"{d}/ansible-hosts.yml", "w") as f:
    f.write("all:\n  vars:\n    ansible_user: admin\n    ansible_password: admin\n"
            "    ansible_network_os: cisco.ios.ios\n    ansible_connection: ansible.netcommon.network_cli\n"
            # No become: the simulated IOL shell opens in privileged mode (as containerlab's does),
            # and the simulator does not answer `show privilege`, which become=enable runs first.
            "  hosts:\n")
    for n, p in hosts:
        f.write(f"    {n}: {{ansible_host: 127.0.0.1, ansible_port: {p}}}\n")
EOF
            ANSIBLE_HOST_KEY_CHECKING=False ANSIBLE_FORKS=$forks ANSIBLE_LOCAL_TEMP="$d/tmp" \
                ANSIBLE_PERSISTENT_CONNECT_TIMEOUT=120 ANSIBLE_PERSISTENT_COMMAND_TIMEOUT=120 \
                ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 PATH="$root/$venv/bin:$PATH" \
                measure "$tool" "$d/out.txt" -- "$venv/bin/ansible-playbook" -i "$d/ansible-hosts.yml" \
                labs/bench/ansible-playbook.yml > "$d/m.json"
            record "$tool" "$n" first "$d/m.json" "$d/out.txt" "$c"
            stop_lab
            return ;;
    esac
    record "$tool" "$n" first "$d/m.json" "$d/out.json" "$c"
    stop_lab
}

peer_platform() { # tool
    case $1 in
        *-nxos) echo nxos ;;
        pyeapi) echo eos ;;
        ncclient) echo junos ;;
        bigrest) echo f5 ;;
        *) echo ios ;;
    esac
}

echo "== runs (raw: $raw)"
for n in "${sizes[@]}"; do
    for t in $tools; do
        case $t in
            netgw-ios | netgw-atomic) run_netgw "$t" ios "$n" ;;
            netgw-nxos) run_netgw "$t" nxos "$n" ;;
            netgw-eos-https) run_netgw "$t" eos "$n" ;;
            netgw-eos-http) run_netgw "$t" eos "$n" --eapi-http ;;
            netgw-junos) run_netgw "$t" junos "$n" ;;
            netgw-f5 | netgw-f5-parallel) run_netgw "$t" f5 "$n" ;;
            floor | floor-peer) run_peer "$t" ios "$n" ;;
            floor-nxos) run_peer "$t" nxos "$n" ;;
            floor-eos) run_peer "$t" eos "$n" ;;
            floor-junos) run_peer "$t" junos "$n" ;;
            floor-f5 | floor-f5-parallel) run_peer "$t" f5 "$n" ;;
            scrapli | netmiko | nornir | scrapli-nxos | netmiko-nxos | pyeapi | ncclient | bigrest)
                if [ "$n" -le "$py_max" ]; then run_peer "$t" "$(peer_platform "$t")" "$n"; else echo "   $t N=$n skipped (BENCH_PY_MAX_N=$py_max)"; fi ;;
            ansible)
                if [ "$n" -le "$ansible_max" ]; then run_peer "$t" ios "$n"; else echo "   $t N=$n skipped (BENCH_ANSIBLE_MAX_N=$ansible_max)"; fi ;;
            *) echo "unknown tool $t" >&2; exit 2 ;;
        esac
    done
done

cp "$work/machine.txt" "$out/raw/$stamp.machine.txt"
"$py" labs/bench/report.py --machine "$work/machine.txt" "$raw" | tee "$out/raw/$stamp.table.md"
"$py" labs/bench/report.py --json "$raw" > "$out/summary.json"
echo "== summary: $out/summary.json, table: $out/raw/$stamp.table.md"
