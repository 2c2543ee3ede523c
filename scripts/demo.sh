#!/usr/bin/env bash
# The main job on the embedded default, in one command: build netgw and netgw-lab, simulate the example
# fabric (containerlab/netgw-fabric.clab.yml: Arista EOS, Juniper Junos, Cisco IOS and F5 BIG-IP devices)
# on 127.0.0.1, and converge it from the example repo (examples/repo). The first run changes the devices;
# the second finds everything up to date. No server, no containers, no root.
#
#   scripts/demo.sh            build (debug) and run
#   NETGW_BIN_DIR=DIR          use already-built netgw and netgw-lab from DIR (no build)
#   NETGW_DEMO_KEEP=1          keep the work directory (repo copy, inventory, netgw's state directory)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${NETGW_BIN_DIR:-}" ]; then
    echo "== building netgw and netgw-lab"
    cargo build -q -p netgw -p netgw-labs
    bin=target/debug
else
    bin=$NETGW_BIN_DIR
fi

work=$(mktemp -d -t netgw-demo.XXXXXX)
lab_pid=
cleanup() {
    [ -n "$lab_pid" ] && kill "$lab_pid" 2>/dev/null && wait "$lab_pid" 2>/dev/null || true
    if [ -z "${NETGW_DEMO_KEEP:-}" ]; then rm -rf "$work"; else echo "work directory kept: $work"; fi
}
trap cleanup EXIT

# The example repo is copied, so the demo never writes beside the tracked files, whatever the
# environment says (NETGW_CURRENT_STATE=repo saves current state beside the desired files).
cp -r examples/repo "$work/repo"
# The gateway's own state (node locks, intent journal) in the work directory too, so the demo leaves
# nothing behind in ~/.local/state/netgw (unless NETGW_STATE_DIR says where it should go).
export NETGW_STATE_DIR="${NETGW_STATE_DIR:-$work/state}"

echo "== starting the simulated fabric (netgw-lab)"
"$bin/netgw-lab" up containerlab/netgw-fabric.clab.yml --inventory-out "$work/inventory.yml" \
    > "$work/lab.out" 2> "$work/lab.log" &
lab_pid=$!
for _ in $(seq 1 300); do
    grep -q '^READY' "$work/lab.out" 2>/dev/null && break
    kill -0 "$lab_pid" 2>/dev/null || { cat "$work/lab.log" >&2; echo "netgw-lab failed to start" >&2; exit 1; }
    sleep 0.1
done
grep '^READY' "$work/lab.out" || { echo "netgw-lab did not become ready" >&2; exit 1; }

echo
echo "== netgw converge (first run: the devices are changed)"
"$bin/netgw" converge --repo "$work/repo" --inventory "$work/inventory.yml"

echo
echo "== netgw converge (second run: everything is up to date)"
"$bin/netgw" converge --repo "$work/repo" --inventory "$work/inventory.yml"

echo
echo "== netgw node show leaf1 --attribute netdev.vlans.100.name"
"$bin/netgw" node show leaf1 --repo "$work/repo" --attribute netdev.vlans.100.name
