#!/usr/bin/env bash
# snmpsim 1.2.2 + snmpsim-data 1.0.1 (PyPI): an SNMP v2c/v3 agent answering from recordings of real
# devices (docs/peers.md). Read-only; our SNMP interop tests share one instance per test binary.
#
#   scripts/peers/snmpsim.sh install     idempotent: python3-venv + bzip2 (apt, only when missing) and a
#                                        venv under .peers/venv-snmpsim
#   scripts/peers/snmpsim.sh start DIR   extract the recordings (once, under .peers/snmpsim/data), start the
#                                        responder on 127.0.0.1:<free port>; writes DIR/snmpsim.pid,
#                                        DIR/snmpsim.log and DIR/snmpsim.env (SNMPSIM_HOST, SNMPSIM_PORT,
#                                        SNMPSIM_PID, SNMPSIM_DATA_DIR, SNMPSIM_V3_*)
#   NETGW_PEER_WATCH_PID=PID: also stop it when process PID exits (see watch_parent)
#   scripts/peers/snmpsim.sh stop DIR    stop the responder by its PID
#
# Community = recording path relative to the data dir without extension (e.g. cloud/arista-dcs-7150s-52-cl);
# for v3 the same string is the context name. The index of each recording (~20 s on 2 cores) is kept in
# .peers/snmpsim/cache and reused as long as the extracted data file is unchanged, so it is paid once.
# SNMPSIM_RECORDINGS (space-separated, paths under snmpsim-data's data/ without .snmprec.bz2) overrides the set.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
VENV="$PEERS/venv-snmpsim"
SIMDIR="$PEERS/snmpsim"
RECORDINGS="${SNMPSIM_RECORDINGS:-cloud/arista-dcs-7150s-52-cl network/switch/cisco-c3560 network/router/juniper-mx960-13-3r9-13}"

apt_install_missing() {
    local missing=()
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
    command -v bzcat >/dev/null 2>&1 || missing+=(bzip2)
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_install "${missing[@]}"
    fi
}
install() {
    apt_install_missing
    # cryptography is needed for SNMPv3 privacy (AES/DES) in pysnmp.
    venv_install snmpsim "$VENV" 'import snmpsim, snmpsim_data, cryptography' \
        snmpsim==1.2.2 snmpsim-data==1.0.1 cryptography
}

extract_recordings() {
    local src
    src="$("$VENV/bin/python" -c 'import os, snmpsim_data; print(os.path.join(os.path.dirname(snmpsim_data.__file__), "data"))')"
    mkdir -p "$SIMDIR/data" "$SIMDIR/cache"
    local rec
    for rec in $RECORDINGS; do
        local out="$SIMDIR/data/$rec.snmprec"
        [ -s "$out" ] && continue
        [ -f "$src/$rec.snmprec.bz2" ] || { echo "snmpsim: no recording $rec in $src" >&2; exit 1; }
        mkdir -p "$(dirname "$out")"
        # Write then rename, so a concurrent or interrupted start never sees half a file.
        bzcat "$src/$rec.snmprec.bz2" >"$out.tmp.$$"
        mv "$out.tmp.$$" "$out"
    done
}

start() {
    local dir="${1:?usage: start DIR}"
    [ -x "$VENV/bin/snmpsim-command-responder" ] || {
        echo "snmpsim not installed: run $0 install" >&2
        exit 1
    }
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    extract_recordings
    local port
    port="$(free_udp_port)"
    SNMPSIM_ALLOW_ROOT=true "$VENV/bin/snmpsim-command-responder" \
        --data-dir="$SIMDIR/data" --cache-dir="$SIMDIR/cache" \
        --agent-udpv4-endpoint="127.0.0.1:$port" \
        --v3-user=simulator --v3-auth-key=auctoritas --v3-auth-proto=SHA \
        --v3-priv-key=privatus --v3-priv-proto=AES \
        >"$dir/snmpsim.log" 2>&1 &
    local pid=$!
    echo "$pid" >"$dir/snmpsim.pid"
    watch_parent "$pid"
    # The index build comes before the listener; 240 s leaves room on a busy 2-core machine.
    for _ in $(seq 1 2400); do
        if grep -q 'Listening at UDP/IPv4 endpoint' "$dir/snmpsim.log" 2>/dev/null; then
            cat >"$dir/snmpsim.env" <<EOF
SNMPSIM_HOST=127.0.0.1
SNMPSIM_PORT=$port
SNMPSIM_PID=$pid
SNMPSIM_DATA_DIR=$SIMDIR/data
SNMPSIM_V3_USER=simulator
SNMPSIM_V3_AUTH_PROTO=SHA
SNMPSIM_V3_AUTH_KEY=auctoritas
SNMPSIM_V3_PRIV_PROTO=AES
SNMPSIM_V3_PRIV_KEY=privatus
EOF
            echo "snmpsim: ready on 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "snmpsim: responder exited; log:" >&2
            cat "$dir/snmpsim.log" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "snmpsim: not listening after 240 s; log:" >&2
    tail -n 30 "$dir/snmpsim.log" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
}

stop() {
    local dir="${1:?usage: stop DIR}"
    if [ -f "$dir/snmpsim.pid" ]; then
        kill "$(cat "$dir/snmpsim.pid")" 2>/dev/null || true
        rm -f "$dir/snmpsim.pid"
    fi
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    stop) shift; stop "$@" ;;
    *) echo "usage: $0 install | start DIR | stop DIR" >&2; exit 2 ;;
esac
