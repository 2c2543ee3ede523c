# Sourced by scripts/peers/*.sh (not a peer: scripts/test.sh skips it): where peers live, and the
# steps every peer script's `install` and `start` would otherwise repeat.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# ROOT is the repository, PEERS the shared peer directory (NETGW_PEERS_DIR, else ROOT/.peers).

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "$0 is sourced by the peer scripts; run one of them (e.g. scripts/peers/sshd.sh install)" >&2
    exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS="${NETGW_PEERS_DIR:-$ROOT/.peers}"

# apt_install PKG...: install Debian packages, quietly, with no prompt (the caller decides what is missing).
apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "$@" >/dev/null
}

# python3's venv module, from apt when missing.
need_python_venv() {
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || apt_install python3-venv
}

# venv_install LABEL VENV IMPORTS PIP_ARGS...: a venv at VENV with PIP_ARGS installed (pinned
# versions), unless the python statement IMPORTS already runs in it; checked again afterwards.
venv_install() {
    local label="$1" venv="$2" imports="$3"
    shift 3
    need_python_venv
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$imports" >/dev/null 2>&1; then
        echo "$label: already installed in $venv"
        return 0
    fi
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "$@"
    "$venv/bin/python" -c "$imports" >/dev/null
    echo "$label: installed in $venv"
}

# The command line of a script whose only command is `install`.
install_only_main() {
    case "${1:-}" in
    install) install ;;
    *)
        echo "usage: $0 install" >&2
        exit 2
        ;;
    esac
}

# NETGW_PEER_WATCH_PID=PID (tests set it to their own PID): stop the peer PID when that process is
# gone, so a test binary that shares one peer across its tests leaves nothing behind.
watch_parent() {
    local pid="$1" watched="${NETGW_PEER_WATCH_PID:-}"
    [ -n "$watched" ] || return 0
    (
        while kill -0 "$watched" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do sleep 1; done
        kill "$pid" 2>/dev/null || true
    ) </dev/null >/dev/null 2>&1 &
}

# A free TCP (free_port) or UDP (free_udp_port) port on 127.0.0.1.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

free_udp_port() {
    python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
