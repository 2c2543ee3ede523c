# Sourced by scripts/bench.sh, scripts/bench-ab.sh and scripts/bench-count.sh: the lab topology and the
# repo the benchmark converges, so all measure the same change. Uses $py when the caller set it (bench.sh's venv), else
# python3.

# One-node topologies; netgw-lab --count N replicates them (node names NAME-1..NAME-N, or NAME at N=1).
write_topology() { # platform file
    local kind
    case $1 in
        ios) kind="cisco_iol\n      type: L2" ;;
        nxos) kind=cisco_n9kv ;;
        eos) kind=arista_ceos ;;
        junos) kind=juniper_vjunosswitch ;;
        f5) kind=f5_bigip-ve ;;
    esac
    printf 'name: bench\ntopology:\n  nodes:\n    sw:\n      kind: %b\n' "$kind" > "$2"
    # BENCH_LATENCY_MS: every device delays each round trip (netgw-lab's latency-ms, a node label that
    # --count copies to every device).
    # BENCH_PORTS: front-panel ports a device has (netgw-lab's `ports`; by default what the lab's
    # smallest device of the kind has), for access switches of real size.
    if [ "${BENCH_LATENCY_MS:-0}" != 0 ] || [ -n "${BENCH_PORTS:-}" ]; then
        printf '      labels:\n' >> "$2"
    fi
    if [ "${BENCH_LATENCY_MS:-0}" != 0 ]; then
        printf '        netgw-lab.latency-ms: "%s"\n' "$BENCH_LATENCY_MS" >> "$2"
    fi
    if [ -n "${BENCH_PORTS:-}" ]; then
        printf '        netgw-lab.ports: "%s"\n' "$BENCH_PORTS" >> "$2"
    fi
}

# What the lab's devices answered so far: netgw-lab prints one `STATS {json}` line on SIGUSR1
# (round trips, commands, sessions, the most open at once since the previous line). Prints the JSON.
lab_counts() { # lab.out
    local before
    before=$(grep -c '^STATS ' "$1" 2>/dev/null || true)
    kill -USR1 "$lab_pid"
    for _ in $(seq 1 200); do
        [ "$(grep -c '^STATS ' "$1" 2>/dev/null || true)" -gt "$before" ] && break
        sleep 0.05
    done
    grep '^STATS ' "$1" | tail -n 1 | cut -c7-
}

# The repo, DIR/bench-repo: one node per inventory host, one VLAN and one interface description each.
# netgw keeps each lab's state where a user's goes (~/.local/state/netgw/repos/bench_repo-HASH, about
# 12 KB a device): a long-lived state directory, as a gateway's is. Not in the work directory, nor
# removed at exit: on ext4 without a journal, creating a file scans past every inode of its block
# group freed in the last minutes, and first converges whose state went where thousands of files had
# just been removed took up to twice the CPU (docs/bench.md). After benchmarking:
#   rm -rf ~/.local/state/netgw/repos/bench_repo-*
write_repo() { # platform dir
    "${py:-python3}" - "$1" "$2" <<'EOF'
import json, os, re, sys
platform, d = sys.argv[1], sys.argv[2]
port = {"ios": "Ethernet0/1", "nxos": "Ethernet1/1", "eos": "Ethernet1", "junos": "ge-0/0/1", "f5": "1.1"}[platform]
names = re.findall(r"^  (\S+):$", open(os.path.join(d, "inventory.yml")).read(), re.M)
os.makedirs(os.path.join(d, "bench-repo", "nodes"), exist_ok=True)
for n in names:
    with open(os.path.join(d, "bench-repo", "nodes", n + ".json"), "w") as f:
        json.dump({"name": n, "chef_environment": "_default",
                   "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
                   "normal": {"netdev": {"vlans": {"100": {"name": "bench"}},
                                         "links": {port: {"description": "bench uplink"}}}}}, f)
print(len(names))
EOF
}

# A fresh netgw-lab of N devices in DIR (topology, inventory.yml, repo/), its pid in $lab_pid, ready to
# converge. $lab_bin (default target/release/netgw-lab); NICE=1 runs it at nice 19 (the A/B script, so
# the simulator's share of the two cores does not vary with the binary measured).
start_lab_in() { # platform n dir
    write_topology "$1" "$3/bench.clab.yml"
    local nice=()
    [ -n "${NICE:-}" ] && nice=(nice -n 19)
    "${nice[@]}" "${lab_bin:-target/release/netgw-lab}" up "$3/bench.clab.yml" --inventory-out "$3/inventory.yml" \
        --count "$2" --no-snmp > "$3/lab.out" 2> "$3/lab.log" &
    lab_pid=$!
    for _ in $(seq 1 1200); do
        grep -q '^READY' "$3/lab.out" 2>/dev/null && break
        kill -0 "$lab_pid" 2>/dev/null || { cat "$3/lab.log" >&2; exit 1; }
        sleep 0.1
    done
    write_repo "$1" "$3" > /dev/null
}
