#!/usr/bin/env bash
# net-snmp snmpd (Debian 12: 5.9.3): a real SNMP agent for v2c and v3 (docs/peers.md).
#
#   scripts/peers/snmpd.sh install     idempotent: apt-get install snmpd (the agent) and snmp (the
#                                      snmpwalk/snmpbulkwalk tools labs/tests/it/snmp.rs runs), only what is missing
#   scripts/peers/snmpd.sh start DIR   write DIR/snmpd.conf, start snmpd on 127.0.0.1:<free port>; writes
#                                      DIR/snmpd.pid, DIR/snmpd.log, DIR/snmpd.env (SNMPD_HOST, SNMPD_PORT,
#                                      SNMPD_PID, SNMPD_COMMUNITY, SNMPD_SYSNAME, SNMPD_V3_* for each user)
#   NETGW_PEER_WATCH_PID=PID: also stop it when process PID exits (see watch_parent)
#   scripts/peers/snmpd.sh stop DIR    stop snmpd by its PID
#
# Users (all read-only): netgw-sha (authPriv SHA/AES), netgw-auth (authNoPriv SHA),
# netgw-sha256 (authPriv SHA-256/AES), netgw-md5 (authPriv MD5/AES). Persistent state (engine ID, localised
# keys) goes to DIR/persist, never /var/lib/snmp.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install() {
    local missing=()
    if ! command -v snmpd >/dev/null 2>&1 && [ ! -x /usr/sbin/snmpd ]; then
        missing+=(snmpd)
    fi
    if ! command -v snmpwalk >/dev/null 2>&1 || ! command -v snmpbulkwalk >/dev/null 2>&1; then
        missing+=(snmp)
    fi
    if [ ${#missing[@]} -eq 0 ]; then
        echo "snmpd: already installed ($(command -v snmpd || echo /usr/sbin/snmpd), $(command -v snmpwalk))"
        return 0
    fi
    # No daemon is started by the package in a container without systemd (docs/peers.md).
    apt_install "${missing[@]}"
    echo "snmpd: installed ${missing[*]}"
}

snmpd_bin() {
    command -v snmpd 2>/dev/null || echo /usr/sbin/snmpd
}

start() {
    local dir="${1:?usage: start DIR}"
    local bin
    bin="$(snmpd_bin)"
    [ -x "$bin" ] || { echo "snmpd not installed: run $0 install" >&2; exit 1; }
    mkdir -p "$dir/persist"
    dir="$(cd "$dir" && pwd)"
    local port
    port="$(free_udp_port)"
    cat >"$dir/snmpd.conf" <<EOF
agentAddress udp:127.0.0.1:$port
sysName netgw-snmpd
sysLocation netgw test lab
sysContact ops@example.invalid
rocommunity netgw-public 127.0.0.1
createUser netgw-sha SHA "netgw-auth-pass" AES "netgw-priv-pass"
createUser netgw-auth SHA "netgw-auth-pass"
createUser netgw-sha256 SHA-256 "netgw-auth-pass" AES "netgw-priv-pass"
createUser netgw-md5 MD5 "netgw-auth-pass" AES "netgw-priv-pass"
rouser netgw-sha priv
rouser netgw-auth auth
rouser netgw-sha256 priv
rouser netgw-md5 priv
EOF
    # -C: only our config; -I -smux: no SMUX (else it listens on TCP 0.0.0.0:199); MIBS= : Debian ships none.
    SNMP_PERSISTENT_DIR="$dir/persist" MIBS= "$bin" -f -Lo -C -I -smux -c "$dir/snmpd.conf" \
        >"$dir/snmpd.log" 2>&1 &
    local pid=$!
    echo "$pid" >"$dir/snmpd.pid"
    watch_parent "$pid"
    for _ in $(seq 1 300); do
        if grep -q 'NET-SNMP version' "$dir/snmpd.log" 2>/dev/null; then
            cat >"$dir/snmpd.env" <<EOF
SNMPD_HOST=127.0.0.1
SNMPD_PORT=$port
SNMPD_PID=$pid
SNMPD_COMMUNITY=netgw-public
SNMPD_SYSNAME=netgw-snmpd
SNMPD_SYSLOCATION=netgw test lab
SNMPD_SYSCONTACT=ops@example.invalid
SNMPD_V3_USER=netgw-sha
SNMPD_V3_AUTH_ONLY_USER=netgw-auth
SNMPD_V3_SHA256_USER=netgw-sha256
SNMPD_V3_MD5_USER=netgw-md5
SNMPD_V3_AUTH_KEY=netgw-auth-pass
SNMPD_V3_PRIV_KEY=netgw-priv-pass
EOF
            echo "snmpd: ready on 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "snmpd: exited; log:" >&2
            cat "$dir/snmpd.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "snmpd: not ready after 30 s; log:" >&2
    cat "$dir/snmpd.log" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
}

stop() {
    local dir="${1:?usage: stop DIR}"
    if [ -f "$dir/snmpd.pid" ]; then
        kill "$(cat "$dir/snmpd.pid")" 2>/dev/null || true
        rm -f "$dir/snmpd.pid"
    fi
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    stop) shift; stop "$@" ;;
    *) echo "usage: $0 install | start DIR | stop DIR" >&2; exit 2 ;;
esac
