#!/usr/bin/env bash
# goiardi 0.11.10 (Debian): a real Chef server API for the Chef server store's tests (docs/peers.md).
#
#   scripts/peers/goiardi.sh install     idempotent: apt-get install goiardi when it is missing
#   scripts/peers/goiardi.sh start DIR   goiardi with authentication (-A) on a free 127.0.0.1 port, its
#                                        state under DIR. Waits until the admin key exists and the API
#                                        answers, then writes DIR/goiardi.env (shell syntax):
#                                        GOIARDI_PID GOIARDI_URL GOIARDI_ADMIN GOIARDI_ADMIN_KEY
#                                        GOIARDI_VALIDATOR_KEY GOIARDI_DIR
#   scripts/peers/goiardi.sh stop DIR    stop that goiardi by PID
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOIARDI="${GOIARDI_BIN:-/usr/bin/goiardi}"

install() {
    [ -x "$GOIARDI" ] || apt_install goiardi
    "$GOIARDI" --version
}

start() {
    local dir="${1:?usage: start DIR}"
    [ -x "$GOIARDI" ] || { echo "goiardi missing: run $0 install" >&2; exit 1; }
    mkdir -p "$dir/conf" "$dir/files"
    dir="$(cd "$dir" && pwd)"
    local port url
    port="$(free_port)"
    url="http://127.0.0.1:$port"
    # -F 2: freeze the in-memory store to disk every 2 s (goiardi needs -D/-i for that).
    "$GOIARDI" -I 127.0.0.1 -P "$port" -H 127.0.0.1 -A --conf-root="$dir/conf" \
        -D "$dir/data.bin" -i "$dir/index.bin" -F 2 --local-filestore-dir="$dir/files" \
        </dev/null >>"$dir/goiardi.log" 2>&1 &
    local pid=$!
    echo "$pid" >"$dir/goiardi.pid"
    # Keys appear in conf/ on first start; the port opens a moment later.
    local ready=""
    for _ in $(seq 1 300); do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "goiardi: exited; log:" >&2
            cat "$dir/goiardi.log" >&2 || true
            exit 1
        fi
        if [ -s "$dir/conf/admin.pem" ] && python3 - "$port" <<'PY' 2>/dev/null; then
import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5).close()
PY
            ready=1
            break
        fi
        sleep 0.1
    done
    if [ -z "$ready" ]; then
        echo "goiardi: not ready after 30 s; log:" >&2
        cat "$dir/goiardi.log" >&2 || true
        kill "$pid" 2>/dev/null || true
        exit 1
    fi
    cat >"$dir/goiardi.env" <<EOF
GOIARDI_PID=$pid
GOIARDI_URL=$url
GOIARDI_ADMIN=admin
GOIARDI_ADMIN_KEY=$dir/conf/admin.pem
GOIARDI_VALIDATOR_KEY=$dir/conf/chef-validator.pem
GOIARDI_DIR=$dir
EOF
    echo "goiardi: $url (pid $pid, env in $dir/goiardi.env)"
}

stop() {
    local dir="${1:?usage: stop DIR}"
    local pidfile="$dir/goiardi.pid"
    [ -f "$pidfile" ] || return 0
    local pid
    pid="$(cat "$pidfile")"
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

case "${1:-}" in
    install) install ;;
    start) start "${2:-}" ;;
    stop) stop "${2:-}" ;;
    *) echo "usage: $0 install|start DIR|stop DIR" >&2; exit 2 ;;
esac
