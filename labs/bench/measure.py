#!/usr/bin/env python3
"""Run one command under measurement (scripts/bench.sh).

    measure.py --out FILE [--limit SECS] [--lab-pid PID] -- CMD ARGS...

Writes JSON: wall_secs, user_secs, sys_secs (the command and every descendant it waited for, from
wait4/RUSAGE_CHILDREN), peak_rss_mb (largest single process, ru_maxrss), peak_tree_rss_mb (largest sum
of RSS over the command's process tree, polled from /proc every 50 ms: what forks cost, e.g. Ansible),
rc, timed_out, load_before (1-min load average), lab_cpu_secs (CPU the simulator spent meanwhile).
The command runs in its own process group; past --limit the group is killed (SIGTERM, then SIGKILL).
"""
import argparse, json, os, resource, signal, subprocess, sys, time

def tree_rss_kb(root):
    kids = {}
    total = 0
    rss = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open(f'/proc/{d}/stat') as f:
                s = f.read()
            ppid = int(s[s.rindex(')') + 2:].split()[1])
            with open(f'/proc/{d}/statm') as f:
                rss[int(d)] = int(f.read().split()[1]) * (os.sysconf('SC_PAGE_SIZE') // 1024)
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    todo = [root]
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += rss.get(p, 0)
        todo.extend(kids.get(p, []))
    return total

def cpu_of(pid):
    if not pid:
        return None
    try:
        with open(f'/proc/{pid}/stat') as f:
            s = f.read()
        fields = s[s.rindex(')') + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError):
        return None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--limit', type=float, default=900)
    ap.add_argument('--lab-pid', type=int, default=0)
    ap.add_argument('--stdout', default=None)
    ap.add_argument('cmd', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == '--' else a.cmd
    load = os.getloadavg()[0]
    lab0 = cpu_of(a.lab_pid)
    out = open(a.stdout, 'wb') if a.stdout else None
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=out, start_new_session=True)
    peak_tree = 0
    timed_out = False
    status = None
    ru = None
    while True:
        pid, st, r = os.wait4(p.pid, os.WNOHANG)
        if pid:
            status, ru = st, r
            break
        peak_tree = max(peak_tree, tree_rss_kb(p.pid))
        if time.monotonic() - t0 > a.limit and not timed_out:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGTERM)
                time.sleep(2)
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    wall = time.monotonic() - t0
    # Children of the command that it left behind (a killed group): reap nothing more; the group is gone.
    lab1 = cpu_of(a.lab_pid)
    res = {
        'wall_secs': round(wall, 3),
        'user_secs': round(ru.ru_utime, 3),
        'sys_secs': round(ru.ru_stime, 3),
        'cpu_secs': round(ru.ru_utime + ru.ru_stime, 3),
        # ru_maxrss of wait4(pid): the largest of the process and its waited-for descendants.
        'peak_rss_mb': round(ru.ru_maxrss / 1024, 1),
        'peak_tree_rss_mb': round(max(peak_tree, ru.ru_maxrss) / 1024, 1),
        'rc': os.waitstatus_to_exitcode(status),
        'timed_out': timed_out,
        'load_before': round(load, 2),
        'lab_cpu_secs': round(lab1 - lab0, 2) if lab0 is not None and lab1 is not None else None,
    }
    with open(a.out, 'w') as f:
        json.dump(res, f)
    print(json.dumps(res), file=sys.stderr)

main()
