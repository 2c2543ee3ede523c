#!/usr/bin/env python3
"""Table of scripts/bench.sh results: report.py [--json] [--machine FILE] RAW.jsonl...

One row per (tool, N, run): wall s, devices/s, CPU s, peak RSS MB, then netgw/tool and netgw/floor,
the ratio of wall times (netgw-ios first run over the tool, at the same N: above 1 netgw is slower;
the issue's "20x faster than Python" is a ratio at or below 0.05, "within 2x of the floor" at or below
2). A later line for the same (tool, N, run) replaces an earlier one (re-runs on a quieter machine).
"""
import json
import sys


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
                rows[(r["tool"], r["n"], r["run"])] = r
    if as_json:
        print(json.dumps(sorted(rows.values(), key=lambda r: (r["n"], r["tool"], r["run"])), indent=1))
        return

    def ok(r):
        return r.get("verified") and not r.get("timed_out")

    def netgw(n):
        r = rows.get(("netgw-ios", n, "first"))
        return r if r and ok(r) else None

    def floor(n):
        r = rows.get(("floor", n, "first"))
        return r if r and ok(r) else None

    if machine:
        print("```\n" + machine.strip() + "\n```\n")
    print("| tool | N | run | wall s | devices/s | CPU s | peak RSS MB | lab CPU s | load | netgw/tool | netgw/floor |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    order = ["netgw-ios", "netgw-eos-https", "netgw-eos-http", "netgw-junos", "floor", "floor-peer",
             "scrapli", "netmiko", "nornir", "ansible"]
    for key in sorted(rows, key=lambda k: (k[1], order.index(k[0]) if k[0] in order else 99, k[2])):
        r = rows[key]
        tool, n, run = key
        if r.get("timed_out"):
            wall = f"did not finish (> {r['wall_secs']:.0f})"
            rate = "-"
        elif not r.get("verified"):
            wall = f"{r['wall_secs']:.2f} (FAILED: {r.get('succeeded', '?')}/{n} ok)"
            rate = "-"
        else:
            wall = f"{r['wall_secs']:.2f}"
            rate = f"{n / r['wall_secs']:.0f}" if r["wall_secs"] > 0 else "-"
        ng, fl = netgw(n), floor(n)
        ratio_tool = ratio_floor = ""
        if run == "first" and ng and ok(r):
            ratio_tool = f"{ng['wall_secs'] / r['wall_secs']:.3f}"
        if run == "first" and ng and fl and tool.startswith("netgw-ios"):
            ratio_floor = f"{ng['wall_secs'] / fl['wall_secs']:.2f}"
        print(f"| {tool} | {n} | {run} | {wall} | {rate} | {r['cpu_secs']:.2f} | {r['peak_tree_rss_mb']:.0f} | "
              f"{r.get('lab_cpu_secs') if r.get('lab_cpu_secs') is not None else '-'} | {r['load_before']} | {ratio_tool} | {ratio_floor} |")


main()
