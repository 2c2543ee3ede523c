#!/usr/bin/env bash
# nornir 3.5.0 (PyPI): Nornir itself, so tests/nornir_parity.rs can load the same inventory files with
# Nornir's SimpleInventory and compare every resolved host with netgw's resolution.
#
#   scripts/peers/nornir.sh install     idempotent: python3-venv (apt, only when missing) and a venv
#                                       under .peers/venv-nornir
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS="${NETGW_PEERS_DIR:-$ROOT/.peers}"
VENV="$PEERS/venv-nornir"

install() {
    if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv >/dev/null
    fi
    if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import nornir' >/dev/null 2>&1; then
        echo "nornir: already installed in $VENV"
        return 0
    fi
    mkdir -p "$PEERS"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check nornir==3.5.0
    "$VENV/bin/python" -c 'import nornir' >/dev/null
    echo "nornir: installed in $VENV"
}

case "${1:-}" in
install) install ;;
*)
    echo "usage: $0 install" >&2
    exit 2
    ;;
esac
