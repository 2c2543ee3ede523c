#!/usr/bin/env bash
# fake-switches 1.5.0 (PyPI): Cisco IOS / Junos / Arista / Dell / Brocade simulators written by others
# (see docs/peers.md). Our tests use it as the acceptance peer for the SSH CLI transport.
#
#   scripts/peers/fake-switches.sh install              idempotent: python3-venv (apt) + venv under .peers/
#   scripts/peers/fake-switches.sh start DIR SPEC.json  start one launcher process for all switches in SPEC;
#                                                       writes DIR/fake-switches.pid, DIR/fake-switches.env
#                                                       (FAKE_SWITCHES_PORTS=<json>), DIR/fake-switches.log
#   scripts/peers/fake-switches.sh stop DIR             stop the launcher by its PID
#   scripts/peers/fake-switches.sh python               print the venv's python path (for tests)
#
# SPEC.json is a list of {"name", "model", "ssh_port", "http_port"?}; port 0 picks a free port. The chosen
# ports are printed on the launcher's READY line and saved in the env file.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-fake-switches"
LAUNCHER="$ROOT/scripts/peers/fake_switches_launcher.py"

install() {
    need_python_venv
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import fake_switches, twisted.conch, tftpy, netaddr, lxml' >/dev/null 2>&1; then
        echo "fake-switches: already installed in $VENV"
        return 0
    fi
    mkdir -p "$(dirname "$VENV")"
    python3 -m venv "$VENV"
    # fake-switches pins Twisted<17, which does not install on Python 3.11: install it without deps and
    # bring the deps that work (docs/peers.md).
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps fake-switches==1.5.0
    "$VENV/bin/pip" install -q --disable-pip-version-check "Twisted[conch]==26.10.0" tftpy netaddr lxml
    "$VENV/bin/python" -c 'import fake_switches, twisted.conch' >/dev/null
    echo "fake-switches: installed in $VENV"
}

start() {
    local dir="${1:?usage: start DIR SPEC.json}" spec="${2:?usage: start DIR SPEC.json}"
    [ -x "$VENV/bin/python" ] || { echo "fake-switches not installed: run $0 install" >&2; exit 1; }
    mkdir -p "$dir"
    local fifo="$dir/fake-switches.ready"
    rm -f "$fifo"
    "$VENV/bin/python" -u "$LAUNCHER" "$spec" >"$fifo" 2>"$dir/fake-switches.log" &
    local pid=$!
    echo "$pid" >"$dir/fake-switches.pid"
    for _ in $(seq 1 300); do
        if grep -q '^READY' "$fifo" 2>/dev/null; then
            local ports
            ports="$(grep '^READY' "$fifo" | head -n1 | cut -d' ' -f2-)"
            printf "FAKE_SWITCHES_PID=%s\nFAKE_SWITCHES_PORTS='%s'\n" "$pid" "$ports" >"$dir/fake-switches.env"
            echo "fake-switches: ready (pid $pid): $ports"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "fake-switches: launcher exited; log:" >&2
            cat "$dir/fake-switches.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "fake-switches: not ready after 30 s; log:" >&2
    cat "$dir/fake-switches.log" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
}

stop() {
    local dir="${1:?usage: stop DIR}"
    if [ -f "$dir/fake-switches.pid" ]; then
        local pid
        pid="$(cat "$dir/fake-switches.pid")"
        kill "$pid" 2>/dev/null || true
        rm -f "$dir/fake-switches.pid"
    fi
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    stop) shift; stop "$@" ;;
    python) echo "$VENV/bin/python" ;;
    *) echo "usage: $0 install | start DIR SPEC.json | stop DIR | python" >&2; exit 2 ;;
esac
