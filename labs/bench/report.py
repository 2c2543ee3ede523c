#!/usr/bin/env python3
"""Table of scripts/bench.sh results: report.py [--json] [--machine FILE] RAW.jsonl...

One row per (tool, N, run): wall s, devices/s, CPU s, peak RSS MB, then netgw/tool and netgw/floor,
ratios of wall times at the same N. netgw/tool, on a floor's or a peer's row: the first run of netgw
for that tool's vendor (VENDOR below) over the tool (above 1 netgw is slower; "20x faster than Python"
is a ratio at or below 0.05). netgw/floor, on every netgw row's first run: that row over its vendor's
floor (FLOOR below; "within 1.5x of the floor" is at or below 1.5). CPU/floor: the same ratio in CPU
seconds (user + sys of the tool's own process tree, not the simulator's), which the other engineers'
load on the shared cores moves far less than wall time. RT/dev and cmd/dev: the round trips and commands
the simulated devices answered during the run, per device (a first run changes every device, second
and third change none); peak conn: the most device sessions open at once. A later line for the same
(tool, N, run, device latency, ports per device) replaces an earlier one (re-runs on a quieter
machine); each device latency and port count gets its own table.
"""
import json
import sys

ORDER = ["netgw-ios", "netgw-atomic", "netgw-nxos", "netgw-eos-https", "netgw-eos-http", "netgw-junos", "netgw-f5",
         "netgw-f5-parallel", "floor", "floor-nxos", "floor-eos", "floor-junos", "floor-f5", "floor-f5-parallel",
         "floor-peer",
         "scrapli", "netmiko", "nornir", "ansible", "scrapli-nxos", "netmiko-nxos", "pyeapi", "ncclient", "bigrest"]
# The netgw row a floor or a peer is compared with (same vendor, same transport).
VENDOR = {"floor": "netgw-ios", "floor-peer": "netgw-ios", "scrapli": "netgw-ios", "netmiko": "netgw-ios",
          "nornir": "netgw-ios", "ansible": "netgw-ios", "floor-nxos": "netgw-nxos",
          "scrapli-nxos": "netgw-nxos", "netmiko-nxos": "netgw-nxos", "floor-eos": "netgw-eos-https",
          "pyeapi": "netgw-eos-https", "floor-junos": "netgw-junos", "ncclient": "netgw-junos",
          "floor-f5": "netgw-f5", "bigrest": "netgw-f5", "floor-f5-parallel": "netgw-f5-parallel"}
# Each netgw row's floor: the bare client sending what that converge sends (docs/bench.md). eAPI over
# plain HTTP has none (the HTTPS floor is not its work).
FLOOR = {"netgw-ios": "floor", "netgw-nxos": "floor-nxos", "netgw-eos-https": "floor-eos",
         "netgw-junos": "floor-junos", "netgw-f5": "floor-f5", "netgw-f5-parallel": "floor-f5-parallel"}


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    machine = None
    if "--machine" in args:
        i = args.index("--machine")
        machine = open(args[i + 1]).read()
        del args[i : i + 2]
    args = [a for a in args if a != "--json"]
    rows = {}
    for p in args:
        for line in open(p):
            line = line.strip()
            if line:
                r = json.loads(line)
                rows[(r["tool"], r["n"], r["run"], lab_of(r))] = r
    if as_json:
        print(json.dumps(sorted(rows.values(), key=lambda r: (r["n"], r["tool"], r["run"])), indent=1))
        return

    def ok(r):
        return r.get("verified") and not r.get("timed_out")

    def first(tool, n, lat):
        r = rows.get((tool, n, "first", lat))
        return r if r and ok(r) else None

    if machine:
        print("```\n" + machine.strip() + "\n```\n")
    order = ORDER
    for lat in sorted({k[3] for k in rows}):
        print(f"\ndevice latency {lat[0]} ms per round trip, {lat[1]} ports per device\n")
        print("| tool | N | run | wall s | devices/s | CPU s | peak RSS MB | lab CPU s | load | RT/dev | cmd/dev "
              "| peak conn | netgw/tool | netgw/floor | CPU/floor |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        keys = [k for k in rows if k[3] == lat]
        for key in sorted(keys, key=lambda k: (k[1], order.index(k[0]) if k[0] in order else 99, k[2])):
            print_row(rows[key], key, first)
    atomic(rows, first)


def lab_of(r):
    """The lab a row was measured on: device latency (ms) and ports per device (8 before the count was
    recorded)."""
    return (r.get("latency_ms", 0), r.get("ports", 8))


def print_row(r, key, first):
    def ok(r):
        return r.get("verified") and not r.get("timed_out")

    tool, n, run, lat = key
    if r.get("timed_out"):
        wall = f"did not finish (> {r['wall_secs']:.0f})"
        rate = "-"
    elif not r.get("verified"):
        wall = f"{r['wall_secs']:.2f} (FAILED: {r.get('succeeded', '?')}/{n} ok)"
        rate = "-"
    else:
        wall = f"{r['wall_secs']:.2f}"
        rate = f"{n / r['wall_secs']:.0f}" if r["wall_secs"] > 0 else "-"
    ratio_tool = ratio_floor = cpu_floor = ""
    ng = first(VENDOR[tool], n, lat) if tool in VENDOR else None
    if run == "first" and ng and ok(r):
        ratio_tool = f"{ng['wall_secs'] / r['wall_secs']:.3f}"
    fl = first(FLOOR[tool], n, lat) if tool in FLOOR else None
    if run == "first" and fl and ok(r):
        ratio_floor = f"{r['wall_secs'] / fl['wall_secs']:.2f}"
        if fl["cpu_secs"] > 0:
            cpu_floor = f"{r['cpu_secs'] / fl['cpu_secs']:.2f}"
    lab_cpu = r.get('lab_cpu_secs') if r.get('lab_cpu_secs') is not None else '-'
    counts = " | ".join(str(r.get(k, "-")) for k in ("round_trips_per_device", "commands_per_device",
                                                       "peak_connections"))
    print(f"| {tool} | {n} | {run} | {wall} | {rate} | {r['cpu_secs']:.2f} | {r['peak_tree_rss_mb']:.0f} | "
          f"{lab_cpu} | {r['load_before']} | {counts} | {ratio_tool} | {ratio_floor} | {cpu_floor} |")


def atomic(rows, first):
    # An atomic converge (netgw-atomic: `converge --atomic`, IOS) over a plain one of the same
    # devices (netgw-ios), first runs at the same N: wall time and the gateway's CPU seconds.
    for n, lat in sorted({(k[1], k[3]) for k in rows}):
        a, plain = first("netgw-atomic", n, lat), first("netgw-ios", n, lat)
        if a and plain and plain["wall_secs"] > 0 and plain["cpu_secs"] > 0:
            print(f"\natomic/plain at N={n}, {lat[0]} ms, {lat[1]} ports (first run): wall {a['wall_secs'] / plain['wall_secs']:.2f}x, "
                  f"CPU {a['cpu_secs'] / plain['cpu_secs']:.2f}x")


if __name__ == "__main__":
    main()
