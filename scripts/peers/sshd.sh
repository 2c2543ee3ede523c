#!/usr/bin/env bash
# A private OpenSSH server per test (docs/peers.md): own config, host keys and authorized_keys under DIR,
# 127.0.0.1 on a high port, UsePAM no, a throwaway test user.
#
#   scripts/peers/sshd.sh install          idempotent: openssh-server (apt) + test user netgwtest
#   scripts/peers/sshd.sh start DIR [PORT] start sshd (PORT default: a free one); writes DIR/sshd.pid,
#                                          DIR/sshd.env, DIR/sshd.log, client keys DIR/id_ed25519, DIR/id_rsa
#   scripts/peers/sshd.sh stop DIR         stop it by PID
#
# DIR/sshd.env (shell syntax): SSHD_PID SSHD_PORT SSHD_USER SSHD_PASSWORD SSHD_DIR.
# If DIR/sshd_config.extra exists before `start`, it is appended to the config (e.g. a
# `Subsystem netconf ...` line). A `netgw-echo` subsystem (/bin/cat) is always there for tests.
# This is for a throwaway CI machine: the test user has a fixed, public password.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SSHD_USER="${NETGW_SSHD_USER:-netgwtest}"
SSHD_PASSWORD="${NETGW_SSHD_PASSWORD:-netgw-Test-pw1}"
SSHD_BIN=/usr/sbin/sshd

install() {
    if [ ! -x "$SSHD_BIN" ] || ! command -v ssh-keygen >/dev/null; then
        apt_install openssh-server openssh-client
    fi
    if ! id "$SSHD_USER" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/bash "$SSHD_USER"
    fi
    # Always (re)set: the password is part of this script's contract.
    echo "$SSHD_USER:$SSHD_PASSWORD" | chpasswd
    mkdir -p /run/sshd
    chmod 0755 /run/sshd
    echo "sshd: openssh-server present, user $SSHD_USER ready"
}

start() {
    local dir="${1:?usage: start DIR [PORT]}" port="${2:-}"
    [ -x "$SSHD_BIN" ] || { echo "sshd missing: run $0 install" >&2; exit 1; }
    id "$SSHD_USER" >/dev/null 2>&1 || { echo "user $SSHD_USER missing: run $0 install" >&2; exit 1; }
    mkdir -p "$dir" /run/sshd
    dir="$(cd "$dir" && pwd)"
    # sshd reads authorized_keys as the target user: the directory must be traversable.
    chmod 0755 "$dir"
    [ -f "$dir/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C sshd-host -f "$dir/ssh_host_ed25519_key"
    [ -f "$dir/ssh_host_rsa_key" ] || ssh-keygen -q -t rsa -b 2048 -N '' -C sshd-host -f "$dir/ssh_host_rsa_key"
    [ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C netgw-test -f "$dir/id_ed25519"
    [ -f "$dir/id_rsa" ] || ssh-keygen -q -t rsa -b 2048 -N '' -C netgw-test -f "$dir/id_rsa"
    cat "$dir/id_ed25519.pub" "$dir/id_rsa.pub" >"$dir/authorized_keys"
    chmod 0644 "$dir/authorized_keys"
    [ -n "$port" ] || port="$(free_port)"
    cat >"$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/ssh_host_ed25519_key
HostKey $dir/ssh_host_rsa_key
PidFile $dir/sshd.pid
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
PermitRootLogin no
AllowUsers $SSHD_USER
MaxStartups 100
MaxSessions 50
LogLevel VERBOSE
Subsystem netgw-echo /bin/cat
CONF
    if [ -f "$dir/sshd_config.extra" ]; then
        cat "$dir/sshd_config.extra" >>"$dir/sshd_config"
    fi
    "$SSHD_BIN" -t -f "$dir/sshd_config"
    # -D: stay in the foreground so $! is sshd itself; -e: log to stderr (the log file).
    "$SSHD_BIN" -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1 &
    local pid=$!
    echo "$pid" >"$dir/sshd.pid.launcher"
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            cat >"$dir/sshd.env" <<ENV
SSHD_PID=$pid
SSHD_PORT=$port
SSHD_USER=$SSHD_USER
SSHD_PASSWORD=$SSHD_PASSWORD
SSHD_DIR=$dir
ENV
            echo "sshd: ready on 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "sshd: exited; log:" >&2
            cat "$dir/sshd.log" >&2
            exit 1
        fi
        sleep 0.05
    done
    echo "sshd: not listening on $port after 5 s; log:" >&2
    cat "$dir/sshd.log" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
}

stop() {
    local dir="${1:?usage: stop DIR}" pid
    for f in "$dir/sshd.pid.launcher" "$dir/sshd.pid"; do
        if [ -f "$f" ]; then
            pid="$(cat "$f")"
            kill "$pid" 2>/dev/null || true
            rm -f "$f"
        fi
    done
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    stop) shift; stop "$@" ;;
    *) echo "usage: $0 install | start DIR [PORT] | stop DIR" >&2; exit 2 ;;
esac
