#!/usr/bin/env bash
# fakenos 1.2.1 (PyPI): canned outputs of many network OSes over SSH (docs/peers.md). netgw uses its
# cisco_nxos platform for the NX-OS driver's read path (facts, VLANs, switchport); it keeps no
# configuration state.
#
#   scripts/peers/fakenos.sh install            idempotent: python3-venv (apt) + venv under .peers/venv-fakenos
#   scripts/peers/fakenos.sh start DIR PORT     one cisco_nxos host `nxos1` on 127.0.0.1:PORT (user/user);
#                                               writes DIR/fakenos.pid, DIR/inventory.yaml, DIR/fakenos.log
#   scripts/peers/fakenos.sh stop DIR           stop it by its PID
#   scripts/peers/fakenos.sh bin                print the fakenos executable's path (for tests)
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-fakenos"

install() {
    venv_install fakenos "$VENV" 'import fakenos' fakenos==1.2.1
}

start() {
    local dir="${1:?usage: start DIR PORT}" port="${2:?usage: start DIR PORT}"
    [ -x "$VENV/bin/fakenos" ] || { echo "fakenos not installed: run $0 install" >&2; exit 1; }
    mkdir -p "$dir"
    cat >"$dir/inventory.yaml" <<YAML
default:
  username: user
  password: user
  server:
    plugin: ParamikoSshServer
    configuration:
      address: 127.0.0.1
      timeout: 1
hosts:
  nxos1:
    port: $port
    platform: cisco_nxos
YAML
    "$VENV/bin/fakenos" -i "$dir/inventory.yaml" >"$dir/fakenos.log" 2>&1 &
    local pid=$!
    echo "$pid" >"$dir/fakenos.pid"
    for _ in $(seq 1 300); do
        if python3 -c "import socket,sys; s=socket.create_connection(('127.0.0.1', $port), 0.2); s.close()" 2>/dev/null; then
            echo "fakenos: ready (pid $pid) on 127.0.0.1:$port"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "fakenos: exited; log:" >&2
            cat "$dir/fakenos.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "fakenos: not listening after 30 s; log:" >&2
    cat "$dir/fakenos.log" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
}

stop() {
    local dir="${1:?usage: stop DIR}"
    if [ -f "$dir/fakenos.pid" ]; then
        kill "$(cat "$dir/fakenos.pid")" 2>/dev/null || true
        rm -f "$dir/fakenos.pid"
    fi
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    stop) shift; stop "$@" ;;
    bin) echo "$VENV/bin/fakenos" ;;
    *) echo "usage: $0 install | start DIR PORT | stop DIR | bin" >&2; exit 2 ;;
esac
