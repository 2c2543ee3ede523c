#!/usr/bin/env bash
# netconfd (yuma123 2.13, Debian) behind a private sshd: the standards NETCONF peer (docs/peers.md).
#
#   scripts/peers/netconfd.sh install     idempotent: apt netconfd netconfd-module-ietf-interfaces
#                                         openssh-server, the fake get-interface-ipv4 helper, and the
#                                         sshd test user (scripts/peers/sshd.sh install: netgwtest)
#   scripts/peers/netconfd.sh start DIR   netconfd on a unix socket in DIR with a fresh, empty startup
#                                         file + a private sshd (scripts/peers/sshd.sh) on a free
#                                         127.0.0.1 port whose `netconf` subsystem reaches it.
#                                         Writes DIR/netconfd.env (shell syntax): NETCONFD_PID
#                                         NETCONFD_SSH_PORT NETCONFD_USER NETCONFD_PASSWORD NETCONFD_DIR
#                                         NETCONFD_STARTUP NETCONFD_SOCKET (+ DIR/sshd.env from sshd.sh).
#   scripts/peers/netconfd.sh respawn DIR start netconfd again in DIR (same port, socket and startup
#                                         file, which is NOT reset) after it died or was killed; the
#                                         sshd keeps running. Updates NETCONFD_PID in DIR/netconfd.env.
#   scripts/peers/netconfd.sh stop DIR    stop netconfd and sshd by PID
#
# Host keys: DIR/ssh_host_ed25519_key.pub and DIR/ssh_host_rsa_key.pub (for a known_hosts file).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HELPER_DIR="$PEERS/netconfd-bin"
SSHD_SH="$ROOT/scripts/peers/sshd.sh"

install() {
    local missing=()
    [ -x /usr/sbin/netconfd ] || missing+=(netconfd)
    [ -e /usr/lib/x86_64-linux-gnu/yuma/libietf-interfaces.so ] || \
        dpkg -s netconfd-module-ietf-interfaces >/dev/null 2>&1 || missing+=(netconfd-module-ietf-interfaces)
    [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_install "${missing[@]}"
    fi
    # The ietf-interfaces SIL runs `get-interface-ipv4` (missing from the package) and asserts on its
    # output: a stand-in that reports no addresses.
    mkdir -p "$HELPER_DIR"
    cat >"$HELPER_DIR/get-interface-ipv4" <<'SH'
#!/bin/sh
echo '<ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip"/>'
SH
    chmod 0755 "$HELPER_DIR/get-interface-ipv4"
    "$SSHD_SH" install
    echo "netconfd: installed (helper in $HELPER_DIR)"
}

# netconfd on DIR/ncxserver.sock with DIR/startup-cfg.xml as it is; waits for the socket.
launch() {
    local dir="$1" port="$2" user="$3"
    local sock="$dir/ncxserver.sock" startup="$dir/startup-cfg.xml"
    rm -f "$sock"
    mkdir -p "$dir/home"
    (
        umask 000
        cd "$dir"
        export HOME="$dir/home" PATH="$HELPER_DIR:$PATH"
        exec /usr/sbin/netconfd --module=iana-if-type --module=ietf-interfaces --superuser="$user" \
            --port="$port" --ncxserver-sockname="$sock" --startup="$startup" \
            --log="$dir/netconfd.log" --log-level=info </dev/null >>"$dir/netconfd.out" 2>&1
    ) &
    local pid=$!
    echo "$pid" >"$dir/netconfd.pid"
    for _ in $(seq 1 200); do
        [ -S "$sock" ] && break
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "netconfd: exited; log:" >&2
            cat "$dir/netconfd.log" "$dir/netconfd.out" >&2 2>/dev/null || true
            exit 1
        fi
        sleep 0.05
    done
    [ -S "$sock" ] || { echo "netconfd: no socket after 10 s" >&2; kill "$pid" 2>/dev/null || true; exit 1; }
}

respawn() {
    local dir="${1:?usage: respawn DIR}"
    dir="$(cd "$dir" && pwd)"
    [ -f "$dir/netconfd.env" ] || { echo "no $dir/netconfd.env: start it first" >&2; exit 1; }
    # shellcheck disable=SC1091
    . "$dir/netconfd.env"
    if [ -f "$dir/netconfd.pid" ]; then
        local old state
        old="$(cat "$dir/netconfd.pid")"
        # A killed netconfd may linger as a zombie until it is reaped: that is dead enough.
        for _ in $(seq 1 50); do
            state="$(ps -o stat= -p "$old" 2>/dev/null || true)"
            case "$state" in ""|Z*) break ;; esac
            sleep 0.1
        done
        case "$state" in
            ""|Z*) ;;
            *) echo "netconfd still running (pid $old)" >&2; exit 1 ;;
        esac
    fi
    launch "$dir" "$NETCONFD_SSH_PORT" "$NETCONFD_USER"
    local pid
    pid="$(cat "$dir/netconfd.pid")"
    sed -i "s/^NETCONFD_PID=.*/NETCONFD_PID=$pid/" "$dir/netconfd.env"
    echo "netconfd: respawned (pid $pid), startup file kept"
}

start() {
    local dir="${1:?usage: start DIR}"
    [ -x /usr/sbin/netconfd ] || { echo "netconfd missing: run $0 install" >&2; exit 1; }
    [ -x "$HELPER_DIR/get-interface-ipv4" ] || { echo "get-interface-ipv4 helper missing: run $0 install" >&2; exit 1; }
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    # netconf-subsystem runs as the test user and must reach the socket in DIR.
    chmod 0755 "$dir"
    local user="${NETGW_SSHD_USER:-netgwtest}"
    local port sock="$dir/ncxserver.sock" startup="$dir/startup-cfg.xml"
    port="$(free_port)"
    rm -f "$sock"
    echo '<config xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"/>' >"$startup"
    launch "$dir" "$port" "$user"
    local pid
    pid="$(cat "$dir/netconfd.pid")"
    echo "Subsystem netconf \"/usr/sbin/netconf-subsystem --ncxserver-sockname=$port@$sock\"" >"$dir/sshd_config.extra"
    # netconf-subsystem picks the socket whose PORT matches the port in SSH_CONNECTION: sshd must
    # listen on netconfd's --port.
    if ! "$SSHD_SH" start "$dir" "$port" >/dev/null; then
        kill "$pid" 2>/dev/null || true
        exit 1
    fi
    # shellcheck disable=SC1091
    . "$dir/sshd.env"
    cat >"$dir/netconfd.env" <<ENV
NETCONFD_PID=$pid
NETCONFD_SSH_PORT=$SSHD_PORT
NETCONFD_USER=$SSHD_USER
NETCONFD_PASSWORD=$SSHD_PASSWORD
NETCONFD_DIR=$dir
NETCONFD_STARTUP=$startup
NETCONFD_SOCKET=$sock
ENV
    echo "netconfd: ready (pid $pid), ssh 127.0.0.1:$SSHD_PORT user $SSHD_USER"
}

stop() {
    local dir="${1:?usage: stop DIR}"
    "$SSHD_SH" stop "$dir" 2>/dev/null || true
    if [ -f "$dir/netconfd.pid" ]; then
        local pid
        pid="$(cat "$dir/netconfd.pid")"
        kill "$pid" 2>/dev/null || true
        # netconfd takes a moment to save and exit; do not leave it behind.
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$dir/netconfd.pid"
    fi
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    respawn) shift; respawn "$@" ;;
    stop) shift; stop "$@" ;;
    *) echo "usage: $0 install | start DIR | respawn DIR | stop DIR" >&2; exit 2 ;;
esac
