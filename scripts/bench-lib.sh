# Sourced by scripts/bench.sh and scripts/bench-ab.sh: the lab topology and the repo the benchmark
# converges, so both measure the same change. Uses $py when the caller set it (bench.sh's venv), else
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
}

# The repo: one node per inventory host, one VLAN and one interface description each.
write_repo() { # platform dir
    "${py:-python3}" - "$1" "$2" <<'EOF'
import json, os, re, sys
platform, d = sys.argv[1], sys.argv[2]
port = {"ios": "Ethernet0/1", "nxos": "Ethernet1/1", "eos": "Ethernet1", "junos": "ge-0/0/1", "f5": "1.1"}[platform]
names = re.findall(r"^  (\S+):$", open(os.path.join(d, "inventory.yml")).read(), re.M)
os.makedirs(os.path.join(d, "repo", "nodes"), exist_ok=True)
for n in names:
    with open(os.path.join(d, "repo", "nodes", n + ".json"), "w") as f:
        json.dump({"name": n, "chef_environment": "_default",
                   "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
                   "normal": {"netdev": {"vlans": {"100": {"name": "bench"}},
                                         "links": {port: {"description": "bench uplink"}}}}}, f)
print(len(names))
EOF
}
